"""Math ops: elementwise arithmetic and comparisons (numpy broadcasting),
matmul, reductions, casts. Declarations and the TF1 Python API; kernels are
in math_kernels.py, gradients in math_grad.py.
"""
import numpy as np

from ..framework import dtypes
from ..framework.graph import Tensor, get_default_graph, graph_of
from ..framework.op_builder import apply_op, convert_to_tensor, is_tensor_like
from ..framework.registry import register_op
from ..framework.tensor_shape import TensorShape
from . import shape_fns

FLOAT = dtypes.FLOATING + (dtypes.complex64, dtypes.complex128)
NUMERIC = dtypes.NUMERIC
REAL = dtypes.FLOATING + dtypes.INTEGER
INDEX = (dtypes.int32, dtypes.int64)  # axes, shapes, indices: TF accepts only these
# TF's op defs' type lists (so a bool, string or unsigned input TF rejects is a TypeError at build)
SIGNED = (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64)
SIGNED_NUMERIC = FLOAT + SIGNED  # Neg, Pow, Sign, Round, Reciprocal: no unsigned types

# -- declarations ---------------------------------------------------------------

BINARY_OPS = ["AddV2", "Add", "Sub", "Mul", "RealDiv", "Div", "FloorDiv", "FloorMod", "Pow",
              "Maximum", "Minimum", "SquaredDifference", "TruncateDiv", "TruncateMod", "Atan2",
              "Xlogy", "Xdivy", "Xlog1py", "MulNoNan",
              "BitwiseAnd", "BitwiseOr", "BitwiseXor", "LeftShift", "RightShift"]
# the types TF's op defs allow, where they do not allow every type
_BINARY_TYPES = {
    **{_name: NUMERIC for _name in ("AddV2", "Sub", "Mul", "Div", "FloorDiv", "TruncateDiv")},
    "Add": FLOAT + SIGNED + (dtypes.uint8, dtypes.string),
    "Pow": SIGNED_NUMERIC,
    **{_name: REAL for _name in ("FloorMod", "Maximum", "Minimum")},
    "SquaredDifference": FLOAT + (dtypes.int32, dtypes.int64),
    "RealDiv": FLOAT,  # TF has RealDiv kernels only for floating and complex types (tf.div/truediv cast ints first)
    "TruncateMod": (dtypes.int32, dtypes.int64) + dtypes.FLOATING,
    "Atan2": dtypes.FLOATING,
    **{_name: FLOAT for _name in ("Xlogy", "Xdivy", "Xlog1py", "MulNoNan")},
    **{_name: dtypes.INTEGER for _name in ("BitwiseAnd", "BitwiseOr", "BitwiseXor", "LeftShift", "RightShift")},
}
for _name in BINARY_OPS:
    register_op(_name, ["x: T", "y: T"], ["z: T"], shape_fn=shape_fns.broadcast,
                allowed_types={"T": _BINARY_TYPES[_name]} if _name in _BINARY_TYPES else None)
register_op("NextAfter", ["x1: T", "x2: T"], ["output: T"], shape_fn=shape_fns.broadcast,
            allowed_types={"T": (dtypes.float64, dtypes.float32)})

UNARY_OPS = ["Neg", "Abs", "Square", "Sqrt", "Rsqrt", "Exp", "Log", "Log1p", "Tanh", "Sigmoid",
             "Sign", "Reciprocal", "Floor", "Ceil", "Round", "Sin", "Cos", "Expm1", "Erf",
             "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Erfc", "Rint", "Invert"]
_FLOAT_ONLY = {"Sqrt", "Rsqrt", "Exp", "Log", "Log1p", "Tanh", "Sigmoid", "Sin", "Cos", "Expm1", "Erf",
               "Floor", "Ceil", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh"}
_UNARY_TYPES = {**{_name: FLOAT for _name in _FLOAT_ONLY},
                **{_name: dtypes.FLOATING for _name in ("Floor", "Ceil", "Erf", "Erfc", "Rint")},
                **{_name: SIGNED_NUMERIC for _name in ("Neg", "Sign", "Reciprocal", "Round")},
                "Abs": dtypes.FLOATING + SIGNED, "Square": NUMERIC,
                "Invert": dtypes.INTEGER}
for _name in UNARY_OPS:
    register_op(_name, ["x: T"], ["y: T"], shape_fn=shape_fns.unchanged,
                allowed_types={"T": _UNARY_TYPES[_name]} if _name in _UNARY_TYPES else None)

# complex numbers' parts (TF's Python functions return a real input itself, or zeros, without these ops)
COMPLEX = (dtypes.complex64, dtypes.complex128)
register_op("Conj", ["input: T"], ["output: T"], shape_fn=shape_fns.unchanged, allowed_types={"T": COMPLEX})
for _name in ("Real", "Imag", "Angle"):
    register_op(_name, ["input: T"], ["output: Tout"], attrs={"Tout": dtypes.float32},
                shape_fn=shape_fns.unchanged,
                allowed_types={"T": COMPLEX, "Tout": (dtypes.float32, dtypes.float64)})
register_op("ComplexAbs", ["x: T"], ["y: Tout"], attrs={"Tout": dtypes.float32}, shape_fn=shape_fns.unchanged,
            allowed_types={"T": COMPLEX, "Tout": (dtypes.float32, dtypes.float64)})
register_op("Complex", ["real: T", "imag: T"], ["out: Tout"], attrs={"Tout": dtypes.complex64},
            shape_fn=shape_fns.broadcast,
            allowed_types={"T": (dtypes.float32, dtypes.float64), "Tout": COMPLEX})

COMPARISON_OPS = ["Less", "LessEqual", "Greater", "GreaterEqual", "Equal", "NotEqual"]
for _name in COMPARISON_OPS:
    register_op(_name, ["x: T", "y: T"], ["z: bool"], shape_fn=shape_fns.broadcast,
                allowed_types=None if _name in ("Equal", "NotEqual") else {"T": REAL})
register_op("LogicalAnd", ["x: bool", "y: bool"], ["z: bool"], shape_fn=shape_fns.broadcast)
register_op("LogicalOr", ["x: bool", "y: bool"], ["z: bool"], shape_fn=shape_fns.broadcast)
register_op("LogicalNot", ["x: bool"], ["y: bool"], shape_fn=shape_fns.unchanged)

register_op("MatMul", ["a: T", "b: T"], ["product: T"],
            attrs={"transpose_a": False, "transpose_b": False}, shape_fn=shape_fns.matmul,
            allowed_types={"T": FLOAT + (dtypes.int32, dtypes.int64)})
register_op("BatchMatMulV2", ["x: T", "y: T"], ["output: T"], attrs={"adj_x": False, "adj_y": False},
            shape_fn=shape_fns.batch_matmul,
            allowed_types={"T": FLOAT + (dtypes.int16, dtypes.int32, dtypes.int64, dtypes.uint8, dtypes.uint16,
                                         dtypes.uint32, dtypes.uint64)})

REDUCTION_OPS = ["Sum", "Mean", "Max", "Min", "Prod", "All", "Any"]
for _name in REDUCTION_OPS:
    _t = "bool" if _name in ("All", "Any") else "T"
    register_op(_name, [f"input: {_t}", "reduction_indices: Tidx"], [f"output: {_t}"],
                attrs={"keep_dims": False, "Tidx": dtypes.int32}, shape_fn=shape_fns.reduction,
                allowed_types={"Tidx": INDEX, **({"T": REAL if _name in ("Max", "Min") else NUMERIC}
                                                 if _t == "T" else {})})

for _name in ("ArgMax", "ArgMin"):
    register_op(_name, ["input: T", "dimension: Tidx"], ["output: output_type"],
                attrs={"Tidx": dtypes.int32, "output_type": dtypes.int64}, shape_fn=shape_fns.arg_reduction,
                allowed_types={"T": REAL + (dtypes.bool,), "Tidx": INDEX,
                               "output_type": INDEX + ((dtypes.int16, dtypes.uint16) if _name == "ArgMax" else ())})

register_op("Cast", ["x: SrcT"], ["y: DstT"], attrs={"Truncate": False}, shape_fn=shape_fns.unchanged)
# variant too: TF 2's loop gradients add the TensorLists their accumulators are kept in
register_op("AddN", ["inputs: N * T"], ["sum: T"], shape_fn=shape_fns.merge_all_inputs,
            allowed_types={"T": set(NUMERIC) | {dtypes.variant}})


def _select_shape(ctx):
    c, x, y = ctx.shape(0), ctx.shape(1), ctx.shape(2)
    out = x.merge_with(y)
    if c.ndims is not None and out.ndims is not None and c.ndims not in (out.ndims, 1) and out.ndims != 0:
        raise ValueError(f"Shapes must be equal rank, but are {c.ndims} and {out.ndims}")
    return out


register_op("Select", ["condition: bool", "t: T", "e: T"], ["output: T"], shape_fn=_select_shape)
register_op("SelectV2", ["condition: bool", "t: T", "e: T"], ["output: T"],
            shape_fn=lambda ctx: shape_fns.broadcast_shapes(shape_fns.broadcast_shapes(ctx.shape(0), ctx.shape(1)),
                                                            ctx.shape(2)))


def _range_shape(ctx):
    vals = [ctx.constant(i) for i in (0, 1, 2)]  # (`range` is tf.range in this module)
    if any(v is None for v in vals):
        return TensorShape([None])
    start, limit, delta = (v.item() for v in vals)
    if delta == 0:
        raise ValueError("Requires delta != 0")
    return TensorShape([max(0, int(np.ceil((limit - start) / delta)))])


register_op("Range", ["start: Tidx", "limit: Tidx", "delta: Tidx"], ["output: Tidx"], shape_fn=_range_shape)
register_op("BroadcastGradientArgs", ["s0: T", "s1: T"], ["r0: T", "r1: T"], attrs={"T": dtypes.int32},
            shape_fn=lambda ctx: [TensorShape([None]), TensorShape([None])])


# -- Python API: elementwise -------------------------------------------------------

def _binary(op_type, default_name):
    def fn(x, y, name=None):
        return apply_op(op_type, [x, y], name=name or default_name).outputs[0]
    fn.__name__ = default_name
    return fn


def _unary(op_type):
    def fn(x, name=None):
        return apply_op(op_type, [x], name=name).outputs[0]
    fn.__name__ = op_type.lower()
    return fn


add = _binary("AddV2", "Add")
subtract = _binary("Sub", "Sub")
multiply = _binary("Mul", "Mul")
realdiv = _binary("RealDiv", "RealDiv")
floormod = _binary("FloorMod", "FloorMod")
truncatediv = _binary("TruncateDiv", "TruncateDiv")
maximum = _binary("Maximum", "Maximum")
minimum = _binary("Minimum", "Minimum")
squared_difference = _binary("SquaredDifference", "SquaredDifference")
pow = _binary("Pow", "Pow")  # noqa: A001 - the TF name
sub = subtract
mul = multiply
mod = floormod

negative = _unary("Neg")
neg = negative


def abs(x, name=None):  # noqa: A001 - the TF name
    """|x|; of a complex tensor a real one (TF's ComplexAbs op, named Abs as TF names it)."""
    if not is_tensor_like(x) and np.iscomplexobj(x):
        x = convert_to_tensor(x)
    if is_tensor_like(x) and x.dtype.is_complex:
        return apply_op("ComplexAbs", [x], name=name or "Abs", Tout=_real_dtype(x.dtype)).outputs[0]
    return apply_op("Abs", [x], name=name).outputs[0]


square = _unary("Square")
sqrt = _unary("Sqrt")
rsqrt = _unary("Rsqrt")
exp = _unary("Exp")
expm1 = _unary("Expm1")
log = _unary("Log")
log1p = _unary("Log1p")
tanh = _unary("Tanh")
sigmoid = _unary("Sigmoid")
sign = _unary("Sign")
reciprocal = _unary("Reciprocal")
floor = _unary("Floor")
ceil = _unary("Ceil")
def round(x, name=None):  # noqa: A001 - the TF name
    """Half to even; an integer tensor is returned itself (TF adds no op)."""
    x = convert_to_tensor(x, name="x")
    if x.dtype.base_dtype.is_integer:
        return x
    return apply_op("Round", [x], name=name).outputs[0]
sin = _unary("Sin")
cos = _unary("Cos")
erf = _unary("Erf")
tan = _unary("Tan")
asin = _unary("Asin")
acos = _unary("Acos")
atan = _unary("Atan")
sinh = _unary("Sinh")
cosh = _unary("Cosh")
asinh = _unary("Asinh")
acosh = _unary("Acosh")
atanh = _unary("Atanh")
erfc = _unary("Erfc")
rint = _unary("Rint")
floor_div = _binary("FloorDiv", "FloorDiv")  # TF's generated wrapper of FloorDiv: no name scope
truncatemod = _binary("TruncateMod", "TruncateMod")
xlogy = _binary("Xlogy", "Xlogy")

# tf.bitwise
bitwise_and = _binary("BitwiseAnd", "BitwiseAnd")
bitwise_or = _binary("BitwiseOr", "BitwiseOr")
bitwise_xor = _binary("BitwiseXor", "BitwiseXor")
left_shift = _binary("LeftShift", "LeftShift")
right_shift = _binary("RightShift", "RightShift")
invert = _unary("Invert")


def atan2(y, x, name=None):
    """The angle of the point (x, y) (TF's argument order: y first)."""
    return apply_op("Atan2", [y, x], name=name or "Atan2").outputs[0]


def nextafter(x1, x2, name=None):
    """The next representable value after x1 towards x2."""
    return apply_op("NextAfter", [x1, x2], name=name or "NextAfter").outputs[0]


def xdivy(x, y, name=None):
    """x / y, and 0 where x is 0 (whatever y is)."""
    with get_default_graph().name_scope(name or "xdivy"):
        return apply_op("Xdivy", [x, y]).outputs[0]


def xlog1py(x, y, name=None):
    """x * log1p(y), and 0 where x is 0 (whatever y is)."""
    with get_default_graph().name_scope(name or "xlog1py"):
        return apply_op("Xlog1py", [x, y]).outputs[0]


def multiply_no_nan(x, y, name=None):
    """x * y, and 0 where y is 0 (even where x is NaN or infinite)."""
    with get_default_graph().name_scope(name or "multiply_no_nan") as scope:
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, dtype=x.dtype.base_dtype, name="y")
        if x.dtype.base_dtype != y.dtype.base_dtype:
            raise TypeError(f"`x` and `y` must have the same dtype, got {x.dtype.base_dtype!r} != "
                            f"{y.dtype.base_dtype!r}")
        return apply_op("MulNoNan", [x, y], name=scope).outputs[0]


def reciprocal_no_nan(x, name=None):
    """1 / x, and 0 where x is 0: DivNoNan(1, x), as TF builds it."""
    from ..framework.op_builder import constant
    with get_default_graph().name_scope(name or "reciprocal_no_nan") as scope:
        x = convert_to_tensor(x, name="x")
        one = constant(1, dtype=x.dtype.base_dtype, name="one")
        return apply_op("DivNoNan", [one, x], name=scope).outputs[0]


def log_sigmoid(x, name=None):
    """log(1 / (1 + exp(-x))), built as TF does: -softplus(-x)."""
    with get_default_graph().name_scope(name or "LogSigmoid") as scope:
        x = convert_to_tensor(x, name="x")
        return apply_op("Neg", [apply_op("Softplus", [negative(x)]).outputs[0]], name=scope).outputs[0]


def scalar_mul(scalar, x, name=None):
    """scalar * x for a 0-D `scalar` (ValueError otherwise); x a Tensor or IndexedSlices."""
    from ..framework.indexed_slices import IndexedSlices
    base_dtype = dtypes.as_dtype(x.dtype).base_dtype
    scalar = convert_to_tensor(scalar, dtype=base_dtype, name="scalar")
    shape = scalar.shape
    if shape.ndims != 0:
        raise ValueError(f"The input scalar must be a 0-D value. Received shape {shape}.")
    if isinstance(x, IndexedSlices):
        return IndexedSlices(apply_op("Mul", [scalar, x.values], name=name or "Mul").outputs[0], x.indices,
                             x.dense_shape)
    return apply_op("Mul", [scalar, x], name=name or "Mul").outputs[0]


def _real_dtype(dtype):
    return dtypes.float64 if dtype.base_dtype == dtypes.complex128 else dtypes.float32


def conj(x, name=None):
    """The complex conjugate; a real (floating or integer) input itself."""
    if isinstance(x, Tensor) and (x.dtype.is_floating or x.dtype.is_integer):
        return x
    with get_default_graph().name_scope(name or "Conj") as scope:
        x = convert_to_tensor(x, name="x")
        if x.dtype.is_complex:
            return apply_op("Conj", [x], name=scope).outputs[0]
        if x.dtype.is_floating or x.dtype.is_integer:
            return x
        raise TypeError(f"Expected numeric or variant tensor, got dtype {x.dtype.base_dtype!r}.")


def complex(real, imag, name=None):  # noqa: A001 - the TF name
    """real + i imag, of complex64 (float32 parts) or complex128 (float64 parts)."""
    g = graph_of([v for v in (real, imag) if is_tensor_like(v)])
    with g.as_default(), g.name_scope(name or "Complex") as scope:
        real = convert_to_tensor(real, name="real")
        imag = convert_to_tensor(imag, name="imag")
        parts = (real.dtype.base_dtype, imag.dtype.base_dtype)
        if parts == (dtypes.float64, dtypes.float64):
            tout = dtypes.complex128
        elif parts == (dtypes.float32, dtypes.float32):
            tout = dtypes.complex64
        else:
            raise TypeError(f"The `real` and `imag` components have incorrect types: {parts[0].name} "
                            f"{parts[1].name}. They must be consistent, and one of "
                            f"[tf.float32, tf.float64]")
        return apply_op("Complex", [real, imag], name=scope, Tout=tout).outputs[0]


def real(input, name=None):  # noqa: A002 - the TF name
    """The real part of a complex tensor; a real input itself."""
    with get_default_graph().name_scope(name or "Real") as scope:
        input = convert_to_tensor(input, name="input")  # noqa: A001
        if input.dtype.is_complex:
            return apply_op("Real", [input], name=scope, Tout=_real_dtype(input.dtype)).outputs[0]
        if input.dtype.is_numeric:
            return input
        raise TypeError(f"input must be a numeric tensor, but got tensor with dtype {input.dtype.base_dtype}")


def imag(input, name=None):  # noqa: A002 - the TF name
    """The imaginary part of a complex tensor; zeros for a real input."""
    with get_default_graph().name_scope(name or "Imag") as scope:
        input = convert_to_tensor(input, name="input")  # noqa: A001
        if input.dtype.is_complex:
            return apply_op("Imag", [input], name=scope, Tout=_real_dtype(input.dtype)).outputs[0]
        from .array_ops import zeros_like
        return zeros_like(input)


def angle(input, name=None):  # noqa: A002 - the TF name
    """The argument of a complex tensor; for a real input pi where it is negative, else 0."""
    with get_default_graph().name_scope(name or "Angle") as scope:
        input = convert_to_tensor(input, name="input")  # noqa: A001
        if input.dtype.is_complex:
            return apply_op("Angle", [input], name=scope, Tout=_real_dtype(input.dtype)).outputs[0]
        from .array_ops import ones_like, zeros_like
        return where(input < 0, np.pi * ones_like(input), zeros_like(input))

less = _binary("Less", "Less")
less_equal = _binary("LessEqual", "LessEqual")
greater = _binary("Greater", "Greater")
greater_equal = _binary("GreaterEqual", "GreaterEqual")
equal = _binary("Equal", "Equal")
not_equal = _binary("NotEqual", "NotEqual")
logical_and = _binary("LogicalAnd", "LogicalAnd")
logical_or = _binary("LogicalOr", "LogicalOr")
logical_not = _unary("LogicalNot")


def logical_xor(x, y, name="LogicalXor"):
    """(x | y) & ~(x & y): three unnamed ops and the final LogicalAnd named `name`, as TF builds it."""
    return logical_and(logical_or(x, y), logical_not(logical_and(x, y)), name=name)


def truediv(x, y, name=None):
    """x / y; integers are cast to floating point first (int32 -> float64), as Python 3 does."""
    with get_default_graph().name_scope(name or "truediv") as scope:
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, dtype=x.dtype.base_dtype, name="y")
        if x.dtype.base_dtype != y.dtype.base_dtype:
            raise TypeError(f"x and y must have the same dtype, got {x.dtype.base_dtype.name} != "
                            f"{y.dtype.base_dtype.name}")
        dt = x.dtype.base_dtype
        if dt.is_bool:
            raise TypeError(f"Invalid dtype {dt!r} in __truediv__")  # (TF's _TRUEDIV_TABLE maps bool to None)
        if dt.is_integer:
            target = dtypes.float32 if dt.size <= 2 else dtypes.float64
            x, y = cast(x, target), cast(y, target)
        return apply_op("RealDiv", [x, y], name=scope).outputs[0]


def divide(x, y, name=None):
    if name is not None:
        return truediv(x, y, name=name)
    return truediv(x, y)


def div(x, y, name=None):
    """TF1 `tf.div`: Python 2 semantics (floor division for integers); the op named like its scope."""
    with get_default_graph().name_scope(name or "div") as scope:
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype=x.dtype.base_dtype)
        if x.dtype.base_dtype.is_floating or x.dtype.base_dtype.is_complex:
            return apply_op("RealDiv", [x, y], name=scope).outputs[0]
        return apply_op("FloorDiv", [x, y], name=scope).outputs[0]


def floordiv(x, y, name=None):
    """x // y (TF's FloorDiv, named like its scope as TF's floordiv names it)."""
    with get_default_graph().name_scope(name or "floordiv") as scope:
        return apply_op("FloorDiv", [x, y], name=scope).outputs[0]


def add_n(inputs, name=None):
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise ValueError("inputs must be a non-empty list of Tensors")
    if len(inputs) == 1:
        # TF returns a lone input itself (densified), through an Identity only when named
        values = convert_to_tensor(inputs[0])
        if name:
            from .array_ops import identity
            return identity(values, name=name)
        return values
    return apply_op("AddN", [list(inputs)], name=name or "AddN").outputs[0]


def cast(x, dtype, name=None):
    dtype = dtypes.as_dtype(dtype).base_dtype
    if isinstance(x, Tensor) and x.dtype.base_dtype == dtype:
        return x
    with get_default_graph().name_scope(name or "Cast") as scope:
        x = convert_to_tensor(x, name="x")
        if x.dtype.base_dtype == dtype:
            return x
        return apply_op("Cast", [x], name=scope, DstT=dtype).outputs[0]


def to_float(x, name="ToFloat"):
    return cast(x, dtypes.float32, name=name)


def to_double(x, name="ToDouble"):
    return cast(x, dtypes.float64, name=name)


def to_int32(x, name="ToInt32"):
    return cast(x, dtypes.int32, name=name)


def to_int64(x, name="ToInt64"):
    return cast(x, dtypes.int64, name=name)


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
           a_is_sparse=False, b_is_sparse=False, name=None):
    if (transpose_a and adjoint_a) or (transpose_b and adjoint_b):
        raise ValueError("Only one of transpose_a and adjoint_a can be True.")
    with get_default_graph().name_scope(name or "MatMul") as scope:
        a = convert_to_tensor(a, name="a")
        b = convert_to_tensor(b, dtype=a.dtype.base_dtype, name="b")
        ra, rb = a.shape.ndims, b.shape.ndims
        if ra is None or ra > 2 or rb is None or rb > 2:  # an unknown rank takes BatchMatMul, as in TF
            # BatchMatMul adjoints (conjugate transposes); a plain transpose is the adjoint of the conjugate.
            if transpose_a:
                a, adjoint_a = conj(a), True
            if transpose_b:
                b, adjoint_b = conj(b), True
            return apply_op("BatchMatMulV2", [a, b], name=scope, adj_x=adjoint_a, adj_y=adjoint_b).outputs[0]
        # MatMul transposes; an adjoint is the transpose of the conjugate (conj is a no-op for real tensors).
        if adjoint_a:
            a, transpose_a = conj(a), True
        if adjoint_b:
            b, transpose_b = conj(b), True
        return apply_op("MatMul", [a, b], name=scope, transpose_a=transpose_a,
                        transpose_b=transpose_b).outputs[0]


def where(condition, x=None, y=None, name=None):
    """TF1 `tf.where`: with x and y, elementwise select (cond broadcast along the first
    dimension when it is a vector); with neither, the coordinates of true elements."""
    if x is None and y is None:
        from .array_ops import where_indices
        return where_indices(condition, name=name)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    return apply_op("Select", [condition, x, y], name=name or "Select").outputs[0]


def where_v2(condition, x=None, y=None, name=None):
    if x is None and y is None:
        from .array_ops import where_indices
        return where_indices(condition, name=name)
    return apply_op("SelectV2", [condition, x, y], name=name or "SelectV2").outputs[0]


def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001
    if limit is None:
        start, limit = 0, start
    with get_default_graph().name_scope(name) as scope:
        tensors = [v for v in (start, limit, delta) if is_tensor_like(v)]
        if dtype is not None:
            dt = dtypes.as_dtype(dtype)
        elif tensors:
            dt = tensors[0].dtype.base_dtype
        elif any(isinstance(v, float) for v in (start, limit, delta)):
            dt = dtypes.float32
        else:
            dt = dtypes.int32
        vals = [cast(convert_to_tensor(v, name=n), dt) if is_tensor_like(v) else convert_to_tensor(v, dtype=dt, name=n)
                for v, n in zip((start, limit, delta), ("start", "limit", "delta"))]
        return apply_op("Range", vals, name=scope).outputs[0]


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """Clips t (a Tensor, or an IndexedSlices whose values are clipped); ValueError where the bounds
    would broadcast t to a larger shape, as in TF."""
    from ..framework.indexed_slices import IndexedSlices
    with get_default_graph().name_scope(name or "clip_by_value") as scope:
        values = convert_to_tensor(t.values if isinstance(t, IndexedSlices) else t, name="t")
        t_min = minimum(values, clip_value_max)
        values.shape.assert_is_compatible_with(t_min.shape)
        t_max = maximum(t_min, clip_value_min, name=scope)  # named like the scope, as TF
        values.shape.assert_is_compatible_with(t_max.shape)
        if isinstance(t, IndexedSlices):
            return IndexedSlices(t_max, t.indices, t.dense_shape)
        return t_max


# -- reductions ---------------------------------------------------------------------

def _reduction_dims(x, axis):
    if axis is not None:
        return axis
    rank = x.shape.ndims
    if rank is not None:
        return convert_to_tensor(np.arange(rank, dtype=np.int32))
    from .array_ops import rank as rank_op
    return range(0, rank_op(x), 1)


def _reduce(op_type, default_name):
    def fn(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None):
        if axis is not None and reduction_indices is not None:
            raise ValueError("Cannot specify both 'axis' and 'reduction_indices'.")
        axis = reduction_indices if axis is None else axis
        keep = bool(keepdims if keepdims is not None else (keep_dims or False))
        x = convert_to_tensor(input_tensor)
        if op_type in ("All", "Any") and x.dtype.base_dtype != dtypes.bool:
            raise TypeError(f"reduce_{op_type.lower()} expects a bool tensor, got {x.dtype.base_dtype.name}")
        dims = _reduction_dims(x, axis)
        return _may_reduce_to_scalar(keep, axis, apply_op(op_type, [x, dims], name=name or default_name,
                                                           keep_dims=keep).outputs[0])
    fn.__name__ = f"reduce_{default_name.lower()}"
    return fn


reduce_sum = _reduce("Sum", "Sum")
reduce_mean = _reduce("Mean", "Mean")
reduce_max = _reduce("Max", "Max")
reduce_min = _reduce("Min", "Min")
reduce_prod = _reduce("Prod", "Prod")
reduce_all = _reduce("All", "All")
reduce_any = _reduce("Any", "Any")


def _may_reduce_to_scalar(keepdims, axis, output):
    """TF's: a reduction over every axis (axis None, no keepdims) is a scalar even of an input of unknown rank."""
    if not output.shape.is_fully_defined() and not keepdims and axis is None:
        output.set_shape(TensorShape([]))
    return output


def reduce_logsumexp(input_tensor, axis=None, keepdims=False, name=None, reduction_indices=None, keep_dims=None):
    """Built as TF builds it: the result is the final Add, named like the scope."""
    if axis is not None and reduction_indices is not None:
        raise ValueError("Cannot specify both 'axis' and 'reduction_indices'.")
    axis = reduction_indices if axis is None else axis
    keepdims = bool(keepdims or keep_dims)
    with get_default_graph().name_scope(name or "ReduceLogSumExp") as scope:
        x = convert_to_tensor(input_tensor)
        from .array_ops import reshape, shape, stop_gradient, zeros_like
        raw_max = reduce_max(x, axis=axis, keepdims=True)
        # an infinite (or NaN) max shifts by 0, so the result is +-inf, not nan
        finite = less(abs(raw_max), np.array(np.inf, dtype=x.dtype.base_dtype.np))
        m = stop_gradient(where_v2(finite, raw_max, zeros_like(raw_max)))
        result = log(reduce_sum(exp(subtract(x, m)), axis=axis, keepdims=keepdims))
        if not keepdims:
            m = reshape(m, shape(result))
        return _may_reduce_to_scalar(keepdims, axis, add(result, m, name=scope))


def _arg(op_type):
    def fn(input, axis=None, name=None, dimension=None, output_type=dtypes.int64):  # noqa: A002
        if axis is not None and dimension is not None:
            raise ValueError("Cannot specify both 'axis' and 'dimension'")
        axis = dimension if axis is None else axis
        if axis is None:
            axis = 0
        return apply_op(op_type, [input, axis], name=name,
                        output_type=dtypes.as_dtype(output_type)).outputs[0]
    fn.__name__ = op_type.lower()
    return fn


argmax = _arg("ArgMax")
argmin = _arg("ArgMin")


def count_nonzero(input_tensor=None, axis=None, keepdims=None, dtype=dtypes.int64, name=None,
                  reduction_indices=None, keep_dims=None, input=None):  # noqa: A002 - TF's deprecated alias
    """As TF counts: int64 ones summed, then cast to `dtype` (no wrap-around in a narrow dtype's sum)."""
    input_tensor = input if input_tensor is None else input_tensor
    axis = reduction_indices if axis is None else axis
    keepdims = bool(keep_dims if keepdims is None else keepdims)
    with get_default_graph().name_scope(name or "count_nonzero"):
        x = convert_to_tensor(input_tensor, name="input")
        if x.dtype.base_dtype == dtypes.bool:
            predicate = x
        else:
            from .array_ops import zeros
            predicate = not_equal(x, zeros([], dtype=x.dtype.base_dtype))
        return cast(reduce_sum(cast(predicate, dtypes.int64), axis=axis, keepdims=keepdims), dtype=dtype)


# -- operator overloads on Tensor -----------------------------------------------------

def _overload(op_name, fn, reverse=False):
    """TF's binary_op_wrapper: a name scope named after the Python operator
    ('add', 'mul', ...), the other operand converted to this tensor's dtype."""
    def forward(self, other):
        # TF builds in the operands' graph, whatever the default graph is (or in the
        # function body being built, which captures them: graph_of)
        g = graph_of([self, other])
        with g.as_default(), g.name_scope(op_name) as scope:
            if op_name == "mul" and self.dtype.base_dtype == dtypes.bool:
                return _bool_mul(self, other, scope)
            if not is_tensor_like(other):
                other = convert_to_tensor(other, dtype=self.dtype.base_dtype, name="y")
            return fn(self, other, name=scope)

    def backward(self, other):
        g = graph_of([self, other])
        with g.as_default(), g.name_scope(op_name) as scope:
            if not is_tensor_like(other):
                other = convert_to_tensor(other, dtype=self.dtype.base_dtype, name="x")
            return fn(other, self, name=scope)
    return backward if reverse else forward


def _truediv_op(x, y, name):
    return truediv(x, y, name=name)


def _bool_mul(x, y, name):
    """TF's `*` with a bool tensor: both operands (the other unconverted, so 2.5 becomes 2) cast to int32 by
    Cast ops (one even of an int32), multiplied, and the product cast back to bool (Mul has no bool kernel)."""
    def to_int32(v):
        return apply_op("Cast", [convert_to_tensor(v)], DstT=dtypes.int32).outputs[0]
    product = multiply(to_int32(x), to_int32(y), name=name)
    return apply_op("Cast", [product], DstT=dtypes.bool).outputs[0]


def _mul_op(x, y, name):
    if any(is_tensor_like(v) and v.dtype.base_dtype == dtypes.bool for v in (x, y)):
        return _bool_mul(x, y, name)
    return multiply(x, y, name=name)


def _xor_op(x, y, name):
    """TF's xor_: logical for bools (the final LogicalAnd named like the scope), bitwise otherwise."""
    if x.dtype.base_dtype == dtypes.bool:
        return logical_xor(x, y, name=name)
    return bitwise_xor(x, y)


def _and_op(x, y, name):
    """TF's and_: logical for bools, bitwise otherwise (`BitwiseAnd` in the operator's scope)."""
    if x.dtype.base_dtype == dtypes.bool:
        return logical_and(x, y, name=name)
    return bitwise_and(x, y)


def _or_op(x, y, name):
    if x.dtype.base_dtype == dtypes.bool:
        return logical_or(x, y, name=name)
    return bitwise_or(x, y)


_OPERATORS = {
    "add": ("add", add), "sub": ("sub", subtract), "mul": ("mul", _mul_op),
    "truediv": ("truediv", _truediv_op), "floordiv": ("floordiv", floordiv), "mod": ("mod", floormod),
    "pow": ("pow", pow), "matmul": ("matmul", lambda a, b, name: matmul(a, b, name=name)),
    "and": ("and", _and_op), "or": ("or", _or_op), "xor": ("xor", _xor_op),
}


def _install_tensor_operators(cls):
    for key, (scope_name, fn) in _OPERATORS.items():
        setattr(cls, f"__{key}__", _overload(scope_name, fn))
        setattr(cls, f"__r{key}__", _overload(scope_name, fn, reverse=True))
    cls.__div__ = cls.__truediv__
    cls.__neg__ = lambda self: negative(self)
    cls.__abs__ = lambda self: abs(self)
    cls.__invert__ = lambda self: logical_not(self) if self.dtype.base_dtype == dtypes.bool else invert(self)
    cls.__lt__ = lambda self, other: less(self, other)
    cls.__le__ = lambda self, other: less_equal(self, other)
    cls.__gt__ = lambda self, other: greater(self, other)
    cls.__ge__ = lambda self, other: greater_equal(self, other)


_install_tensor_operators(Tensor)


# -- gradient helper ops (TF's *Grad ops: fewer nodes than composing them) ------------

for _name in ("TanhGrad", "SigmoidGrad", "SqrtGrad", "RsqrtGrad", "ReciprocalGrad"):
    register_op(_name, ["y: T", "dy: T"], ["z: T"], shape_fn=shape_fns.unchanged, allowed_types={"T": FLOAT})

for _name in ("Cumsum", "Cumprod"):
    register_op(_name, ["x: T", "axis: Tidx"], ["out: T"],
                attrs={"exclusive": False, "reverse": False, "Tidx": dtypes.int32}, shape_fn=shape_fns.unchanged,
                allowed_types={"T": NUMERIC, "Tidx": INDEX})


def _cumulative(op_type, x, axis, exclusive, reverse, name):
    with get_default_graph().name_scope(name or op_type) as scope:  # taken even when the op fails, as in TF
        # TF converts a Python axis without casting: a float (even 1.0) is a float32 the op rejects.
        if not is_tensor_like(axis) and np.asarray(axis).dtype.kind == "f":
            raise TypeError("Value passed to parameter 'axis' has DataType float32 not in list of allowed "
                            "values: int32, int64")
        return apply_op(op_type, [x, axis], name=scope, exclusive=exclusive, reverse=reverse).outputs[0]


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    return _cumulative("Cumsum", x, axis, exclusive, reverse, name)


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    return _cumulative("Cumprod", x, axis, exclusive, reverse, name)
