"""Mel-frequency features (TF's mel_ops.py and mfcc_ops.py): the linear-to-mel
weight matrix (HTK's mel scale, triangular bands) and MFCCs from log-mel
spectrograms (an orthonormal-scaled DCT-II)."""
from ..framework import dtypes
from ..framework.constant_value import constant_value
from ..framework.graph import Tensor, get_default_graph
from ..framework.op_builder import convert_to_tensor
from ..ops import array_ops, extra_ops, math_ops
from . import dct_ops, shape_ops

_MEL_BREAK_FREQUENCY_HERTZ = 700.0
_MEL_HIGH_FREQUENCY_Q = 1127.0


def _hertz_to_mel(frequencies_hertz):
    return _MEL_HIGH_FREQUENCY_Q * math_ops.log(1.0 + frequencies_hertz / _MEL_BREAK_FREQUENCY_HERTZ)


def _validate_arguments(num_mel_bins, sample_rate, lower_edge_hertz, upper_edge_hertz, dtype):
    if num_mel_bins <= 0:
        raise ValueError(f"num_mel_bins must be positive. Got: {num_mel_bins}")
    if lower_edge_hertz < 0.0:
        raise ValueError(f"lower_edge_hertz must be non-negative. Got: {lower_edge_hertz}")
    if lower_edge_hertz >= upper_edge_hertz:
        raise ValueError(f"lower_edge_hertz {lower_edge_hertz:.1f} >= upper_edge_hertz {upper_edge_hertz:.1f}")
    if not isinstance(sample_rate, Tensor):
        if sample_rate <= 0.0:
            raise ValueError(f"sample_rate must be positive. Got: {sample_rate}")
        if upper_edge_hertz > sample_rate / 2:
            raise ValueError("upper_edge_hertz must not be larger than the Nyquist frequency (sample_rate / 2). "
                             f"Got {upper_edge_hertz} for sample_rate: {sample_rate}")
    if not dtype.is_floating:
        raise ValueError(f"dtype must be a floating point type. Got: {dtype}")


def linear_to_mel_weight_matrix(num_mel_bins=20, num_spectrogram_bins=129, sample_rate=8000, lower_edge_hertz=125.0,
                                upper_edge_hertz=3800.0, dtype=dtypes.float32, name=None):
    """[num_spectrogram_bins, num_mel_bins]: each mel band a triangle over the linear bins
    (the DC bin weighs nothing)."""
    dtype = dtypes.as_dtype(dtype)
    with get_default_graph().name_scope(name or "linear_to_mel_weight_matrix") as scope:
        if isinstance(sample_rate, Tensor):
            static = constant_value(sample_rate)
            if static is not None:
                sample_rate = static
        _validate_arguments(num_mel_bins, sample_rate, lower_edge_hertz, upper_edge_hertz, dtype)
        sample_rate = math_ops.cast(sample_rate, dtype, name="sample_rate")
        lower_edge_hertz = convert_to_tensor(lower_edge_hertz, dtype, name="lower_edge_hertz")
        upper_edge_hertz = convert_to_tensor(upper_edge_hertz, dtype, name="upper_edge_hertz")
        zero = convert_to_tensor(0.0, dtype)
        bands_to_zero = 1
        nyquist_hertz = sample_rate / 2.0
        linear_frequencies = extra_ops.linspace(zero, nyquist_hertz, num_spectrogram_bins)[bands_to_zero:]
        spectrogram_bins_mel = array_ops.expand_dims(_hertz_to_mel(linear_frequencies), 1)
        band_edges_mel = shape_ops.frame(
            extra_ops.linspace(_hertz_to_mel(lower_edge_hertz), _hertz_to_mel(upper_edge_hertz), num_mel_bins + 2),
            frame_length=3, frame_step=1)
        lower_edge_mel, center_mel, upper_edge_mel = (array_ops.reshape(t, [1, num_mel_bins])
                                                      for t in array_ops.split(band_edges_mel, 3, axis=1))
        lower_slopes = (spectrogram_bins_mel - lower_edge_mel) / (center_mel - lower_edge_mel)
        upper_slopes = (upper_edge_mel - spectrogram_bins_mel) / (upper_edge_mel - center_mel)
        weights = math_ops.maximum(zero, math_ops.minimum(lower_slopes, upper_slopes))
        return array_ops.pad(weights, [[bands_to_zero, 0], [0, 0]], name=scope)


def mfccs_from_log_mel_spectrograms(log_mel_spectrograms, name=None):
    """MFCCs: DCT-II of the last axis scaled by 1 / sqrt(2 num_mel_bins)."""
    with get_default_graph().name_scope(name or "mfccs_from_log_mel_spectrograms"):
        x = convert_to_tensor(log_mel_spectrograms)
        if x.shape.ndims and x.shape.as_list()[-1] is not None:
            num_mel_bins = x.shape.as_list()[-1]
            if num_mel_bins == 0:
                raise ValueError(f"num_mel_bins must be positive. Got: {x}")
        else:
            num_mel_bins = array_ops.shape(x)[-1]
        dct2 = dct_ops.dct(x, type=2)
        return dct2 * math_ops.rsqrt(math_ops.cast(num_mel_bins, dct2.dtype.base_dtype) * 2.0)
