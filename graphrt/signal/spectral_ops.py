"""Short-time Fourier transforms (TF's spectral_ops.py): stft, inverse_stft,
inverse_stft_window_fn, and the MDCT pair mdct / inverse_mdct."""
import numpy as np

from ..framework import dtypes
from ..framework.constant_value import constant_value
from ..framework.graph import get_default_graph
from ..framework.op_builder import convert_to_tensor
from ..ops import array_ops, math_ops
from . import dct_ops, fft_ops, shape_ops, window_ops


def _enclosing_power_of_two(value):
    """2^ceil(log2(value)), in value's dtype."""
    static = constant_value(value)
    if static is not None:
        return convert_to_tensor(np.array(int(2 ** np.ceil(np.log(static) / np.log(2.0))),
                                          value.dtype.base_dtype.np))
    return math_ops.cast(math_ops.pow(2.0, math_ops.ceil(math_ops.log(math_ops.cast(value, dtypes.float32))
                                                         / math_ops.log(2.0))), value.dtype.base_dtype)


def _scalar(value, name):
    t = convert_to_tensor(value, name=name)
    t.shape.with_rank(0)
    return t


def stft(signals, frame_length, frame_step, fft_length=None, window_fn=window_ops.hann_window, pad_end=False,
         name=None):
    """The RFFT of windowed frames of `signals`: [..., frames, fft_length // 2 + 1]."""
    with get_default_graph().name_scope(name or "stft"):
        signals = convert_to_tensor(signals, name="signals")
        signals.shape.with_rank_at_least(1)
        frame_length = _scalar(frame_length, "frame_length")
        frame_step = _scalar(frame_step, "frame_step")
        if fft_length is None:
            fft_length = _enclosing_power_of_two(frame_length)
        else:
            fft_length = convert_to_tensor(fft_length, name="fft_length")
        framed = shape_ops.frame(signals, frame_length, frame_step, pad_end=pad_end)
        if window_fn is not None:
            framed *= window_fn(frame_length, dtype=framed.dtype.base_dtype)
        return fft_ops.rfft(framed, array_ops.stack([fft_length]))


def inverse_stft_window_fn(frame_step, forward_window_fn=window_ops.hann_window, name=None):
    """A window_fn for inverse_stft that undoes `forward_window_fn` overlapped at `frame_step`
    (the forward window over the sum of its squares at each overlap)."""

    def inverse_stft_window_fn_inner(frame_length, dtype):
        with get_default_graph().name_scope(name or "inverse_stft_window_fn"):
            step = _scalar(frame_step, "frame_step")
            frame_length = _scalar(frame_length, "frame_length")
            forward_window = forward_window_fn(frame_length, dtype=dtype)
            denom = math_ops.square(forward_window)
            overlaps = -(-frame_length // step)
            denom = array_ops.pad(denom, array_ops.stack([array_ops.stack([0, overlaps * step - frame_length])]))
            denom = array_ops.reshape(denom, array_ops.stack([overlaps, step]))
            denom = math_ops.reduce_sum(denom, 0, keepdims=True)
            denom = array_ops.tile(denom, array_ops.stack([overlaps, 1]))
            denom = array_ops.reshape(denom, array_ops.expand_dims(overlaps * step, 0))
            denom = denom[:frame_length]
            return math_ops.where_v2(math_ops.equal(denom, 0.0), array_ops.zeros_like(forward_window),
                                     forward_window / denom)
    return inverse_stft_window_fn_inner


def inverse_stft(stfts, frame_length, frame_step, fft_length=None, window_fn=window_ops.hann_window, name=None):
    """Signals from STFTs: the IRFFT of each frame, cropped or padded to frame_length,
    windowed by `window_fn`, overlapped and added."""
    with get_default_graph().name_scope(name or "inverse_stft"):
        stfts = convert_to_tensor(stfts, name="stfts")
        stfts.shape.with_rank_at_least(2)
        frame_length = _scalar(frame_length, "frame_length")
        frame_step = _scalar(frame_step, "frame_step")
        if fft_length is None:
            fft_length = _enclosing_power_of_two(frame_length)
        else:
            fft_length = _scalar(fft_length, "fft_length")
        real_frames = fft_ops.irfft(stfts, array_ops.stack([fft_length]))
        length_static = constant_value(frame_length)
        last = real_frames.shape.as_list()[-1] if real_frames.shape.ndims is not None else None
        if length_static is None or last is None:
            real_frames = real_frames[..., :frame_length]
            rank = array_ops.rank(real_frames)
            paddings = array_ops.concat(
                [array_ops.zeros(array_ops.stack([rank - 1, 2]), dtype=frame_length.dtype.base_dtype),
                 array_ops.stack([array_ops.stack([
                     math_ops.cast(0, frame_length.dtype.base_dtype),
                     math_ops.maximum(0, frame_length - array_ops.shape(real_frames)[-1])])])], 0)
            real_frames = array_ops.pad(real_frames, paddings)
        elif last > int(length_static):
            real_frames = real_frames[..., :int(length_static)]
        elif last < int(length_static):
            pad = int(length_static) - last
            real_frames = array_ops.pad(real_frames, [[0, 0]] * (real_frames.shape.ndims - 1) + [[0, pad]])
        if length_static is not None and real_frames.shape.ndims is not None:
            real_frames.set_shape([None] * (real_frames.shape.ndims - 1) + [int(length_static)])
        if window_fn is not None:
            real_frames *= window_fn(frame_length, dtype=stfts.dtype.real_dtype)
        return shape_ops.overlap_and_add(real_frames, frame_step)


def mdct(signals, frame_length, window_fn=window_ops.vorbis_window, pad_end=False, norm=None, name=None):
    """The modified DCT of frames of `frame_length` (a multiple of 4) every frame_length / 2 samples."""
    with get_default_graph().name_scope(name or "mdct"):
        signals = convert_to_tensor(signals, name="signals")
        signals.shape.with_rank_at_least(1)
        frame_length = _scalar(frame_length, "frame_length")
        length_static = constant_value(frame_length)
        if length_static is not None:
            if int(length_static) % 4 != 0:
                raise ValueError("The frame length must be a multiple of 4.")
            frame_step = convert_to_tensor(np.array(int(length_static) // 2, frame_length.dtype.base_dtype.np))
        else:
            frame_step = frame_length // 2
        framed = shape_ops.frame(signals, frame_length, frame_step, pad_end=pad_end)
        if window_fn is not None:
            framed *= window_fn(frame_length, dtype=framed.dtype.base_dtype)
        else:
            framed *= 1.0 / np.sqrt(2)
        a, b, c, d = array_ops.split(framed, 4, axis=-1)
        rearranged = array_ops.concat((-array_ops.reverse(c, [-1]) - d, a - array_ops.reverse(b, [-1])), axis=-1)
        return dct_ops.dct(rearranged, type=4, norm=norm)


def inverse_mdct(mdcts, window_fn=window_ops.vorbis_window, norm=None, name=None):
    """Signals from MDCTs: a type-4 DCT, unfolded, windowed, overlapped and added."""
    with get_default_graph().name_scope(name or "inverse_mdct"):
        mdcts = convert_to_tensor(mdcts, name="mdcts")
        mdcts.shape.with_rank_at_least(2)
        half_len = mdcts.shape.as_list()[-1]
        if norm is None:
            result = 0.5 / np.array(half_len, mdcts.dtype.base_dtype.np) * dct_ops.dct(mdcts, type=4)
        else:
            result = dct_ops.dct(mdcts, type=4, norm="ortho")
        first, second = array_ops.split(result, 2, axis=-1)
        real_frames = array_ops.concat((second, -array_ops.reverse(second, [-1]),
                                        -array_ops.reverse(first, [-1]), -first), axis=-1)
        if window_fn is not None:
            real_frames *= window_fn(2 * half_len, dtype=mdcts.dtype.base_dtype)
        else:
            real_frames *= 1.0 / np.sqrt(2)
        return shape_ops.overlap_and_add(real_frames, half_len)
