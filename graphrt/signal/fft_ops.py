"""Declarations and the TF1 API of the FFT ops (TF's gen_spectral_ops and
signal/fft_ops.py).

FFT, IFFT, FFT2D, IFFT2D, FFT3D, IFFT3D transform the inner 1-3 dimensions
of a complex64/complex128 tensor. RFFT* take a float32/float64 signal and an
`fft_length` (int32, one entry per transformed dimension) and return the
Hermitian half spectrum (inner dimension fft_length[-1] // 2 + 1); IRFFT*
invert them. The Python wrappers infer `fft_length` and zero-pad the input
to it, as TF's do; the kernels crop.
"""
import numpy as np

from ..framework import dtypes
from ..framework.constant_value import constant_value
from ..framework.graph import graph_of
from ..framework.op_builder import apply_op, convert_to_tensor, is_tensor_like
from ..framework.registry import register_op
from ..framework.tensor_shape import TensorShape
from ..ops import array_ops, math_ops

COMPLEX = (dtypes.complex64, dtypes.complex128)
REAL = (dtypes.float32, dtypes.float64)
_SUFFIX_RANK = (("", 1), ("2D", 2), ("3D", 3))


def _complex_shape(rank):
    def fn(ctx):
        return ctx.shape(0).with_rank_at_least(rank)
    return fn


def _real_shape(rank, inverse):
    """RFFT: inner dims fft_length[:-1] and fft_length[-1] // 2 + 1; IRFFT: fft_length."""
    def fn(ctx):
        shape = ctx.shape(0).with_rank_at_least(rank)
        ctx.shape(1).merge_with(TensorShape([rank]))
        if shape.ndims is None:
            return TensorShape(None)
        dims = shape.as_list()
        lengths = ctx.constant(1)
        if lengths is None:
            dims[-rank:] = [None] * rank
            return TensorShape(dims)
        lengths = [int(n) for n in np.reshape(lengths, [-1])]
        if any(n < 0 for n in lengths):
            raise ValueError(f"fft_length must be non-negative, got {lengths}")
        dims[-rank:] = lengths
        if not inverse:
            dims[-1] = lengths[-1] // 2 + 1
        return TensorShape(dims)
    return fn


for _suffix, _rank in _SUFFIX_RANK:
    for _name in ("FFT", "IFFT"):
        register_op(_name + _suffix, ["input: Tcomplex"], ["output: Tcomplex"], attrs={"Tcomplex": dtypes.complex64},
                    shape_fn=_complex_shape(_rank), allowed_types={"Tcomplex": COMPLEX})
    register_op("RFFT" + _suffix, ["input: Treal", "fft_length: int32"], ["output: Tcomplex"],
                attrs={"Treal": dtypes.float32, "Tcomplex": dtypes.complex64}, shape_fn=_real_shape(_rank, False),
                allowed_types={"Treal": REAL, "Tcomplex": COMPLEX})
    register_op("IRFFT" + _suffix, ["input: Tcomplex", "fft_length: int32"], ["output: Treal"],
                attrs={"Treal": dtypes.float32, "Tcomplex": dtypes.complex64}, shape_fn=_real_shape(_rank, True),
                allowed_types={"Treal": REAL, "Tcomplex": COMPLEX})


def _complex_fft(op_type):
    def fn(input, name=None):  # noqa: A002 - the TF name
        return apply_op(op_type, [input], name=name or op_type).outputs[0]
    fn.__name__ = op_type.lower()
    fn.__doc__ = f"The {op_type} of the inner dimensions of a complex tensor."
    return fn


fft, ifft = _complex_fft("FFT"), _complex_fft("IFFT")
fft2d, ifft2d = _complex_fft("FFT2D"), _complex_fft("IFFT2D")
fft3d, ifft3d = _complex_fft("FFT3D"), _complex_fft("IFFT3D")


def _scope(name, default, values):
    g = graph_of([v for v in values if is_tensor_like(v)])
    return g, g.name_scope(name or default)


def _infer_rfft_length(x, rank):
    inner = x.shape[-rank:] if x.shape.ndims is not None else TensorShape(None)
    if inner.is_fully_defined():
        return convert_to_tensor(np.array(inner.as_list(), np.int32))
    return array_ops.shape(x)[-rank:]


def _infer_irfft_length(x, rank):
    inner = x.shape[-rank:] if x.shape.ndims is not None else TensorShape(None)
    if inner.is_fully_defined():
        lengths = inner.as_list()
        lengths[-1] = max(0, 2 * (lengths[-1] - 1))
        return convert_to_tensor(np.array(lengths, np.int32))
    lengths = array_ops.unstack(array_ops.shape(x)[-rank:], num=rank)
    lengths[-1] = math_ops.maximum(0, 2 * (lengths[-1] - 1))
    return array_ops.stack(lengths)


def _maybe_pad(x, rank, fft_length, is_reverse=False):
    """x zero-padded (never cropped) on its inner `rank` dims to fft_length
    (the inner-most to fft_length // 2 + 1 when `is_reverse`)."""
    if x.shape.ndims is not None and 0 in x.shape.as_list():
        return x
    lengths = constant_value(fft_length)
    inner = x.shape[-rank:] if x.shape.ndims is not None else TensorShape(None)
    if lengths is not None and inner.is_fully_defined():
        target = [int(n) for n in lengths]
        if is_reverse:
            target[-1] = target[-1] // 2 + 1
        pads = [[0, max(n - d, 0)] for n, d in zip(target, inner.as_list())]
        if any(p for _, p in pads):
            return array_ops.pad(x, [[0, 0]] * max(x.shape.ndims - rank, 0) + pads)
        return x
    outer = math_ops.maximum(0, array_ops.rank(x) - rank)
    if is_reverse:
        fft_length = array_ops.concat([fft_length[:-1], fft_length[-1:] // 2 + 1], 0)
    fft_pads = math_ops.maximum(0, fft_length - array_ops.shape(x)[-rank:])
    paddings = array_ops.concat([array_ops.zeros(array_ops.expand_dims(outer, 0), dtypes.int32), fft_pads], 0)
    return array_ops.pad(x, array_ops.stack([array_ops.zeros_like(paddings), paddings], axis=1))


def _lengths_arg(fft_length, x, rank, infer):
    if fft_length is None:
        return infer(x, rank)
    return convert_to_tensor(fft_length, dtypes.int32)


def _rfft_wrapper(op_type, rank, default_name):
    def rfft(input_tensor, fft_length=None, name=None):
        g, scope_cm = _scope(name, default_name, [input_tensor, fft_length])
        with g.as_default(), scope_cm as scope:
            x = convert_to_tensor(input_tensor, preferred_dtype=dtypes.float32)
            if x.dtype.base_dtype not in REAL:
                raise ValueError(f"RFFT requires tf.float32 or tf.float64 inputs, got: {x}")
            tcomplex = dtypes.complex64 if x.dtype.base_dtype == dtypes.float32 else dtypes.complex128
            x.shape.with_rank_at_least(rank)
            lengths = _lengths_arg(fft_length, x, rank, _infer_rfft_length)
            x = _maybe_pad(x, rank, lengths)
            return apply_op(op_type, [x, lengths], name=scope, Tcomplex=tcomplex).outputs[0]
    rfft.__name__ = default_name
    rfft.__doc__ = f"The {op_type} of the inner dimensions of a real tensor (fft_length inferred, input zero-padded)."
    return rfft


def _irfft_wrapper(op_type, rank, default_name):
    def irfft(input_tensor, fft_length=None, name=None):
        g, scope_cm = _scope(name, default_name, [input_tensor, fft_length])
        with g.as_default(), scope_cm as scope:
            x = convert_to_tensor(input_tensor, preferred_dtype=dtypes.complex64)
            x.shape.with_rank_at_least(rank)
            if x.dtype.base_dtype not in COMPLEX:
                raise ValueError(f"IRFFT requires tf.complex64 or tf.complex128 inputs, got: {x}")
            treal = x.dtype.real_dtype
            lengths = _lengths_arg(fft_length, x, rank, _infer_irfft_length)
            x = _maybe_pad(x, rank, lengths, is_reverse=True)
            return apply_op(op_type, [x, lengths], name=scope, Treal=treal).outputs[0]
    irfft.__name__ = default_name
    irfft.__doc__ = f"The {op_type} of a Hermitian half spectrum (fft_length inferred as 2 * (n - 1))."
    return irfft


rfft = _rfft_wrapper("RFFT", 1, "rfft")
irfft = _irfft_wrapper("IRFFT", 1, "irfft")
rfft2d = _rfft_wrapper("RFFT2D", 2, "rfft2d")
irfft2d = _irfft_wrapper("IRFFT2D", 2, "irfft2d")
rfft3d = _rfft_wrapper("RFFT3D", 3, "rfft3d")
irfft3d = _irfft_wrapper("IRFFT3D", 3, "irfft3d")


def _shift(x, axes, name, default_name, sign):
    g, scope_cm = _scope(name, default_name, [x])
    with g.as_default(), scope_cm as scope:
        x = convert_to_tensor(x)
        if axes is None:
            axes = tuple(range(x.shape.ndims))
            shift = array_ops.shape(x) // 2
        elif isinstance(axes, int):
            shift = array_ops.shape(x)[axes] // 2
        else:
            rank = array_ops.rank(x)
            axes = convert_to_tensor(axes, dtypes.int32)
            axes = math_ops.where_v2(math_ops.less(axes, 0), axes + rank, axes)
            shift = array_ops.gather(array_ops.shape(x), axes) // 2
        if sign < 0:
            shift = -shift
        return array_ops.roll(x, shift, axes, name=scope)


def fftshift(x, axes=None, name=None):
    """numpy.fft.fftshift: the zero frequency moved to the centre of `axes` (all by default)."""
    return _shift(x, axes, name, "fftshift", 1)


def ifftshift(x, axes=None, name=None):
    """numpy.fft.ifftshift, the inverse of fftshift."""
    return _shift(x, axes, name, "ifftshift", -1)
