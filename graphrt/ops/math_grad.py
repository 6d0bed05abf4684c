"""Gradients of the math ops (formulas as in TF's math_grad.py).

Broadcasting binary ops sum the gradient back to each input's shape. When
the static shapes settle which axes were broadcast (the usual case, even
with an unknown batch size) that is one Sum with constant axes; only when
they do not does the graph compute it at run time with BroadcastGradientArgs.
"""
import numpy as np

from ..framework import dtypes
from ..framework.registry import not_differentiable, register_gradient
from . import array_ops, math_ops

# -- broadcasting ------------------------------------------------------------------


def _static_reduction(target, others):
    """(axes_dropped, axes_kept_as_1) that sum a gradient of broadcast(target, *others)
    back to target's shape, or None when the static shapes cannot decide."""
    if target.ndims is None or any(o.ndims is None for o in others):
        return None
    n = max([target.ndims] + [o.ndims for o in others])
    t = [None] * (n - target.ndims) + target.as_list()
    padded = [[1] * (n - o.ndims) + o.as_list() for o in others]
    dropped, kept = [], []
    for i in range(n):
        other_dims = [o[i] for o in padded]
        if i < n - target.ndims:
            dropped.append(i)
        elif t[i] == 1:
            if any(d != 1 for d in other_dims):
                kept.append(i)  # summing an axis that turns out to be 1 is harmless
        elif t[i] is None and any(d != 1 for d in other_dims):
            return None  # t[i] may be 1 and broadcast against the others
    return dropped, kept


def sum_to(grad, x, *others):
    """`grad` (shaped like broadcast(x, *others)) summed back to x's shape."""
    if grad is None:
        return None
    if x.shape.is_fully_defined() and grad.shape.is_fully_defined() and x.shape == grad.shape:
        return grad
    plan = _static_reduction(x.shape, [o.shape for o in others])
    if plan is not None:
        dropped, kept = plan
        if not dropped and not kept:
            return grad
        if not kept:
            return math_ops.reduce_sum(grad, axis=np.array(dropped, dtype=np.int32))
        out = math_ops.reduce_sum(grad, axis=np.array(dropped + kept, dtype=np.int32), keepdims=True)
        return array_ops.reshape(out, _shape_of(x))
    rx, _ = _broadcast_gradient_args(x, grad)
    return array_ops.reshape(math_ops.reduce_sum(grad, rx), array_ops.shape(x))


def _broadcast_gradient_args(x, y):
    from ..framework.op_builder import apply_op
    op = apply_op("BroadcastGradientArgs", [array_ops.shape(x), array_ops.shape(y)])
    return op.outputs[0], op.outputs[1]


def _shape_of(x):
    if x.shape.is_fully_defined():
        return x.shape.as_list()
    return array_ops.shape(x)


def _binary_grads(op, gx, gy):
    x, y = op.inputs
    return [sum_to(gx, x, y), sum_to(gy, y, x)]


# -- elementwise binary ------------------------------------------------------------------

@register_gradient("AddV2")
def _add_grad(op, grad):
    return _binary_grads(op, grad, grad)


register_gradient("Add")(_add_grad)


@register_gradient("Sub")
def _sub_grad(op, grad):
    return _binary_grads(op, grad, -grad)


@register_gradient("Mul")
def _mul_grad(op, grad):
    x, y = op.inputs
    # (conj is the tensor itself for real types: complex inputs get TF's conjugated gradients)
    return _binary_grads(op, math_ops.multiply(grad, math_ops.conj(y)), math_ops.multiply(math_ops.conj(x), grad))


@register_gradient("RealDiv")
def _realdiv_grad(op, grad):
    x, y = op.inputs
    x, y = math_ops.conj(x), math_ops.conj(y)
    gx = math_ops.realdiv(grad, y)
    gy = grad * math_ops.realdiv(math_ops.realdiv(-x, y), y)
    return _binary_grads(op, gx, gy)


register_gradient("Div")(_realdiv_grad)


@register_gradient("FloorMod")
def _floormod_grad(op, grad):
    x, y = op.inputs
    return _binary_grads(op, grad, grad * -math_ops.floordiv(x, y))


not_differentiable("FloorDiv")
not_differentiable("TruncateDiv")
# (TruncateMod has no gradient in TF: tf.gradients through it is a LookupError)
for _name in ("BitwiseAnd", "BitwiseOr", "BitwiseXor", "Invert", "LeftShift", "RightShift"):
    not_differentiable(_name)


@register_gradient("Atan2")
def _atan2_grad(op, grad):
    y, x = op.inputs
    grad_inv = grad / (math_ops.square(y) + math_ops.square(x))
    return _binary_grads(op, x * grad_inv, -y * grad_inv)


def _nonzero(x):
    """1 where x != 0, else 0, in x's dtype."""
    return math_ops.cast(math_ops.not_equal(x, np.zeros((), x.dtype.base_dtype.np)), x.dtype.base_dtype)


def _xdivy(x, y):
    from ..framework.op_builder import apply_op
    return apply_op("Xdivy", [x, y]).outputs[0]


def _xlog1py(x, y):
    from ..framework.op_builder import apply_op
    return apply_op("Xlog1py", [x, y]).outputs[0]


@register_gradient("Xlogy")
def _xlogy_grad(op, grad):
    x, y = op.inputs
    return _binary_grads(op, math_ops.xlogy(_nonzero(x), y) * grad, _xdivy(x, y) * grad)


@register_gradient("Xlog1py")
def _xlog1py_grad(op, grad):
    x, y = op.inputs
    one = np.ones((), y.dtype.base_dtype.np)
    return _binary_grads(op, _xlog1py(_nonzero(x), y) * grad, _xdivy(x, y + one) * grad)


@register_gradient("Xdivy")
def _xdivy_grad(op, grad):
    x, y = op.inputs
    return _binary_grads(op, _xdivy(_nonzero(x), y) * grad,
                         _xdivy(math_ops.negative(x), math_ops.square(y)) * grad)


@register_gradient("MulNoNan")
def _mul_no_nan_grad(op, grad):
    from ..framework.op_builder import apply_op
    x, y = op.inputs
    return _binary_grads(op, apply_op("MulNoNan", [grad, y]).outputs[0], apply_op("MulNoNan", [x, grad]).outputs[0])


@register_gradient("NextAfter")
def _next_after_grad(op, grad):
    x1, x2 = op.inputs
    # TF's: ones(shape(x1)) * grad and zeros(shape(x2)) * grad, summed to each input's shape
    return _binary_grads(op, array_ops.ones_like(x1) * grad, array_ops.zeros_like(x2) * grad)


@register_gradient("Pow")
def _pow_grad(op, grad):
    # conjugates, as TF's (the tensors themselves for real types)
    x, y = (math_ops.conj(t) for t in op.inputs)
    z = math_ops.conj(op.outputs[0])
    gx = grad * y * math_ops.pow(x, y - array_ops.ones_like(y))
    # TF's mask: x != 0 for complex x (complex numbers are not ordered), x > 0 otherwise
    positive = (math_ops.not_equal if x.dtype.is_complex else math_ops.greater)(x, array_ops.zeros_like(x))
    safe_x = math_ops.where_v2(positive, x, array_ops.ones_like(x))
    log_x = math_ops.where_v2(positive, math_ops.log(safe_x), array_ops.zeros_like(x))
    gy = grad * z * log_x
    return _binary_grads(op, gx, gy)


def _minmax_grad(op, grad, select):
    x, y = op.inputs
    mask = select(x, y)
    zeros = array_ops.zeros_like(grad)
    gx = math_ops.where_v2(mask, grad, zeros)
    gy = math_ops.where_v2(mask, zeros, grad)
    return _binary_grads(op, gx, gy)


@register_gradient("Maximum")
def _maximum_grad(op, grad):
    return _minmax_grad(op, grad, math_ops.greater_equal)


@register_gradient("Minimum")
def _minimum_grad(op, grad):
    return _minmax_grad(op, grad, math_ops.less_equal)


@register_gradient("SquaredDifference")
def _squared_difference_grad(op, grad):
    x, y = op.inputs
    two = np.array(2, dtype=x.dtype.base_dtype.np)
    gx = grad * (two * (x - y))
    return _binary_grads(op, gx, -gx)


# -- elementwise unary -------------------------------------------------------------------

@register_gradient("Neg")
def _neg_grad(op, grad):
    return [-grad]


@register_gradient("Abs")
def _abs_grad(op, grad):
    return [grad * math_ops.sign(op.inputs[0])]


@register_gradient("Square")
def _square_grad(op, grad):
    x = op.inputs[0]
    return [grad * (np.array(2, dtype=x.dtype.base_dtype.np) * x)]


def _helper_grad(op_type):
    from ..framework.op_builder import apply_op

    def grad_fn(op, grad):
        return [apply_op(op_type, [op.outputs[0], grad]).outputs[0]]
    return grad_fn


register_gradient("Sqrt")(_helper_grad("SqrtGrad"))
register_gradient("Rsqrt")(_helper_grad("RsqrtGrad"))
register_gradient("Tanh")(_helper_grad("TanhGrad"))
register_gradient("Sigmoid")(_helper_grad("SigmoidGrad"))
register_gradient("Reciprocal")(_helper_grad("ReciprocalGrad"))


@register_gradient("TanhGrad")
def _tanh_grad_grad(op, grad):
    y, dy = op.inputs
    two = np.array(-2, dtype=y.dtype.base_dtype.np)
    return [grad * dy * two * y, math_ops.multiply(grad, 1 - y * y)]


@register_gradient("SigmoidGrad")
def _sigmoid_grad_grad(op, grad):
    y, dy = op.inputs
    return [grad * dy * (1 - 2 * y), math_ops.multiply(grad, y * (1 - y))]


@register_gradient("Exp")
def _exp_grad(op, grad):
    return [grad * op.outputs[0]]


@register_gradient("Expm1")
def _expm1_grad(op, grad):
    return [grad * math_ops.exp(op.inputs[0])]


@register_gradient("Log")
def _log_grad(op, grad):
    return [grad * math_ops.reciprocal(op.inputs[0])]


@register_gradient("Log1p")
def _log1p_grad(op, grad):
    x = op.inputs[0]
    return [grad * math_ops.reciprocal(1 + x)]


@register_gradient("Sin")
def _sin_grad(op, grad):
    return [grad * math_ops.cos(op.inputs[0])]


@register_gradient("Cos")
def _cos_grad(op, grad):
    return [-grad * math_ops.sin(op.inputs[0])]


@register_gradient("Erf")
def _erf_grad(op, grad):
    x = op.inputs[0]
    two_over_root_pi = np.array(2.0 / np.sqrt(np.pi), dtype=x.dtype.base_dtype.np)
    return [grad * two_over_root_pi * math_ops.exp(-math_ops.square(x))]


def _one(x):
    return np.ones((), x.dtype.base_dtype.np)


@register_gradient("Tan")
def _tan_grad(op, grad):
    secx = math_ops.reciprocal(math_ops.cos(op.inputs[0]))
    return [math_ops.square(secx) * grad]


@register_gradient("Asin")
def _asin_grad(op, grad):
    x = op.inputs[0]
    return [grad * math_ops.reciprocal(math_ops.sqrt(math_ops.subtract(_one(x), math_ops.square(x))))]


@register_gradient("Acos")
def _acos_grad(op, grad):
    x = op.inputs[0]
    return [-grad * math_ops.reciprocal(math_ops.sqrt(math_ops.subtract(_one(x), math_ops.square(x))))]


@register_gradient("Atan")
def _atan_grad(op, grad):
    x = op.inputs[0]
    return [grad * math_ops.reciprocal(math_ops.add(_one(x), math_ops.square(x)))]


@register_gradient("Sinh")
def _sinh_grad(op, grad):
    return [grad * math_ops.cosh(op.inputs[0])]


@register_gradient("Cosh")
def _cosh_grad(op, grad):
    return [grad * math_ops.sinh(op.inputs[0])]


@register_gradient("Asinh")
def _asinh_grad(op, grad):
    return [grad / math_ops.cosh(op.outputs[0])]


@register_gradient("Acosh")
def _acosh_grad(op, grad):
    return [grad / math_ops.sinh(op.outputs[0])]


@register_gradient("Atanh")
def _atanh_grad(op, grad):
    x = op.inputs[0]
    return [grad * math_ops.reciprocal(math_ops.subtract(_one(x), math_ops.square(x)))]


@register_gradient("Erfc")
def _erfc_grad(op, grad):
    x = op.inputs[0]
    minus_two_over_root_pi = np.array(-2.0 / np.sqrt(np.pi), dtype=x.dtype.base_dtype.np)
    return [grad * minus_two_over_root_pi * math_ops.exp(-math_ops.square(x))]


def _complex(re, im):
    """re + i im, both of float32 (complex64) or float64 (complex128)."""
    dt = dtypes.complex128 if re.dtype.base_dtype == dtypes.float64 else dtypes.complex64
    i = np.array(1j, dtype=dt.np)
    return math_ops.cast(re, dt) + math_ops.cast(im, dt) * i


@register_gradient("Conj")
def _conj_grad(op, grad):
    return [math_ops.conj(grad)]


@register_gradient("Real")
def _real_grad(op, grad):
    return [_complex(grad, array_ops.zeros_like(grad))]


@register_gradient("Imag")
def _imag_grad(op, grad):
    return [_complex(array_ops.zeros_like(grad), grad)]


@register_gradient("Complex")
def _complex_grad(op, grad):
    re, im = op.inputs
    return [sum_to(math_ops.real(grad), re, im), sum_to(math_ops.imag(grad), im, re)]


@register_gradient("ComplexAbs")
def _complex_abs_grad(op, grad):
    """TF's: div_no_nan(grad x, |x|) (0 where |x| is 0)."""
    x, y = op.inputs[0], op.outputs[0]
    z = _complex(grad, array_ops.zeros_like(grad)) * x
    y = _complex(y, array_ops.zeros_like(y))
    nonzero = math_ops.not_equal(y, np.array(0, dtype=y.dtype.base_dtype.np))
    return [math_ops.where_v2(nonzero, z / math_ops.where_v2(nonzero, y, array_ops.ones_like(y)),
                              array_ops.zeros_like(z))]


@register_gradient("Angle")
def _angle_grad(op, grad):
    x = op.inputs[0]
    z = math_ops.reciprocal(_complex(math_ops.imag(x), math_ops.real(x)))
    return [-_complex(grad, array_ops.zeros_like(grad)) * z]


@register_gradient("Sign")
def _sign_grad(op, grad):
    return [array_ops.zeros_like(op.inputs[0])]


for _name in ("Floor", "Ceil", "Round", "Rint", "Less", "LessEqual", "Greater", "GreaterEqual", "Equal", "NotEqual",
              "LogicalAnd", "LogicalOr", "LogicalNot", "ArgMax", "ArgMin", "Range", "BroadcastGradientArgs",
              "All", "Any"):
    not_differentiable(_name)


# -- matmul -------------------------------------------------------------------------------

@register_gradient("MatMul")
def _matmul_grad(op, grad):
    a, b = op.inputs
    ta, tb = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    mm = math_ops.matmul
    if not ta and not tb:
        return [mm(grad, b, transpose_b=True), mm(a, grad, transpose_a=True)]
    if not ta and tb:
        return [mm(grad, b), mm(grad, a, transpose_a=True)]
    if ta and not tb:
        return [mm(b, grad, transpose_b=True), mm(a, grad)]
    return [mm(b, grad, transpose_a=True, transpose_b=True), mm(grad, a, transpose_a=True, transpose_b=True)]


@register_gradient("BatchMatMulV2")
def _batch_matmul_grad(op, grad):
    x, y = op.inputs
    ax, ay = op.get_attr("adj_x"), op.get_attr("adj_y")
    mm = math_ops.matmul
    if not ax and not ay:
        gx, gy = mm(grad, y, transpose_b=True), mm(x, grad, transpose_a=True)
    elif not ax and ay:
        gx, gy = mm(grad, y), mm(grad, x, transpose_a=True)
    elif ax and not ay:
        gx, gy = mm(y, grad, transpose_b=True), mm(x, grad)
    else:
        gx, gy = mm(y, grad, transpose_a=True, transpose_b=True), mm(grad, x, transpose_a=True, transpose_b=True)
    return [_sum_batch_to(gx, x), _sum_batch_to(gy, y)]


def _sum_batch_to(grad, target):
    if grad.shape.ndims is not None and target.shape.ndims is not None and grad.shape.ndims == target.shape.ndims:
        if grad.shape.is_fully_defined() and target.shape.is_fully_defined() and grad.shape == target.shape:
            return grad
    rg = grad.shape.ndims
    rt = target.shape.ndims
    if rg is None or rt is None:
        raise ValueError("BatchMatMul gradient needs inputs of known rank")
    lead = list(range(rg - rt))
    if lead:
        grad = math_ops.reduce_sum(grad, axis=np.array(lead, dtype=np.int32))
    kept = [i for i, (g_d, t_d) in enumerate(zip(grad.shape.as_list()[:-2], target.shape.as_list()[:-2]))
            if t_d == 1 and g_d != 1]
    if kept:
        grad = math_ops.reduce_sum(grad, axis=np.array(kept, dtype=np.int32), keepdims=True)
    return grad


# -- reductions ----------------------------------------------------------------------------

def _kept_dims_shape(x, axes_tensor):
    """The shape of x reduced over axes with keepdims, statically when possible."""
    from ..framework.constant_value import constant_value
    axes = constant_value(axes_tensor)
    if x.shape.is_fully_defined() and axes is not None:
        dims = x.shape.as_list()
        rank = len(dims)
        for a in np.asarray(axes).reshape(-1).tolist():
            if rank:
                dims[a % rank] = 1
        return dims, x.shape.as_list()
    return array_ops.reduced_shape(array_ops.shape(x), axes_tensor), array_ops.shape(x)


def _broadcast_grad_to_input(op, grad):
    x, axes = op.inputs
    kept, full = _kept_dims_shape(x, axes)
    return array_ops.broadcast_to(array_ops.reshape(grad, kept), full)


@register_gradient("Sum")
def _sum_grad(op, grad):
    return [_broadcast_grad_to_input(op, grad), None]


@register_gradient("Mean")
def _mean_grad(op, grad):
    x, y = op.inputs[0], op.outputs[0]
    full = _broadcast_grad_to_input(op, grad)
    nx, ny = x.shape.num_elements(), y.shape.num_elements()
    if nx is not None and ny is not None:
        factor = np.array(nx // max(ny, 1), dtype=grad.dtype.base_dtype.np)
        return [math_ops.realdiv(full, factor), None]
    factor = math_ops.cast(math_ops.maximum(array_ops.size(x) // math_ops.maximum(array_ops.size(y), 1), 1),
                           grad.dtype.base_dtype)
    return [math_ops.realdiv(full, factor), None]


def _minmax_reduction_grad(op, grad):
    x, axes = op.inputs
    y = op.outputs[0]
    kept, full = _kept_dims_shape(x, axes)
    y = array_ops.reshape(y, kept)
    grad = array_ops.reshape(grad, kept)
    indicators = math_ops.cast(math_ops.equal(y, x), grad.dtype.base_dtype)
    num_selected = array_ops.reshape(math_ops.reduce_sum(indicators, axes), kept)
    return [math_ops.realdiv(indicators, num_selected) * grad, None]


register_gradient("Max")(_minmax_reduction_grad)
register_gradient("Min")(_minmax_reduction_grad)


@register_gradient("Prod")
def _prod_grad(op, grad):
    """Product of all the other elements (exclusive cumulative products from both sides),
    correct when some inputs are zero; needs a known rank and constant axes."""
    from ..framework.constant_value import constant_value
    x, axes_t = op.inputs
    axes = constant_value(axes_t)
    rank = x.shape.ndims
    if axes is None or rank is None:
        raise ValueError(f"The gradient of reduce_prod ({op.name}) needs constant axes and a known input rank")
    reduced = sorted({int(a) % rank for a in np.asarray(axes).reshape(-1)}) if rank else []
    other = [i for i in range(rank) if i not in reduced]
    perm = reduced + other
    kept, full = _kept_dims_shape(x, axes_t)
    grad = array_ops.broadcast_to(array_ops.reshape(grad, kept), full)
    permuted = array_ops.transpose(x, np.array(perm, dtype=np.int32)) if rank else x
    pshape = array_ops.shape(permuted)
    flat = array_ops.reshape(permuted, [-1, _prod_of(pshape, len(reduced), rank)]) if rank else \
        array_ops.reshape(permuted, [1, 1])
    left = math_ops.cumprod(flat, axis=0, exclusive=True)
    right = math_ops.cumprod(flat, axis=0, exclusive=True, reverse=True)
    y = array_ops.reshape(left * right, pshape)
    inverse = np.argsort(perm).astype(np.int32)
    out = grad * (array_ops.transpose(y, inverse) if rank else y)
    return [out, None]


def _prod_of(shape_tensor, start, rank):
    if start >= rank:
        return 1
    return math_ops.reduce_prod(shape_tensor[start:])


# -- casts, sums, selection -------------------------------------------------------------------

@register_gradient("Cast")
def _cast_grad(op, grad):
    src = op.inputs[0].dtype.base_dtype
    dst = op.outputs[0].dtype.base_dtype
    if src.is_trainable and dst.is_trainable:
        return [math_ops.cast(grad, src)]
    return [None]


@register_gradient("AddN")
def _add_n_grad(op, grad):
    return [grad] * len(op.inputs)


@register_gradient("Select")
def _select_grad(op, grad):
    c, x, _ = op.inputs
    zeros = array_ops.zeros_like(x)
    return [None, math_ops.where(c, grad, zeros), math_ops.where(c, zeros, grad)]


@register_gradient("SelectV2")
def _select_v2_grad(op, grad):
    c, x, y = op.inputs
    zeros = array_ops.zeros_like(grad)
    gx = math_ops.where_v2(c, grad, zeros)
    gy = math_ops.where_v2(c, zeros, grad)
    return [None, sum_to(gx, x, c, y), sum_to(gy, y, c, x)]


@register_gradient("Cumsum")
def _cumsum_grad(op, grad):
    axis = op.inputs[1]
    return [math_ops.cumsum(grad, axis, exclusive=op.get_attr("exclusive"), reverse=not op.get_attr("reverse")),
            None]


@register_gradient("Cumprod")
def _cumprod_grad(op, grad):
    x, axis = op.inputs
    out = math_ops.cumsum(op.outputs[0] * grad, axis, exclusive=op.get_attr("exclusive"),
                          reverse=not op.get_attr("reverse"))
    from .extra_ops import div_no_nan
    return [div_no_nan(out, x), None]  # as TF: 0, not NaN, where x is 0
