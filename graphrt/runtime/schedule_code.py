"""Straight-line Python for a compiled schedule's untimed steps.

Walking the schedule's list costs, per kernel, a tuple unpack, a mode test,
an item getter over the register list and stores back into it: about as
much as a cheap kernel itself. The same schedule written out as one Python
function keeps each value in a local variable and calls each kernel
directly:

    def run(step, deferred):
        v4 = f2(v0, c1)
        v0 = None
        if step.error is not None:
            return 3
        ...

An elementwise kernel with a scalar fast path (math_kernels.ufunc_kernel:
two numpy scalars of one type go to a Python operator) has that test and
operator written into the line, its call kept for every other input.

Same kernels, same order, the same per-kernel check of the step's error
(another partition's failure or an abort stops the walk before the next
kernel), values dropped after their last reader, deferred loops released
before a kernel measured expensive. A kernel's exception propagates; the
line it came from names the entry (`failed_position`). The code is made
once per schedule, after the executor's profiled runs (which kernels are
expensive is known by then); schedules longer than MAX_ENTRIES keep the list
walk.
"""
import itertools
import operator

from ..framework.registry import STEP
from ..ops.math_kernels import SCALAR_TYPES

MAX_ENTRIES = 20_000
_INFIX = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.lt: "<", operator.le: "<=",
          operator.gt: ">", operator.ge: ">=", operator.eq: "==", operator.ne: "!="}
_counter = itertools.count()


class ScheduleCode:
    """The generated function of one schedule and the entry each of its lines calls."""

    __slots__ = ("run", "code", "line_entry", "source")

    def __repr__(self):
        return f"<ScheduleCode {len(self.line_entry)} kernels>"


def generate(schedule, ex, release):
    """A ScheduleCode for `schedule.fast` (None when it is too long); `release(deferred)`
    hands deferred loops to the runner."""
    if len(schedule.fast) > MAX_ENTRIES:
        return None
    kernels = [(e.it, e.fn, e.ins, e.step_kind, False, e.outs, e.frees) for e in schedule.fast]
    return _compile("def run(step, deferred):", kernels, schedule.registers, None, ex, release)


def generate_segment(seg, registers, ex, release):
    """A ScheduleCode for one segment's untimed list (segmented_schedule.py):
    `run(step, deferred, regs, launch)` keeps the values only this segment
    reads in locals and the others in the run's `regs`; `launch(item, step,
    args)` starts an asynchronous kernel."""
    if len(seg.flat) > MAX_ENTRIES:
        return None
    kernels = [(it, fn, ins, it.kind == STEP, mode == 4, outs, frees)
               for fn, mode, _, frees, _, outs, it, ins in seg.flat]
    return _compile("def run(step, deferred, regs, launch):", kernels, registers, seg.local, ex, release)


def _compile(header, kernels, registers, local, ex, release):
    """Writes and compiles the function; `local` is the set of registers kept
    in local variables (None: all)."""
    bound = {"release": release}

    def value(r):
        if registers[r] is not None:
            bound[f"c{r}"] = registers[r]
            return f"c{r}"
        return f"v{r}" if local is None or r in local else f"regs[{r}]"
    lines = [header]
    line_entry = {}
    for k, (it, fn, ins, step_kind, is_async, outs, frees) in enumerate(kernels):
        lines.append("    if step.error is not None:")
        lines.append(f"        return {k}")
        if it.expensive and ex.runner is not None:
            lines.append("    if deferred:")
            lines.append("        release(deferred)")
        args = [value(r) for r in ins]
        for j in it.deref:
            bound[f"n{k}"] = it.name
            args[j] = f"{args[j]}.read(n{k})"
        if step_kind:
            args.insert(0, "step")
        if is_async:
            bound[f"i{k}"] = it
            line = f"launch(i{k}, step, [{', '.join(args)}])"
        else:
            bound[f"f{k}"] = fn
            line = f"f{k}({', '.join(args)})"
            infix = _INFIX.get(getattr(fn, "scalar_op", None))
            if infix and len(args) == 2 and not it.deref and not step_kind:
                # the kernel's own scalar test and operator, without the call (math_kernels.ufunc_kernel)
                a, b = args
                bound["S"] = SCALAR_TYPES
                line = f"({a} {infix} {b} if type({a}) is type({b}) and type({a}) in S else {line})"
            elif getattr(fn, "forwards_input", False) and len(args) == 1 and it.n_out == 1 and not step_kind:
                line = args[0]  # Identity and its kin (array_kernels._identity): the value, without the call
            if it.n_out == 1 and outs:
                line = f"{value(outs[0][1])} = {line}"
            elif outs:
                line = f"o = {line}"
        line_entry[len(lines) + 1] = k  # line numbers count from 1
        lines.append(f"    {line}")
        if it.n_out != 1 and not is_async:
            lines.extend(f"    {value(r)} = o[{j}]" for j, r in outs)
        lines.extend(f"    {value(r)} = None" for r in frees if registers[r] is None)
    lines.append("    return None")
    source = "\n".join(lines)
    filename = f"<schedule {next(_counter)} of {ex.device.name}>"
    namespace = dict(bound)
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - our own generated source, from our own schedule
    out = ScheduleCode()
    out.run = namespace["run"]
    out.code = out.run.__code__
    out.line_entry = line_entry
    out.source = source
    return out


def failed_position(code, exc):
    """The position of the entry whose kernel raised `exc` inside `code.run`."""
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code is code.code:
            return code.line_entry[tb.tb_lineno]
        tb = tb.tb_next
    raise AssertionError(f"{exc!r} was not raised by {code}")  # the caller only asks about run's exceptions
