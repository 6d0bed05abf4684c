"""Precompiled schedules: a partition without control flow or asynchronous
kernels runs as a flat list instead of through the dataflow propagator.

Such a partition runs its kernels on one thread in an order fixed by its
graph alone, so the order the dataflow executor would take (pending counts,
a FIFO ready queue, successors in their recorded order) is computed once,
when the executor is built, by simulating that executor. A step then walks
the list: each entry is (kernel, the registers of its inputs, the registers
that take its outputs, the registers read for the last time). Nothing is
counted or queued per node, and a value is dropped as soon as its last
reader has taken it, as in the dataflow executor.

Same kernels, same order, same errors (a failing kernel names its node),
the same step stats when tracing and the same kernel cost profiling.
Partitions with `_Recv`s or other asynchronous kernels run in segments
(segmented_schedule.py) or through the dataflow executor
(graph_executor._Run), and those with control flow through the frame executor.
Untimed steps skip what common_subexpressions.py finds shared, run a weight's
gradient MatMul and its update as one gemm (fused_updates.py), start with
the constants in their registers and run the list as generated straight-line
code (schedule_code.py; the list walk stays for very long schedules).
A step that fails elsewhere (another partition's error, a deadline, an
abort) stops the walk before the next kernel.
"""
import collections
import operator

import numpy as np

from .. import errors
from ..framework.registry import ASYNC, STEP, SYNC, KernelContext
from . import common_subexpressions, fused_updates, schedule_code
from . import graph_executor as ge

ENABLED = True  # tests turn it off to compare against the dataflow executor


class Entry:
    """One kernel of a compiled schedule."""

    __slots__ = ("it", "fn", "step_kind", "n_in", "get", "ins", "deref", "outs", "out", "frees")

    def __repr__(self):
        return f"<Entry {self.it.name}: in {self.ins} out {self.outs} frees {self.frees}>"


def compile_schedule(ex):
    """The schedule of `ex` (a GraphExecutor) in run order, or None when the
    partition needs the dataflow executor."""
    if not ENABLED or ex.uses_frames or any(it.kind == ASYNC for it in ex.items):
        return None
    items = ex.items
    reg_of, slot_source = registers_of(ex)
    plan = [(items[i], tuple(slot_source[slot] for slot in range(items[i].start, items[i].end)))
            for i in _dataflow_order(ex)]
    entries = _entries(plan, reg_of)
    shared = common_subexpressions.eliminate(plan, reg_of)
    untimed = plan if shared is None else shared
    (untimed,), (fused,) = fused_updates.fuse([untimed], reg_of, ex.fused)
    fast = entries if untimed is plan else _entries(untimed, reg_of)
    for pos, fn in fused.items():
        fast[pos].fn = fn
    registers = [None] * len(reg_of)
    if ex.device.device_type == "CPU":
        # a constant's kernel returns one array every step: untimed steps start with it in its register
        consts = {id(e): e for e in fast if fixed_output(e.it)}
        for e in consts.values():
            if e.out >= 0:
                registers[e.out] = e.fn()
        fast = [e for e in fast if id(e) not in consts]
    return Schedule(entries, fast, registers)


def fixed_output(it):
    """True for a kernel that does nothing but return the same value at every call: a constant,
    or a variable's kernel (its state). Untimed CPU schedules start with that value in its
    register instead of calling the kernel."""
    return it.kind == SYNC and (it.op == "Const" or getattr(it.fn, "fixed_output", False))


def registers_of(ex):
    """A register for each output of `ex`'s nodes ({(node id, k): register})
    and, per input slot, the register it reads."""
    reg_of = {}
    for it in ex.items:
        for k in range(it.n_out):
            reg_of[(it.id, k)] = len(reg_of)
    slot_source = [None] * ex.num_slots
    for it in ex.items:
        if it.n_out == 1:
            for slot in it.routes0:
                slot_source[slot] = reg_of[(it.id, 0)]
        else:
            for slot, k in it.routes:
                slot_source[slot] = reg_of[(it.id, k)]
    return reg_of, slot_source


def _entries(plan, reg_of):
    """Entries for `plan` ((node, input registers) in run order): each frees the
    registers it reads for the last time and keeps only outputs someone reads."""
    last_use = {}
    reads = collections.Counter()
    for pos, (it, ins) in enumerate(plan):
        for r in ins:
            last_use[r] = pos
            reads[r] += 1
    frees_at = collections.defaultdict(list)
    for reg, pos in last_use.items():
        frees_at[pos].append(reg)
    entries = []
    for pos, (it, ins) in enumerate(plan):
        e = Entry()
        e.it = it
        e.fn = it.fn
        shared_inputs = {p for p in it.forwardable if reads[ins[p]] > 1}
        if shared_inputs:
            # common subexpression elimination gave this input other readers:
            # a kernel built to overwrite it must not
            ctx = it.ctx
            e.fn = ge.make_kernel(it, it.kdef, KernelContext(
                it.node, ctx.input_dtypes, ctx.output_dtypes, ctx.device, ctx.xp, it.forwardable - shared_inputs))[0]
        e.step_kind = it.kind == STEP
        e.ins = ins
        e.n_in = len(ins)
        e.get = operator.itemgetter(*ins) if ins else None
        e.deref = it.deref
        # outputs nobody reads are not kept
        e.outs = tuple((k, reg_of[(it.id, k)]) for k in range(it.n_out) if reg_of[(it.id, k)] in last_use)
        e.out = e.outs[0][1] if it.n_out == 1 and e.outs else -1
        e.frees = tuple(sorted(frees_at.get(pos, ())))
        entries.append(e)
    return entries


def _dataflow_order(ex):
    """The order in which the dataflow executor runs `ex`'s nodes when every
    kernel is synchronous."""
    pending = list(ex.initial_pending)
    ready = collections.deque(ex.roots)
    order = []
    while ready:
        i = ready.popleft()
        order.append(i)
        for d in ex.items[i].succ:
            pending[d] -= 1
            if not pending[d]:
                ready.append(d)
    if len(order) != ex.num_nodes:  # _topological_order has rejected cycles already
        raise AssertionError(f"compiled schedule of {ex} covers {len(order)} of {ex.num_nodes} nodes")
    return order


class Schedule:
    """`entries`, every kernel of the partition, for timed runs (step stats,
    profiling: the same nodes as the dataflow executor); `fast`, the entries
    less common subexpressions and constants, for the others; and `flat`: per fast entry
    (kernel, mode, input getter, registers to free, output register) where
    mode 0/1/2 is a plain kernel of 0/1/more inputs and 3 one that needs the
    step or reads a variable; the output register is -1 when nobody reads the
    output, _MULTI for several outputs."""

    __slots__ = ("entries", "fast", "num_registers", "registers", "flat", "code", "code_tried")

    def __init__(self, entries, fast, registers):
        self.entries = entries
        self.fast = fast
        self.num_registers = len(registers)
        self.registers = registers  # what an untimed step starts with: constants in theirs
        self.code = None  # schedule_code.ScheduleCode, made at the first untimed step
        self.code_tried = False
        flat = []
        for e in fast:
            mode = 3 if (e.step_kind or e.deref) else min(e.n_in, 2)
            out_reg = e.out if e.it.n_out == 1 else (_MULTI if e.outs else -1)
            flat.append((e.fn, mode, e.get, e.frees, out_reg))
        self.flat = tuple(flat)

    def __repr__(self):
        return f"<Schedule {len(self.entries)} kernels ({len(self.fast)} untimed), {self.num_registers} registers>"


class CompiledRun:
    """One compiled executor running one step (the counterpart of _Run)."""

    __slots__ = ("ex", "step", "regs", "running", "failed", "reported", "position", "__weakref__")

    def __init__(self, ex, step):
        self.ex = ex
        self.step = step
        self.regs = None  # made by the walks that use it (generated code keeps values in locals)
        self.running = False
        self.failed = False
        self.reported = False  # executor_done was called (once, even when abandoned)
        self.position = 0

    # TF reports inf/nan silently; so do kernels here. errstate as a decorator costs one Python frame
    # per run where the with-statement cost three (__init__, __enter__, __exit__).
    @np.errstate(all="ignore")
    def loop(self, deferred=None):
        """Runs this schedule, then any loops deferred to this thread meanwhile."""
        deferred = [] if deferred is None else deferred
        saved = getattr(ge._tls, "deferred", None)
        ge._tls.deferred = deferred
        run = self
        try:
            while True:
                run._loop(deferred)
                if not deferred:
                    break
                run = deferred.pop()
        except BaseException as exc:  # noqa: BLE001 - Ctrl-C or a signal handler's exception (see graph_executor)
            for held in [run, *deferred]:
                held._abandon(exc)
            deferred.clear()
            raise
        finally:
            ge._tls.deferred = saved

    def _abandon(self, exc):
        """This thread was interrupted while it held this run: it never runs
        again, reports to the step, and the step is aborted. (Only the thread
        that holds a compiled run touches it: no lock.)"""
        self.failed = True
        self.step.report_error(errors.CancelledError(
            f"Step {self.step.step_id} was interrupted ({type(exc).__name__}) while {self.ex.device.name} ran it",
            device=self.ex.device.name))
        self._report_done()

    def _report_done(self):
        if not self.reported:
            self.reported = True
            self.step.executor_done(None)

    def _loop(self, deferred):
        ex = self.ex
        if ex.runs_to_profile > 0 or self.step.stats is not None:
            self._run_timed(deferred)
        else:
            self._run(deferred)
        self.running = False
        self.regs = None
        ex._note_run()
        self._report_done()

    def _run(self, deferred):
        schedule = self.ex.schedule
        code = schedule.code
        if code is None:
            if schedule.code_tried:
                self._walk(deferred)
                return
            schedule.code_tried = True
            ex = self.ex
            runner = ex.runner  # not ex: the code is kept by the schedule, which ex keeps (no cycle)
            code = schedule.code = schedule_code.generate(schedule, ex, lambda d: _release_to(runner, d))
            if code is None:
                self._walk(deferred)
                return
        try:
            stopped = code.run(self.step, deferred)
        except Exception as exc:  # noqa: BLE001 - becomes the step's error
            pos = schedule_code.failed_position(code, exc)
            self._fail(schedule.fast[pos], exc, pos)
            return
        if stopped is not None:
            self.failed = True
            self.position = stopped
            return
        self.position = len(schedule.fast)

    def _walk(self, deferred):
        # the list walk: one tuple unpack per kernel instead of attribute loads
        regs = self.regs = self.ex.schedule.registers.copy()
        step = self.step
        ex = self.ex
        release = ex.runner is not None
        entries = ex.schedule.fast
        pos = 0
        for fn, mode, get, frees, out_reg in ex.schedule.flat:
            if step.error is not None:
                self.failed = True
                self.position = pos
                return
            if deferred and release and entries[pos].it.expensive:
                _release(ex, deferred)
            try:
                if mode == 1:
                    arg = get(regs)
                    for r in frees:
                        regs[r] = None
                    out = fn(arg)
                elif mode == 2:
                    args = get(regs)
                    for r in frees:
                        regs[r] = None
                    out = fn(*args)
                elif mode == 0:
                    out = fn()
                else:
                    out = _call(entries[pos], regs, step)
            except Exception as exc:  # noqa: BLE001 - becomes the step's error
                self._fail(entries[pos], exc, pos)
                return
            if out_reg >= 0:
                regs[out_reg] = out
            elif out_reg == _MULTI:
                for k, r in entries[pos].outs:
                    regs[r] = out[k]
            pos += 1
        self.position = pos

    def _run_timed(self, deferred):
        """`_run` measuring each kernel: for the step's stats and the executor's profiled runs."""
        regs = self.regs = self.ex.schedule.registers.copy()
        step = self.step
        stats = step.stats
        profiling = self.ex.runs_to_profile > 0
        release = self.ex.runner is not None
        now = ge._now_ns
        for pos, e in enumerate(self.ex.schedule.entries):
            if step.error is not None:
                self.failed = True
                self.position = pos
                return
            it = e.it
            if deferred and release and it.expensive:
                _release(self.ex, deferred)
            try:
                args = _deref_args(e, regs) if e.deref else [regs[r] for r in e.ins]
                for r in e.frees:
                    regs[r] = None
                t0 = now()
                out = e.fn(step, *args) if e.step_kind else e.fn(*args)
            except Exception as exc:  # noqa: BLE001
                self._fail(e, exc, pos)
                return
            if profiling:
                ge.note_cost(it, now() - t0)
            if stats is not None:
                ge._Run._record(self, it, t0, out)
            if e.out >= 0:
                regs[e.out] = out
            elif e.outs and it.n_out > 1:
                for k, r in e.outs:
                    regs[r] = out[k]
        self.position = len(self.ex.schedule.entries)

    def _fail(self, e, exc, pos):
        self.failed = True
        self.position = pos
        self.step.report_error(ge._kernel_error(e.it, exc, self.step))

    def __repr__(self):
        total = len(self.ex.schedule.entries)
        return f"<CompiledRun {self.ex.device.name} step {self.step.step_id}: {self.position}/{total} kernels run>"


_MULTI = -2  # out_reg of a kernel with several outputs someone reads


def _call(e, regs, step):
    """A kernel that needs the step or reads variables (mode 3 in `Schedule.flat`)."""
    args = _deref_args(e, regs) if e.deref else [regs[r] for r in e.ins]
    for r in e.frees:
        regs[r] = None
    return e.fn(step, *args) if e.step_kind else e.fn(*args)


def _deref_args(e, regs):
    args = [regs[r] for r in e.ins]
    name = e.it.name
    for j in e.deref:
        args[j] = args[j].read(name)
    return args


def _release(ex, deferred):
    _release_to(ex.runner, deferred)


def _release_to(runner, deferred):
    while deferred:
        runner(deferred.pop().loop)

