"""Segmented schedules: a CPU partition whose only asynchronous kernels are
receives (`_Recv`, queue and reader ops) runs as flat lists gated by the
receives they wait on, instead of through the dataflow propagator.

Every node belongs to the segment of the asynchronous kernels it depends on,
directly or through other nodes. A segment is a compiled list (as in
compiled_schedule.py) with one pending count: the receives it waits for.
The segment that waits for nothing runs first and launches the receives
that depend on nothing else; each completed receive counts down the
segments that wait for it, and a segment whose count reaches zero runs,
launching the receives inside it. A node reading a node of another segment
waits for a subset of that segment's receives, so that segment became ready
earlier or in the same batch, where segments run smaller wait-set first.

A value read within a single segment is freed at its last reader, as in a
compiled schedule; one read in several segments, at its last reader in the
one of them that runs last whatever the order receives arrive in (see
_frees), or when the step ends if none is sure to. The kernels, their
errors and the step stats are the dataflow executor's; nodes are not shared
(no common subexpression elimination across segments), but as in compiled
schedules, untimed steps start with the constants in their registers and
run each segment as generated code (schedule_code.generate_segment), values
only that segment reads in locals, and a weight's gradient MatMul and its
update run as one gemm in the update's segment (fused_updates.py).
"""
import collections
import operator
import threading

from .. import errors
from ..framework.registry import ASYNC, STEP
from . import compiled_schedule, fused_updates, schedule_code
from . import graph_executor as ge

ENABLED = True  # tests turn it off to compare against the dataflow executor


class Segment:
    """Nodes that wait for the same receives, in run order: per node (item,
    input registers, output registers [(k, register)], registers to free)."""

    __slots__ = ("index", "waits", "entries", "flat", "local", "code", "code_tried")

    def __repr__(self):
        return f"<Segment {self.index}: waits for {len(self.waits)} receives, {len(self.entries)} nodes>"


class Segments:
    """The segments of a partition and, per asynchronous node, the registers
    its outputs go to and the segments that wait for it."""

    __slots__ = ("segments", "registers", "initial_pending", "roots", "receives")

    def __repr__(self):
        return f"<Segments {len(self.segments)}, {len(self.registers)} registers>"


def compile_segments(ex):
    """The segments of `ex` (a GraphExecutor), or None when it needs the dataflow executor."""
    items = ex.items
    if (not ENABLED or ex.uses_frames or ex.device.device_type != "CPU"
            or not any(it.kind == ASYNC for it in items)):
        return None
    order = compiled_schedule._dataflow_order(ex)
    reg_of, slot_source = compiled_schedule.registers_of(ex)
    waits = _waits(ex, order)
    keys = {}
    for i in order:
        keys.setdefault(waits[i], len(keys))
    plan = [[] for _ in keys]
    for i in order:
        it = items[i]
        plan[keys[waits[i]]].append((it, tuple(slot_source[s] for s in range(it.start, it.end))))
    frees = _frees(plan, list(keys))
    read = {r for nodes in plan for _, ins in nodes for r in ins}
    untimed_plan, fused = fused_updates.fuse(plan, reg_of, ex.fused)
    untimed_frees = frees if all(nodes is old for nodes, old in zip(untimed_plan, plan)) else _frees(
        untimed_plan, list(keys))
    segs = Segments()
    segs.registers = [None] * len(reg_of)
    segs.segments = []
    for index, (key, nodes) in enumerate(zip(keys, plan)):
        seg = Segment()
        seg.index = index
        seg.waits = key
        seg.entries = _segment_entries(nodes, reg_of, read, frees, index)
        # untimed steps: the same nodes less fused updates (fused_updates.py), with their own frees
        untimed = seg.entries if untimed_frees is frees else _segment_entries(
            untimed_plan[index], reg_of, read, untimed_frees, index)
        seg.flat = _flat(untimed, segs.registers, fused[index])
        seg.local = _local(index, untimed, untimed_plan)
        seg.code = None  # schedule_code for seg.flat, made at its first untimed run
        seg.code_tried = False
        segs.segments.append(seg)
    segs.initial_pending = [len(key) for key in keys]
    segs.roots = tuple(s.index for s in segs.segments if not s.waits)
    waiting = collections.defaultdict(list)
    for seg in sorted(segs.segments, key=lambda s: len(s.waits)):  # smaller wait-sets first, see module doc
        for r in seg.waits:
            waiting[r].append(seg.index)
    segs.receives = {it.id: (tuple((k, reg_of[(it.id, k)]) for k in range(it.n_out) if reg_of[(it.id, k)] in read),
                             tuple(waiting[it.id])) for it in items if it.kind == ASYNC}
    return segs


def _segment_entries(nodes, reg_of, read, frees, index):
    """Segment `index`'s entries: per node (item, input registers, (k, register) of the outputs
    someone reads, registers to free)."""
    return tuple((it, ins, tuple((k, reg_of[(it.id, k)]) for k in range(it.n_out) if reg_of[(it.id, k)] in read),
                  frees.get((index, pos), ())) for pos, (it, ins) in enumerate(nodes))


def _flat(entries, registers, kernels=None):
    """The entries as untimed steps run them: per kernel (kernel, mode,
    input getter, registers to free, output register, (k, register) of its
    outputs, item) with mode 0/1/2 a plain kernel of 0/1/more inputs, 3 one
    that needs the step or reads a variable, 4 an asynchronous one. A
    constant's value is put in `registers` (what a step starts with) instead."""
    flat = []
    for pos, (it, ins, outs, frees) in enumerate(entries):
        if compiled_schedule.fixed_output(it):
            if outs:
                registers[outs[0][1]] = it.fn()
            continue
        if it.kind == ASYNC:
            mode = 4
        elif it.kind == STEP or it.deref:
            mode = 3
        else:
            mode = min(len(ins), 2)
        out_reg = outs[0][1] if it.n_out == 1 and outs else -1
        fn = kernels[pos] if kernels and pos in kernels else it.fn
        flat.append((fn, mode, operator.itemgetter(*ins) if ins else None, frees, out_reg, outs, it, ins))
    return tuple(flat)


def _waits(ex, order):
    """Per node, the frozenset of asynchronous nodes it depends on."""
    preds = [[] for _ in ex.items]
    for it in ex.items:
        for d in it.succ:
            preds[d].append(it.id)
    waits = [frozenset()] * len(ex.items)
    for i in order:
        w = set()
        for p in preds[i]:
            w |= waits[p]
            if ex.items[p].kind == ASYNC:
                w.add(p)
        waits[i] = frozenset(w)
    return waits


def _local(index, entries, plan):
    """The registers segment `index` alone writes and reads (its generated
    code keeps them in local variables)."""
    written = {r for it, _, outs, _ in entries if it.kind != ASYNC for _, r in outs}
    for s, nodes in enumerate(plan):
        if s != index:
            for _, ins in nodes:
                written.difference_update(ins)
    return frozenset(written)


def _frees(plan, waits):
    """Per (segment, position), the registers its node frees: at the last reader in the reading
    segment that waits for every receive the other reading segments wait for, when there is one.
    That segment runs after them: a segment is ready no later than one waiting for more, and
    ready segments run in order, smaller wait-sets first. (Freeing there matters beyond memory:
    a variable's value read in a forward and a backward segment was held to the step's end,
    and its update in place had to copy it first.) Other values are kept to the step's end."""
    segments_reading = collections.defaultdict(set)
    last = {}
    for s, nodes in enumerate(plan):
        for pos, (it, ins) in enumerate(nodes):
            for r in ins:
                segments_reading[r].add(s)
                last[r, s] = pos
    frees = collections.defaultdict(set)
    for r, readers in segments_reading.items():
        final = max(readers, key=lambda s: len(waits[s]))
        if all(waits[s] <= waits[final] for s in readers):
            frees[final, last[r, final]].add(r)
    return {at: tuple(sorted(regs)) for at, regs in frees.items()}


class SegmentedRun(ge._Run):
    """One segmented executor running one step (the dataflow run's callbacks,
    completions and failure handling; segments instead of nodes)."""

    __slots__ = ("regs", "seg_pending", "timed")

    def __init__(self, ex, step):
        # _Run's state without its per-node slots and counts
        segs = ex.segments
        self.ex = ex
        self.step = step
        self.inputs = self.pending = None
        self.regs = segs.registers.copy()
        self.seg_pending = segs.initial_pending.copy()
        self.ready = collections.deque(segs.roots)
        self.remaining = len(segs.segments)
        self.async_outstanding = 0
        self.lock = threading.Lock()
        self.completions = []
        self.running = False
        self.failed = False
        self.reported = False
        # Decided once per run: timed and untimed segments free values at different places
        # (fused updates move reads between segments), so one run never mixes them.
        self.timed = step.stats is not None or ex.runs_to_profile > 0

    def _loop(self, deferred):
        segments = self.ex.segments.segments
        ready = self.ready
        step, regs, launch, timed = self.step, self.regs, self._launch, self.timed
        stats = step.stats
        while True:
            while ready and not self.failed:
                seg = segments[ready.popleft()]
                if timed:
                    ran = self._run_timed(seg, deferred, stats)
                else:
                    code = seg.code
                    if code is None and not seg.code_tried:
                        code = self._generate(seg)
                    if code is None:
                        ran = self._run_flat(seg, deferred)
                    else:  # run here: a method call per segment costs more than a cheap kernel
                        try:
                            ran = code.run(step, deferred, regs, launch) is None
                        except Exception as exc:  # noqa: BLE001 - becomes the step's error
                            self._fail(seg.flat[schedule_code.failed_position(code, exc)][6], exc)
                            ran = False
                        if not ran:
                            self.failed = True
                if ran:
                    self.remaining -= 1
            more, finished = self._complete(stats)
            if not more:
                break
        if finished:
            self._finish()

    def _generate(self, seg):
        """Segment `seg`'s generated code (schedule_code.py), made at its first untimed run; None
        when it is too long (its list is walked instead)."""
        seg.code_tried = True
        ex = self.ex
        runner = ex.runner  # not ex: the code is kept by the segment, which ex keeps (no cycle)
        seg.code = schedule_code.generate_segment(seg, ex.segments.registers, ex,
                                                  lambda d: compiled_schedule._release_to(runner, d))
        return seg.code

    def _run_flat(self, seg, deferred):
        """Runs one segment's untimed list; False when the step failed meanwhile."""
        ex = self.ex
        step, regs = self.step, self.regs
        release = ex.runner is not None
        for fn, mode, get, frees, out_reg, outs, it, ins in seg.flat:
            if step.error is not None:
                self.failed = True
                return False
            if deferred and release and it.expensive:
                self._release(deferred)
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
                    args = _args(it, ins, frees, regs)
                    if mode == 4:
                        self._launch(it, step, args)
                        continue
                    out = fn(step, *args) if it.kind == STEP else fn(*args)
            except Exception as exc:  # noqa: BLE001 - becomes the step's error
                self._fail(it, exc)
                return False
            if out_reg >= 0:
                regs[out_reg] = out
            elif outs:
                _store(regs, it, outs, out)
        return True

    def _run_timed(self, seg, deferred, stats):
        """`_run_flat` with every node (constants too) measured: for step stats and profiled runs."""
        ex, step, regs = self.ex, self.step, self.regs
        profiling = ex.runs_to_profile > 0
        release = ex.runner is not None
        for it, ins, outs, frees in seg.entries:
            if step.error is not None:
                self.failed = True
                return False
            if deferred and release and it.expensive:
                self._release(deferred)
            try:
                args = _args(it, ins, frees, regs)
                if it.kind == ASYNC:
                    self._launch(it, step, args)
                    continue
                t0 = ge._now_ns()
                out = it.fn(step, *args) if it.kind == STEP else it.fn(*args)
            except Exception as exc:  # noqa: BLE001 - becomes the step's error
                self._fail(it, exc)
                return False
            self._timed(it, t0, out, profiling, stats)
            if outs:
                _store(regs, it, outs, out)
        return True

    def _propagate(self, it, out):
        """A receive completed: its value into its registers, and the segments
        waiting for it counted down (those ready in the order compiled)."""
        outs, waiting = self.ex.segments.receives[it.id]
        regs = self.regs
        if it.n_out == 1:  # _store, inlined
            if outs:
                regs[outs[0][1]] = out
        else:
            for k, r in outs:
                regs[r] = out[k]
        pending = self.seg_pending
        for s in waiting:
            pending[s] -= 1
            if not pending[s]:
                self.ready.append(s)

    def _finish(self):
        err = None
        if not self.failed and self.remaining:
            err = errors.InternalError(f"Executor for {self.ex.device.name} stalled with {self.remaining} "
                                       f"segments not run", device=self.ex.device.name)
        self.regs = None
        self.ex._note_run()
        self._report_done(err)

    def __repr__(self):
        return f"<SegmentedRun {self.ex.device.name} step {self.step.step_id}: {self.remaining} segments left>"


def _args(it, ins, frees, regs):
    args = [regs[r] for r in ins]
    for j in it.deref:
        args[j] = args[j].read(it.name)
    for r in frees:
        regs[r] = None
    return args


def _store(regs, it, outs, out):
    """The outputs someone reads into their registers."""
    if it.n_out == 1:
        if outs:
            regs[outs[0][1]] = out
    else:
        for k, r in outs:
            regs[r] = out[k]
