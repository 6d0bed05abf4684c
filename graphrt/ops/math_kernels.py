"""Kernels of the math ops, written against the array module `xp` (numpy on
CPU and SIM, cupy on GPU) so one definition serves every device type.

A factory runs once per node when the executor is built and returns the
callable the executor invokes each step; everything that depends only on
attrs (transposes, axes handling, target dtype) is decided there.
"""
import functools
import operator

import numpy as np

from .. import errors
from ..framework import dtypes
from ..framework.registry import register_kernel
from .blas import blas_kernel

ALL_DEVICES = ("CPU", "GPU")  # SIM reuses the CPU kernels on its own memory (see runtime)


def reusable(x):
    """True for a numpy array a kernel may overwrite once the executor has said
    it owns it (KernelContext.forwardable): writable and not a view."""
    return type(x) is np.ndarray and x.base is None and x.flags.writeable


def _fits(x, y):
    """True when broadcast(x, y) has x's shape (same shape, scalar, or trailing dims)."""
    return x.shape == y.shape or y.ndim == 0 or (y.ndim <= x.ndim and x.shape[x.ndim - y.ndim:] == y.shape)


# Numpy scalars of these types: a Python operator on two of the same type
# gives the same value and dtype as the ufunc (float32 stays float32, ints
# wrap) at a tenth of the cost (~0.15 us against ~1.5 us for np.add).
SCALAR_TYPES = frozenset((np.float32, np.float64, np.int32, np.int64))

# ufunc name -> the Python operator that matches it on SCALAR_TYPES
_SCALAR_OPS = {"add": operator.add, "subtract": operator.sub, "multiply": operator.mul,
               "less": operator.lt, "less_equal": operator.le, "greater": operator.gt,
               "greater_equal": operator.ge, "equal": operator.eq, "not_equal": operator.ne,
               "negative": operator.neg}


# numpy's SIMD loops for maximum and minimum need both operands to step through memory: against a
# 0-d operand they take the generic loop, about 4x slower (98 us against 25 us for a 256x1024
# float32 relu here). So a large float array meets a scalar through blocks filled with it (same
# values, NaN and signed zeros included: the operands keep their order).
_BLOCK = 1 << 16          # elements per call
_MIN_BLOCKED = 1 << 12    # below this, one call against the scalar is cheaper
_BLOCKS = {}              # (dtype, value bytes) -> read-only block, a few kept
_MAX_BLOCKS = 16


def _block_of(value):
    key = (value.dtype, value.tobytes())
    block = _BLOCKS.get(key)
    if block is None:
        if len(_BLOCKS) >= _MAX_BLOCKS:
            _BLOCKS.clear()
        block = np.full(_BLOCK, value, value.dtype)
        block.flags.writeable = False
        _BLOCKS[key] = block
    return block


def blockwise_with_scalar(ufunc, x, y, out=None):
    """ufunc(x, y, out=out) where one operand may be 0-d; through blocks of the scalar when the
    other is a large C-contiguous float array of the same dtype (see _BLOCK)."""
    array, scalar, first = (x, y, True) if type(x) is np.ndarray and x.ndim else (y, x, False)
    if (type(array) is not np.ndarray or array.size < _MIN_BLOCKED or array.dtype.kind != "f"
            or not array.flags.c_contiguous):
        return ufunc(x, y, out=out)
    value = np.asarray(scalar)
    if value.ndim or value.dtype != array.dtype:
        return ufunc(x, y, out=out)
    if out is None:
        out = np.empty_like(array)
    block = _block_of(value)
    src, dst = array.reshape(-1), out.reshape(-1)
    n = src.size
    for i in range(0, n, _BLOCK):
        j = min(n, i + _BLOCK)
        if first:
            ufunc(src[i:j], block[:j - i], out=dst[i:j])
        else:
            ufunc(block[:j - i], src[i:j], out=dst[i:j])
    return out


# numpy's where branches on every element: on a mask that is true about half the time (a sign, a
# relu's gate) it costs ~4 ns per element here, 1.06 ms for 256x1024 float32. Selecting the bits
# instead, y ^ ((x ^ y) & mask) on the values seen as unsigned integers of their width, is
# branch-free and gives the same bits (NaN payloads and signed zeros included): 0.13 ms.
_UINT_OF_SIZE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def select(cond, x, y):
    """np.where(cond, x, y); branch-free for large C-contiguous numpy arrays of one shape and a
    dtype of 1, 2, 4 or 8 bytes (anything else goes to np.where)."""
    if not (type(cond) is np.ndarray and type(x) is np.ndarray and type(y) is np.ndarray
            and cond.dtype == np.bool_ and x.dtype == y.dtype and x.dtype.kind in "biuf"
            and cond.size >= _MIN_BLOCKED and cond.shape == x.shape == y.shape
            and cond.flags.c_contiguous and x.flags.c_contiguous and y.flags.c_contiguous):
        return np.where(cond, x, y)
    u = _UINT_OF_SIZE.get(x.dtype.itemsize)
    if u is None:
        return np.where(cond, x, y)
    out = np.empty(x.shape, x.dtype)
    flags, xs, ys, outs = cond.reshape(-1), x.reshape(-1).view(u), y.reshape(-1).view(u), out.reshape(-1).view(u)
    n = flags.size
    true = np.empty(min(n, _BLOCK), np.bool_)
    mask = np.empty(min(n, _BLOCK), u)
    for i in range(0, n, _BLOCK):
        j = min(n, i + _BLOCK)
        k = j - i
        # any nonzero byte is true, as numpy reads a bool; its negation as an unsigned is all ones
        np.not_equal(flags[i:j].view(np.uint8), 0, out=true[:k])
        np.negative(true[:k].view(np.uint8), out=mask[:k], dtype=u)
        o = outs[i:j]
        np.bitwise_xor(xs[i:j], ys[i:j], out=o)
        o &= mask[:k]
        o ^= ys[i:j]
    return out


def ufunc_kernel(ctx, ufunc, scalar_op=None):
    """`ufunc` as a kernel that writes into an input it owns instead of
    allocating, and runs `scalar_op` instead when every input is 0-d (see
    SCALAR_TYPES)."""
    forward = ctx.forwardable
    if ctx.xp is not np:
        return ufunc
    ndarray = np.ndarray
    scalars = SCALAR_TYPES
    if ufunc is np.maximum or ufunc is np.minimum:
        def apply(x, y, out=None):
            if (x.ndim if type(x) is ndarray else np.ndim(x)) and (y.ndim if type(y) is ndarray else np.ndim(y)):
                return ufunc(x, y, out=out)
            return blockwise_with_scalar(ufunc, x, y, out)
    else:
        apply = ufunc
    if not forward or ctx.output_dtypes[0].base_dtype != ctx.input_dtypes[0].base_dtype:
        if scalar_op is None:
            return ufunc if apply is ufunc else (lambda x, y: apply(x, y))
        fx = fy = False
    else:
        fx, fy = 0 in forward, 1 in forward
    if ufunc.nin == 1:
        def unary(x):
            if not x.shape and scalar_op is not None:
                a = x[()]
                if type(a) in scalars:
                    return scalar_op(a)
            if fx and type(x) is ndarray and x.base is None and x.flags.writeable:
                return ufunc(x, out=x)
            return ufunc(x)
        return unary

    # The checks are ordered so numpy scalars (0-d results, the common case in
    # scalar graphs) take the operator after two type tests.
    def binary(x, y):
        tx = type(x)
        if scalar_op is not None:
            if tx is type(y) and tx in scalars:
                return scalar_op(x, y)
            if not x.shape and not y.shape:
                a, b = x[()], y[()]
                if type(a) is type(b) and type(a) in scalars:
                    return scalar_op(a, b)
        if tx is ndarray:
            if fx and x.base is None and x.flags.writeable and _fits(x, y):
                return apply(x, y, out=x)
            if fy and type(y) is ndarray and y.base is None and y.flags.writeable and _fits(y, x):
                return apply(x, y, out=y)
        return apply(x, y)
    # for code that calls kernels (runtime/schedule_code.py): with two numpy
    # scalars of one SCALAR_TYPES type this kernel returns scalar_op(x, y)
    binary.scalar_op = scalar_op
    return binary


def _simple(op_type, fn_name):
    @register_kernel(op_type, ALL_DEVICES, fresh_outputs=True)
    def factory(ctx):
        return ufunc_kernel(ctx, getattr(ctx.xp, fn_name), _SCALAR_OPS.get(fn_name))
    return factory


for _op, _fn in {"AddV2": "add", "Add": "add", "Sub": "subtract", "Mul": "multiply",
                 "Maximum": "maximum", "Minimum": "minimum", "Neg": "negative", "Abs": "abs",
                 "Square": "square", "Sqrt": "sqrt", "Exp": "exp", "Log": "log", "Log1p": "log1p",
                 "Expm1": "expm1", "Tanh": "tanh", "Sign": "sign", "Floor": "floor", "Ceil": "ceil",
                 "Sin": "sin", "Cos": "cos", "Less": "less", "LessEqual": "less_equal",
                 "Greater": "greater", "GreaterEqual": "greater_equal", "Equal": "equal",
                 "NotEqual": "not_equal", "LogicalAnd": "logical_and", "LogicalOr": "logical_or",
                 "LogicalNot": "logical_not", "Tan": "tan", "Asin": "arcsin", "Acos": "arccos",
                 "Atan": "arctan", "Sinh": "sinh", "Cosh": "cosh", "Asinh": "arcsinh", "Acosh": "arccosh",
                 "Atanh": "arctanh", "Atan2": "arctan2", "Rint": "rint", "NextAfter": "nextafter",
                 "BitwiseAnd": "bitwise_and", "BitwiseOr": "bitwise_or", "BitwiseXor": "bitwise_xor",
                 "Invert": "invert"}.items():
    _simple(_op, _fn)


@register_kernel("Round", ALL_DEVICES)
def _round(ctx):
    if ctx.input_dtypes[0].is_integer:
        return lambda x: x  # TF's Round is the identity on integers (numpy's rint returns floats)
    return ctx.xp.rint


def _safe_int_binary(op_type, fn_name, real_fn=None):
    """FloorDiv/FloorMod: integer division by zero is an error in TF, not numpy's silent 0.
    `real_fn(xp)`, if given, is the kernel for floating types."""
    @register_kernel(op_type, ALL_DEVICES)
    def factory(ctx):
        xp = ctx.xp
        fn = getattr(xp, fn_name)
        if not ctx.input_dtypes[0].is_integer:
            return fn if real_fn is None else real_fn(xp)
        name = ctx.name

        def safe(x, y):
            if (y == 0).any():
                raise errors.InvalidArgumentError("Integer division by zero", node=name)
            return fn(x, y)
        return safe
    return factory


def _floor_of_quotient(xp):
    # TF's FloorDiv of floats is floor(x / y); numpy's floor_divide is not: it gives NaN for an
    # infinite x and -1 for -2 // inf (TF: +-inf, -0.0), and 9.0 for 1 // 0.1 (TF: 10.0)
    return lambda x, y: xp.floor(xp.true_divide(x, y))


_safe_int_binary("FloorDiv", "floor_divide", _floor_of_quotient)
_safe_int_binary("FloorMod", "mod")


@register_kernel("RealDiv", ALL_DEVICES, fresh_outputs=True)
def _realdiv(ctx):
    return ufunc_kernel(ctx, ctx.xp.true_divide)


@register_kernel("Div", ALL_DEVICES)
def _div(ctx):
    xp = ctx.xp
    if ctx.input_dtypes[0].is_integer:
        return _truncate_div(xp, ctx.name)
    return xp.true_divide


def _truncate_div(xp, name=None, error=errors.InvalidArgumentError):
    def fn(x, y):
        if xp.any(y == 0):
            raise error("Integer division by zero", node=name)
        q = xp.abs(x) // xp.abs(y)
        return (xp.sign(x) * xp.sign(y) * q).astype(x.dtype)
    return fn


@register_kernel("TruncateDiv", ALL_DEVICES)
def _truncatediv(ctx):
    # TF's TruncateDiv fails an integer division by zero with an InternalError (as TruncateMod)
    return _truncate_div(ctx.xp, ctx.name, errors.InternalError) if ctx.input_dtypes[0].is_integer else \
        (lambda x, y: ctx.xp.trunc(x / y).astype(x.dtype))


@register_kernel("Pow", ALL_DEVICES)
def _pow(ctx):
    xp = ctx.xp
    if ctx.input_dtypes[0].is_integer:
        def int_pow(x, y):
            if xp.any(xp.asarray(y) < 0):
                raise errors.InvalidArgumentError("Integers to negative integer powers are not allowed")
            return xp.power(x, y)
        return int_pow

    def float_pow(x, y):
        out = xp.power(x, y)
        # C's pow(-inf, y) for a y that is not an odd integer is +inf (y > 0) or +0 (y < 0); numpy gives NaN
        # for a non-integer y (TF's kernels follow C)
        neg_inf = xp.isneginf(x)
        if xp.any(neg_inf):
            fractional = neg_inf & (y != xp.floor(y)) & xp.isfinite(y)
            out = xp.where(fractional, xp.where(y > 0, xp.inf, 0.0), out).astype(out.dtype, copy=False)
        return out
    if ctx.input_dtypes[0].is_complex:
        return xp.power
    return float_pow


@register_kernel("SquaredDifference", ALL_DEVICES, fresh_outputs=True)
def _squared_difference(ctx):
    xp = ctx.xp
    return lambda x, y: xp.square(xp.subtract(x, y))


@register_kernel("Rsqrt", ALL_DEVICES)
def _rsqrt(ctx):
    xp = ctx.xp
    return lambda x: xp.reciprocal(xp.sqrt(x))


@register_kernel("Reciprocal", ALL_DEVICES)
def _reciprocal(ctx):
    xp = ctx.xp
    if ctx.input_dtypes[0].is_integer:
        return lambda x: (1 // x).astype(x.dtype)
    return xp.reciprocal


@register_kernel("Sigmoid", ALL_DEVICES, fresh_outputs=True)
def _sigmoid(ctx):
    xp = ctx.xp

    def sigmoid(x):
        # exp of a non-positive number never overflows; both branches are exact
        e = xp.exp(-xp.abs(x))
        return where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)
    where = select if xp is np else xp.where
    return sigmoid


@register_kernel("Erf", ALL_DEVICES)
def _erf(ctx):
    import math
    vec = np.vectorize(math.erf, otypes=[np.float64])
    return lambda x: vec(x).astype(x.dtype)


@register_kernel("Erfc", ALL_DEVICES)
def _erfc(ctx):
    import math
    vec = np.vectorize(math.erfc, otypes=[np.float64])  # not 1 - erf(x): exact far in the tail
    return lambda x: vec(x).astype(x.dtype)


def _shift(op_type, fn_name):
    """LeftShift/RightShift: TF clamps the shift amount to [0, bits - 1] (C++ leaves shifts by
    a negative amount or by the width or more undefined); the bits as numpy's shifts give them
    (a left shift wraps, a right shift of a signed type is arithmetic)."""
    @register_kernel(op_type, ALL_DEVICES, fresh_outputs=True)
    def factory(ctx):
        xp = ctx.xp
        fn = getattr(xp, fn_name)
        dt = ctx.input_dtypes[0].np
        top = dt.type(dt.itemsize * 8 - 1)
        zero = dt.type(0)

        def shift(x, y):
            return fn(x, xp.minimum(xp.maximum(y, zero), top))
        return shift
    return factory


_shift("LeftShift", "left_shift")
_shift("RightShift", "right_shift")


@register_kernel("TruncateMod", ALL_DEVICES)
def _truncatemod(ctx):
    """The remainder with the sign of x (C's fmod). TF's kernel fails an integer division by
    zero with an InternalError of this text (its TruncateDiv as well)."""
    xp = ctx.xp
    if not ctx.input_dtypes[0].is_integer:
        return xp.fmod
    name = ctx.name

    def truncate_mod(x, y):
        if xp.any(y == 0):
            raise errors.InternalError("Unexpected error in binary operator (only integer div and mod should "
                                       "have errors)", node=name)
        return xp.fmod(x, y)
    return truncate_mod


def _zero_where(op_type, guard, compute):
    """Xlogy, Xdivy, Xlog1py, MulNoNan: compute(x, y), and 0 wherever guard(x, y) (x == 0, or y == 0
    for MulNoNan) whatever the other operand is (NaN and infinities included)."""
    @register_kernel(op_type, ALL_DEVICES, fresh_outputs=True)
    def factory(ctx):
        xp = ctx.xp

        def kernel(x, y):
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                out = xp.asarray(compute(xp, x, y))
            return xp.where(guard(x, y), xp.zeros_like(out), out)
        return kernel
    return factory


_zero_where("Xlogy", lambda x, y: x == 0, lambda xp, x, y: x * xp.log(y))
_zero_where("Xdivy", lambda x, y: x == 0, lambda xp, x, y: x / y)
_zero_where("Xlog1py", lambda x, y: x == 0, lambda xp, x, y: x * xp.log1p(y))
_zero_where("MulNoNan", lambda x, y: y == 0, lambda xp, x, y: x * y)


@register_kernel("Conj", ALL_DEVICES, fresh_outputs=True)
def _conj(ctx):
    return ctx.xp.conj


def _complex_part(op_type, fn_name):
    @register_kernel(op_type, ALL_DEVICES, fresh_outputs=True)
    def factory(ctx):
        fn = getattr(ctx.xp, fn_name)
        out = ctx.output_dtypes[0].np
        return lambda x: fn(x).astype(out)  # a copy: np.real and np.imag give views
    return factory


_complex_part("Real", "real")
_complex_part("Imag", "imag")
_complex_part("Angle", "angle")
_complex_part("ComplexAbs", "abs")


@register_kernel("Complex", ALL_DEVICES, fresh_outputs=True)
def _complex(ctx):
    out = ctx.output_dtypes[0].np

    def kernel(re, im):
        re, im = ctx.xp.broadcast_arrays(re, im)
        z = ctx.xp.empty(re.shape, dtype=out)
        z.real, z.imag = re, im
        return z
    return kernel


# -- matmul -----------------------------------------------------------------------

@register_kernel("MatMul", ALL_DEVICES, fresh_outputs=True)
@blas_kernel
def _matmul(ctx):
    ta, tb = ctx.attr("transpose_a"), ctx.attr("transpose_b")
    matmul = ctx.xp.matmul
    if not ta and not tb:
        return matmul
    if ta and not tb:
        return lambda a, b: matmul(a.T, b)
    if tb and not ta:
        return lambda a, b: matmul(a, b.T)
    return lambda a, b: matmul(a.T, b.T)


@register_kernel("BatchMatMulV2", ALL_DEVICES, fresh_outputs=True)
@blas_kernel
def _batch_matmul(ctx):
    ax, ay = ctx.attr("adj_x"), ctx.attr("adj_y")
    xp = ctx.xp
    complex_x, complex_y = (ctx.input_dtypes[i].is_complex for i in (0, 1))

    def fn(x, y):
        if ax:  # the adjoint: a conjugate transpose (a plain one for real values)
            x = xp.swapaxes(xp.conj(x) if complex_x else x, -1, -2)
        if ay:
            y = xp.swapaxes(xp.conj(y) if complex_y else y, -1, -2)
        return xp.matmul(x, y)
    return fn


# -- reductions -------------------------------------------------------------------

def reduction_axes(axes, rank, node_name):
    """Normalized axes tuple from a reduction_indices value; InvalidArgument if out of range."""
    flat = np.asarray(axes).reshape(-1).tolist()
    out = []
    for a in flat:
        if not -rank <= a < max(rank, 1):
            raise errors.InvalidArgumentError(
                f"Invalid reduction dimension ({a} for input with {rank} dimension(s))", node=node_name)
        a = a % rank if rank else 0
        if a in out:
            raise errors.InvalidArgumentError(f"Axes contains duplicate dimension: {a}", node=node_name)
        out.append(a)
    return tuple(out)


def _reducer(op_type, make):
    @register_kernel(op_type, ALL_DEVICES, host_memory=("reduction_indices",))
    def factory(ctx):
        keep = ctx.attr("keep_dims")
        xp = ctx.xp
        name = ctx.name
        reduce = make(xp, ctx.output_dtypes[0].np)
        cache = {}

        def fn(x, axes):
            key = (x.ndim, axes.tobytes() if hasattr(axes, "tobytes") else axes)
            ax = cache.get(key)
            if ax is None:
                ax = cache[key] = reduction_axes(axes, x.ndim, name)
            if x.ndim == 0:
                return reduce(x, None, keep)
            return reduce(x, ax, keep)
        return fn
    return factory


def _sum(xp, dt):
    if xp is np:  # np.sum is three Python-level calls around this one
        return lambda x, ax, keep: np.add.reduce(x, axis=ax, dtype=dt, keepdims=keep)
    return lambda x, ax, keep: xp.sum(x, axis=ax, keepdims=keep, dtype=dt)


def _prod(xp, dt):
    return lambda x, ax, keep: xp.prod(x, axis=ax, keepdims=keep, dtype=dt)


def _mean(xp, dt):
    if np.issubdtype(dt, np.integer):
        def int_mean(x, ax, keep):
            total = xp.sum(x, axis=ax, keepdims=keep, dtype=np.int64)
            count = max(1, x.size // max(1, total.size))
            return (xp.sign(total) * (xp.abs(total) // count)).astype(dt)
        return int_mean
    return lambda x, ax, keep: xp.mean(x, axis=ax, keepdims=keep, dtype=dt)


def _extreme(fn_name):
    def make(xp, dt):
        fn = getattr(xp, fn_name)

        def reduce(x, ax, keep):
            if x.size == 0:
                fill = (-np.inf if fn_name == "amax" else np.inf) if np.issubdtype(dt, np.floating) else \
                    (np.iinfo(dt).min if fn_name == "amax" else np.iinfo(dt).max)
                shape = [1 if (ax is None or i in ax) else d for i, d in enumerate(x.shape)] if keep else \
                    [d for i, d in enumerate(x.shape) if ax is not None and i not in ax]
                return xp.full(shape, fill, dtype=dt)
            return fn(x, axis=ax, keepdims=keep)
        return reduce
    return make


def _all(xp, dt):
    return lambda x, ax, keep: xp.all(x, axis=ax, keepdims=keep)


def _any(xp, dt):
    return lambda x, ax, keep: xp.any(x, axis=ax, keepdims=keep)


for _op, _make in (("Sum", _sum), ("Prod", _prod), ("Mean", _mean), ("Max", _extreme("amax")),
                   ("Min", _extreme("amin")), ("All", _all), ("Any", _any)):
    _reducer(_op, _make)


def _arg_kernel(op_type, fn_name):
    @register_kernel(op_type, ALL_DEVICES, host_memory=("dimension",))
    def factory(ctx):
        fn = getattr(ctx.xp, fn_name)
        out = ctx.output_dtypes[0].np
        name = ctx.name

        # TF's reducers never select a NaN (numpy's select the first); an all-NaN slice gives 0 as numpy's do
        nan_fill = (-np.inf if fn_name == "argmax" else np.inf) if ctx.input_dtypes[0].is_floating else None
        xp = ctx.xp

        def arg(x, axis):
            axis = int(axis)
            if nan_fill is not None:
                nan = xp.isnan(x)
                if nan.any():
                    x = xp.where(nan, x.dtype.type(nan_fill), x)
            if not -x.ndim <= axis < x.ndim:  # a scalar has no axis: every axis is out of range, as TF
                raise errors.InvalidArgumentError(
                    f"Expected dimension in the range [{-x.ndim}, {x.ndim}), but got {axis}", node=name)
            if x.shape and x.shape[axis] == 0:
                raise errors.InvalidArgumentError(f"Reduction axis {axis} is empty in shape {list(x.shape)}",
                                                  node=name)
            if nan_fill is not None and x.shape[axis] and nan.any():
                # an all-NaN slice: the -inf/inf fill ties with nothing, so its first NaN (0), as TF
                return xp.where(nan.all(axis=axis), 0, fn(x, axis=axis)).astype(out, copy=False)
            return fn(x, axis=axis).astype(out, copy=False)
        return arg
    return factory


_arg_kernel("ArgMax", "argmax")
_arg_kernel("ArgMin", "argmin")


# -- casts, sums, selection ---------------------------------------------------------

@register_kernel("Cast", ALL_DEVICES)
def _cast(ctx):
    src, dst = ctx.input_dtypes[0], ctx.output_dtypes[0]
    if src.base_dtype == dst.base_dtype:
        return lambda x: x
    target = dst.np
    if dst.base_dtype == dtypes.string or src.base_dtype == dtypes.string:
        name = ctx.name

        def unsupported(x):
            raise errors.UnimplementedError(f"Cast {src.base_dtype.name} to {dst.base_dtype.name} is not supported",
                                            node=name)
        return unsupported
    if src.is_floating and dst.base_dtype in (dtypes.int32, dtypes.int64):
        xp = ctx.xp
        low, high = float(dst.min), -float(dst.min)

        def float_to_int(x):
            # numpy warns and gives platform garbage; TF's conversion (x86's) gives the type's min for
            # NaN, infinities and anything out of range
            invalid = ~((x >= low) & (x < high))
            if xp.any(invalid):
                x = xp.where(invalid, low, x)
            return x.astype(target)
        return float_to_int
    if src.is_floating and dst.is_integer:
        def float_to_small_int(x):
            return ctx.xp.nan_to_num(x, nan=0, posinf=dst.max, neginf=dst.min).astype(target)
        return float_to_small_int
    return lambda x: x.astype(target)


_MANY_SCALARS = 16  # AddN inputs from which one numpy call beats a Python loop over numpy scalars


@register_kernel("AddN", ALL_DEVICES, fresh_outputs=True)
def _add_n(ctx):
    xp = ctx.xp
    scalars = SCALAR_TYPES if xp is np else ()

    def add_n(*xs):
        x0 = xs[0]
        try:
            shape = x0.shape
        except AttributeError:  # a host object that adds itself (TF 2's TensorList in a variant)
            return functools.reduce(operator.add, xs)
        if not shape:
            total = x0[()]
            t = type(total)
            if t in scalars:
                # 0-d inputs (all of one dtype, as AddN requires): summed in
                # order, the same roundings (float32 stays float32, ints wrap)
                # as the loop below without a ufunc call per input; many as
                # one running sum over an array, few as numpy scalars
                if len(xs) > _MANY_SCALARS:
                    return np.add.accumulate(np.fromiter(xs, t, len(xs)), dtype=t)[-1]
                for x in xs[1:]:
                    total = total + (x if type(x) is t else x[()])
                return total
        out = xp.asarray(xp.add(x0, xs[1]))  # numpy gives a scalar, not an array, for 0-d inputs
        for x in xs[2:]:
            xp.add(out, x, out=out)
        return out
    return add_n


@register_kernel("Select", ALL_DEVICES)
def _select(ctx):
    xp = ctx.xp
    name = ctx.name

    def select_kernel(c, t, e):
        if t.shape != e.shape:
            raise errors.InvalidArgumentError(f"'then' and 'else' must have the same size. but received: "
                                              f"{list(t.shape)} vs. {list(e.shape)}", node=name)
        if c.ndim == 1 and t.ndim > 1:
            if c.shape[0] != t.shape[0]:
                raise errors.InvalidArgumentError("Number of batches of 'then' must match size of 'cond'",
                                                  node=name)
            c = c.reshape((-1,) + (1,) * (t.ndim - 1))
        elif c.shape != t.shape and c.ndim != 0:
            raise errors.InvalidArgumentError(f"'cond' and 'then' must have the same size. but received: "
                                              f"{list(c.shape)} vs. {list(t.shape)}", node=name)
        return where(c, t, e)
    where = select if xp is np else xp.where
    return select_kernel


@register_kernel("SelectV2", ALL_DEVICES)
def _select_v2(ctx):
    return select if ctx.xp is np else ctx.xp.where


@register_kernel("Range", ALL_DEVICES, host_memory=("start", "limit", "delta"))
def _range(ctx):
    xp = ctx.xp
    dt = ctx.output_dtypes[0].np
    name = ctx.name

    def rng(start, limit, delta):
        if delta == 0:
            raise errors.InvalidArgumentError("Requires delta != 0", node=name)
        if (delta > 0 and start > limit) or (delta < 0 and start < limit):
            raise errors.InvalidArgumentError(
                f"Requires start <= limit when delta > 0: {start}/{limit}" if delta > 0 else
                f"Requires start >= limit when delta < 0: {start}/{limit}", node=name)
        return xp.arange(start, limit, delta, dtype=dt)
    return rng


@register_kernel("BroadcastGradientArgs", ALL_DEVICES, host_memory=("s0", "s1", "r0", "r1"))
def _broadcast_gradient_args(ctx):
    name = ctx.name
    dt = ctx.output_dtypes[0].np

    @functools.lru_cache(maxsize=64)
    def compute(s0, s1):
        n = max(len(s0), len(s1))
        a = (1,) * (n - len(s0)) + s0
        b = (1,) * (n - len(s1)) + s1
        r0, r1 = [], []
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y and x != 1 and y != 1:
                raise errors.InvalidArgumentError(f"Incompatible shapes: {list(s0)} vs. {list(s1)}", node=name)
            if x == 1 and y != 1:
                r0.append(i)
            elif y == 1 and x != 1:
                r1.append(i)
            elif x == 1 and y == 1:
                r0.append(i)
                r1.append(i)
        return np.array(r0, dtype=dt), np.array(r1, dtype=dt)

    return lambda s0, s1: compute(tuple(int(v) for v in s0), tuple(int(v) for v in s1))



@register_kernel("TanhGrad", ALL_DEVICES, fresh_outputs=True)
def _tanh_grad(ctx):
    return lambda y, dy: dy * (1 - y * y)


@register_kernel("SigmoidGrad", ALL_DEVICES, fresh_outputs=True)
def _sigmoid_grad(ctx):
    return lambda y, dy: dy * (y * (1 - y))


@register_kernel("SqrtGrad", ALL_DEVICES, fresh_outputs=True)
def _sqrt_grad(ctx):
    return lambda y, dy: dy * 0.5 / y


@register_kernel("RsqrtGrad", ALL_DEVICES, fresh_outputs=True)
def _rsqrt_grad(ctx):
    return lambda y, dy: dy * (-0.5 * y * y * y)


@register_kernel("ReciprocalGrad", ALL_DEVICES, fresh_outputs=True)
def _reciprocal_grad(ctx):
    return lambda y, dy: dy * (-(y * y))


def _cumulative(op_type, fn_name):
    @register_kernel(op_type, ALL_DEVICES, host_memory=("axis",))
    def factory(ctx):
        xp = ctx.xp
        fn = getattr(xp, fn_name)
        exclusive, reverse = ctx.attr("exclusive"), ctx.attr("reverse")
        identity = 0 if op_type == "Cumsum" else 1
        name = ctx.name

        def cumulative(x, axis):
            axis = int(axis)
            if not -x.ndim <= axis < x.ndim:
                raise errors.InvalidArgumentError(f"axis {axis} out of range for rank {x.ndim}", node=name)
            if reverse:
                x = xp.flip(x, axis)
            out = fn(x, axis=axis, dtype=x.dtype)
            if exclusive and x.shape[axis]:
                out = xp.roll(out, 1, axis=axis)
                index = [slice(None)] * x.ndim
                index[axis] = 0
                out[tuple(index)] = identity
            return xp.flip(out, axis) if reverse else out
        return cumulative
    return factory


_cumulative("Cumsum", "cumsum")
_cumulative("Cumprod", "cumprod")
