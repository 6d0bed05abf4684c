"""`tf.compat.v1` is graphrt itself (so `import graphrt as tf; tf.compat.v1.Session` works)."""
import numbers as _numbers
import sys as _sys

import numpy as _np


def __getattr__(name):
    if name == "v1":
        return _sys.modules["graphrt"]
    raise AttributeError(name)


def as_bytes(value, encoding="utf-8"):
    return value.encode(encoding) if isinstance(value, str) else bytes(value)


def as_text(value, encoding="utf-8"):
    return value.decode(encoding) if isinstance(value, bytes) else str(value)


as_str = as_text


def as_str_any(value):
    """`value` as text: bytes decoded, anything else `str()`."""
    return as_str(value) if isinstance(value, bytes) else str(value)


def path_to_str(path):
    """A path-like object as its string (`os.fspath`); other values as they are."""
    import os
    return os.fspath(path) if hasattr(path, "__fspath__") else path


bytes_or_text_types = (bytes, str)
# numpy scalars are not all registered with `numbers`, so they are named too (as TF's)
integral_types = (_numbers.Integral, _np.integer)
real_types = (_numbers.Real, _np.integer, _np.floating)
complex_types = (_numbers.Complex, _np.number)
