"""`tf.image.extract_glimpse` (TF1's ExtractGlimpse): a window of `size` around each image's offset.

An offset (y, x) is in pixels, or in [-1, 1] of the image with `normalized`
(multiplied by the image size); with `centered` it is halved and measured
from the image's centre (TF halves unnormalized centred offsets too). The
window's top-left corner is the offset less half the window, truncated
toward zero as TF's integer cast does. Pixels of the window outside the
image are noise drawn per image and channel: uniform between the channel's
minimum and maximum (`uniform_noise`), else normal with its mean and
standard deviation, so they differ from TensorFlow's draws.
"""
import numpy as np

from .. import errors
from ..framework import dtypes
from ..framework.op_builder import apply_op, convert_to_tensor
from ..framework.registry import not_differentiable, register_kernel, register_op
from ..framework.tensor_shape import TensorShape


def _glimpse_shape(ctx):
    images, size = ctx.shape(0), ctx.constant(1)
    if images.ndims is not None and images.ndims != 4:
        raise ValueError(f"Shape must be rank 4 but is rank {images.ndims} for '{ctx.op.name}' (op: "
                         f"'ExtractGlimpse') with input shapes: {images}")
    batch = images[0] if images.ndims else None
    channels = images[3] if images.ndims else None
    height, width = (int(size[0]), int(size[1])) if size is not None else (None, None)
    return TensorShape([batch, height, width, channels])


register_op("ExtractGlimpse", ["input: float32", "size: int32", "offsets: float32"], ["glimpse: float32"],
            attrs={"centered": True, "normalized": True, "uniform_noise": True, "noise": "uniform"},
            shape_fn=_glimpse_shape, is_stateful=True,
            doc="Windows of `size` around `offsets` of each image, noise outside the image.")
not_differentiable("ExtractGlimpse")


@register_kernel("ExtractGlimpse", "CPU", host_memory=("size",))
def _extract_glimpse(ctx):
    name = ctx.name
    centered, normalized = ctx.attr("centered"), ctx.attr("normalized")
    noise = ctx.attr("noise") or ("uniform" if ctx.attr("uniform_noise") else "gaussian")
    if noise not in ("uniform", "gaussian", "zero"):
        raise errors.InvalidArgumentError(f"{name}: noise must be 'uniform', 'gaussian' or 'zero', got {noise!r}",
                                          node=name)
    if noise == "uniform" and not ctx.attr("uniform_noise"):
        noise = "gaussian"  # TF1's uniform_noise=False
    rng = np.random.default_rng()

    def glimpse(images, size, offsets):
        images, offsets = np.asarray(images, np.float32), np.asarray(offsets, np.float32)
        if images.ndim != 4:
            raise errors.InvalidArgumentError(f"input must be 4-dimensional{list(images.shape)}", node=name)
        size = np.asarray(size).reshape(-1)
        if size.size != 2:
            raise errors.InvalidArgumentError(f"input must be a vector of size 2 (height, width){list(size.shape)}",
                                              node=name)
        batch, height, width, channels = images.shape
        if offsets.shape != (batch, 2):
            raise errors.InvalidArgumentError(f"offsets must have shape [{batch}, 2] (y, x of each image), got "
                                              f"{list(offsets.shape)}", node=name)
        out_h, out_w = int(size[0]), int(size[1])
        out = np.empty((batch, out_h, out_w, channels), np.float32)
        for b in range(batch):
            y, x = np.float32(offsets[b, 0]), np.float32(offsets[b, 1])
            if normalized:
                y, x = y * np.float32(height), x * np.float32(width)
            if centered:
                y = y / np.float32(2) + np.float32(height / 2)
                x = x / np.float32(2) + np.float32(width / 2)
            top, left = int(y - np.float32(out_h / 2)), int(x - np.float32(out_w / 2))  # toward zero, as TF's cast
            window = _noise(rng, images[b], (out_h, out_w, channels), noise)
            rows = slice(max(top, 0), min(top + out_h, height))
            cols = slice(max(left, 0), min(left + out_w, width))
            if rows.start < rows.stop and cols.start < cols.stop:
                window[rows.start - top:rows.stop - top, cols.start - left:cols.stop - left] = images[b, rows, cols]
            out[b] = window
        return out
    return glimpse


def _noise(rng, image, shape, kind):
    if kind == "zero" or image.size == 0:
        return np.zeros(shape, np.float32)
    flat = image.reshape(-1, image.shape[-1])
    if kind == "uniform":
        low, high = flat.min(axis=0), flat.max(axis=0)
        return (low + (high - low) * rng.random(shape)).astype(np.float32)
    return (flat.mean(axis=0) + flat.std(axis=0) * rng.standard_normal(shape)).astype(np.float32)


def extract_glimpse(input, size, offsets, centered=True, normalized=True, uniform_noise=True,  # noqa: A002
                    name=None):
    """TF1's `tf.image.extract_glimpse`: windows of `size` at `offsets` (y, x per image)."""
    return apply_op("ExtractGlimpse", [convert_to_tensor(input, dtype=dtypes.float32, name="input"),
                                       convert_to_tensor(size, dtype=dtypes.int32, name="size"),
                                       convert_to_tensor(offsets, dtype=dtypes.float32, name="offsets")],
                    name=name or "ExtractGlimpse", centered=bool(centered), normalized=bool(normalized),
                    uniform_noise=bool(uniform_noise), noise="uniform" if uniform_noise else "gaussian").outputs[0]
