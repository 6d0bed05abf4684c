"""tf.spectral, TF1's older name for the FFTs and DCTs of tf.signal."""
from .dct_ops import dct, idct  # noqa: F401
from .fft_ops import (fft, fft2d, fft3d, ifft, ifft2d, ifft3d, irfft, irfft2d, irfft3d, rfft, rfft2d,  # noqa: F401
                      rfft3d)
