"""DecodeBmp, ExtractJpegShape and DecodeAndCropJpeg over Pillow (host CPU
only, as the other codecs), and `_BytesPrefix` for tf.image.is_jpeg.

ExtractJpegShape reads only the JPEG header. DecodeAndCropJpeg decodes the
whole image and slices the window (TF asks libjpeg to skip the rest; the
pixels are the same)."""
import io

import numpy as np

from .. import errors
from ..framework.registry import register_kernel
from . import codec_kernels
from .codec_kernels import _bad_data, _check_channels, _contents, decode_jpeg


def decode_bmp(data, channels, node):
    codec_kernels._pillow(node)
    if data[:2] != b"BM":
        raise errors.InvalidArgumentError("Malformed BMP: missing 'BM' magic", node=node)
    im = codec_kernels._open(data, node, "bmp")
    has_alpha = im.mode in ("RGBA", "LA")
    if channels == 0:
        channels = 4 if has_alpha else 1 if im.mode in ("L", "1") else 3
    return codec_kernels._array(im.convert({1: "L", 3: "RGB", 4: "RGBA"}[channels]))


def jpeg_shape(data, node):
    codec_kernels._pillow(node)
    try:
        im = codec_kernels.Image.open(io.BytesIO(data))
    except Exception:  # noqa: BLE001 - any header failure is bad input
        raise errors.InvalidArgumentError(_bad_data("jpeg", len(data)), node=node) from None
    if im.format != "JPEG":
        raise errors.InvalidArgumentError(_bad_data("jpeg", len(data)), node=node)
    w, h = im.size
    return h, w, {"L": 1, "CMYK": 4}.get(im.mode, 3)


@register_kernel("DecodeBmp", "CPU", host_only=True)
def _decode_bmp(ctx):
    node, channels = ctx.name, int(ctx.attr("channels"))
    _check_channels(channels, (0, 1, 3, 4), node)
    return lambda contents: decode_bmp(_contents(contents, node), channels, node)


@register_kernel("ExtractJpegShape", "CPU", host_only=True)
def _extract_jpeg_shape(ctx):
    node, dtype = ctx.name, ctx.attr("output_type").np
    return lambda contents: np.array(jpeg_shape(_contents(contents, node), node), dtype=dtype)


@register_kernel("DecodeAndCropJpeg", "CPU", host_only=True, host_memory=("crop_window",))
def _decode_and_crop_jpeg(ctx):
    node, channels, ratio = ctx.name, int(ctx.attr("channels")), int(ctx.attr("ratio"))
    _check_channels(channels, (0, 1, 3), node)
    if ratio not in (1, 2, 4, 8):
        raise errors.InvalidArgumentError(f"ratio must be 1, 2, 4, or 8, got {ratio}", node=node)

    def decode(contents, window):
        window = np.asarray(window)
        if window.shape != (4,):
            raise errors.InvalidArgumentError(f"crop_window must be shape [4], got {list(window.shape)}", node=node)
        data = _contents(contents, node)
        image = decode_jpeg(data, channels, ratio, node)
        y, x, h, w = (int(v) for v in window)
        if y < 0 or x < 0 or h <= 0 or w <= 0 or y + h > image.shape[0] or x + w > image.shape[1]:
            raise errors.InvalidArgumentError(_bad_data("jpeg", len(data)), node=node)
        return np.ascontiguousarray(image[y:y + h, x:x + w])
    return decode


@register_kernel("_BytesPrefix", ("CPU",), host_only=True)
def _bytes_prefix(ctx):
    n = int(ctx.attr("n"))

    def prefix(contents):
        contents = np.asarray(contents, dtype=object)
        out = np.empty(contents.shape, dtype=object)
        for i, v in np.ndenumerate(contents):
            out[i] = (v if isinstance(v, bytes) else str(v).encode())[:n]
        return out
    return prefix
