"""Summary values as TensorFlow's Summary protobuf: histograms with TF's bucket
limits, PNG images (Pillow), WAV audio (the standard library) and tensors
with plugin metadata. Pure functions from numpy values to messages, used by
the summary kernels."""
import io
import wave

import numpy as np
from tensorboard.compat.proto import summary_pb2

from .. import errors
from ..framework import tensor_util

Summary = summary_pb2.Summary
HistogramProto = summary_pb2.HistogramProto
SummaryMetadata = summary_pb2.SummaryMetadata


def _bucket_limits():
    # TF's default histogram buckets (core/lib/histogram): +-1e-12 growing by 10% to 1e20, and DBL_MAX.
    pos, v = [], 1e-12
    while v < 1e20:
        pos.append(v)
        v *= 1.1
    pos.append(np.finfo(np.float64).max)
    return np.array([-x for x in reversed(pos)] + [0.0] + pos)


_LIMITS = _bucket_limits()


def histogram(values, tag="values"):
    """TF's HistogramProto of `values`: runs of empty buckets collapse into one, as TF encodes them."""
    x = np.asarray(values, dtype=np.float64).ravel()
    if not np.all(np.isfinite(x)):
        bad = x[~np.isfinite(x)][0]
        raise errors.InvalidArgumentError(f"Nan in summary histogram for: {tag}" if np.isnan(bad) else
                                          f"Infinity in summary histogram for: {tag}")
    proto = HistogramProto()
    if x.size:
        proto.min, proto.max = float(x.min()), float(x.max())
    else:
        proto.min, proto.max = float(np.finfo(np.float64).max), float(-np.finfo(np.float64).max)
    proto.num, proto.sum, proto.sum_squares = float(x.size), float(x.sum()), float(np.dot(x, x))
    counts = np.bincount(np.searchsorted(_LIMITS, x, side="right"), minlength=len(_LIMITS))[:len(_LIMITS)]
    i, n = 0, len(_LIMITS)
    while i < n:
        end, count = _LIMITS[i], counts[i]
        i += 1
        if count <= 0:
            while i < n and counts[i] <= 0:
                end, count = _LIMITS[i], counts[i]
                i += 1
        proto.bucket_limit.append(float(end))
        proto.bucket.append(float(count))
    return proto


def _to_uint8(image):
    if image.dtype == np.uint8:
        return image
    img = image.astype(np.float64)
    finite = img[np.isfinite(img)]
    lo, hi = (finite.min(), finite.max()) if finite.size else (0.0, 0.0)
    if lo >= 0:  # TF: all non-negative -> the largest value becomes 255
        scale, offset = (255.0 / hi if hi > 0 else 1.0), 0.0
    else:  # otherwise 0.0 maps to 127 and the values are scaled to fit 0..255
        scale, offset = min(127.0 / -lo, 128.0 / hi if hi > 0 else np.inf), 127.0
    out = np.clip(np.round(np.nan_to_num(img, nan=0.0, posinf=0.0, neginf=0.0) * scale + offset), 0, 255)
    return out.astype(np.uint8)


def images(tag, batch, max_images):
    """Summary values of up to `max_images` PNGs from a [batch, h, w, 1|3|4] tensor."""
    from PIL import Image
    batch = np.asarray(batch)
    if batch.ndim != 4 or batch.shape[-1] not in (1, 3, 4):
        raise errors.InvalidArgumentError(f"Tensor must be 4-D with last dim 1, 3, or 4, not {list(batch.shape)} "
                                          f"(summary {tag})")
    batch = _to_uint8(batch)
    n = min(max_images, batch.shape[0])
    out = []
    for i in range(n):
        img = batch[i]
        buf = io.BytesIO()
        mode = {1: "L", 3: "RGB", 4: "RGBA"}[img.shape[-1]]
        Image.fromarray(img[..., 0] if mode == "L" else img, mode).save(buf, format="PNG")
        name = f"{tag}/image" if n == 1 else f"{tag}/image/{i}"
        out.append(Summary.Value(tag=name, image=Summary.Image(
            height=img.shape[0], width=img.shape[1], colorspace=img.shape[-1],
            encoded_image_string=buf.getvalue())))
    return out


def audio(tag, batch, sample_rate, max_outputs):
    """Summary values of up to `max_outputs` 16-bit WAVs from [batch, frames(, channels)] in [-1, 1]."""
    batch = np.asarray(batch, dtype=np.float32)
    if batch.ndim == 2:
        batch = batch[:, :, None]
    if batch.ndim != 3:
        raise errors.InvalidArgumentError(f"Tensor must be 2-D or 3-D, not {batch.ndim}-D (summary {tag})")
    n = min(max_outputs, batch.shape[0])
    out = []
    for i in range(n):
        pcm = (np.clip(batch[i], -1.0, 1.0) * 32767).astype("<i2")
        buf = io.BytesIO()
        with wave.open(buf, "wb") as w:
            w.setnchannels(batch.shape[2])
            w.setsampwidth(2)
            w.setframerate(int(sample_rate))
            w.writeframes(pcm.tobytes())
        name = f"{tag}/audio" if n == 1 else f"{tag}/audio/{i}"
        out.append(Summary.Value(tag=name, audio=Summary.Audio(
            sample_rate=float(sample_rate), num_channels=batch.shape[2], length_frames=batch.shape[1],
            encoded_audio_string=buf.getvalue(), content_type="audio/wav")))
    return out


def tensor_value(tag, value, metadata_bytes):
    metadata = SummaryMetadata.FromString(metadata_bytes) if metadata_bytes else SummaryMetadata()
    arr = np.asarray(value)
    dtype = "string" if arr.dtype.kind in "USO" else None
    return Summary.Value(tag=tag, metadata=metadata, tensor=tensor_util.make_tensor_proto(arr, dtype=dtype))


def merge(tag_name, serialized):
    """One Summary of every value in `serialized` (each a Summary's bytes); duplicate tags are an error."""
    merged, seen = Summary(), set()
    for data in serialized:
        s = Summary.FromString(bytes(data))
        for v in s.value:
            if v.tag in seen:
                raise errors.InvalidArgumentError(f"Duplicate tag {v.tag} found in summary inputs ({tag_name})")
            seen.add(v.tag)
        merged.value.extend(s.value)
    return merged
