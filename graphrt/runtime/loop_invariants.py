"""Loop-invariant code motion for compiled loops (runtime/compiled_loop.py).

A pure kernel whose inputs are all loop invariants (values from outside the
loop, the loop's Consts, other such kernels' outputs) computes the same value
at every iteration, so a compiled loop runs it once, as XLA's while-loop
optimizer hoists invariant code: one in the condition part before the first
iteration (the condition part runs at least once anyway), one in the body at
the first iteration (a loop that runs none never runs it, so its errors
appear exactly when the dataflow executor's would).

Pure means what common subexpression elimination shares: a stateless op
(not a random op, not a read of a variable, queue, TensorArray ...), no ref,
resource or variant value in or out, no step, no variable read; and a kernel
of a device only when it runs inline in the loop and needs no step.
"""
from ..framework import registry
from . import common_subexpressions as cse

_PLAIN_MODES = (0, 1, 2)  # compiled_loop._entry: a synchronous kernel of 0/1/more inputs
_INLINE_MODE = 6          # a device kernel run inline: fn is its DeviceKernel.run_inline


def hoist(entries, invariant):
    """(the pure kernels of `entries` reading only registers in `invariant`, the rest), each in
    order; `invariant` (a set of registers) gains the hoisted kernels' outputs."""
    hoisted, rest = [], []
    for entry in entries:
        _, _, _, out, n_out, _, ins = entry
        if invariant.issuperset(ins) and is_pure(entry):
            hoisted.append(entry)
            invariant.update(range(out, out + n_out))
        else:
            rest.append(entry)
    return tuple(hoisted), tuple(rest)


def is_pure(entry):
    """True when the kernel of a compiled-loop entry gives outputs that depend on its input values only."""
    fn, mode, _, _, _, it, _ = entry
    if mode == _INLINE_MODE:
        if fn.__self__.takes_step:
            return False
    elif mode not in _PLAIN_MODES:
        return False
    if it.deref or it.op in cse._NOT_SHARED or registry.get_op_def(it.op).is_stateful:
        return False
    ctx = it.ctx
    return not any(dt.is_ref_dtype or dt.base_dtype in cse._OPAQUE for dt in (*ctx.input_dtypes, *ctx.output_dtypes))
