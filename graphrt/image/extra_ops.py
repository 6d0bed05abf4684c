"""Declarations of the image ops beyond codecs and resizes, under TF's names,
dtypes and attrs: colour spaces (RGBToHSV, HSVToRGB, AdjustHue,
AdjustSaturation), CropAndResize and its two gradient ops, the
non-max-suppression family, DrawBoundingBoxes(V2),
SampleDistortedBoundingBoxV2, ExtractImagePatches, and the codec extras
DecodeBmp, ExtractJpegShape and DecodeAndCropJpeg."""
from ..framework import dtypes
from ..framework.registry import REQUIRED, not_differentiable, register_op
from ..framework.tensor_shape import TensorShape
from .ops import _JPEG, _scalar_contents

_FLOATS = (dtypes.float16, dtypes.float32, dtypes.float64)
_HALF_FLOAT = (dtypes.float16, dtypes.float32)
_REAL = (dtypes.uint8, dtypes.uint16, dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64, dtypes.float16,
         dtypes.float32, dtypes.float64)
_INTS = (dtypes.int32, dtypes.int64)


def _rank(shape, rank, what=""):
    if shape.ndims is not None and shape.ndims != rank:
        raise ValueError(f"Shape must be rank {rank} but is rank {shape.ndims}{what}")
    return shape.with_rank(rank)


def _rgb_shape(ctx):
    s = ctx.shape(0).with_rank_at_least(1)
    if s.ndims is not None and s[-1] is not None and s[-1] != 3:
        raise ValueError(f"Dimension must be 3 but is {s[-1]}")
    return s


def _scalar_input(ctx, i, what):
    _rank(ctx.shape(i), 0, f" ({what})")


def _adjust_shape(what):
    def shape_fn(ctx):
        s = ctx.shape(0).with_rank_at_least(3)
        _scalar_input(ctx, 1, what)
        return s
    return shape_fn


register_op("RGBToHSV", ["images: T"], ["output: T"], attrs={"T": dtypes.float32}, shape_fn=_rgb_shape,
            allowed_types={"T": _FLOATS})
register_op("HSVToRGB", ["images: T"], ["output: T"], attrs={"T": dtypes.float32}, shape_fn=_rgb_shape,
            allowed_types={"T": _FLOATS})
register_op("AdjustHue", ["images: T", "delta: float32"], ["output: T"], attrs={"T": dtypes.float32},
            shape_fn=_adjust_shape("delta"), allowed_types={"T": _HALF_FLOAT})
register_op("AdjustSaturation", ["images: T", "scale: float32"], ["output: T"], attrs={"T": dtypes.float32},
            shape_fn=_adjust_shape("scale"), allowed_types={"T": _HALF_FLOAT})


# -- crop and resize ---------------------------------------------------------------------------

def _crop_and_resize_shape(ctx):
    image = _rank(ctx.shape(0), 4)
    boxes = _rank(ctx.shape(1), 2)
    box_index = _rank(ctx.shape(2), 1)
    if boxes[1] is not None and boxes[1] != 4:
        raise ValueError(f"Dimension must be 4 but is {boxes[1]}")
    num = boxes[0] if boxes[0] is not None else box_index[0]
    if boxes[0] is not None and box_index[0] is not None and boxes[0] != box_index[0]:
        raise ValueError(f"Dimensions must be equal, but are {boxes[0]} and {box_index[0]}")
    _rank(ctx.shape(3), 1)
    size = ctx.constant_shape(3)
    if size.ndims != 2:
        size = TensorShape([None, None])
    return TensorShape([num]).concatenate(size).concatenate(TensorShape([image[3]]))


def _crop_grad_image_shape(ctx):
    _rank(ctx.shape(0), 4)
    _rank(ctx.shape(3), 1)
    size = ctx.constant_shape(3)
    return size if size.ndims == 4 else TensorShape([None] * 4)


def _crop_grad_boxes_shape(ctx):
    _rank(ctx.shape(0), 4)
    return _rank(ctx.shape(2), 2)


register_op("CropAndResize", ["image: T", "boxes: float32", "box_ind: int32", "crop_size: int32"],
            ["crops: float32"], attrs={"method": "bilinear", "extrapolation_value": 0.0},
            shape_fn=_crop_and_resize_shape, allowed_types={"T": _REAL})
register_op("CropAndResizeGradImage", ["grads: float32", "boxes: float32", "box_ind: int32", "image_size: int32"],
            ["output: T"], attrs={"method": "bilinear"}, shape_fn=_crop_grad_image_shape,
            allowed_types={"T": _FLOATS})
register_op("CropAndResizeGradBoxes", ["grads: float32", "image: T", "boxes: float32", "box_ind: int32"],
            ["output: float32"], attrs={"method": "bilinear"}, shape_fn=_crop_grad_boxes_shape,
            allowed_types={"T": _REAL})


# -- non-max suppression -----------------------------------------------------------------------

def _nms_inputs(ctx, scalars, what):
    boxes = _rank(ctx.shape(0), 2, f" ({what})")
    if boxes[1] is not None and boxes[1] != 4:
        raise ValueError(f"Dimension must be 4 but is {boxes[1]}")
    _rank(ctx.shape(1), 1)
    for i in range(2, 2 + scalars):
        _rank(ctx.shape(i), 0)


def _nms_v3_shape(ctx):
    _nms_inputs(ctx, 3, "boxes")
    return TensorShape([None])


def _nms_v4_shape(ctx):
    _nms_inputs(ctx, 3, "boxes")
    size = ctx.constant(2)
    n = int(size) if ctx.attr("pad_to_max_output_size") and size is not None else None
    return [TensorShape([n]), TensorShape([])]


def _nms_v5_shape(ctx):
    _nms_inputs(ctx, 4, "boxes")
    size = ctx.constant(2)
    n = int(size) if ctx.attr("pad_to_max_output_size") and size is not None else None
    return [TensorShape([n]), TensorShape([n]), TensorShape([])]


def _nms_overlaps_shape(ctx):
    overlaps = _rank(ctx.shape(0), 2, " (overlaps)")
    if overlaps[0] is not None and overlaps[1] is not None and overlaps[0] != overlaps[1]:
        raise ValueError(f"Dimensions must be equal, but are {overlaps[0]} and {overlaps[1]}")
    _rank(ctx.shape(1), 1)
    for i in (2, 3, 4):
        _rank(ctx.shape(i), 0)
    return TensorShape([None])


def _combined_nms_shape(ctx):
    boxes = _rank(ctx.shape(0), 4, " (boxes)")
    _rank(ctx.shape(1), 3, " (scores)")
    for i in (2, 3, 4, 5):
        _rank(ctx.shape(i), 0)
    total = ctx.constant(3)
    n = int(total) if total is not None else None
    batch = boxes[0]
    return [TensorShape([batch, n, 4]), TensorShape([batch, n]), TensorShape([batch, n]), TensorShape([batch])]


_NMS_TYPES = {"T": _HALF_FLOAT, "T_threshold": _HALF_FLOAT}
register_op("NonMaxSuppressionV3", ["boxes: T", "scores: T", "max_output_size: int32", "iou_threshold: T_threshold",
                                    "score_threshold: T_threshold"], ["selected_indices: int32"],
            attrs={"T": dtypes.float32, "T_threshold": dtypes.float32}, shape_fn=_nms_v3_shape,
            allowed_types=_NMS_TYPES)
register_op("NonMaxSuppressionV4", ["boxes: T", "scores: T", "max_output_size: int32", "iou_threshold: T_threshold",
                                    "score_threshold: T_threshold"],
            ["selected_indices: int32", "valid_outputs: int32"],
            attrs={"T": dtypes.float32, "T_threshold": dtypes.float32, "pad_to_max_output_size": False},
            shape_fn=_nms_v4_shape, allowed_types=_NMS_TYPES)
register_op("NonMaxSuppressionV5", ["boxes: T", "scores: T", "max_output_size: int32", "iou_threshold: T",
                                    "score_threshold: T", "soft_nms_sigma: T"],
            ["selected_indices: int32", "selected_scores: T", "valid_outputs: int32"],
            attrs={"T": dtypes.float32, "pad_to_max_output_size": False}, shape_fn=_nms_v5_shape,
            allowed_types={"T": _HALF_FLOAT})
register_op("NonMaxSuppressionWithOverlaps", ["overlaps: float32", "scores: float32", "max_output_size: int32",
                                              "overlap_threshold: float32", "score_threshold: float32"],
            ["selected_indices: int32"], shape_fn=_nms_overlaps_shape)
register_op("CombinedNonMaxSuppression", ["boxes: float32", "scores: float32", "max_output_size_per_class: int32",
                                          "max_total_size: int32", "iou_threshold: float32",
                                          "score_threshold: float32"],
            ["nmsed_boxes: float32", "nmsed_scores: float32", "nmsed_classes: float32", "valid_detections: int32"],
            attrs={"pad_per_class": False, "clip_boxes": True}, shape_fn=_combined_nms_shape)


# -- boxes -------------------------------------------------------------------------------------

def _draw_shape(ctx):
    images = _rank(ctx.shape(0), 4, " (images)")
    if images[3] is not None and images[3] not in (1, 3, 4):
        raise ValueError("Channel depth should be either 1 (GRY), 3 (RGB), or 4 (RGBA)")
    return images


register_op("DrawBoundingBoxes", ["images: T", "boxes: float32"], ["output: T"], attrs={"T": dtypes.float32},
            shape_fn=_draw_shape, allowed_types={"T": _HALF_FLOAT})
register_op("DrawBoundingBoxesV2", ["images: T", "boxes: float32", "colors: float32"], ["output: T"],
            attrs={"T": dtypes.float32}, shape_fn=_draw_shape, allowed_types={"T": _HALF_FLOAT})


def _sample_box_shape(ctx):
    _rank(ctx.shape(0), 1, " (image_size)")
    _rank(ctx.shape(1), 3, " (bounding_boxes)")
    _rank(ctx.shape(2), 0, " (min_object_covered)")
    return [TensorShape([3]), TensorShape([3]), TensorShape([1, 1, 4])]


register_op("SampleDistortedBoundingBoxV2", ["image_size: T", "bounding_boxes: float32",
                                             "min_object_covered: float32"],
            ["begin: T", "size: T", "bboxes: float32"],
            attrs={"seed": 0, "seed2": 0, "aspect_ratio_range": [0.75, 1.33], "area_range": [0.05, 1.0],
                   "max_attempts": 100, "use_image_if_no_bounding_boxes": False},
            shape_fn=_sample_box_shape, is_stateful=True,
            allowed_types={"T": (dtypes.uint8, dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64)})


# -- patches -----------------------------------------------------------------------------------

def patch_geometry(size, k, stride, rate, padding):
    """(output size, padding before) of one spatial dimension (TF's GetWindowedOutputSize)."""
    effective = k + (k - 1) * (rate - 1)
    if padding == "VALID":
        out = (size - effective + stride) // stride
        if out < 0:
            raise ValueError(f"Computed output size would be negative: {out} [input_size: {size}, "
                             f"effective_filter_size: {effective}, stride: {stride}]")
        return out, 0
    out = -(-size // stride)
    return out, max((out - 1) * stride + effective - size, 0) // 2


def _patches_shape(ctx):
    images = _rank(ctx.shape(0), 4, " (images)")
    ksizes, strides, rates = (ctx.attr(a) for a in ("ksizes", "strides", "rates"))
    for what, v in (("ksizes", ksizes), ("strides", strides), ("rates", rates)):
        if len(v) != 4:
            raise ValueError(f"ExtractImagePatches requires the {what} attribute to contain 4 values, but got: "
                             f"{len(v)}")
    depth = None if images[3] is None else images[3] * ksizes[1] * ksizes[2]
    dims = []
    for axis in (1, 2):
        size = images[axis]
        dims.append(None if size is None else patch_geometry(size, ksizes[axis], strides[axis], rates[axis],
                                                             ctx.attr("padding"))[0])
    return TensorShape([images[0], dims[0], dims[1], depth])


register_op("ExtractImagePatches", ["images: T"], ["patches: T"],
            attrs={"ksizes": REQUIRED, "strides": REQUIRED, "rates": REQUIRED, "padding": REQUIRED},
            shape_fn=_patches_shape, allowed_types={"T": _REAL + (dtypes.bool,)})


# -- codecs ------------------------------------------------------------------------------------

def _bmp_shape(ctx):
    _scalar_contents(ctx)
    return TensorShape([None, None, ctx.attr("channels") or None])


def _jpeg_shape_shape(ctx):
    _scalar_contents(ctx)
    return TensorShape([3])


def _crop_jpeg_shape(ctx):
    _scalar_contents(ctx)
    _rank(ctx.shape(1), 1, " (crop_window)")
    window = ctx.constant(1)
    h, w = (int(window[2]), int(window[3])) if window is not None and len(window) == 4 else (None, None)
    return TensorShape([h, w, ctx.attr("channels") or None])


def _prefix_shape(ctx):
    return ctx.shape(0)


register_op("DecodeBmp", ["contents: string"], ["image: uint8"], attrs={"channels": 0}, shape_fn=_bmp_shape)
register_op("ExtractJpegShape", ["contents: string"], ["image_shape: output_type"],
            attrs={"output_type": dtypes.int32}, shape_fn=_jpeg_shape_shape, allowed_types={"output_type": _INTS})
register_op("DecodeAndCropJpeg", ["contents: string", "crop_window: int32"], ["image: uint8"], attrs=dict(_JPEG),
            shape_fn=_crop_jpeg_shape)
# graphrt's stand-in for TF's Substr(contents, 0, n), which tf.image.is_jpeg uses (graphrt has no string ops)
register_op("_BytesPrefix", ["contents: string"], ["prefix: string"], attrs={"n": REQUIRED}, shape_fn=_prefix_shape)

# as TF: the others (AdjustHue, AdjustSaturation, NonMaxSuppressionV3-5, ...) have no gradient at all, so
# differentiating through them is a LookupError
for _name in ("HSVToRGB", "DrawBoundingBoxes", "SampleDistortedBoundingBoxV2", "NonMaxSuppressionWithOverlaps",
              "_BytesPrefix"):
    not_differentiable(_name)
