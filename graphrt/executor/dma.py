"""Which dtypes may cross the host/device boundary by plain memcpy.

A device only ever sees bytes. Numeric and bool arrays are their bytes;
strings and Python objects are pointers into the host heap, so copying them
to a device would copy addresses, not data. TensorFlow refuses those with
"Non-DMA-safe <dtype> tensor may not be copied from/to a device"; so do we.
"""
import numpy as np

from graphrt import errors

DMA_SAFE_KINDS = frozenset("biufc")  # bool, signed, unsigned, float, complex
_STRING_KINDS = frozenset("USO")  # numpy holds TF string tensors as str/bytes/object


def is_dma_safe(dtype):
    """True when arrays of `dtype` can be copied to a device byte for byte."""
    return np.dtype(dtype).kind in DMA_SAFE_KINDS


def check_dma_safe(dtype, *, device=None, key=None):
    """Raises InvalidArgumentError (TF's wording) unless `dtype` is DMA-safe."""
    dtype = np.dtype(dtype)
    if dtype.kind in DMA_SAFE_KINDS:
        return
    name = "string" if dtype.kind in _STRING_KINDS else dtype.name
    message = f"Non-DMA-safe {name} tensor may not be copied from/to a device"
    if key is not None:
        message += f". Key: {key}"
    raise errors.InvalidArgumentError(message, device=device, key=key)
