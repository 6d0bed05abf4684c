"""tf.signal (and TF1's tf.spectral, `spectral.py`): FFTs and signal processing.

`fft_ops.py` declares the FFT ops (FFT/IFFT/RFFT/IRFFT, 1-3-D) and their
TF1 API, `fft_kernels.py` their numpy.fft kernels, `fft_grad.py` TF's
gradients. The rest are compositions of ops, as in TF: frames
(`shape_ops.py`), windows, STFTs and MDCTs, DCTs, mel weights and MFCCs.
Importing registers the ops.
"""
from . import fft_grad as _fft_grad, fft_kernels as _fft_kernels  # noqa: F401 - registers kernels and gradients
from .dct_ops import dct, idct  # noqa: F401
from .fft_ops import (fft, fft2d, fft3d, fftshift, ifft, ifft2d, ifft3d, ifftshift, irfft, irfft2d,  # noqa: F401
                      irfft3d, rfft, rfft2d, rfft3d)
from .mel_ops import linear_to_mel_weight_matrix, mfccs_from_log_mel_spectrograms  # noqa: F401
from .shape_ops import frame, overlap_and_add  # noqa: F401
from .spectral_ops import inverse_mdct, inverse_stft, inverse_stft_window_fn, mdct, stft  # noqa: F401
from .window_ops import (hamming_window, hann_window, kaiser_bessel_derived_window, kaiser_window,  # noqa: F401
                         vorbis_window)
from . import spectral  # noqa: F401, E402 - the tf.spectral namespace
