"""`tf.image` (TF1): codecs, resizes, dtype conversion and simple adjustments,
built from the image ops and ordinary math ops as TF's image_ops_impl builds them.

    image = tf.image.decode_jpeg(tf.read_file("cat.jpg"), channels=3)
    image = tf.image.resize_images(image, [64, 64])             # float32, bilinear
    image = tf.image.per_image_standardization(image)
"""
import numpy as np

from ..framework import dtypes
from ..framework.constant_value import constant_value
from ..framework.graph import get_default_graph
from ..framework.op_builder import apply_op, convert_to_tensor
from ..framework.tensor_shape import TensorShape
from ..ops import array_ops, control_flow_ops, control_ops, math_ops, random_ops


class ResizeMethod:
    """TF1's resize method constants (tf.image.ResizeMethod)."""
    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


# -- codecs ----------------------------------------------------------------------------------

def decode_jpeg(contents, channels=0, ratio=1, fancy_upscaling=True, try_recover_truncated=False,
                acceptable_fraction=1, dct_method="", name=None):
    """A uint8 [height, width, channels] image from JPEG bytes (channels 0: as encoded, 1 or 3)."""
    return apply_op("DecodeJpeg", [contents], name=name or "DecodeJpeg", channels=int(channels), ratio=int(ratio),
                    fancy_upscaling=bool(fancy_upscaling), try_recover_truncated=bool(try_recover_truncated),
                    acceptable_fraction=float(acceptable_fraction), dct_method=dct_method).outputs[0]


def decode_png(contents, channels=0, dtype=dtypes.uint8, name=None):
    """A uint8 or uint16 [height, width, channels] image from PNG bytes (channels 0, 1, 3 or 4)."""
    return apply_op("DecodePng", [contents], name=name or "DecodePng", channels=int(channels),
                    dtype=dtypes.as_dtype(dtype)).outputs[0]


def decode_gif(contents, name=None):
    """A uint8 [frames, height, width, 3] tensor from GIF bytes."""
    return apply_op("DecodeGif", [contents], name=name or "DecodeGif").outputs[0]


def decode_image(contents, channels=None, dtype=dtypes.uint8, name=None, expand_animations=True):
    """Decodes JPEG, PNG, GIF or BMP bytes, whichever they are: [h, w, c], or
    [frames, h, w, 3] for a GIF with `expand_animations`. A float dtype is scaled to [0, 1]."""
    channels, dtype = int(channels or 0), dtypes.as_dtype(dtype)
    with get_default_graph().name_scope(name or "decode_image"):
        # as TF: other dtypes are decoded to uint16, then converted
        decoded = dtype if dtype in (dtypes.float32, dtypes.uint8, dtypes.uint16) else dtypes.uint16
        image = apply_op("DecodeImage", [contents], name="DecodeImage", channels=channels, dtype=decoded,
                         expand_animations=bool(expand_animations)).outputs[0]
        if decoded != dtype:
            image = convert_image_dtype(image, dtype)
        if not expand_animations:
            image.set_shape([None, None, channels or None])
        return image


def encode_jpeg(image, format="", quality=95, progressive=False, optimize_size=False,  # noqa: A002 - TF's name
                chroma_downsampling=True, density_unit="in", x_density=300, y_density=300, xmp_metadata="",
                name=None):
    """JPEG bytes of a uint8 [height, width, 1 or 3] image."""
    return apply_op("EncodeJpeg", [image], name=name or "EncodeJpeg", format=format, quality=int(quality),
                    progressive=bool(progressive), optimize_size=bool(optimize_size),
                    chroma_downsampling=bool(chroma_downsampling), density_unit=density_unit,
                    x_density=int(x_density), y_density=int(y_density), xmp_metadata=xmp_metadata).outputs[0]


def encode_png(image, compression=-1, name=None):
    """PNG bytes of a uint8 or uint16 [height, width, channels] image."""
    # Converted first (as TF does) so a uint16 array keeps its dtype rather than taking T's default.
    return apply_op("EncodePng", [convert_to_tensor(image)], name=name or "EncodePng",
                    compression=int(compression)).outputs[0]


# -- resizing --------------------------------------------------------------------------------

def _resize_op(op_type, default_name):
    def resize(images, size, align_corners=False, name=None, half_pixel_centers=False):
        return apply_op(op_type, [images, convert_to_tensor(size, dtype=dtypes.int32, name="size")],
                        name=name or default_name, align_corners=bool(align_corners),
                        half_pixel_centers=bool(half_pixel_centers)).outputs[0]
    resize.__name__ = default_name
    resize.__doc__ = (f"`{op_type}` of a 4-D batch [batch, height, width, channels] to `size` [new_height, "
                      f"new_width] (TF1 sampling; see graphrt/image/resize_kernels.py).")
    return resize


resize_bilinear = _resize_op("ResizeBilinear", "ResizeBilinear")
resize_nearest_neighbor = _resize_op("ResizeNearestNeighbor", "ResizeNearestNeighbor")
resize_bicubic = _resize_op("ResizeBicubic", "ResizeBicubic")


def resize_area(images, size, align_corners=False, name=None):
    """`ResizeArea` of a 4-D batch to `size` (TF's op has no half_pixel_centers)."""
    return apply_op("ResizeArea", [images, convert_to_tensor(size, dtype=dtypes.int32, name="size")],
                    name=name or "ResizeArea", align_corners=bool(align_corners)).outputs[0]


# TF2's tf.image.ResizeMethod names, which TF's v1 resize_images accepts too
_METHOD_NAMES = {"bilinear": ResizeMethod.BILINEAR, "nearest": ResizeMethod.NEAREST_NEIGHBOR,
                 "bicubic": ResizeMethod.BICUBIC, "area": ResizeMethod.AREA}
_RESIZERS = {ResizeMethod.BILINEAR: resize_bilinear, ResizeMethod.NEAREST_NEIGHBOR: resize_nearest_neighbor,
             ResizeMethod.BICUBIC: resize_bicubic, ResizeMethod.AREA: resize_area}


def _has_float(value):
    if isinstance(value, (list, tuple)):
        return any(_has_float(v) for v in value)
    return isinstance(value, (float, np.floating)) or isinstance(value, np.ndarray) and value.dtype.kind == "f"


def resize_images(images, size, method=ResizeMethod.BILINEAR, align_corners=False, preserve_aspect_ratio=False,
                  name=None):
    """Resizes a [h, w, c] image or a [batch, h, w, c] batch to `size` (TF1's v1 resize):
    a float32 result except with NEAREST_NEIGHBOR; the input as is when the size is unchanged."""
    resizer = _RESIZERS.get(_METHOD_NAMES.get(method, method) if isinstance(method, str) else method)
    g = get_default_graph()
    with g.name_scope(name or "resize"):
        images = convert_to_tensor(images, name="images")
        if images.shape.ndims is None:
            raise ValueError("'images' contains no shape.")
        is_batch = images.shape.ndims == 4
        if images.shape.ndims == 3:
            images = array_ops.expand_dims(images, 0)
        elif not is_batch:
            raise ValueError("'images' must have either 3 or 4 dimensions.")
        _, height, width, _ = images.shape.as_list()
        try:
            # TF will not convert float sizes to int32
            if _has_float(size):
                raise TypeError(size)
            size = convert_to_tensor(size, dtypes.int32, name="size")
        except (TypeError, ValueError):
            raise ValueError("'size' must be a 1-D int32 Tensor") from None
        if not size.shape.is_compatible_with([2]):
            raise ValueError("'size' must be a 1-D Tensor of 2 elements: new_height, new_width")
        known, folded = constant_value(size), None
        if preserve_aspect_ratio:
            dims = array_ops.shape(images)
            cur_h, cur_w = math_ops.cast(dims[1], dtypes.float32), math_ops.cast(dims[2], dtypes.float32)
            factor = math_ops.minimum(math_ops.cast(size[0], dtypes.float32) / cur_h,
                                      math_ops.cast(size[1], dtypes.float32) / cur_w)
            size = array_ops.stack([math_ops.cast(math_ops.round(factor * cur_h), dtypes.int32),
                                    math_ops.cast(math_ops.round(factor * cur_w), dtypes.int32)], name="size")
            # TF's Python sees no constant size here (so never skips the resize), but its C++
            # shape function folds the arithmetic when the sizes are static: the same float32 steps
            if known is not None and None not in (height, width):
                f32 = np.float32
                factor = min(f32(known[0]) / f32(height), f32(known[1]) / f32(width))
                folded = [int(np.round(f32(factor * f32(height)))), int(np.round(f32(factor * f32(width))))]
            known = None
        new_h, new_w = (int(known[0]), int(known[1])) if known is not None else (None, None)
        if None not in (new_h, new_w, height, width) and (new_h, new_w) == (height, width):
            return images if is_batch else array_ops.squeeze(images, axis=[0])
        if resizer is None:
            raise ValueError(f"Resize method is not implemented: {method}")
        images = resizer(images, size, align_corners=align_corners)
        if folded is not None:
            new_h, new_w = folded
        images.set_shape([None, new_h, new_w, None])
        return images if is_batch else array_ops.squeeze(images, axis=[0])


# -- dtypes and adjustments -----------------------------------------------------------------

def _saturate_cast(value, dtype, name=None):
    """Clamps to `dtype`'s range before casting (TF's saturate_cast). A limit the input dtype
    cannot hold rounds outwards when cast (float16(32767) is 32768), so, as TF, it is nudged
    inwards."""
    if value.dtype.is_floating and dtype.is_integer or value.dtype.is_integer and dtype.is_integer and \
            (value.dtype.min < dtype.min or value.dtype.max > dtype.max):
        src = value.dtype.np.type
        promoted = np.promote_types(src, dtype.np)
        lo = src(max(value.dtype.min, dtype.min))
        if np.array(lo, promoted) < np.array(dtype.min, promoted):
            lo = np.nextafter(lo, src(0), dtype=src)
        hi = src(min(float(value.dtype.max), float(dtype.max)))
        if np.array(hi, promoted) > np.array(dtype.max, promoted):
            hi = np.nextafter(hi, src(0), dtype=src)
        value = math_ops.minimum(math_ops.maximum(value, convert_to_tensor(lo, value.dtype)),
                                 convert_to_tensor(hi, value.dtype))
    return math_ops.cast(value, dtype, name=name)


def convert_image_dtype(image, dtype, saturate=False, name=None):
    """Converts between image dtypes with TF's scaling: integers span their full
    range, floats [0, 1). The result is the op named after the scope, as TF names it."""
    image = convert_to_tensor(image, name="image")
    dtype = dtypes.as_dtype(dtype)
    if not (dtype.is_floating or dtype.is_integer):
        raise AttributeError("dtype must be either floating point or integer")
    if dtype == image.dtype.base_dtype:
        return array_ops.identity(image, name=name)
    g = get_default_graph()
    with g.name_scope(name or "convert_image") as scope:
        src = image.dtype.base_dtype
        if src.is_integer and dtype.is_integer:
            scale_in, scale_out = src.max, dtype.max
            if scale_in > scale_out:
                scale = (scale_in + 1) // (scale_out + 1)
                scaled = math_ops.floordiv(image, convert_to_tensor(scale, dtype=src))
                return _saturate_cast(scaled, dtype, scope) if saturate else math_ops.cast(scaled, dtype, name=scope)
            cast = _saturate_cast(image, dtype) if saturate else math_ops.cast(image, dtype)
            scale = (scale_out + 1) // (scale_in + 1)
            return math_ops.multiply(cast, convert_to_tensor(scale, dtype=dtype), name=scope)
        if src.is_floating and dtype.is_floating:
            return math_ops.cast(image, dtype, name=scope)
        if src.is_integer:
            cast = math_ops.cast(image, dtype)
            return math_ops.multiply(cast, convert_to_tensor(1.0 / src.max, dtype=dtype), name=scope)
        scaled = math_ops.multiply(image, convert_to_tensor(dtype.max + 0.5, dtype=src))
        return _saturate_cast(scaled, dtype, scope) if saturate else math_ops.cast(scaled, dtype, name=scope)


def _as_float(image):
    if image.dtype.base_dtype in (dtypes.float16, dtypes.float32):
        return image
    return convert_image_dtype(image, dtypes.float32)


def per_image_standardization(image):
    """(image - mean) / max(stddev, 1/sqrt(num_pixels)) per image, as float32."""
    g = get_default_graph()
    with g.name_scope("per_image_standardization") as scope:
        image = convert_to_tensor(image, name="image")
        _at_least_3d(image)
        image = math_ops.cast(image, dtypes.float32)
        num_pixels = math_ops.reduce_prod(array_ops.shape(image)[-3:])
        mean = math_ops.reduce_mean(image, axis=[-1, -2, -3], keepdims=True)
        variance = math_ops.reduce_mean(math_ops.square(image - mean), axis=[-1, -2, -3], keepdims=True)
        stddev = math_ops.sqrt(variance)
        min_stddev = math_ops.rsqrt(math_ops.cast(num_pixels, dtypes.float32))
        return math_ops.divide(image - mean, math_ops.maximum(stddev, min_stddev), name=scope)


def rgb_to_grayscale(images, name=None):
    """One luma channel (weights 0.2989, 0.5870, 0.1140), in the input's dtype."""
    g = get_default_graph()
    with g.name_scope(name or "rgb_to_grayscale") as scope:
        images = convert_to_tensor(images, name="images")
        orig = images.dtype.base_dtype
        flt = convert_image_dtype(images, dtypes.float32)
        weights = convert_to_tensor([0.2989, 0.5870, 0.1140], dtype=dtypes.float32)
        gray = math_ops.reduce_sum(flt * weights, axis=-1, keepdims=True)
        return convert_image_dtype(gray, orig, name=scope)


def grayscale_to_rgb(images, name=None):
    """The one channel repeated three times."""
    g = get_default_graph()
    with g.name_scope(name or "grayscale_to_rgb"):
        images = convert_to_tensor(images, name="images")
        rank = images.shape.ndims
        return array_ops.tile(images, [1] * (rank - 1) + [3])


def adjust_brightness(image, delta):
    """Adds `delta` in the [0, 1] float scale; converted back with saturation."""
    g = get_default_graph()
    with g.name_scope("adjust_brightness"):
        image = convert_to_tensor(image, name="image")
        orig = image.dtype.base_dtype
        flt = _as_float(image)
        adjusted = math_ops.add(flt, math_ops.cast(delta, flt.dtype))
        return convert_image_dtype(adjusted, orig, saturate=True)


def adjust_contrast(images, contrast_factor):
    """(x - mean) * factor + mean, with the mean of each channel over the image."""
    g = get_default_graph()
    with g.name_scope("adjust_contrast"):
        images = convert_to_tensor(images, name="images")
        orig = images.dtype.base_dtype
        flt = _as_float(images)
        mean = math_ops.reduce_mean(flt, axis=[-3, -2], keepdims=True)
        factor = math_ops.cast(contrast_factor, flt.dtype)
        adjusted = (flt - mean) * factor + mean
        return convert_image_dtype(adjusted, orig, saturate=True)


def random_brightness(image, max_delta, seed=None):
    """adjust_brightness by a delta drawn uniformly from [-max_delta, max_delta)."""
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    delta = random_ops.random_uniform([], -max_delta, max_delta, seed=seed)
    return adjust_brightness(image, delta)


def random_contrast(image, lower, upper, seed=None):
    """adjust_contrast by a factor drawn uniformly from [lower, upper)."""
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    return adjust_contrast(image, random_ops.random_uniform([], lower, upper, seed=seed))


# -- flips and crops -----------------------------------------------------------------------

def _at_least_3d(image):
    if image.shape.ndims is not None and image.shape.ndims < 3:
        raise ValueError(f"'image' (shape {image.shape}) must be at least three-dimensional.")


def _flip(image, axis_3d, name):
    g = get_default_graph()
    with g.name_scope(name):
        image = convert_to_tensor(image, name="image")
        _at_least_3d(image)
        axis = axis_3d if image.shape.ndims == 3 else axis_3d + 1
        return array_ops.reverse(image, [axis])


def flip_left_right(image):
    """Reverses the width dimension."""
    return _flip(image, 1, "flip_left_right")


def flip_up_down(image):
    """Reverses the height dimension."""
    return _flip(image, 0, "flip_up_down")


def _random_flip(image, axis_3d, seed, name):
    g = get_default_graph()
    with g.name_scope(name):
        image = convert_to_tensor(image, name="image")
        _at_least_3d(image)
        if image.shape.ndims == 3:
            flip = math_ops.less(random_ops.random_uniform([], 0, 1.0, seed=seed), 0.5)
            return control_flow_ops.cond(flip, lambda: array_ops.reverse(image, [axis_3d]), lambda: image)
        # a batch: each image flips on its own draw
        n = array_ops.shape(image)[0]
        flips = math_ops.less(random_ops.random_uniform(array_ops.stack([n]), 0, 1.0, seed=seed), 0.5)
        flips = array_ops.reshape(flips, array_ops.stack([n, 1, 1, 1]))
        flipped = array_ops.reverse(image, [axis_3d + 1])
        return math_ops.where_v2(flips, flipped, image)


def random_flip_left_right(image, seed=None):
    """Flips the width dimension with probability 1/2 (each image of a batch on its own)."""
    return _random_flip(image, 1, seed, "random_flip_left_right")


def random_flip_up_down(image, seed=None):
    """Flips the height dimension with probability 1/2 (each image of a batch on its own)."""
    return _random_flip(image, 0, seed, "random_flip_up_down")


def random_crop(value, size, seed=None, name=None):
    """A random `size` slice of `value` (every dimension cropped at a uniform offset)."""
    g = get_default_graph()
    with g.name_scope(name or "random_crop") as scope:
        value = convert_to_tensor(value, name="value")
        size = convert_to_tensor(size, dtype=dtypes.int32, name="size")
        shape = array_ops.shape(value)
        check = _assert(math_ops.reduce_all(math_ops.greater_equal(shape, size)),
                                        ["Need value.shape >= size, got ", shape, size])
        with g.control_dependencies([check]):
            shape = array_ops.identity(shape)
        limit = shape - size + 1
        offset = math_ops.floormod(
            random_ops.random_uniform(array_ops.shape(shape), dtype=dtypes.int32, maxval=dtypes.int32.max,
                                      seed=seed), limit)
        return array_ops.slice(value, offset, size, name=scope)


def _assert(condition, data):
    from ..ops.extra_ops import assert_op  # (data of mixed dtypes)
    return assert_op(condition, data, summarize=1000)


def central_crop(image, central_fraction):
    """The central `central_fraction` of the height and width (static sizes)."""
    g = get_default_graph()
    with g.name_scope("central_crop"):
        image = convert_to_tensor(image, name="image")
        if central_fraction <= 0.0 or central_fraction > 1.0:
            raise ValueError("central_fraction must be within (0, 1]")
        if central_fraction == 1.0:
            return image
        _at_least_3d(image)
        rank = image.shape.ndims
        if rank not in (3, 4):
            raise ValueError(f"`image` should either be a Tensor with rank = 3 or rank = 4. Had rank = {rank}.")
        h_axis = rank - 3
        dims = image.shape.as_list()
        img_h, img_w = dims[h_axis], dims[h_axis + 1]
        if img_h is None or img_w is None:
            shape = array_ops.shape(image)
            hd = math_ops.cast(shape[h_axis], dtypes.float64)
            wd = math_ops.cast(shape[h_axis + 1], dtypes.float64)
            h_start = math_ops.cast((hd - hd * central_fraction) / 2, dtypes.int32)
            w_start = math_ops.cast((wd - wd * central_fraction) / 2, dtypes.int32)
            h_size, w_size = shape[h_axis] - h_start * 2, shape[h_axis + 1] - w_start * 2
        else:
            h_start = int((float(img_h) - float(img_h) * central_fraction) / 2)
            w_start = int((float(img_w) - float(img_w) * central_fraction) / 2)
            h_size, w_size = img_h - h_start * 2, img_w - w_start * 2
        if rank == 3:
            begin, size = [h_start, w_start, 0], [h_size, w_size, -1]
        else:
            begin, size = [0, h_start, w_start, 0], [-1, h_size, w_size, -1]
        return array_ops.slice(image, array_ops.stack(begin), array_ops.stack(size))


def _as_batch(image):
    """`image` as a 4-D batch (an unknown rank taken as one image, as TF does) and whether it was one."""
    ndims = image.shape.ndims
    if ndims == 4:
        return image, True
    if ndims not in (3, None):
        raise ValueError(f"'image' (shape {image.shape}) must have either 3 or 4 dimensions.")
    image = array_ops.expand_dims(image, 0)
    if ndims is None:
        image.set_shape([None] * 4)
    return image, False


def _static(*values):
    return all(isinstance(v, (int, np.integer)) for v in values)


def _check(values, condition, message):
    """TF's build-time check of offsets and sizes known in Python (tensors are checked by the kernels)."""
    if _static(*values) and not condition(*values):
        raise ValueError(message)


def _dims(image):
    """[batch, height, width, depth]: static where known, else from the shape at run time (TF's _ImageDimensions)."""
    static = image.shape.as_list()
    if None not in static:
        return static
    dynamic = array_ops.shape(image)
    return [d if d is not None else dynamic[i] for i, d in enumerate(static)]


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """The [offset, offset + target) box of the height and width."""
    g = get_default_graph()
    with g.name_scope("crop_to_bounding_box"):
        image = convert_to_tensor(image, name="image")
        image, batched = _as_batch(image)
        batch, height, width, depth = image.shape.as_list()
        _check([offset_width], lambda o: o >= 0, "offset_width must be >= 0.")
        _check([offset_height], lambda o: o >= 0, "offset_height must be >= 0.")
        _check([target_width], lambda t: t > 0, "target_width must be > 0.")
        _check([target_height], lambda t: t > 0, "target_height must be > 0.")
        _check([width, target_width, offset_width], lambda w, t, o: w >= t + o, "width must be >= target + offset.")
        _check([height, target_height, offset_height], lambda h, t, o: h >= t + o,
               "height must be >= target + offset.")
        image = control_ops.with_dependencies([], image)  # TF's (here empty) run-time checks
        out = array_ops.slice(image, array_ops.stack([0, offset_height, offset_width, 0]),
                              array_ops.stack([-1, target_height, target_width, -1]))
        out.set_shape([batch, target_height if _static(target_height) else None,
                       target_width if _static(target_width) else None, depth])
        return out if batched else array_ops.squeeze(out, axis=[0])


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """Zero-pads to [target_height, target_width], the image at the offsets."""
    g = get_default_graph()
    with g.name_scope("pad_to_bounding_box"):
        image = convert_to_tensor(image, name="image")
        image, batched = _as_batch(image)
        batch, height, width, depth = _dims(image)
        after_h = target_height - offset_height - height
        after_w = target_width - offset_width - width
        _check([offset_height], lambda o: o >= 0, "offset_height must be >= 0")
        _check([offset_width], lambda o: o >= 0, "offset_width must be >= 0")
        _check([after_w], lambda a: a >= 0, "width must be <= target - offset")
        _check([after_h], lambda a: a >= 0, "height must be <= target - offset")
        image = control_ops.with_dependencies([], image)  # TF's (here empty) run-time checks
        paddings = array_ops.reshape(array_ops.stack([0, 0, offset_height, after_h, offset_width, after_w, 0, 0]),
                                     [4, 2])
        out = array_ops.pad(image, paddings)
        out.set_shape([v if _static(v) else None for v in (batch, target_height, target_width, depth)])
        return out if batched else array_ops.squeeze(out, axis=[0])


def resize_image_with_crop_or_pad(image, target_height, target_width):
    """Crops (centrally) or zero-pads (evenly) to the target height and width."""
    g = get_default_graph()
    with g.name_scope("resize_image_with_crop_or_pad"):
        image = convert_to_tensor(image, name="image")
        image, batched = _as_batch(image)
        _check([target_width], lambda t: t > 0, "target_width must be > 0.")
        _check([target_height], lambda t: t > 0, "target_height must be > 0.")
        image = control_ops.with_dependencies([], image)  # TF's (here empty) run-time checks
        _, height, width, _ = _dims(image)
        mx, mn = (max, min) if _static(height, width, target_height, target_width) else (math_ops.maximum,
                                                                                          math_ops.minimum)
        width_diff = target_width - width
        offset_crop_width = mx(-width_diff // 2, 0)
        offset_pad_width = mx(width_diff // 2, 0)
        height_diff = target_height - height
        offset_crop_height = mx(-height_diff // 2, 0)
        offset_pad_height = mx(height_diff // 2, 0)
        cropped = crop_to_bounding_box(image, offset_crop_height, offset_crop_width, mn(target_height, height),
                                       mn(target_width, width))
        out = pad_to_bounding_box(cropped, offset_pad_height, offset_pad_width, target_height, target_width)
        out = control_ops.with_dependencies([], out)
        return out if batched else array_ops.squeeze(out, axis=[0])
