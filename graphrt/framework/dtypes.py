"""Element types, as `tf.DType`: a name, a numpy dtype, and a ref flag.

A ref dtype (`float32_ref`) is the type of a variable's output: the consumer
gets the variable itself, not a snapshot of its value.
"""
import builtins

import numpy as np

_py_bool = builtins.bool


class DType:
    """An element type. Compare with `==`; `base_dtype` strips the ref."""

    __slots__ = ("name", "_np", "_is_ref")

    def __init__(self, name, np_dtype, is_ref=False):
        self.name = name + ("_ref" if is_ref else "")
        self._np = np_dtype
        self._is_ref = is_ref

    @property
    def as_numpy_dtype(self):
        return self._np.type

    @property
    def np(self):
        """The numpy dtype object (object dtype for strings)."""
        return self._np

    @property
    def is_ref_dtype(self):
        return self._is_ref

    @property
    def base_dtype(self):
        return _BY_NAME[self.name[:-4]] if self._is_ref else self

    @property
    def real_dtype(self):
        """The dtype of a complex type's parts (float32, float64); any other type itself."""
        return {"complex64": _BY_NAME["float32"], "complex128": _BY_NAME["float64"]}.get(self.base_dtype.name,
                                                                                       self.base_dtype)

    def _as_ref(self):
        return self if self._is_ref else _BY_NAME[self.name + "_ref"]

    @property
    def is_floating(self):
        return self.base_dtype.name in ("float16", "float32", "float64")

    @property
    def is_complex(self):
        return self.base_dtype.name in ("complex64", "complex128")

    @property
    def is_integer(self):
        return self.base_dtype.name in _INT_NAMES

    @property
    def is_unsigned(self):
        return self.base_dtype.name.startswith("uint")

    @property
    def is_bool(self):
        return self.base_dtype.name == "bool"

    @property
    def is_numeric(self):
        return self.is_floating or self.is_integer or self.is_complex

    @property
    def is_trainable(self):
        """Gradients flow only through floating and complex tensors (as in TF1)."""
        return self.is_floating or self.is_complex

    @property
    def size(self):
        return 0 if self.base_dtype.name == "string" else self._np.itemsize

    @property
    def min(self):
        return np.finfo(self._np).min if self.is_floating else np.iinfo(self._np).min

    @property
    def max(self):
        return np.finfo(self._np).max if self.is_floating else np.iinfo(self._np).max

    def is_compatible_with(self, other):
        return self.base_dtype == as_dtype(other).base_dtype

    def __eq__(self, other):
        if other is None:
            return False
        if not isinstance(other, DType):
            try:
                other = as_dtype(other)
            except TypeError:
                return False
        return self.name == other.name

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return f"tf.{self.name}"

    def __str__(self):
        return f"<dtype: '{self.name}'>"

    def __reduce__(self):
        return (as_dtype, (self.name,))


_INT_NAMES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
_SPECS = [
    ("float16", np.float16), ("float32", np.float32), ("float64", np.float64),
    ("int8", np.int8), ("int16", np.int16), ("int32", np.int32), ("int64", np.int64),
    ("uint8", np.uint8), ("uint16", np.uint16), ("uint32", np.uint32), ("uint64", np.uint64),
    ("bool", np.bool_), ("complex64", np.complex64), ("complex128", np.complex128),
    ("string", np.object_),
]
_BY_NAME = {}
for _name, _np_type in _SPECS:
    _BY_NAME[_name] = DType(_name, np.dtype(_np_type))
    _BY_NAME[_name + "_ref"] = DType(_name, np.dtype(_np_type), is_ref=True)

float16 = half = _BY_NAME["float16"]
float32 = _BY_NAME["float32"]
float64 = double = _BY_NAME["float64"]
int8, int16, int32, int64 = (_BY_NAME[n] for n in ("int8", "int16", "int32", "int64"))
uint8, uint16, uint32, uint64 = (_BY_NAME[n] for n in ("uint8", "uint16", "uint32", "uint64"))
bool = _BY_NAME["bool"]  # noqa: A001 - the TF name
complex64, complex128 = _BY_NAME["complex64"], _BY_NAME["complex128"]
string = _BY_NAME["string"]
# A handle to per-step state a kernel keeps (a TensorArray): a Python object
# that never leaves its device, so ops taking it are colocated with its maker.
resource = _BY_NAME["resource"] = DType("resource", np.dtype(object))
# A host object a kernel hands to another (a tf.data dataset): like a resource it
# never leaves its device, so its consumers are colocated with its producer.
variant = _BY_NAME["variant"] = DType("variant", np.dtype(object))
float32_ref, float64_ref, int32_ref, int64_ref = (
    _BY_NAME[n] for n in ("float32_ref", "float64_ref", "int32_ref", "int64_ref"))

_ALIASES = {"float": "float32", "double": "float64", "half": "float16", "str": "string",
            "bytes": "string", "object": "string"}
_NP_TO_NAME = {np.dtype(t): n for n, t in _SPECS if n != "string"}

FLOATING = (float16, float32, float64)
INTEGER = tuple(_BY_NAME[n] for n in _INT_NAMES)
NUMERIC = FLOATING + INTEGER + (complex64, complex128)


def as_dtype(value):
    """Converts a DType, numpy dtype, numpy type, Python type or name to a DType."""
    if isinstance(value, DType):
        return value
    if isinstance(value, str):
        name = _ALIASES.get(value, value)
        if name in _BY_NAME:
            return _BY_NAME[name]
        raise TypeError(f"Cannot convert value {value!r} to a TensorFlow DType.")
    if value is float:
        return float32
    if value is _py_bool:
        return _BY_NAME["bool"]
    if value in (str, bytes):
        return string
    try:
        npd = np.dtype(value)
    except TypeError:
        raise TypeError(f"Cannot convert value {value!r} to a TensorFlow DType.") from None
    if npd.kind in "USO":
        return string
    if npd in _NP_TO_NAME:
        return _BY_NAME[_NP_TO_NAME[npd]]
    raise TypeError(f"Cannot convert value {value!r} to a TensorFlow DType.")


def dtype_of_value(value):
    """The DType a Python or numpy value converts to by default (float -> float32, int -> int32)."""
    if isinstance(value, (np.ndarray, np.generic)):
        return as_dtype(value.dtype)
    if isinstance(value, _py_bool):
        return _BY_NAME["bool"]
    if isinstance(value, int):
        return int32
    if isinstance(value, float):
        return float32
    if isinstance(value, (str, bytes)):
        return string
    if isinstance(value, complex):
        return complex64
    return None
