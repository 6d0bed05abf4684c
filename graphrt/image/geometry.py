"""`tf.image` geometry (TF1): rot90, transpose, resize_image_with_pad,
crop_and_resize and patch extraction, as TF's image_ops_impl and array_ops
build them."""
from ..framework import dtypes
from ..framework.graph import get_default_graph
from ..framework.op_builder import apply_op, convert_to_tensor, is_tensor_like
from ..ops import array_ops, control_flow_ops, math_ops
from .image_ops import ResizeMethod, pad_to_bounding_box, resize_images


def _rank_3_or_4(image):
    rank = image.shape.ndims
    if rank is not None and rank < 3:
        raise ValueError(f"'image' (shape {image.shape}) must be at least three-dimensional.")
    if rank is not None and rank > 4:
        raise ValueError(f"'image' (shape {image.shape}) must have either 3 or 4 dimensions.")
    if rank is None:
        raise ValueError("'image' contains no shape.")
    return rank


def rot90(image, k=1, name=None):
    """Rotates [h, w, c] images (or a batch) counter-clockwise by k quarter turns."""
    g = get_default_graph()
    with g.name_scope(name or "rot90") as scope:
        image = convert_to_tensor(image, name="image")
        rank = _rank_3_or_4(image)
        k = convert_to_tensor(k, dtype=dtypes.int32, name="k")
        k.shape.assert_has_rank(0)
        k = math_ops.mod(k, 4)
        h = rank - 3  # the height axis
        perm = [0, 2, 1, 3] if rank == 4 else [1, 0, 2]
        branches = [
            (math_ops.equal(k, 1), lambda: array_ops.transpose(array_ops.reverse(image, [h + 1]), perm)),
            (math_ops.equal(k, 2), lambda: array_ops.reverse(image, [h, h + 1])),
            (math_ops.equal(k, 3), lambda: array_ops.reverse(array_ops.transpose(image, perm), [h + 1])),
        ]
        result = control_flow_ops.case(branches, default=lambda: image, exclusive=True, name=scope)
        dims = image.shape.as_list()
        result.set_shape([dims[0], None, None, dims[3]] if rank == 4 else [None, None, dims[2]])
        return result


def transpose(image, name=None):
    """Swaps the height and width of [h, w, c] images (or a batch)."""
    with get_default_graph().name_scope(name or "transpose"):
        image = convert_to_tensor(image, name="image")
        if image.shape.ndims is None:
            # TF picks the permutation at run time from the rank
            return control_flow_ops.cond(
                math_ops.equal(array_ops.rank(image), 3),
                lambda: array_ops.transpose(image, [1, 0, 2], name=name or "transpose"),
                lambda: array_ops.transpose(image, [0, 2, 1, 3], name=name or "transpose"))
        rank = _rank_3_or_4(image)
        return array_ops.transpose(image, [0, 2, 1, 3] if rank == 4 else [1, 0, 2], name=name or "transpose")


def resize_image_with_pad(image, target_height, target_width, method=ResizeMethod.BILINEAR, align_corners=False):
    """Resizes keeping the aspect ratio so the image fits, then zero-pads evenly to the target size."""
    g = get_default_graph()
    with g.name_scope("resize_image_with_pad"):
        image = convert_to_tensor(image, name="image")
        rank = image.shape.ndims
        is_batch = rank == 4
        if rank is None:
            raise ValueError("'image' contains no shape.")
        if rank == 3:
            image = array_ops.expand_dims(image, 0)
        elif rank != 4:
            raise ValueError(f"'image' (shape {image.shape}) must have either 3 or 4 dimensions.")
        for what, v in (("target_width", target_width), ("target_height", target_height)):
            if not is_tensor_like(v) and not v > 0:
                raise ValueError(f"{what} must be > 0.")
        dims = image.shape.as_list()
        shape = array_ops.shape(image)
        height = dims[1] if dims[1] is not None else shape[1]
        width = dims[2] if dims[2] is not None else shape[2]
        f_h, f_w = math_ops.cast(height, dtypes.float32), math_ops.cast(width, dtypes.float32)
        f_th, f_tw = math_ops.cast(target_height, dtypes.float32), math_ops.cast(target_width, dtypes.float32)
        ratio = math_ops.maximum(f_w / f_tw, f_h / f_th)
        resized_h_float, resized_w_float = f_h / ratio, f_w / ratio
        resized_h = math_ops.cast(math_ops.floor(resized_h_float), dtypes.int32)
        resized_w = math_ops.cast(math_ops.floor(resized_w_float), dtypes.int32)
        pad_h = math_ops.maximum(0, math_ops.cast(math_ops.floor((f_th - resized_h_float) / 2), dtypes.int32))
        pad_w = math_ops.maximum(0, math_ops.cast(math_ops.floor((f_tw - resized_w_float) / 2), dtypes.int32))
        resized = resize_images(image, array_ops.stack([resized_h, resized_w]), method, align_corners=align_corners)
        padded = pad_to_bounding_box(resized, pad_h, pad_w, target_height, target_width)
        return padded if is_batch else array_ops.squeeze(padded, axis=[0])


def crop_and_resize(image, boxes, box_ind=None, crop_size=None, method="bilinear", extrapolation_value=0, name=None,
                    box_indices=None):
    """Crops boxes [y1, x1, y2, x2] (normalized) of images `box_ind` and resizes each to `crop_size`."""
    if box_ind is not None and box_indices is not None:
        raise ValueError("Cannot specify both 'box_indices' and 'box_ind'")
    box_ind = box_indices if box_ind is None else box_ind
    if method not in ("bilinear", "nearest"):
        raise ValueError(f"method must be one of bilinear, nearest; got {method!r}")
    return apply_op("CropAndResize", [image, convert_to_tensor(boxes, dtype=dtypes.float32),
                                      convert_to_tensor(box_ind, dtype=dtypes.int32),
                                      convert_to_tensor(crop_size, dtype=dtypes.int32)],
                    name=name or "CropAndResize", method=method,
                    extrapolation_value=float(extrapolation_value)).outputs[0]


def _window_attr(value, what):
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"Expected list for '{what}' argument to 'extract_image_patches' Op, not {value!r}.")
    return [int(v) for v in value]


def extract_image_patches(images, ksizes=None, strides=None, rates=None, padding=None, name=None, sizes=None):
    """Every `ksizes` window of a [batch, rows, cols, depth] batch, flattened into the depth."""
    if ksizes is not None and sizes is not None:
        raise ValueError("Cannot specify both 'sizes' and 'ksizes'")
    ksizes = sizes if ksizes is None else ksizes
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"padding must be 'SAME' or 'VALID', got {padding!r}")
    return apply_op("ExtractImagePatches", [images], name=name or "ExtractImagePatches",
                    ksizes=_window_attr(ksizes, "ksizes"), strides=_window_attr(strides, "strides"),
                    rates=_window_attr(rates, "rates"), padding=padding).outputs[0]


def extract_patches(images, sizes, strides, rates, padding, name=None):
    """tf.image.extract_patches: extract_image_patches with `sizes`."""
    return extract_image_patches(images, sizes, strides, rates, padding, name=name)
