"""`tf.image` / `tf.io` codec extras (TF1): decode_bmp, is_jpeg,
extract_jpeg_shape and decode_and_crop_jpeg."""
from ..framework import dtypes
from ..framework.graph import get_default_graph
from ..framework.op_builder import apply_op, convert_to_tensor
from ..ops import math_ops


def decode_bmp(contents, channels=0, name=None):
    """A uint8 [height, width, channels] image from BMP bytes (channels 0: as encoded, 1, 3 or 4)."""
    return apply_op("DecodeBmp", [contents], name=name or "DecodeBmp", channels=int(channels)).outputs[0]


def is_jpeg(contents, name=None):
    """Whether the bytes start with JPEG's magic number (a bool tensor of contents' shape)."""
    with get_default_graph().name_scope(name or "is_jpeg"):
        prefix = apply_op("_BytesPrefix", [contents], name="Substr", n=3).outputs[0]
        return math_ops.equal(prefix, convert_to_tensor(b"\xff\xd8\xff", dtype=dtypes.string), name=name)


def extract_jpeg_shape(contents, output_type=dtypes.int32, name=None):
    """[height, width, channels] of a JPEG, from its header alone."""
    return apply_op("ExtractJpegShape", [contents], name=name or "ExtractJpegShape",
                    output_type=dtypes.as_dtype(output_type)).outputs[0]


def decode_and_crop_jpeg(contents, crop_window, channels=0, ratio=1, fancy_upscaling=True, try_recover_truncated=False,
                         acceptable_fraction=1, dct_method="", name=None):
    """The [y, x, height, width] window `crop_window` of a decoded JPEG."""
    return apply_op("DecodeAndCropJpeg", [contents, convert_to_tensor(crop_window, dtype=dtypes.int32)],
                    name=name or "DecodeAndCropJpeg", channels=int(channels), ratio=int(ratio),
                    fancy_upscaling=bool(fancy_upscaling), try_recover_truncated=bool(try_recover_truncated),
                    acceptable_fraction=float(acceptable_fraction), dct_method=dct_method).outputs[0]
