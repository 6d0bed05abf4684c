"""`tf.sparse_matmul`: TF's SparseMatMul, a dense matmul whose `a_is_sparse`/`b_is_sparse` only
hint at a faster algorithm; the values are matmul's, and so are the gradients (TF's gradient
also passes the sparsity hints on, which change nothing here).
"""
import numpy as np

from ..framework import dtypes
from ..framework.op_builder import apply_op
from ..framework.registry import register_gradient, register_kernel, register_op
from ..framework.tensor_shape import TensorShape
from ..ops import math_ops


def _shape(ctx):
    a, b = ctx.shape(0).with_rank(2), ctx.shape(1).with_rank(2)
    m = a[1] if ctx.attr("transpose_a") else a[0]
    n = b[0] if ctx.attr("transpose_b") else b[1]
    inner_a = a[0] if ctx.attr("transpose_a") else a[1]
    inner_b = b[1] if ctx.attr("transpose_b") else b[0]
    if inner_a is not None and inner_b is not None and inner_a != inner_b:
        raise ValueError(f"Dimensions must be equal, but are {inner_a} and {inner_b}")
    return TensorShape([m, n])


register_op("SparseMatMul", ["a: Ta", "b: Tb"], ["product: float"],
            attrs={"transpose_a": False, "transpose_b": False, "a_is_sparse": False, "b_is_sparse": False,
                   "Ta": dtypes.float32, "Tb": dtypes.float32}, shape_fn=_shape,
            allowed_types={"Ta": (dtypes.float32,), "Tb": (dtypes.float32,)})  # graphrt has no bfloat16


@register_kernel("SparseMatMul", "CPU", fresh_outputs=True)
def _sparse_matmul_kernel(ctx):
    ta, tb = ctx.attr("transpose_a"), ctx.attr("transpose_b")
    return lambda a, b: np.matmul(np.asarray(a, np.float32).T if ta else np.asarray(a, np.float32),
                                  np.asarray(b, np.float32).T if tb else np.asarray(b, np.float32))


@register_gradient("SparseMatMul")
def _sparse_matmul_grad(op, grad):
    a, b = op.inputs
    ta, tb = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    if not ta and not tb:
        ga, gb = math_ops.matmul(grad, b, transpose_b=True), math_ops.matmul(a, grad, transpose_a=True)
    elif not ta and tb:
        ga, gb = math_ops.matmul(grad, b), math_ops.matmul(grad, a, transpose_a=True)
    elif ta and not tb:
        ga, gb = math_ops.matmul(b, grad, transpose_b=True), math_ops.matmul(a, grad)
    else:
        ga, gb = math_ops.matmul(b, grad, transpose_a=True, transpose_b=True), \
            math_ops.matmul(grad, a, transpose_a=True, transpose_b=True)
    return [math_ops.cast(ga, a.dtype), math_ops.cast(gb, b.dtype)]


def sparse_matmul(a, b, transpose_a=False, transpose_b=False, a_is_sparse=False, b_is_sparse=False, name=None):
    """a @ b (float32), with TF's sparsity hints accepted and ignored."""
    return apply_op("SparseMatMul", [a, b], name=name or "SparseMatMul", transpose_a=bool(transpose_a),
                    transpose_b=bool(transpose_b), a_is_sparse=bool(a_is_sparse),
                    b_is_sparse=bool(b_is_sparse)).outputs[0]
