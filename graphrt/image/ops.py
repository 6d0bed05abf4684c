"""Image op declarations: codecs (DecodeJpeg, DecodePng, DecodeGif, DecodeImage,
EncodeJpeg, EncodePng) and resizes (ResizeBilinear, ResizeNearestNeighbor,
ResizeBicubic, ResizeArea and the gradients TF has for them)."""
from ..framework import dtypes
from ..framework.registry import not_differentiable, register_op
from ..framework.tensor_shape import TensorShape

_SCALAR = TensorShape([])


def _scalar_contents(ctx):
    s = ctx.shape(0)
    if s.ndims not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {s.ndims}")


def _decode_shape(ctx):
    _scalar_contents(ctx)
    channels = ctx.attr("channels")
    return TensorShape([None, None, channels or None])


def _decode_gif_shape(ctx):
    _scalar_contents(ctx)
    return TensorShape([None, None, None, 3])


def _decode_image_shape(ctx):
    _scalar_contents(ctx)
    return TensorShape(None)  # rank 3, or 4 for an animated GIF


def _encode_shape(ctx):
    s = ctx.shape(0)
    if s.ndims not in (None, 3):
        raise ValueError(f"Shape must be rank 3 but is rank {s.ndims}")
    return _SCALAR


def _resize_shape(ctx):
    images = ctx.shape(0).with_rank(4)
    size = ctx.constant_shape(1)
    if size.ndims is not None and size.ndims != 2:
        size = TensorShape([None, None])
    if size.ndims is None:
        size = TensorShape([None, None])
    return TensorShape([images[0]]).concatenate(size).concatenate(TensorShape([images[3]]))


def _grad_like_original(ctx):
    grads = ctx.shape(0).with_rank(4)
    original = ctx.shape(1).with_rank(4)
    return TensorShape([grads[0], original[1], original[2], grads[3]])


def _nearest_grad_shape(ctx):
    grads = ctx.shape(0).with_rank(4)
    size = ctx.constant_shape(1)
    if size.ndims != 2:
        size = TensorShape([None, None])
    return TensorShape([grads[0]]).concatenate(size).concatenate(TensorShape([grads[3]]))


_JPEG = {"channels": 0, "ratio": 1, "fancy_upscaling": True, "try_recover_truncated": False,
         "acceptable_fraction": 1.0, "dct_method": ""}
register_op("DecodeJpeg", ["contents: string"], ["image: uint8"], attrs=_JPEG, shape_fn=_decode_shape)
register_op("DecodePng", ["contents: string"], ["image: dtype"], attrs={"channels": 0, "dtype": dtypes.uint8},
            shape_fn=_decode_shape, allowed_types={"dtype": (dtypes.uint8, dtypes.uint16)})
register_op("DecodeGif", ["contents: string"], ["image: uint8"], shape_fn=_decode_gif_shape)
register_op("DecodeImage", ["contents: string"], ["image: dtype"],
            attrs={"channels": 0, "dtype": dtypes.uint8, "expand_animations": True}, shape_fn=_decode_image_shape,
            allowed_types={"dtype": (dtypes.uint8, dtypes.uint16, dtypes.float32)})
register_op("EncodeJpeg", ["image: uint8"], ["contents: string"],
            attrs={"format": "", "quality": 95, "progressive": False, "optimize_size": False,
                   "chroma_downsampling": True, "density_unit": "in", "x_density": 300, "y_density": 300,
                   "xmp_metadata": ""}, shape_fn=_encode_shape)
register_op("EncodePng", ["image: T"], ["contents: string"], attrs={"compression": -1, "T": dtypes.uint8},
            shape_fn=_encode_shape, allowed_types={"T": (dtypes.uint8, dtypes.uint16)})

_REAL = (dtypes.int8, dtypes.uint8, dtypes.int16, dtypes.uint16, dtypes.int32, dtypes.int64, dtypes.float16,
         dtypes.float32, dtypes.float64)
_RESIZE_ATTRS = {"align_corners": False, "half_pixel_centers": False}
for _name, _out in (("ResizeBilinear", "resized_images: float32"), ("ResizeBicubic", "resized_images: float32"),
                    ("ResizeArea", "resized_images: float32"), ("ResizeNearestNeighbor", "resized_images: T")):
    # TF's ResizeArea has no half_pixel_centers attr
    attrs = {"align_corners": False} if _name == "ResizeArea" else dict(_RESIZE_ATTRS)
    register_op(_name, ["images: T", "size: int32"], [_out], attrs=attrs, shape_fn=_resize_shape,
                allowed_types={"T": _REAL})
_FLOATS = (dtypes.float16, dtypes.float32, dtypes.float64)
register_op("ResizeBilinearGrad", ["grads: float32", "original_image: T"], ["output: T"],
            attrs=dict(_RESIZE_ATTRS), shape_fn=_grad_like_original, allowed_types={"T": _FLOATS})
register_op("ResizeBicubicGrad", ["grads: float32", "original_image: T"], ["output: T"],
            attrs=dict(_RESIZE_ATTRS), shape_fn=_grad_like_original, allowed_types={"T": _FLOATS})
register_op("ResizeNearestNeighborGrad", ["grads: T", "size: int32"], ["output: T"], attrs=dict(_RESIZE_ATTRS),
            shape_fn=_nearest_grad_shape, allowed_types={"T": _REAL})

for _name in ("DecodeJpeg", "DecodePng", "DecodeGif", "DecodeImage", "EncodeJpeg", "EncodePng", "ResizeArea",
              "ResizeBilinearGrad", "ResizeBicubicGrad", "ResizeNearestNeighborGrad"):
    not_differentiable(_name)
