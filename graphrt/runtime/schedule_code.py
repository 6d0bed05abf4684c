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

MAX_ENTRIES = 20_000
_counter = itertools.count()


class ScheduleCode:
    """The generated function of one schedule and the entry each of its lines calls."""

    __slots__ = ("run", "code", "line_entry", "source")

    def __repr__(self):
        return f"<ScheduleCode {len(self.line_entry)} kernels>"


def generate(schedule, ex, release):
    """A ScheduleCode for `schedule.fast` (None when it is too long); `release(deferred)`
    hands deferred loops to the runner."""
    entries = schedule.fast
    if len(entries) > MAX_ENTRIES:
        return None
    consts = {r for r, v in enumerate(schedule.registers) if v is not None}
    lines = ["def run(step, deferred):"]
    line_entry = {}
    bound = {"release": release}
    for k, e in enumerate(entries):
        it = e.it
        lines.append("    if step.error is not None:")
        lines.append(f"        return {k}")
        if it.expensive and ex.runner is not None:
            lines.append("    if deferred:")
            lines.append("        release(deferred)")
        bound[f"f{k}"] = e.fn
        args = []
        for j, r in enumerate(e.ins):
            name = f"c{r}" if r in consts else f"v{r}"
            if name[0] == "c":
                bound[name] = schedule.registers[r]
            if j in e.deref:
                bound[f"n{k}"] = it.name
                name = f"{name}.read(n{k})"
            args.append(name)
        if e.step_kind:
            args.insert(0, "step")
        call = f"f{k}({', '.join(args)})"
        if it.n_out == 1:
            target = f"v{e.out} = " if e.out >= 0 else ""
        else:
            target = "o = " if e.outs else ""
        line_entry[len(lines) + 1] = k  # line numbers count from 1
        lines.append(f"    {target}{call}")
        if it.n_out != 1:
            lines.extend(f"    v{r} = o[{j}]" for j, r in e.outs)
        lines.extend(f"    v{r} = None" for r in e.frees if r not in consts)
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
