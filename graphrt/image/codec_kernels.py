"""Image codec kernels over Pillow (which decodes JPEG with libjpeg, as TF does).
They run on the host CPU only.

JPEG is always decoded with libjpeg's accurate integer DCT, which is TF's
`dct_method="INTEGER_ACCURATE"` (bit-exact). TF's default ("", its fast
integer DCT) cannot be asked of Pillow; it differs by a few levels.

16-bit PNGs with colour or alpha are read and written here (Pillow handles them at 8 bits only).

Channel rules follow TF: `channels=0` keeps the file's own channels; a JPEG
asked for 1 channel is decoded to grayscale by libjpeg itself (its Y
plane); a PNG asked for 1 channel from colour uses libpng's rgb-to-gray
with the weights TF gives it (0.299, 0.587: 9797, 19234, 3737 / 32768); asking for alpha adds an opaque one.
"""
import io
import struct
import zlib

import numpy as np

from .. import errors
from ..framework.registry import register_kernel

Image = ImageSequence = None  # Pillow, imported when a codec kernel first runs (importing graphrt stays cheap)


def _pillow(node):
    global Image, ImageSequence
    if Image is None:
        try:
            from PIL import Image as image_module, ImageSequence as sequence_module
        except ImportError:
            raise errors.UnimplementedError("Image codecs need Pillow: pip install Pillow", node=node) from None
        Image, ImageSequence = image_module, sequence_module


def _contents(value, node):
    value = np.asarray(value)
    if value.ndim != 0:
        raise errors.InvalidArgumentError(f"contents must be scalar, got shape {list(value.shape)}", node=node)
    data = value.item()
    return data if isinstance(data, bytes) else str(data).encode()


def image_format(data):
    if data[:3] == b"\xff\xd8\xff":
        return "jpeg"
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return "png"
    if data[:3] == b"GIF":
        return "gif"
    if data[:2] == b"BM":
        return "bmp"
    return None


def _open(data, node, what):
    try:
        im = Image.open(io.BytesIO(data))
        if what != "jpeg":
            im.load()  # a JPEG is loaded after draft() picks its decoding mode and scale
        return im
    except Exception:  # noqa: BLE001 - any decoder failure is bad input
        raise errors.InvalidArgumentError(_bad_data(what, len(data)), node=node) from None


def _bad_data(what, n):
    if what == "jpeg":
        return f"Invalid JPEG data or crop window, data size {n}"
    if what == "png":
        return "Invalid PNG data, size " + str(n)
    if what == "gif":
        return "Invalid GIF data (size " + str(n) + ")"
    return "Unknown image file format. One of JPEG, PNG, GIF, BMP required."


def _check_channels(channels, allowed, node):
    if channels not in allowed:
        raise errors.InvalidArgumentError(f"channels must be {', '.join(map(str, allowed[:-1]))} or "
                                          f"{allowed[-1]}, got {channels}", node=node)


def decode_jpeg(data, channels, ratio, node):
    _pillow(node)
    im = _open(data, node, "jpeg")
    if im.format != "JPEG":
        raise errors.InvalidArgumentError(_bad_data("jpeg", len(data)), node=node)
    mode = {1: "L", 3: "RGB"}.get(channels) or ("L" if im.mode == "L" else "RGB")
    w, h = im.size
    try:
        # libjpeg decodes to grayscale and scales by 1/ratio itself (as in TF)
        im.draft(mode, (-(-w // ratio), -(-h // ratio)))
        im.load()
        if im.mode != mode:
            im = im.convert(mode)
    except Exception:  # noqa: BLE001
        raise errors.InvalidArgumentError(_bad_data("jpeg", len(data)), node=node) from None
    return _array(im)


def _array(im):
    a = np.asarray(im)
    if a.ndim == 2:
        a = a[:, :, None]
    return np.ascontiguousarray(a)


def _gray_from_rgb(rgb):
    """libpng's png_do_rgb_to_gray without gamma, with TF's coefficients (DecodePng, channels=1)."""
    r, g, b = (rgb[..., i].astype(np.int64) for i in range(3))
    # libpng rounds 16-bit samples and truncates 8-bit ones
    gray = (9797 * r + 19234 * g + 3737 * b + (16384 if rgb.dtype == np.uint16 else 0)) >> 15
    same = (r == g) & (g == b)
    return np.where(same, r, gray).astype(rgb.dtype)[..., None]


# PNG colour types by channel count (gray, gray+alpha, RGB, RGBA) and back.
_PNG_COLOR_TYPE = {1: 0, 2: 4, 3: 2, 4: 6}
_PNG_CHANNELS = {v: k for k, v in _PNG_COLOR_TYPE.items()}


def _png_chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def _encode_png16(image, level):
    """A 16-bit PNG. Pillow cannot be given 16-bit samples with several channels (nor, from
    numpy, with one), so the file is written here (unfiltered rows: valid PNG, though not libpng's bytes)."""
    h, w, c = image.shape
    header = struct.pack(">IIBBBBB", w, h, 16, _PNG_COLOR_TYPE[c], 0, 0, 0)
    rows = image.astype(">u2").reshape(h, w * c).view(np.uint8)
    raw = np.concatenate([np.zeros((h, 1), np.uint8), rows], axis=1).tobytes()
    return (b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", header)
            + _png_chunk(b"IDAT", zlib.compress(raw, 6 if level == -1 else level)) + _png_chunk(b"IEND", b""))


def _paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = np.abs(p - a), np.abs(p - b), np.abs(p - c)
    return np.where((pa <= pb) & (pa <= pc), a, np.where(pb <= pc, b, c))


def _decode_png16(data):
    """The samples of a non-interlaced 16-bit PNG with colour or alpha, or None for any other
    PNG: Pillow reads those channels at 8 bits, losing what TF keeps."""
    if len(data) < 33 or data[12:16] != b"IHDR":
        return None
    w, h, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", data[16:29])
    if depth != 16 or color not in (2, 4, 6) or interlace:
        return None
    c, pos, idat = _PNG_CHANNELS[color], 8, []
    while pos + 8 <= len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IDAT":
            idat.append(data[pos + 8:pos + 8 + n])
        pos += 12 + n
    raw = np.frombuffer(zlib.decompress(b"".join(idat)), np.uint8)
    stride, bpp = w * c * 2, c * 2
    raw = raw[:h * (stride + 1)].reshape(h, stride + 1)
    out = np.zeros((h, stride), np.int32)
    prev = np.zeros(stride, np.int32)
    for y in range(h):
        kind, line = raw[y, 0], raw[y, 1:].astype(np.int32)
        if kind == 2:
            line = (line + prev) & 255
        elif kind in (1, 3, 4):
            # Sub, Average and Paeth predict from the pixel to the left: one pixel at a time.
            for x in range(0, stride, bpp):
                left = out[y, x - bpp:x] if x else np.zeros(bpp, np.int32)
                up = prev[x:x + bpp]
                if kind == 1:
                    pred = left
                elif kind == 3:
                    pred = (left + up) >> 1
                else:
                    pred = _paeth(left, up, prev[x - bpp:x] if x else np.zeros(bpp, np.int32))
                out[y, x:x + bpp] = (line[x:x + bpp] + pred) & 255
            prev = out[y]
            continue
        out[y] = line
        prev = out[y]
    return np.ascontiguousarray(out.astype(np.uint8).view(">u2").astype(np.uint16).reshape(h, w, c))


def decode_png(data, channels, dtype, node):
    _pillow(node)
    im = _open(data, node, "png")
    if im.format != "PNG":
        raise errors.InvalidArgumentError(_bad_data("png", len(data)), node=node)
    sixteen = im.mode in ("I", "I;16", "I;16B", "I;16L")
    if im.mode == "P":
        im = im.convert("RGBA" if "transparency" in im.info else "RGB")
    elif im.mode in ("1",):
        im = im.convert("L")
    a = _decode_png16(data)
    if a is None:
        a = np.asarray(im)
    if sixteen:
        a = a.astype(np.uint16)
    if a.ndim == 2:
        a = a[:, :, None]
    have = a.shape[2]
    if channels == 0:
        out = a
    else:
        color = a[..., :3] if have >= 3 else np.repeat(a[..., :1], 3, axis=2)
        alpha = a[..., 3:4] if have == 4 else a[..., 1:2] if have == 2 else None
        if channels == 1:
            out = a[..., :1] if have <= 2 else _gray_from_rgb(color)
        elif channels == 3:
            out = color
        else:
            if alpha is None:
                alpha = np.full(a.shape[:2] + (1,), 65535 if a.dtype == np.uint16 else 255, dtype=a.dtype)
            out = np.concatenate([color, alpha], axis=2)
    out = np.ascontiguousarray(out)
    return out if dtype is None else _as_depth(out, dtype)


def _as_depth(a, dtype):
    """8-bit <-> 16-bit samples as TF converts them (x257 up, >>8 down)."""
    if dtype == np.uint16 and a.dtype == np.uint8:
        return a.astype(np.uint16) * 257
    if dtype == np.uint8 and a.dtype == np.uint16:
        return (a >> 8).astype(np.uint8)
    return a.astype(dtype, copy=False)


def decode_gif(data, node):
    _pillow(node)
    im = _open(data, node, "gif")
    if im.format != "GIF":
        raise errors.InvalidArgumentError(_bad_data("gif", len(data)), node=node)
    frames = [np.asarray(frame.convert("RGB")) for frame in ImageSequence.Iterator(im)]
    return np.ascontiguousarray(np.stack(frames))


@register_kernel("DecodeJpeg", "CPU", host_only=True)
def _decode_jpeg(ctx):
    node, channels, ratio = ctx.name, int(ctx.attr("channels")), int(ctx.attr("ratio"))
    _check_channels(channels, (0, 1, 3), node)
    if ratio not in (1, 2, 4, 8):
        raise errors.InvalidArgumentError(f"ratio must be 1, 2, 4, or 8, got {ratio}", node=node)
    return lambda contents: decode_jpeg(_contents(contents, node), channels, ratio, node)


@register_kernel("DecodePng", "CPU", host_only=True)
def _decode_png(ctx):
    node, channels, dtype = ctx.name, int(ctx.attr("channels")), ctx.attr("dtype").np
    _check_channels(channels, (0, 1, 3, 4), node)
    return lambda contents: decode_png(_contents(contents, node), channels, dtype, node)


@register_kernel("DecodeGif", "CPU", host_only=True)
def _decode_gif(ctx):
    node = ctx.name
    return lambda contents: decode_gif(_contents(contents, node), node)


@register_kernel("DecodeImage", "CPU", host_only=True)
def _decode_image(ctx):
    node, channels, expand = ctx.name, int(ctx.attr("channels")), bool(ctx.attr("expand_animations"))
    dtype = ctx.attr("dtype")
    _check_channels(channels, (0, 1, 3, 4), node)

    def decode(contents):
        data = _contents(contents, node)
        kind = image_format(data)
        if kind is None:
            raise errors.InvalidArgumentError(_bad_data(None, len(data)), node=node)
        if kind == "jpeg":
            if channels == 4:
                raise errors.InvalidArgumentError("JPEG does not support 4 channels", node=node)
            image = decode_jpeg(data, channels, 1, node)
        elif kind == "png":
            # float32 keeps a 16-bit file's precision (its own depth, scaled by _convert)
            image = decode_png(data, channels, {"uint8": np.uint8, "uint16": np.uint16}.get(dtype.name), node)
        elif kind == "gif":
            if channels not in (0, 3):
                raise errors.InvalidArgumentError(f"channels must be 0 or 3 for GIF, got {channels}", node=node)
            image = decode_gif(data, node)
            if not expand:
                image = image[0]
        else:
            _pillow(node)
            im = _open(data, node, "bmp").convert("RGBA" if channels == 4 else "L" if channels == 1 else "RGB")
            image = _array(im)
        if kind != "png" and dtype.name == "uint16":
            # TF widens 8-bit JPEG, GIF and BMP samples by a shift (x256); PNG's libpng by x257
            return image.astype(np.uint16) << 8
        return _convert(image, dtype)
    return decode


def _convert(image, dtype):
    """The decoded samples in `dtype`, scaled as convert_image_dtype scales them."""
    if dtype.name == "float32":
        top = 65535.0 if image.dtype == np.uint16 else 255.0
        return (image.astype(np.float32) * np.float32(1.0 / top)).astype(np.float32)
    return _as_depth(image, dtype.np)


def _pil_image(image, node):
    _pillow(node)
    image = np.asarray(image)
    if image.ndim != 3:
        raise errors.InvalidArgumentError(f"image must be 3-dimensional{list(image.shape)}", node=node)
    c = image.shape[2]
    modes = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}
    if c not in modes:
        raise errors.InvalidArgumentError(f"image must have 1, 2, 3, or 4 channels, got {c}", node=node)
    return Image.fromarray(image[:, :, 0] if c == 1 else image, mode=modes[c])


@register_kernel("EncodeJpeg", "CPU", host_only=True)
def _encode_jpeg(ctx):
    node = ctx.name
    quality = int(ctx.attr("quality"))
    fmt = ctx.attr("format")
    options = {"quality": quality, "progressive": bool(ctx.attr("progressive")),
               "optimize": bool(ctx.attr("optimize_size")),
               "subsampling": 2 if ctx.attr("chroma_downsampling") else 0}
    if ctx.attr("density_unit") in ("in", "cm"):
        options["dpi"] = (int(ctx.attr("x_density")), int(ctx.attr("y_density")))
    if not 0 <= quality <= 100:
        raise errors.InvalidArgumentError(f"quality must be in [0,100], got {quality}", node=node)

    def encode(image):
        _pillow(node)
        image = np.asarray(image)
        if image.ndim != 3:
            raise errors.InvalidArgumentError(f"image must be 3-dimensional{list(image.shape)}", node=node)
        c = image.shape[2]
        want = {"grayscale": 1, "rgb": 3}.get(fmt)
        if want is not None and c != want or c not in (1, 3):
            raise errors.InvalidArgumentError(f"image must have 1 or 3 channels, got {list(image.shape)}",
                                              node=node)
        buf = io.BytesIO()
        _pil_image(image, node).save(buf, format="JPEG", **options)
        return np.array(buf.getvalue(), dtype=object)
    return encode


@register_kernel("EncodePng", "CPU", host_only=True)
def _encode_png(ctx):
    node = ctx.name
    level = int(ctx.attr("compression"))
    if not -1 <= level <= 9:
        raise errors.InvalidArgumentError(f"compression should be in [-1,9], got {level}", node=node)

    def encode(image):
        _pillow(node)
        image = np.asarray(image)
        if image.dtype == np.uint16 and image.ndim == 3 and image.shape[2] in _PNG_COLOR_TYPE:
            return np.array(_encode_png16(image, level), dtype=object)
        buf = io.BytesIO()
        _pil_image(image, node).save(buf, format="PNG", compress_level=6 if level == -1 else level)
        return np.array(buf.getvalue(), dtype=object)
    return encode
