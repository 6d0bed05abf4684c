"""The dataflow executor of one partition (TF's Executor, simple propagator).

A partition with control flow (Switch, Merge, Enter, Exit, NextIteration,
or a `_Recv` that may bring a dead tensor) runs with the frame-aware
propagator instead (frame_executor.py), one with neither control flow
nor asynchronous kernels as a precompiled flat schedule
(compiled_schedule.py), and a CPU one whose asynchronous kernels are
receives as flat segments gated by them (segmented_schedule.py); all share
the build below, and the simple path pays nothing for the others' existence.
The dataflow propagator here runs the rest (accelerator partitions) and
every partition when the compiled forms are turned off.

Everything that can be decided once is decided when the executor is built:
the topological order, every node's kernel (looked up and constructed),
where each output goes (flat input-slot indices of its consumers), which
inputs are read from a variable, the initial pending counts and the roots.
A step then only copies the pending counts and runs closures:

    pop a ready node -> take its inputs (and clear their slots, freeing
    values after their last use) -> call its kernel -> write outputs into
    consumers' slots -> decrement their pending counts -> push the ready.

Asynchronous kernels (`_Recv`) do not block: they return at once and call
back when their value arrives; the callback queues the completion and, if
this executor's loop is not running, restarts it.

Where it restarts matters in Python: handing work to another thread costs a
thread wake-up and a GIL hand-off, far more than a cheap kernel. So a loop
woken by a callback on an executor thread (typically the sender's `_Send`)
is deferred: that thread runs it when its own loop goes idle, and gives
the deferred loops to the runner (a thread pool) only just before it runs
an expensive kernel, where running in parallel pays. Which kernels are
expensive is measured over an executor's first runs.

The first kernel error is reported to the step, which aborts the
rendezvous so the other partitions stop too; this executor stops
scheduling, waits for its outstanding async kernels to be aborted, and
finishes.

A loop can also be interrupted by a BaseException raised on its thread
(Ctrl-C, or a signal handler that raises, while a kernel runs there): the
runs that thread held are abandoned (they report to the step once and never
run again) and the step is aborted, so the other partitions stop as well.
"""
import collections
import threading
import time

import numpy as np

from .. import errors
from ..framework import registry
from ..framework.op_categories import NEXT_ITERATION_OPS, TRANSFER_OPS
from ..framework.registry import ASYNC, STEP, SYNC, KernelContext
from ..ops import blas
from . import step_stats


class NodeItem:
    """What the loop needs about one node, precomputed."""

    __slots__ = ("id", "node", "name", "op", "fn", "kind", "start", "end", "nones", "deref", "n_out", "routes0",
                 "routes", "succ", "where", "label", "out_dtypes", "cost_ns", "expensive", "blas_team", "forwardable",
                 "kdef", "ctx",
                 # used by the frame-aware propagator only (frame_executor.prepare)
                 "frame", "local", "fstart", "fend", "fnones", "n_data", "cf", "is_merge", "is_transfer",
                 "is_trigger", "is_retval", "is_const_enter", "child", "parallel", "edges", "fast", "fslots", "fsucc")

    def __repr__(self):
        return f"<NodeItem {self.name} = {self.op}>"


class GraphExecutor:
    """Runs one partition GraphDef on one device, many times."""

    def __init__(self, graph_def, device, runner=None, debug_info=None):
        self.device = device
        self.runner = runner
        if getattr(device, "completion_hook", False) is None:
            device.completion_hook = run_device_callback  # stream threads continue our loops themselves
        self.graph_def = graph_def
        debug_info = debug_info or {}
        nodes = list(graph_def.node)
        self._build(nodes, debug_info)

    # -- construction -------------------------------------------------------------
    def _build(self, nodes, debug_info):
        device = self.device
        in_dtypes, out_dtypes = _node_dtypes(nodes, device)
        data_in, ctrl_in = _node_inputs(nodes, in_dtypes, out_dtypes, device)
        uses_frames = frame_executor.needs_frames(nodes)
        order = _topological_order(nodes, data_in, ctrl_in, device, uses_frames)
        position = {old: new for new, old in enumerate(order)}
        items = [_node_item(new, nodes[old], len(data_in[old]), out_dtypes[old], device, debug_info)
                 for new, old in enumerate(order)]
        start = 0
        for it, old in zip(items, order):
            it.start, it.end = start, start + len(data_in[old])
            start = it.end
            it.deref = tuple(pos for pos, (src, slot) in enumerate(data_in[old])
                             if out_dtypes[src][slot].is_ref_dtype and not in_dtypes[old][pos].is_ref_dtype)
        self.num_slots = start
        routes, pending = _wire(items, order, position, data_in, ctrl_in)
        _make_kernels(items, order, position, data_in, in_dtypes, routes, device, uses_frames)
        self.items = items
        self.initial_pending = pending
        self.roots = tuple(it.id for it in items if pending[it.id] == 0)
        self.num_nodes = len(items)
        self.has_async = any(it.kind == ASYNC for it in items)
        self.runs_to_profile = PROFILED_RUNS
        self._all_cheap = None
        self.uses_frames = uses_frames
        self._run_class = _Run
        if uses_frames:
            srcs = [[position[s] for s, _ in data_in[old]] + [position[c] for c in ctrl_in[old]] for old in order]
            frame_executor.prepare(self, srcs, [[(position[s], k) for s, k in data_in[old]] for old in order],
                                   [[position[c] for c in ctrl_in[old]] for old in order])
            self._run_class = frame_executor.FrameRun
            self.loop_plan = compiled_loop.compile_loops(self)
            if self.loop_plan is not None:
                self._run_class = compiled_loop.run_class
        self.fused = []  # (matmul, update) items that untimed steps run as one kernel (fused_updates.py)
        self.schedule = compiled_schedule.compile_schedule(self)
        self.segments = None if self.schedule is not None else segmented_schedule.compile_segments(self)
        if self.schedule is not None:
            self._run_class = compiled_schedule.CompiledRun
        elif self.segments is not None:
            self._run_class = segmented_schedule.SegmentedRun

    def all_cheap(self):
        """True once the profiled runs found no kernel here worth a thread of its own
        (transfers aside: a _Send's time includes the receiver's callbacks it ran), no
        kernel that may block (py_func) and no loop (it may run its kernels many times)."""
        cheap = self._all_cheap
        if cheap is None:
            if self.runs_to_profile > 0:
                return False
            timed = [it for it in self.items if it.op not in TRANSFER_OPS]
            slow = [it for it in timed if it.expensive or it.blas_team and it.cost_ns >= EXPENSIVE_NS]
            # cost_ns 0: never finished in a profiled run (it failed, or never ran), so not known cheap
            cheap = self._all_cheap = not self.uses_frames and not slow \
                and all(it.cost_ns > 0 or it.kind == ASYNC for it in timed) \
                and sum(it.cost_ns for it in timed) < CHEAP_RUN_NS \
                and not any(getattr(registry.get_op_def(it.op), "may_block", False) for it in timed)
        return cheap

    def _note_run(self):
        """After the profiled runs, mark the kernels worth running in parallel."""
        if self.runs_to_profile > 0:
            self.runs_to_profile -= 1
            if self.runs_to_profile == 0:
                # While a BLAS kernel's team may fill every core, handing other loops to the runner
                # before it only makes them fight that team (BLAS_LOCK already keeps BLAS calls from
                # overlapping): a 2-device MLP step took 5-10% longer, and its threads page-faulted.
                spanning = blas.team_can_span_cores()
                for it in self.items:
                    if it.expensive:
                        it.expensive = it.cost_ns >= EXPENSIVE_NS and not (it.blas_team and spanning)
                for matmul, update in self.fused:  # the fused kernel does the matmul's work too
                    update.expensive = update.expensive or matmul.expensive

    # -- running --------------------------------------------------------------------
    def run_async(self, step, inline=True):
        """Starts this executor on `step`; `step.executor_done` is called when it finishes."""
        run = self._run_class(self, step)
        run.running = True
        if inline or self.runner is None:
            run.loop()
        else:
            self.runner(run.loop)
        return run

    def start(self, step):
        """Creates this executor's run of `step` without starting it (see `run_all`)."""
        run = self._run_class(self, step)
        run.running = True
        return run

    def __repr__(self):
        return f"<GraphExecutor {self.device.name}: {self.num_nodes} nodes>"


def _node_dtypes(nodes, device):
    """Per node, its input and output dtypes (its attrs completed with their defaults)."""
    names = set()
    in_dtypes, out_dtypes = [], []
    for n in nodes:
        if n.name in names:
            raise errors.InvalidArgumentError(f"Duplicate node name '{n.name}' in partition for {device.name}",
                                              node=n.name, device=device.name)
        names.add(n.name)
        try:
            op_def = registry.get_op_def(n.op)
            attrs = op_def.complete_attrs(n.attrs, n.name)
            n.attrs = attrs
            out_dtypes.append(op_def.output_dtypes(attrs))
            in_dtypes.append(op_def.input_dtypes(attrs))
        except (errors.NotFoundError, ValueError, KeyError, TypeError) as e:
            raise errors.InvalidArgumentError(f"Invalid node '{n.name}' ({n.op}) on {device.name}: {e}",
                                              node=n.name, device=device.name) from None
    return in_dtypes, out_dtypes


def _node_inputs(nodes, in_dtypes, out_dtypes, device):
    """Per node, its data inputs [(source index, output slot)] and its control
    inputs [source index], checked against the partition and the dtypes."""
    index = {n.name: i for i, n in enumerate(nodes)}
    data_in, ctrl_in = [], []
    for i, n in enumerate(nodes):
        d, c = [], []
        for inp in n.input:
            if inp.startswith("^"):
                src = index.get(inp[1:])
                if src is None:
                    raise errors.InvalidArgumentError(
                        f"Node '{n.name}': control input '{inp}' is not in the partition for {device.name}",
                        node=n.name, device=device.name)
                c.append(src)
                continue
            name, _, slot = inp.partition(":")
            src = index.get(name)
            slot = int(slot) if slot else 0
            if src is None or slot >= len(out_dtypes[src]):
                raise errors.InvalidArgumentError(
                    f"Node '{n.name}': input '{inp}' is not in the partition for {device.name}",
                    node=n.name, device=device.name)
            d.append((src, slot))
        _check_inputs(nodes, i, d, in_dtypes, out_dtypes, device)
        data_in.append(d)
        ctrl_in.append(c)
    return data_in, ctrl_in


def _check_inputs(nodes, i, d, in_dtypes, out_dtypes, device):
    n = nodes[i]
    if len(d) != len(in_dtypes[i]):
        raise errors.InvalidArgumentError(
            f"Incomplete graph, node '{n.name}' ({n.op}) has {len(d)} inputs, expects {len(in_dtypes[i])}",
            node=n.name, device=device.name)
    for pos, (src, slot) in enumerate(d):
        have, want = out_dtypes[src][slot], in_dtypes[i][pos]
        if have.base_dtype != want.base_dtype or (want.is_ref_dtype and not have.is_ref_dtype):
            raise errors.InvalidArgumentError(
                f"Input {pos} of node '{n.name}' ({n.op}) was passed {have.name} from "
                f"{nodes[src].name}:{slot} incompatible with expected {want.name}.",
                node=n.name, device=device.name)


def _node_item(new, n, n_in, out_dtypes, device, debug_info):
    it = NodeItem()
    it.id = new
    it.node = n
    it.name = n.name
    it.op = n.op
    it.out_dtypes = out_dtypes
    it.n_out = len(out_dtypes)
    it.nones = (None,) * n_in
    origin = debug_info.get(n.name)
    it.where = f"node {n.name} ({n.op}) on {device.name}" + (f", defined at {origin}" if origin else "")
    it.label = step_stats.label(n)
    it.routes0 = ()
    it.routes = ()
    it.succ = ()
    it.cost_ns = 0
    it.expensive = True  # until measured: it might be long, or even block
    it.blas_team = False
    return it


def _wire(items, order, position, data_in, ctrl_in):
    """Sets each item's routes (the input slots its outputs go to) and
    successors; returns the routes per output and the initial pending counts."""
    routes = [[[] for _ in range(it.n_out)] for it in items]
    succ = [[] for _ in items]
    pending = [0] * len(items)
    for old in order:
        dst = position[old]
        for pos, (src, slot) in enumerate(data_in[old]):
            s = position[src]
            routes[s][slot].append(items[dst].start + pos)
            succ[s].append(dst)
            pending[dst] += 1
        for src in ctrl_in[old]:
            succ[position[src]].append(dst)
            pending[dst] += 1
    for it in items:
        r = routes[it.id]
        it.routes0 = tuple(r[0]) if it.n_out == 1 else ()
        it.routes = tuple((slot, k) for k, slots in enumerate(r) for slot in slots) if it.n_out > 1 else ()
        it.succ = tuple(succ[it.id])
    return routes, pending


def _make_kernels(items, order, position, data_in, in_dtypes, routes, device, uses_frames):
    """Looks up and builds every item's kernel, with the inputs it may overwrite."""
    kdefs = []
    for it in items:
        kdef = registry.get_kernel_def(it.op, device.device_type)
        if kdef is None:
            raise errors.NotFoundError(
                f"No registered '{it.op}' OpKernel for {device.device_type} devices compatible with node "
                f"{it.name} (registered kernels: {registry.kernel_device_types(it.op) or 'none'})",
                node=it.name, device=device.name)
        kdefs.append(kdef)
    # whose outputs are arrays no one else holds: a fresh kernel's, or what a _Recv
    # is handed by a sender that kept no reference (partitioner: _sole_reference)
    fresh = {it.id for it in items
             if kdefs[it.id].fresh_outputs or (it.op == "_Recv" and it.node.attrs.get("_sole_reference"))}
    for it in items:
        old = order[it.id]
        kdef = kdefs[it.id]
        it.forwardable = frozenset() if uses_frames else frozenset(
            pos for pos, (src, slot) in enumerate(data_in[old])
            if position[src] in fresh and len(routes[position[src]][slot]) == 1
            and pos not in it.deref)
        it.kdef = kdef
        it.ctx = KernelContext(it.node, in_dtypes[old], it.out_dtypes, device, device.xp, it.forwardable)
        it.fn, it.kind = make_kernel(it, kdef, it.ctx)
        it.blas_team = getattr(it.fn, "uses_blas_team", False)
        if kdef.inexpensive or it.kind == ASYNC:
            it.expensive = False


def _topological_order(nodes, data_in, ctrl_in, device, loops=False):
    """Node indices in dependency order; with `loops`, a while loop's back
    edges (NextIteration -> Merge) don't count."""
    n = len(nodes)
    indeg = [0] * n
    users = [[] for _ in range(n)]
    back = {i for i, node in enumerate(nodes) if node.op in NEXT_ITERATION_OPS} if loops else ()
    for i in range(n):
        for src, _ in data_in[i]:
            if src in back:
                continue
            users[src].append(i)
            indeg[i] += 1
        for src in ctrl_in[i]:
            users[src].append(i)
            indeg[i] += 1
    ready = collections.deque(i for i in range(n) if indeg[i] == 0)
    order = []
    while ready:
        i = ready.popleft()
        order.append(i)
        for u in users[i]:
            indeg[u] -= 1
            if indeg[u] == 0:
                ready.append(u)
    if len(order) != n:
        stuck = sorted(nodes[i].name for i in range(n) if indeg[i] > 0)
        raise errors.InvalidArgumentError(
            f"The partition for {device.name} has a cycle; nodes on or after it: {stuck[:8]}", device=device.name)
    return order


_now_ns = time.perf_counter_ns
PROFILED_RUNS = 3             # runs of an executor that measure kernel costs
EXPENSIVE_NS = 100_000        # a kernel this slow is worth a thread hand-off
CHEAP_RUN_NS = 200_000        # a partition whose kernels take less may run on an I/O thread
_tls = threading.local()      # .deferred: loops waiting for this thread to go idle


def resume(run):
    """Restarts `run`'s loop, which an asynchronous completion found stopped: on this thread
    once its own loop goes idle (deferred), else here without a runner, else on the runner."""
    deferred = getattr(_tls, "deferred", None)
    if deferred is not None:
        deferred.append(run)  # this thread runs it as soon as its own loop goes idle
    elif run.ex.runner is None:
        run.loop()
    else:
        run.ex.runner(run.loop)


def note_cost(it, cost):
    """Keeps the least time a kernel took in the profiled runs: its steady cost. (The most, kept
    before, counted a first run's one-time work: Relu, ReluGrad and a softmax of 64x256 values
    measured 100-200 us instead of 5-20 and handed work to other threads every step after.)"""
    if cost < it.cost_ns or not it.cost_ns:
        it.cost_ns = max(cost, 1)


def run_all(runs):
    """Runs the given started runs on this thread, one after another,
    releasing them to the runner when a kernel is expensive (see module doc)."""
    deferred = list(reversed(runs[1:]))
    runs[0].loop(deferred)


class _DeviceLoops(list):
    """The deferred-loop list of a device stream's thread: it keeps the loops
    of executors on `device` and hands every other loop to its runner."""

    def __init__(self, device):
        super().__init__()
        self.device = device

    def append(self, run):
        if run.ex.device is self.device or run.ex.runner is None:
            list.append(self, run)
        else:
            run.ex.runner(run.loop)


def run_device_callback(device, fn, *args):
    """Calls `fn(*args)` on one of `device`'s stream threads (an ASYNC kernel's
    `done`) and then runs the executor loops it woke for `device` right here,
    before the stream takes its next work; loops of other devices go to their
    runners. A chain of device kernels then costs no thread hand-off: each
    `done` runs the loop that launches the next kernel onto this same stream."""
    if getattr(_tls, "deferred", None) is not None:
        fn(*args)  # already inside a loop on this thread: it picks the work up
        return
    deferred = _DeviceLoops(device)
    _tls.deferred = deferred
    try:
        fn(*args)
    finally:
        _tls.deferred = None
    if deferred:
        deferred.pop().loop(deferred)


class _CheapLoops(list):
    """The deferred-loop list of an I/O thread: it keeps the loops of executors whose
    kernels all proved cheap and hands every other loop to its runner."""

    def append(self, run):
        if run.ex.runner is None or run.ex.all_cheap():
            list.append(self, run)
        else:
            run.ex.runner(run.loop)


def run_io_callback(fn, *args):
    """Calls `fn(*args)` (an ASYNC kernel's `done`, arriving on an I/O thread: a
    tensor from another process) and runs the executor loops it woke right here
    when their kernels are all cheap, as `run_device_callback` does for a device
    stream: the rest of a small step then costs no thread hand-off."""
    if getattr(_tls, "deferred", None) is not None:
        fn(*args)
        return
    deferred = _CheapLoops()
    _tls.deferred = deferred
    try:
        fn(*args)
    finally:
        _tls.deferred = None
    if deferred:
        deferred.pop().loop(deferred)


class _Run:
    """One executor running one step (TF's ExecutorState)."""

    __slots__ = ("ex", "step", "inputs", "pending", "ready", "remaining", "async_outstanding", "lock",
                 "completions", "running", "failed", "reported", "__weakref__")

    def __init__(self, ex, step):
        self.ex = ex
        self.step = step
        self.inputs = [None] * ex.num_slots
        self.pending = ex.initial_pending.copy()
        self.ready = collections.deque(ex.roots)
        self.remaining = ex.num_nodes
        self.async_outstanding = 0
        self.lock = threading.Lock()
        self.completions = []
        self.running = False
        self.failed = False
        self.reported = False  # executor_done was called: a run reports once, even when abandoned

    # TF reports inf/nan silently; so do kernels here. errstate as a decorator costs one Python frame
    # per run where the with-statement cost three (__init__, __enter__, __exit__).
    @np.errstate(all="ignore")
    def loop(self, deferred=None):
        """Runs this loop, then any loops deferred to this thread meanwhile."""
        deferred = [] if deferred is None else deferred
        saved = getattr(_tls, "deferred", None)
        _tls.deferred = deferred
        run = self
        try:
            while True:
                run._loop(deferred)
                if not deferred:
                    break
                run = deferred.pop()
        except BaseException as exc:  # noqa: BLE001 - Ctrl-C or a signal handler's exception, see module doc
            for held in [run, *deferred]:
                held._abandon(exc)
            deferred.clear()
            raise
        finally:
            _tls.deferred = saved

    def _abandon(self, exc):
        """This thread was interrupted while it held this run: the run never
        runs again (callbacks of its outstanding async kernels only queue their
        completions), it reports to the step, and the step is aborted."""
        with self.lock:
            self.running = True
        self.failed = True
        self.step.report_error(errors.CancelledError(
            f"Step {self.step.step_id} was interrupted ({type(exc).__name__}) while {self.ex.device.name} ran it",
            device=self.ex.device.name))
        self._report_done(None)

    def _report_done(self, err):
        with self.lock:
            if self.reported:
                return
            self.reported = True
        self.step.executor_done(err)

    def _release(self, deferred):
        runner = self.ex.runner
        while deferred:
            runner(deferred.pop().loop)

    def _loop(self, deferred):
        items = self.ex.items
        inputs = self.inputs
        pending = self.pending
        ready = self.ready
        popleft = ready.popleft
        push = ready.append
        step = self.step
        stats = step.stats
        profiling = self.ex.runs_to_profile > 0
        timed = profiling or stats is not None
        release = self.ex.runner is not None
        while True:
            while ready and not self.failed:
                it = items[popleft()]
                if deferred and release and it.expensive:
                    self._release(deferred)
                s, e = it.start, it.end
                if s != e:
                    args = inputs[s:e]
                    inputs[s:e] = it.nones
                    if it.deref:
                        try:
                            for j in it.deref:
                                args[j] = args[j].read(it.name)
                        except Exception as exc:  # noqa: BLE001 - becomes the step's error
                            self._fail(it, exc)
                            break
                else:
                    args = ()
                kind = it.kind
                if kind == ASYNC:
                    self._launch(it, step, args)
                    continue
                if timed:
                    t0 = _now_ns()
                try:
                    out = it.fn(*args) if kind == SYNC else it.fn(step, *args)
                except Exception as exc:  # noqa: BLE001
                    self._fail(it, exc)
                    break
                if timed:
                    self._timed(it, t0, out, profiling, stats)
                if it.n_out == 1:
                    for slot in it.routes0:
                        inputs[slot] = out
                elif it.routes:
                    for slot, k in it.routes:
                        inputs[slot] = out[k]
                for d in it.succ:
                    p = pending[d] - 1
                    pending[d] = p
                    if not p:
                        push(d)
                self.remaining -= 1
            more, finished = self._complete(stats)
            if not more:
                break
        if finished:
            self._finish()

    def _launch(self, it, step, args, tag=None):
        """Starts async kernel `it` with `step`; its callback `done` queues the completion as
        (`tag` or `it`, err, out, t0) and, if this run's loop is not running, restarts it: on this
        thread once its own loop is idle (deferred), else here or on the runner. (The callback is
        made here rather than by a method: a call per receive costs more than a cheap kernel.)"""
        self.async_outstanding += 1
        t0 = _now_ns() if self.step.stats is not None else 0
        if tag is None:
            tag = it

        def done(err, out=None, is_dead=False):
            # (a rendezvous calls it as done(err, value, is_dead): a dead value is delivered as None)
            with self.lock:
                self.completions.append((tag, err, None if is_dead else out, t0))
                if self.running:
                    return
                self.running = True
            resume(self)
        try:
            it.fn(step, args, done)
        except Exception as exc:  # noqa: BLE001 - becomes the step's error
            self.async_outstanding -= 1
            self._fail(it, exc)

    def _timed(self, it, t0, out, profiling, stats):
        """After a timed kernel: its cost (profiled runs) and its step stats."""
        if profiling:
            note_cost(it, _now_ns() - t0)
        if stats is not None:
            self._record(it, t0, out)

    def _take_completions(self):
        """(the async kernels' completions, _), or (None, whether the run is finished) with the
        loop stopped: under the lock, as a callback may restart the loop on another thread."""
        with self.lock:
            comps = self.completions
            if not comps:
                self.running = False
                return None, self.async_outstanding == 0
            self.completions = []
        return comps, False

    def _complete(self, stats):
        """Takes in the async kernels' completions: (True, _) when there were
        some, else (False, whether the run is finished) with the loop stopped."""
        with self.lock:  # _take_completions, inlined: this runs after every stretch of kernels
            comps = self.completions
            if not comps:
                self.running = False
                return False, self.async_outstanding == 0
            self.completions = []
        for it, err, out, t0 in comps:
            self.async_outstanding -= 1
            if self.failed:
                continue
            if err is not None:
                self._fail(it, err)
                continue
            if stats is not None:
                self._record(it, t0, out)
            self._propagate(it, out)
        return True, False

    def _propagate(self, it, out):
        """Routes a finished node's outputs and readies its successors. (The sync
        path in `_loop` has this inlined: a method call per node is ~5% of a
        cheap node.)"""
        inputs, pending = self.inputs, self.pending
        if it.n_out == 1:
            for slot in it.routes0:
                inputs[slot] = out
        elif it.routes:
            for slot, k in it.routes:
                inputs[slot] = out[k]
        for d in it.succ:
            p = pending[d] - 1
            pending[d] = p
            if not p:
                self.ready.append(d)
        self.remaining -= 1

    def _fail(self, it, exc):
        self.failed = True
        self.ready.clear()
        self.step.report_error(_kernel_error(it, exc, self.step))

    def _finish(self):
        err = None
        if not self.failed and self.remaining != 0:
            waiting = [it.name for it in self.ex.items if self.pending[it.id] > 0][:8]
            err = errors.InternalError(f"Executor for {self.ex.device.name} stalled with {self.remaining} nodes "
                                       f"not run; waiting: {waiting}", device=self.ex.device.name)
        self.inputs = None
        self.ex._note_run()
        self._report_done(err)

    def _record(self, it, t0, out):
        t1 = _now_ns()
        outputs = []
        if it.n_out == 1:
            outputs.append(_describe(0, out))
        elif it.n_out > 1 and isinstance(out, tuple):
            outputs.extend(_describe(k, v) for k, v in enumerate(out))
        wall = step_stats.now_micros()
        dur = (t1 - t0) // 1000
        self.step.stats.record(self.ex.device.name, step_stats.NodeExecStats(
            it.name, it.op, wall - dur, wall, threading.get_ident(), it.label, outputs))

    def __repr__(self):
        return f"<_Run {self.ex.device.name} step {self.step.step_id}: {self.remaining} nodes left>"


def _describe(slot, value):
    shape = getattr(value, "shape", ())
    dtype = getattr(value, "dtype", None)
    return step_stats.NodeOutput(slot, str(dtype), tuple(shape), int(getattr(value, "nbytes", 0)))


def make_kernel(it, kdef, ctx):
    """(kernel, kind) of node `it` built by `kdef` from `ctx`; a may_block
    kernel is wrapped to be tracked by its step."""
    try:
        fn = kdef.factory(ctx)
    except errors.OpError as e:
        e.node = e.node or it.name
        raise
    except (ValueError, TypeError, KeyError) as e:
        raise errors.InvalidArgumentError(f"Cannot create kernel for {it.where}: {e}", node=it.name,
                                          device=ctx.device.name) from None
    kind = kdef.kind
    if kind != ASYNC and getattr(registry.get_op_def(it.op), "may_block", False):
        fn, kind = _tracking_blocking(it, fn, kind, ctx.device.name), STEP
    return fn, kind


def _tracking_blocking(it, fn, kind, device_name):
    """Wraps a may_block kernel: while it runs, the step knows (for its deadline error); if the step
    failed meanwhile (its deadline passed and the caller went on), the late result is discarded."""
    name, op = it.name, it.op

    def blocking(step, *args):
        token = object()
        blocking_now = step.blocking
        blocking_now[id(token)] = (name, op, device_name, time.monotonic())
        try:
            out = fn(*args) if kind == SYNC else fn(step, *args)
        finally:
            blocking_now.pop(id(token), None)
        if step.error is not None:
            raise errors.mark_derived(errors.CancelledError(
                f"The result of {name} came after its step failed; it is discarded", node=name))
        return out
    return blocking


def _kernel_error(it, exc, step=None):
    """`exc`, raised by node `it`'s kernel, as the OpError that names the node (`step`: the step it
    ran in, whose own error is passed on as it is)."""
    if isinstance(exc, errors.OpError):
        if (step is not None and exc is step.error) or errors.is_derived(exc) or getattr(exc, "_annotated", False):
            return exc
        if exc.node is None:
            exc.node = it.name
        if exc.device is None:
            exc.device = getattr(it.node, "device", None) or None
        exc.message = f"{exc.message}\n\t [[{it.where}]]"
        exc.args = (exc.message,)
        exc._annotated = True
        return exc
    if isinstance(exc, MemoryError):
        cls = errors.ResourceExhaustedError
    elif isinstance(exc, (ValueError, IndexError, TypeError, ArithmeticError, KeyError)):
        cls = errors.InvalidArgumentError
    else:
        cls = errors.InternalError
    err = cls(f"{type(exc).__name__}: {exc}\n\t [[{it.where}]]", node=it.name)
    err.__cause__ = exc
    err._annotated = True
    return err


from . import frame_executor  # noqa: E402 - it builds on _Run, defined above
from . import compiled_schedule  # noqa: E402 - the same
from . import compiled_loop  # noqa: E402 - the same
from . import segmented_schedule  # noqa: E402 - the same
