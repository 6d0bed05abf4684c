"""Gradients of the FFT ops, TF's (signal/fft_ops.py): the (I)FFT of the
incoming gradient scaled by the transform's size; for RFFT/IRFFT the IRFFT/
RFFT of it with terms for the Hermitian-symmetric bins RFFT drops (1-D and
2-D only: like TF, RFFT3D and IRFFT3D have no gradient)."""
import numpy as np

from ..framework import dtypes
from ..framework.constant_value import constant_value
from ..framework.registry import register_gradient
from ..ops import array_ops, math_ops
from . import fft_ops


def _fft_size(t, rank):
    return math_ops.reduce_prod(array_ops.shape(t)[-rank:])


def _forward_grad(inverse_fn, rank):
    def grad_fn(op, grad):
        size = math_ops.cast(_fft_size(grad, rank), grad.dtype)
        return [inverse_fn(grad) * size]
    return grad_fn


def _inverse_grad(forward_fn, rank):
    def grad_fn(op, grad):
        rsize = math_ops.cast(1. / math_ops.cast(_fft_size(grad, rank), grad.dtype.real_dtype), grad.dtype)
        return [forward_fn(grad) * rsize]
    return grad_fn


for _suffix, _rank, _fwd, _inv in (("", 1, fft_ops.fft, fft_ops.ifft), ("2D", 2, fft_ops.fft2d, fft_ops.ifft2d),
                                   ("3D", 3, fft_ops.fft3d, fft_ops.ifft3d)):
    register_gradient("FFT" + _suffix)(_forward_grad(_inv, _rank))
    register_gradient("IFFT" + _suffix)(_inverse_grad(_fwd, _rank))


def _rfft_grad(rank, irfft_fn):
    def grad_fn(op, grad):
        fft_length = op.inputs[1]
        complex_dtype = grad.dtype.base_dtype
        real_dtype = complex_dtype.real_dtype
        input_shape = array_ops.shape(op.inputs[0])
        is_even = math_ops.cast(1 - (fft_length[-1] % 2), complex_dtype)

        def tile_for_broadcasting(matrix, t):
            expanded = array_ops.reshape(matrix, array_ops.concat(
                [array_ops.ones([array_ops.rank(t) - 2], dtypes.int32), array_ops.shape(matrix)], 0))
            return array_ops.tile(expanded, array_ops.concat([array_ops.shape(t)[:-2], [1, 1]], 0))

        def mask_matrix(length):
            """t_nk = exp(-2 pi i n k / length)."""
            a = array_ops.tile(array_ops.expand_dims(math_ops.range(length), 0), array_ops.stack([length, 1]))
            b = array_ops.transpose(a, [1, 0])
            return math_ops.exp(np.array(-2j * np.pi, complex_dtype.np) * math_ops.cast(a * b, complex_dtype)
                                / math_ops.cast(length, complex_dtype))

        def ymask(length):
            """[1, -1, 1, -1, ...] of `length`."""
            return math_ops.cast(1 - 2 * (math_ops.range(length) % 2), complex_dtype)

        y0 = grad[..., 0:1]
        ym = grad[..., -1:]
        if rank == 1:
            extra_terms = y0 + is_even * ym * ymask(input_shape[-1])
        else:
            tiled_mask = tile_for_broadcasting(mask_matrix(input_shape[-2]), y0)
            extra_terms = math_ops.matmul(tiled_mask, math_ops.conj(y0))
            ym_term = math_ops.matmul(tiled_mask, math_ops.conj(ym))
            inner_dim = input_shape[-1]
            ym_term = array_ops.tile(ym_term, array_ops.concat(
                [array_ops.ones([array_ops.rank(grad) - 1], dtypes.int32), array_ops.expand_dims(inner_dim, 0)], 0)
            ) * ymask(inner_dim)
            extra_terms += is_even * ym_term
        input_size = math_ops.cast(_fft_size(op.inputs[0], rank), real_dtype)
        the_irfft = irfft_fn(grad, fft_length)
        half = np.array(0.5, real_dtype.np)
        return [half * (the_irfft * input_size + math_ops.real(extra_terms)), None]
    return grad_fn


def _irfft_grad(rank, rfft_fn):
    def grad_fn(op, grad):
        """The RFFT of the gradient over the transform's size, Hermitian bins counted twice."""
        fft_length = op.inputs[1]
        static = constant_value(fft_length)
        if static is not None:
            fft_length = static
        real_dtype = grad.dtype.base_dtype
        complex_dtype = dtypes.complex64 if real_dtype == dtypes.float32 else dtypes.complex128
        is_odd = math_ops.mod(fft_length[-1], 2)
        input_last_dimension = array_ops.shape(op.inputs[0])[-1]
        mask = array_ops.concat([np.array([1.0], real_dtype.np),
                                 2.0 * array_ops.ones(array_ops.expand_dims(input_last_dimension - 2 + is_odd, 0),
                                                      real_dtype),
                                 array_ops.ones(array_ops.expand_dims(1 - is_odd, 0), real_dtype)], 0)
        rsize = math_ops.reciprocal(math_ops.cast(_fft_size(grad, rank), real_dtype))
        the_rfft = rfft_fn(grad, fft_length)
        return [the_rfft * math_ops.cast(rsize * mask, complex_dtype), None]
    return grad_fn


register_gradient("RFFT")(_rfft_grad(1, fft_ops.irfft))
register_gradient("IRFFT")(_irfft_grad(1, fft_ops.rfft))
register_gradient("RFFT2D")(_rfft_grad(2, fft_ops.irfft2d))
register_gradient("IRFFT2D")(_irfft_grad(2, fft_ops.rfft2d))
