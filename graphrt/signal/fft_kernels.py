"""numpy.fft kernels of the FFT ops, over the inner 1-3 dimensions.

numpy >= 2 transforms complex64/float32 in single precision, as TF's Eigen
and DUCC kernels do; results are cast to the op's output dtype. An empty
input or a zero fft_length gives zeros of the output's shape.
"""
import numpy as np

from .. import errors
from ..framework.registry import register_kernel

CPU = ("CPU",)  # SIM reuses the CPU kernels


def _check_rank(x, rank, name):
    if x.ndim < rank:
        raise errors.InvalidArgumentError(f"Input must have rank of at least {rank} but got: {list(x.shape)}",
                                          node=name)


def _lengths(fft_length, rank, name):
    lengths = [int(n) for n in np.reshape(fft_length, [-1])]
    if len(lengths) != rank:
        raise errors.InvalidArgumentError(f"fft_length must be length {rank} vector, got {lengths}", node=name)
    if any(n < 0 for n in lengths):
        raise errors.InvalidArgumentError(f"fft_length must be non-negative, got {lengths}", node=name)
    return lengths


def _complex_kernel(rank, inverse):
    transform = np.fft.ifftn if inverse else np.fft.fftn
    axes = tuple(range(-rank, 0))

    def factory(ctx):
        name, out = ctx.name, ctx.output_dtypes[0].np

        def kernel(x):
            _check_rank(x, rank, name)
            if x.size == 0:
                return np.zeros(x.shape, out)
            return transform(x, axes=axes).astype(out, copy=False)
        return kernel
    return factory


def _real_kernel(rank, inverse):
    transform = np.fft.irfftn if inverse else np.fft.rfftn
    axes = tuple(range(-rank, 0))

    def factory(ctx):
        name, out = ctx.name, ctx.output_dtypes[0].np

        def kernel(x, fft_length):
            _check_rank(x, rank, name)
            lengths = _lengths(fft_length, rank, name)
            shape = list(x.shape[:-rank]) + lengths
            if not inverse:
                shape[-1] = lengths[-1] // 2 + 1
            if x.size == 0 or 0 in lengths:
                return np.zeros(shape, out)
            return transform(x, s=lengths, axes=axes).astype(out, copy=False)
        return kernel
    return factory


for _suffix, _rank in (("", 1), ("2D", 2), ("3D", 3)):
    register_kernel("FFT" + _suffix, CPU, fresh_outputs=True)(_complex_kernel(_rank, False))
    register_kernel("IFFT" + _suffix, CPU, fresh_outputs=True)(_complex_kernel(_rank, True))
    register_kernel("RFFT" + _suffix, CPU, host_memory=("fft_length",), fresh_outputs=True)(_real_kernel(_rank, False))
    register_kernel("IRFFT" + _suffix, CPU, host_memory=("fft_length",), fresh_outputs=True)(
        _real_kernel(_rank, True))
