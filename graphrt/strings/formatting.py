"""How TF's AsString and StringFormat print numbers and tensors."""
import numpy as np

from .. import errors
from ..framework import dtypes

_FILLS = " +-0#"


def as_string_format(dtype, precision, scientific, shortest, width, fill, node):
    """A function value -> bytes printing as TF's AsString kernel does: printf's %d, %f / %e / %g
    with TF's flags, width and precision; bools as true/false, complex as (re,im)."""
    dtype = dtype.base_dtype
    if scientific and shortest:
        raise errors.InvalidArgumentError("Cannot select both scientific and shortest notation", node=node)
    if len(fill) > 1:
        raise errors.InvalidArgumentError(f"Fill string must be one or fewer characters: {fill}", node=node)
    if fill and fill not in _FILLS:
        raise errors.InvalidArgumentError(f"Fill argument not supported: \"{fill}\"", node=node)
    is_float = dtype.is_floating or dtype.is_complex
    if precision > -1 and not is_float:
        raise errors.InvalidArgumentError(f"precision not supported for datatype {dtype.name}", node=node)
    if (scientific or shortest) and not is_float:
        raise errors.InvalidArgumentError(f"scientific/shortest not supported for datatype {dtype.name}", node=node)
    if dtype == dtypes.string:
        return lambda v: v
    if dtype == dtypes.bool:
        return lambda v: b"true" if v else b"false"
    spec = "%" + fill + (str(width) if width > -1 else "") + (f".{precision}" if precision > -1 else "")
    if not is_float:
        spec += "d"
        return lambda v: (spec % int(v)).encode()
    spec += "g" if shortest else "e" if scientific else "f"
    if dtype.is_complex:
        return lambda v: f"({spec % v.real},{spec % v.imag})".encode()
    return lambda v: (spec % float(v)).encode()


def _float_text(v):
    """TF's FloatToBuffer/DoubleToBuffer: %g with FLT_DIG (DBL_DIG) digits, or with 3 (2) more
    when that does not read back as the same number. Half precision prints as a float."""
    wide = isinstance(v, (float, np.float64))
    kind = np.float64 if wide else np.float32
    x = kind(v)
    text = "%.*g" % (15 if wide else 6, x)
    if not np.isnan(x) and kind(float(text)) != x:
        text = "%.*g" % (17 if wide else 9, x)
    return text


def _scalar(v):
    if isinstance(v, bytes):
        return '"' + v.decode("utf-8", "backslashreplace") + '"'
    if isinstance(v, (bool, np.bool_)):
        return "1" if v else "0"
    if isinstance(v, (float, np.floating)):
        return _float_text(v)
    return str(v)


def summarize(value, n):
    """TF's tensor printing in StringFormat: numpy-like brackets, entries space-separated, the
    first and last `n` of each dimension around '...' (all with n < 0)."""
    if value.ndim == 0:
        return _scalar(value[()])

    def fmt(a, depth):
        size = a.shape[0]
        if 0 <= n and 2 * n < size:
            index = list(range(n)) + [None] + list(range(size - n, size))
        else:
            index = list(range(size))
        if a.ndim == 1:
            return "[" + " ".join("..." if i is None else _scalar(a[i]) for i in index) + "]"
        sep = "\n" * (a.ndim - 1) + " " * (depth + 1)
        return "[" + sep.join("..." if i is None else fmt(a[i], depth + 1) for i in index) + "]"
    return fmt(value, 0)
