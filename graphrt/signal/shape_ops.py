"""tf.signal.frame and tf.signal.overlap_and_add: compositions of ops.

`frame` gathers the windows along `axis` with one GatherV2 on a
[num_frames, frame_length] index matrix (TF reshapes into gcd-sized
subframes first and gathers those): the same values and gradient.
`overlap_and_add` is TF's pad / reshape / transpose / reduce_sum.
"""
import numpy as np

from ..framework import dtypes
from ..framework.constant_value import constant_value
from ..framework.graph import graph_of
from ..framework.op_builder import convert_to_tensor, is_tensor_like
from ..ops import array_ops, math_ops


def _scope(name, default, values):
    g = graph_of([v for v in values if is_tensor_like(v)])
    return g, g.name_scope(name or default)


def _static_int(t):
    v = constant_value(t)
    return None if v is None else int(v)


def _num_frames(length, frame_length, frame_step, pad_end):
    """TF's count: ceil(length / step) with pad_end, else 1 + (length - frame_length) // step (at least 0)."""
    if pad_end:
        return max(0, -(-length // frame_step))
    return max(0, (length - frame_length + frame_step) // frame_step)


def frame(signal, frame_length, frame_step, pad_end=False, pad_value=0, axis=-1, name=None):
    """Windows of `frame_length` every `frame_step` samples along `axis`, which becomes
    [num_frames, frame_length]; with `pad_end`, windows past the end padded with `pad_value`."""
    g, scope_cm = _scope(name, "frame", [signal, frame_length, frame_step, pad_value])
    with g.as_default(), scope_cm:
        signal = convert_to_tensor(signal, name="signal")
        frame_length = convert_to_tensor(frame_length, name="frame_length")
        frame_step = convert_to_tensor(frame_step, name="frame_step")
        axis = convert_to_tensor(axis, name="axis")
        signal.shape.with_rank_at_least(1)
        for t in (frame_length, frame_step, axis):
            t.shape.with_rank(0)
        static_length, static_step = _static_int(frame_length), _static_int(frame_step)
        static_axis = _static_int(axis)
        ndims = signal.shape.ndims
        if static_axis is not None and ndims is not None:
            static_axis = range(ndims)[static_axis]  # an IndexError out of range, as TF
            samples = signal.shape.as_list()[static_axis]
        else:
            samples = None
        if samples is not None:
            length = samples
        else:
            length = array_ops.gather(array_ops.shape(signal), math_ops.range(array_ops.rank(signal))[axis])
        if pad_end:
            pad_value = convert_to_tensor(pad_value, signal.dtype.base_dtype)
            pad_value.shape.with_rank(0)
        static = None not in (samples, static_length, static_step)
        if static:
            num_frames = _num_frames(samples, static_length, static_step, pad_end)
            indices = (np.arange(num_frames, dtype=np.int32)[:, None] * static_step
                       + np.arange(static_length, dtype=np.int32)[None, :])
            pad_samples = max(0, static_length + static_step * (num_frames - 1) - samples) if pad_end else 0
        else:
            if pad_end:
                num_frames = -(-length // frame_step)
            else:
                num_frames = math_ops.maximum(0, 1 + (length - frame_length) // frame_step)
            indices = (array_ops.expand_dims(math_ops.range(num_frames) * frame_step, 1)
                       + array_ops.expand_dims(math_ops.range(frame_length), 0))
            pad_samples = math_ops.maximum(0, frame_length + frame_step * (num_frames - 1) - length) \
                if pad_end else 0
        if pad_end and static and pad_samples:
            paddings = [[0, 0]] * ndims
            paddings[static_axis] = [0, pad_samples]
            signal = array_ops.pad(signal, paddings, constant_values=pad_value)
        elif pad_end and not static:
            rank = array_ops.rank(signal)
            at = math_ops.cast(math_ops.equal(math_ops.range(rank), math_ops.range(rank)[axis]), dtypes.int32)
            paddings = array_ops.stack([array_ops.zeros_like(at), at * pad_samples], axis=1)
            signal = array_ops.pad(signal, paddings, constant_values=pad_value)
        frames = array_ops.gather(signal, indices, axis=static_axis if static_axis is not None else axis)
        if ndims is not None:
            if static_axis is None:
                dims = [None] * (ndims + 1)
            else:
                dims = signal.shape.as_list()
                dims[static_axis:static_axis + 1] = [num_frames if static else None, static_length]
            frames.set_shape(dims)
        return frames


def overlap_and_add(signal, frame_step, name=None):
    """Frames [..., frames, frame_length] added back at offsets of `frame_step`:
    [..., (frames - 1) * frame_step + frame_length]."""
    g, scope_cm = _scope(name, "overlap_and_add", [signal, frame_step])
    with g.as_default(), scope_cm:
        signal = convert_to_tensor(signal, name="signal")
        signal.shape.with_rank_at_least(2)
        frame_step = convert_to_tensor(frame_step, name="frame_step")
        frame_step.shape.with_rank(0)
        if not frame_step.dtype.is_integer:
            raise ValueError(f"frame_step must be an integer. Got {frame_step.dtype}")
        step_static = _static_int(frame_step)
        if step_static is not None:
            frame_step = step_static
        shape_static = constant_value(array_ops.shape(signal))
        # Python ints when every size is known; else the same arithmetic on tensors
        dynamic = shape_static is None or step_static is None
        if shape_static is not None:
            signal_shape = [int(d) for d in shape_static]
            outer_dimensions = np.array(signal_shape[:-2], np.int32)
        else:
            signal_shape = array_ops.shape(signal)
            outer_dimensions = signal_shape[:-2]
        outer_rank = signal.shape.ndims - 2 if signal.shape.ndims is not None else array_ops.size(outer_dimensions)

        def full_shape(inner):
            if not dynamic:
                return list(outer_dimensions) + list(inner)
            return array_ops.concat([outer_dimensions, array_ops.stack(list(inner))], 0)

        frame_length, frames = signal_shape[-1], signal_shape[-2]
        output_length = frame_length + frame_step * (frames - 1)
        if step_static is not None and signal.shape.ndims is not None and signal.shape.as_list()[-1] == step_static:
            return array_ops.reshape(signal, full_shape([output_length]), name="fast_path")
        segments = -(-frame_length // frame_step)
        inner_pads = [[0, segments], [0, segments * frame_step - frame_length]]
        if dynamic:
            paddings = array_ops.concat([array_ops.zeros(array_ops.stack([outer_rank, 2]), dtypes.int32),
                                         array_ops.stack([array_ops.stack(p) for p in inner_pads])], 0)
        else:
            paddings = [[0, 0]] * outer_rank + inner_pads
        signal = array_ops.pad(signal, paddings)
        signal = array_ops.reshape(signal, full_shape([frames + segments, segments, frame_step]))
        if isinstance(outer_rank, int):
            perm = list(range(outer_rank)) + [outer_rank + 1, outer_rank, outer_rank + 2]
        else:
            perm = array_ops.concat([math_ops.range(outer_rank), outer_rank + np.int32([1, 0, 2])], 0)
        signal = array_ops.transpose(signal, perm)
        signal = array_ops.reshape(signal, full_shape([(frames + segments) * segments, frame_step]))
        signal = signal[..., :(frames + segments - 1) * segments, :]
        signal = array_ops.reshape(signal, full_shape([segments, frames + segments - 1, frame_step]))
        signal = math_ops.reduce_sum(signal, -3)
        signal = array_ops.reshape(signal, full_shape([(frames + segments - 1) * frame_step]))
        return signal[..., :output_length]
