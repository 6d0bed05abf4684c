"""Untimed steps fuse a weight's gradient into its update: a `MatMul` whose
only reader is an `ApplyGradientDescent` becomes one BLAS gemm into the
variable itself,

    w += (-lr) * op(a) @ op(b)        (gemm with beta = 1)

instead of a new gradient array followed by an axpy pass over it and w.
That is every dense layer's `dW = x.T @ dy` in an SGD step; for the 1024x1024
layer of the MLP benchmark it saves writing and reading back 4 MiB and one
pass over 12 MiB (~0.25 ms of a ~16 ms step).

The fused kernel gives the same bits as the two kernels or is not used: a
gemm accumulates into C once per block of the inner dimension, so when the
batch spans several blocks (with OpenBLAS here, inner sizes of 512 and up)
rounding differs from one rounding of the product followed by the axpy. So
the first call for each shape (and BLAS team size) runs both ways, compares
and remembers; shapes that differ keep the two kernels. Anything else the
gemm cannot take (other dtypes, views that are not C- or Fortran-ordered, a
variable's value shared with a reader, which the update copies first) also
takes the two kernels, inside the fused entry, and an error of the MatMul
part names the MatMul node, as unfused.

Timed steps (step stats, the first profiled runs) keep both nodes, as they
keep common subexpressions (common_subexpressions.py), so traces list the
same nodes as the dataflow executor's.
"""
import numpy as np

from ..framework.registry import SYNC
from ..ops import blas
from ..ops.state_ops import _owned_value
from . import graph_executor as ge



ENABLED = True  # tests turn it off to compare against the two kernels


def fuse(plans, reg_of):
    """`plans` (lists of (node, input registers) in run order: a schedule's one list, or a
    segmented schedule's segments) with each MatMul read by nothing but an ApplyGradientDescent
    dropped and that update reading the MatMul's inputs in its place; and per plan {position
    in its new list: fused kernel}. A MatMul in an earlier segment than its update moves into
    the update's segment (which waits for all it waits for), where the product is used. A
    fetched product has its _Retval as a second reader and stays."""
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
            if it.op == "ApplyGradientDescent" and len(ins) == 3 and reads[ins[2]] == 1:
                mm = product_of.get(ins[2])
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
                ins = ins[:2] + mm_ins
            new.append((it, ins))
        new_plans.append(new if fused or len(new) != len(plan) else plan)
        kernels.append(fused)
    return new_plans, kernels


def _fusable(mm, update):
    return (mm.kind == SYNC and update.kind == SYNC and not mm.deref and not update.deref
            and mm.ctx.xp is np and update.ctx.xp is np
            and getattr(update.ctx.device, "device_type", None) == "CPU"
            and update.ctx.input_dtypes[0].base_dtype.as_numpy_dtype in (np.float32, np.float64))


def make_kernel(mm, update):
    """The fused kernel of MatMul `mm` feeding ApplyGradientDescent `update`:
    (variable, learning rate, a, b) -> variable."""
    matmul, apply = mm.fn, update.fn
    ta, tb = bool(mm.ctx.attr("transpose_a")), bool(mm.ctx.attr("transpose_b"))
    name = update.name
    same_bits = {}  # (shapes, BLAS threads) -> whether the gemm gave the two kernels' bits
    timings = blas.ThreadChooser.new_timings()

    def unfused(state, lr, a, b):
        try:
            product = matmul(a, b)
        except Exception as exc:  # noqa: BLE001 - named as the MatMul's error, as unfused
            raise ge._kernel_error(mm, exc, _NO_STEP) from None
        return apply(state, lr, product)

    def gemm_into(value, lr, a, b):
        """The update in place under BLAS_LOCK; None when the gemm cannot take these operands
        or gives other bits than the two kernels (the value is then left as they leave it)."""
        key = (a.shape, b.shape, blas.current_threads())
        known = same_bits.get(key)
        if known is None:
            # as the two kernels: a new product, then state_ops._add_scaled
            expected = value.copy()
            product = np.matmul(a.T if ta else a, b.T if tb else b)
            if not blas.axpy_held(-lr, product, expected):
                expected += product * (-lr)
            if not blas.gemm_update(-lr, a, ta, b, tb, value):
                same_bits[key] = False  # no gemm for these: the next calls go straight to the kernels
                np.copyto(value, expected)
                return True
            known = same_bits[key] = bool(np.array_equal(value, expected, equal_nan=True))
            if not known:
                np.copyto(value, expected)
            return True
        return known and blas.gemm_update(-lr, a, ta, b, tb, value) or None

    def fused(state, lr, a, b):
        if type(a) is np.ndarray and type(b) is np.ndarray and a.ndim == 2 and b.ndim == 2 and np.ndim(lr) == 0:
            value = state.require(name)
            m, k = a.shape[::-1] if ta else a.shape
            k_b, n = b.shape[::-1] if tb else b.shape
            fits = (type(value) is np.ndarray and value.dtype == a.dtype == b.dtype and k == k_b
                    and value.shape == (m, n))
            value = None  # a reference held here would make the update copy the variable
            if fits:
                value = _owned_value(state)
                with blas.BLAS_LOCK:
                    chooser = blas.thread_chooser()
                    done = (gemm_into(value, lr, a, b) if chooser is None
                            else chooser.run(gemm_into, (value, lr, a, b), timings))
                if done:
                    return state
        return unfused(state, lr, a, b)
    fused.uses_blas_team = True
    fused.fuses = (mm.name, update.name)
    return fused


class _NoStep:
    error = None


_NO_STEP = _NoStep()
