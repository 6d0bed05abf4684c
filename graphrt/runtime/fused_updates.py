"""Untimed steps fuse a weight's gradient into its update: a `MatMul` whose
only reader is an `ApplyGradientDescent` or an `ApplyMomentum` becomes one
BLAS gemm into the variable or the accumulator itself,

    SGD:       w += (-lr) * op(a) @ op(b)              (gemm, beta = 1)
    Momentum:  accum = momentum * accum + op(a) @ op(b) (gemm, beta = momentum)
               w -= lr * accum                           (as unfused)

instead of a new gradient array followed by an axpy pass over it. That is
every dense layer's `dW = x.T @ dy` in an SGD or Momentum step; for the
1024x1024 layer of the MLP benchmark it saves writing and reading back
4 MiB and one pass over 12 MiB (~0.4 ms of a ~16 ms step). Nesterov momentum
(whose variable update reads the gradient again), Adam (which squares it)
and resource variables keep the two kernels.

The fused kernel gives the same bits as the two kernels or is not used: a
gemm accumulates into C once per block of the inner dimension, so when the
batch spans several blocks (with OpenBLAS here, inner sizes of 512 and up)
rounding differs from one rounding of the product followed by the axpy, and
OpenBLAS's kernels for small matrices fold alpha and beta into one rounding
(a 48x32 layer under Momentum, a 1024x10 one with a batch of 64). So
the first call for each shape (and BLAS team size) runs both ways, compares
and remembers; shapes that differ keep the two kernels. Anything else the
gemm cannot take (other dtypes, views that are not C- or Fortran-ordered, a
value shared with a reader, which the update copies first) also takes the
two kernels, inside the fused entry, and an error of the MatMul part names
the MatMul node, as unfused.

Timed steps (step stats, the first profiled runs) keep both nodes, as they
keep common subexpressions (common_subexpressions.py), so traces list the
same nodes as the dataflow executor's.
"""
import numpy as np

from ..framework.registry import SYNC
from ..ops import blas
from ..ops.state_ops import _add_scaled, _owned_value
from . import graph_executor as ge

ENABLED = True  # tests turn it off to compare against the two kernels

# update op -> the position of its gradient input
_GRADIENT_INPUT = {"ApplyGradientDescent": 2, "ApplyMomentum": 3}
# a learning rate is mostly one of these, whose ndim is read without np.ndim's two Python-level calls
_NUMPY_VALUES = frozenset((np.ndarray, np.float32, np.float64))


def fuse(plans, reg_of, fused_items=None):
    """`plans` (lists of (node, input registers) in run order: a schedule's one list, or a
    segmented schedule's segments) with each MatMul read by nothing but an update that can take
    it (see _GRADIENT_INPUT) dropped, and that update reading the MatMul's two inputs in place of
    the gradient; and per plan {position in its new list: fused kernel}. A MatMul in an earlier
    segment than its update moves into the update's segment (which waits for all it waits for),
    where the product is used. A fetched product has its _Retval as a second reader and stays.
    Each fused (matmul, update) pair is appended to `fused_items` when given."""
    if not ENABLED:
        return plans, [{} for _ in plans]
    reads = {}
    product_of = {}
    for plan in plans:
        for it, ins in plan:
            for r in ins:
                reads[r] = reads.get(r, 0) + 1
            if it.op == "MatMul" and it.n_out == 1:
                product_of[reg_of[(it.id, 0)]] = (it, ins)
    fused_with = {}  # id(update) -> (matmul, its input registers)
    for plan in plans:
        for it, ins in plan:
            g = _GRADIENT_INPUT.get(it.op)
            if g is not None and len(ins) > g and reads[ins[g]] == 1:
                mm = product_of.get(ins[g])
                if mm is not None and _fusable(mm[0], it):
                    fused_with[id(it)] = mm
    if not fused_with:
        return plans, [{} for _ in plans]
    dropped = {id(mm) for mm, _ in fused_with.values()}
    new_plans, kernels = [], []
    for plan in plans:
        new, fused = [], {}
        for it, ins in plan:
            if id(it) in dropped:
                continue
            if id(it) in fused_with:
                mm, mm_ins = fused_with[id(it)]
                fused[len(new)] = make_kernel(mm, it)
                if fused_items is not None:
                    fused_items.append((mm, it))
                g = _GRADIENT_INPUT[it.op]
                ins = ins[:g] + mm_ins + ins[g + 1:]
            new.append((it, ins))
        new_plans.append(new if fused or len(new) != len(plan) else plan)
        kernels.append(fused)
    return new_plans, kernels


def _fusable(mm, update):
    return (mm.kind == SYNC and update.kind == SYNC and not mm.deref and not update.deref
            and mm.ctx.xp is np and update.ctx.xp is np
            and getattr(update.ctx.device, "device_type", None) == "CPU"
            and not (update.op == "ApplyMomentum" and update.ctx.attr("use_nesterov"))
            and update.ctx.input_dtypes[0].base_dtype.as_numpy_dtype in (np.float32, np.float64))


def make_kernel(mm, update):
    """The fused kernel of MatMul `mm` feeding `update`: the update's inputs with the gradient
    replaced by the MatMul's two, returning what the update returns (its variable)."""
    matmul, apply = mm.fn, update.fn
    ta, tb = bool(mm.ctx.attr("transpose_a")), bool(mm.ctx.attr("transpose_b"))
    name = update.name
    same_bits = {}  # (shapes, BLAS threads) -> whether the gemm gave the two kernels' bits
    timings = blas.ThreadChooser.new_timings()

    def product_fits(target, a, b):
        if type(a) is not np.ndarray or type(b) is not np.ndarray or a.ndim != 2 or b.ndim != 2:
            return False
        m, k = a.shape[::-1] if ta else a.shape
        k_b, n = b.shape[::-1] if tb else b.shape
        return type(target) is np.ndarray and target.dtype == a.dtype == b.dtype and k == k_b \
            and target.shape == (m, n)

    def gemm_into(target, alpha, beta, a, b):
        """target = beta * target + alpha * op(a) @ op(b) as the two kernels compute it (target
        scaled by beta unless beta is 1, then an axpy of the product), under BLAS_LOCK. None when
        the gemm cannot take these operands (target untouched); else True."""
        key = (a.shape, b.shape, blas.current_threads())
        known = same_bits.get(key)
        if known is None:
            expected = target.copy()
            if beta != 1:
                expected *= beta
            product = np.matmul(a.T if ta else a, b.T if tb else b)
            if not blas.axpy_held(alpha, product, expected):
                expected += product * alpha if alpha != 1 else product
            if not blas.gemm_update(alpha, a, ta, b, tb, target, beta):
                same_bits[key] = False  # no gemm for these: the next calls go straight to the kernels
                np.copyto(target, expected)
                return True
            known = same_bits[key] = bool(np.array_equal(target, expected, equal_nan=True))
            if not known:
                np.copyto(target, expected)
            return True
        return known and blas.gemm_update(alpha, a, ta, b, tb, target, beta) or None

    def in_gemm(target, alpha, beta, a, b):
        with blas.BLAS_LOCK:
            chooser = blas.thread_chooser()
            return (gemm_into(target, alpha, beta, a, b) if chooser is None
                    else chooser.run(gemm_into, (target, alpha, beta, a, b), timings))

    def unfused(args, g, a, b):
        try:
            product = matmul(a, b)
        except Exception as exc:  # noqa: BLE001 - named as the MatMul's error, as unfused
            raise ge._kernel_error(mm, exc) from None
        return apply(*args[:g], product, *args[g + 2:])

    if update.op == "ApplyGradientDescent":
        def fused(var, lr, a, b):
            if (lr.ndim if type(lr) in _NUMPY_VALUES else np.ndim(lr)) == 0:
                fits = product_fits(var.require(name), a, b)  # no reference kept: see _owned_value
                if fits and in_gemm(_owned_value(var), -lr, 1.0, a, b):
                    return var
            return unfused((var, lr, a, b), 2, a, b)
    else:
        def fused(var, accum, lr, a, b, momentum):
            if np.ndim(lr) == 0 and np.ndim(momentum) == 0:
                var.require(name)
                fits = product_fits(accum.require(name), a, b)
                if fits and in_gemm(_owned_value(accum), 1.0, momentum, a, b):
                    _add_scaled(var, -lr, accum.value)
                    return var
            return unfused((var, accum, lr, a, b, momentum), 3, a, b)
    return fused
