"""Compiled while-loops: a partition whose loops are simple runs as flat
kernel lists per iteration instead of through the frame-aware propagator.

Accepted (`compile_loops` returns None for anything else, with the reason
in `ex.loop_fallback_reason`, and the frame executor runs the partition):

* every loop frame is a child of the root frame (no nested loops), with
  exactly one LoopCond; each Merge joins one non-constant Enter and one
  NextIteration; each Switch splits a Merge's value on the LoopCond; an
  Exit reads a Switch's false side; a NextIteration reads a value that
  exists only when the loop continues (the body);
* constant Enters and RefEnters: loop invariants and variables living
  outside the loop, which the loop reads and updates (Assign*, Apply*)
  in order, each iteration;
* no control flow outside loops (no cond), no ControlTrigger, no stack
  ops (gradients of loops), no use of a Merge's value_index, no `_Send`/
  `_Recv` inside a loop, no `_Recv` that may receive a dead tensor;
* asynchronous kernels only in the root frame (a `_Recv`, a device
  kernel), and in a loop only the kernels of a sim device.

Within those, nothing can be dead except what the loop structure decides,
so control flow becomes register moves (and so does Identity): a Merge register takes its Enter's
value, then its NextIteration's; a Switch, LoopCond, Enter and
NextIteration are aliases of their input; an Exit takes the Merge value
when the condition is false. Each iteration runs the *cond part* (frame
nodes that don't depend on the Switch's true side: the condition, and
nodes fed only by loop invariants, which the dataflow executor also runs
in the last iteration), reads the predicate, and if true runs the *body
part*, kernels in dependency order (control edges included), so stateful
kernels run in the order the graph says. Loop invariants are aliases of
the root value: hoisted, and so are the loop's Consts (run once before
the first iteration: they are pure) and the pure kernels fed only by
loop invariants (loop_invariants.py). Registers are kept between
iterations, except those that may hold a view of a variable's value (a
read, and what kernels without fresh outputs make of it): they are cleared
after their last reader in the body, so the variable's update finds its
buffer unshared and writes it in place, as after the host schedule's frees
(held, every update copied the buffer: copy on write).

The root frame runs in dependency order with each loop as one unit after
all its Enters' sources. Without asynchronous units that is one pass in
order; with them, passes run whatever is ready and the run waits for a
done when nothing is (see CompiledLoopRun). A loop of a sim device's
kernels is one launch on the device's compute stream: its kernels run
there inline (DeviceKernel.run_inline), with no hand-off between the
executor and the stream per kernel, and each iteration's outputs take the
buffers the iteration before freed, without the allocator
(executor/reuse_pool.py), as a device-side loop would.

The step's error (another partition's failure, an abort, a deadline) is
checked before each iteration and each root kernel, so an endless loop
stops; a failing kernel names its node. parallel_iterations does not
matter (iterations run in order, as the dataflow executor's results are
the same for any value). When a step is traced (step stats), the frame
executor runs it instead, so the stats are the dataflow executor's node
for node.
"""
import collections
import functools
import operator
import threading

import numpy as np

from .. import errors
from ..executor import DeviceTensor
from ..framework.registry import ASYNC, STEP, SYNC
from . import compiled_schedule, loop_invariants
from . import graph_executor as ge
from .frame_executor import ENTER, EXIT, NEXT_ITERATION, FrameRun

ENABLED = True  # tests turn it off to compare against the frame executor

_ALLOWED_CF = frozenset({"Enter", "Exit", "NextIteration", "Merge", "Switch", "LoopCond"})
_TRANSFER_OPS = frozenset({"_Send", "_Recv", "_HostSend", "_HostRecv"})  # in a loop they need the frame's tag


class _Reject(Exception):
    """The partition is outside what the compiled path accepts (the reason is the message)."""


class LoopPlan:
    """One while loop: registers to move and kernels to run per iteration."""

    __slots__ = ("name", "merges", "pred_reg", "pred_node", "before", "first", "cond", "body", "exits", "stream",
                 "moves")

    def __repr__(self):
        kernels = sum(e[1] != 5 for e in self.body)  # (not the register clears)
        hoisted = len(self.before) + len(self.first)
        return (f"<LoopPlan {self.name}: {len(self.cond)} cond kernels, {kernels} body kernels, "
                f"{hoisted} hoisted, {len(self.merges)} loop variables>")


class Plan:
    """A compiled partition: `units` in run order, each a root kernel entry or a LoopPlan;
    `deps` the positions of the units each one waits for, `is_async` which ones finish later
    (a `_Recv`, a device kernel, a loop launched on a device's stream)."""

    __slots__ = ("units", "deps", "is_async", "has_async", "num_registers", "loops")

    def __repr__(self):
        return f"<compiled loops {self.loops}: {len(self.units)} units, {self.num_registers} registers>"


def compile_loops(ex):
    """The Plan of `ex` (a GraphExecutor with frames), or None when it needs the frame executor."""
    if not ENABLED or not ex.uses_frames:
        return None
    try:
        return _compile(ex)
    except _Reject as why:
        ex.loop_fallback_reason = str(why)
        return None


def _compile(ex):
    items = ex.items
    root = ex.root_frame
    _check_supported(ex)
    data_in, ctrl_in = _inputs(items)
    base = []
    n = 0
    for it in items:
        base.append(n)
        n += max(it.n_out, 1)

    def reg(src, k):
        """The register holding output k of item src (control-flow ops are aliases)."""
        it = items[src]
        op = it.op
        if op in ("Enter", "RefEnter", "LoopCond", "NextIteration", "Switch") or _is_alias(it):
            return reg(*data_in[src][0])
        if op == "Merge" and k != 0:
            raise _Reject(f"value_index of {it.name} is used")
        return base[src] + k

    loops = {}
    for name, sf in ex.static_frames.items():
        if sf.parent is None:
            continue
        loops[sf] = _compile_frame(sf, items, data_in, ctrl_in, reg, base)
    order, deps = _root_order(items, root, data_in, ctrl_in)
    units, unit_deps = _units(order, deps, items, loops, data_in, reg, base)
    plan = Plan()
    plan.units = tuple(units)
    plan.deps = tuple(unit_deps)
    plan.is_async = tuple(u.stream is not None if type(u) is LoopPlan else u[1] == 4 for u in units)
    plan.has_async = any(plan.is_async)
    plan.num_registers = n
    plan.loops = tuple(sf.name for sf in loops)
    return plan


def _check_supported(ex):
    """Raises _Reject naming what keeps the partition on the frame executor."""
    root = ex.root_frame
    for it in ex.items:
        in_loop = it.frame is not root and it.cf != ENTER
        if it.op.startswith("Stack") or it.op == "ControlTrigger" or (in_loop and it.op in _TRANSFER_OPS):
            raise _Reject(f"{it.name} ({it.op})")
        if it.op in _TRANSFER_OPS and it.op.endswith("Recv") and it.node.attrs.get("_may_be_dead"):
            raise _Reject(f"{it.name} ({it.op}) may receive a dead tensor")  # only frames carry one
        if in_loop and it.kind == ASYNC and _inline_kernel(it) is None:
            raise _Reject(f"{it.name} ({it.op}) is asynchronous")
        if it.op in _CONTROL_FLOW_OPS and it.op not in _ALLOWED_CF and not (
                it.op == "RefEnter" and it.is_const_enter):
            raise _Reject(f"{it.name} ({it.op})")
    for sf in ex.static_frames.values():
        if sf.parent is not None and sf.parent is not root:
            raise _Reject(f"nested loop {sf.name}")
    for it in root.items:
        if it.op in ("Merge", "Switch", "LoopCond", "NextIteration"):
            raise _Reject(f"control flow outside loops: {it.name} ({it.op})")


def _inputs(items):
    """(data inputs, control inputs) per consumer, rebuilt from the producers' edges."""
    data_in = [[None] * it.n_data for it in items]
    ctrl_in = [[] for _ in items]
    for it in items:
        for dst, _, slot, k, _ in it.edges:
            if slot >= 0:
                data_in[dst.id][slot - dst.fstart] = (it.id, k)
            else:
                ctrl_in[dst.id].append(it.id)
    return data_in, ctrl_in


def _root_order(items, root, data_in, ctrl_in):
    """The root frame's units (a kernel ("k", id) or a whole loop ("f", frame)) in dependency
    order, and each unit's dependencies."""
    unit_of = {}
    for it in items:
        if it.frame is root and it.cf != ENTER:
            unit_of[it.id] = ("k", it.id)
        elif it.cf == ENTER:
            unit_of[it.id] = ("f", it.child)
        else:
            unit_of[it.id] = ("f", it.frame)
    deps = collections.defaultdict(set)
    users = collections.defaultdict(set)
    first = {}
    for it in items:
        u = unit_of[it.id]
        first.setdefault(u, it.id)
        if it.frame is not root and it.cf != ENTER:
            continue  # inside a loop: ordered by the loop plan
        for src in [s for s, _ in data_in[it.id]] + ctrl_in[it.id]:
            su = unit_of[src]
            if su != u:
                deps[u].add(su)
                users[su].add(u)
    remaining = {u: len(deps[u]) for u in first}
    ready = collections.deque(u for _, u in sorted((first[u], u) for u in first if not remaining[u]))
    order = []
    while ready:
        u = ready.popleft()
        order.append(u)
        for v in sorted(users[u], key=first.get):
            remaining[v] -= 1
            if not remaining[v]:
                ready.append(v)
    if len(order) != len(first):
        raise _Reject("the loops and root nodes have no order")
    return order, deps


def _units(order, deps, items, loops, data_in, reg, base):
    """The plan's units and, per unit, the positions of the units it waits for (aliases pass theirs on)."""
    units, unit_deps = [], []
    position = {}   # unit key -> its position in `units`
    through = {}    # an alias's key -> the positions it passes on
    for key in order:
        needs = set()
        for d in deps[key]:
            needs |= {position[d]} if d in position else through[d]
        kind, what = key
        if kind == "k" and _is_alias(items[what]):
            through[key] = needs
            continue
        position[key] = len(units)
        units.append(loops[what] if kind == "f" else _entry(items[what], data_in, reg, base))
        unit_deps.append(tuple(sorted(needs)))
    return units, unit_deps


def _compile_frame(sf, items, data_in, ctrl_in, reg, base):
    loop_conds = [it for it in sf.items if it.op == "LoopCond"]
    if len(loop_conds) != 1:
        raise _Reject(f"{len(loop_conds)} LoopCond in {sf.name}")
    lc = loop_conds[0]
    lc_id = lc.id
    enters = [it for it in items if it.cf == ENTER and it.child is sf]
    switch_true = set()   # Switch ids: their output 1 is the body's input
    body = set()          # item ids that run only when the loop continues
    merges = []
    exits = []
    for it in sf.items:
        if it.op == "Switch":
            d, p = data_in[it.id]
            if p[0] != lc_id or items[d[0]].op != "Merge" or items[d[0]].frame is not sf:
                raise _Reject(f"{it.name} does not switch a loop variable on {lc.name}")
            switch_true.add(it.id)
    for it in enters:
        for dst, _, slot, k, _ in it.edges:
            if not it.is_const_enter and (dst.op != "Merge" or slot < 0):
                raise _Reject(f"{it.name} feeds {dst.name} ({dst.op})")
            if it.is_const_enter and dst.op == "Merge":
                raise _Reject(f"constant {it.name} feeds {dst.name}")
    for it in sf.items:  # in dependency order
        if it.op in ("Switch", "LoopCond"):
            continue
        if it.op == "Merge":
            if ctrl_in[it.id] or len(data_in[it.id]) != 2:
                raise _Reject(f"{it.name} is not a loop Merge")
            ops = sorted(items[s].op for s, _ in data_in[it.id])
            if ops != ["Enter", "NextIteration"]:
                raise _Reject(f"{it.name} merges {ops}")
            continue
        if it.cf == EXIT:
            (s, k), = data_in[it.id]
            if items[s].op != "Switch" or k != 0 or ctrl_in[it.id]:
                raise _Reject(f"{it.name} does not read a Switch's false side")
            exits.append((base[it.id], reg(s, k)))
            continue
        for s, k in data_in[it.id]:
            if items[s].op == "Switch" and k == 0:
                raise _Reject(f"{it.name} reads the false side of {items[s].name}")
        in_body = any((s in switch_true and k == 1) or s in body for s, k in data_in[it.id]) or \
            any(s in body for s in ctrl_in[it.id])
        if it.cf == NEXT_ITERATION:
            if not in_body or ctrl_in[it.id]:
                raise _Reject(f"{it.name} does not read the loop body")
            continue
        if in_body:
            body.add(it.id)
    for it in sf.items:
        if it.op == "Merge":
            (a, _), (b, _) = data_in[it.id]
            enter, nxt = (a, b) if items[a].op == "Enter" else (b, a)
            merges.append((reg(it.id, 0), reg(enter, 0), reg(nxt, 0)))
    if data_in[lc_id][0][0] in body:
        raise _Reject(f"{lc.name} depends on the loop body")
    plan = LoopPlan()
    plan.name = sf.name
    plan.merges = tuple(merges)
    plan.moves = _moves(plan.merges)
    plan.pred_reg = reg(*data_in[lc_id][0])
    plan.pred_node = lc
    kernels = [it for it in sf.items if it.op not in _CONTROL_FLOW_OPS and not _is_alias(it)]
    consts = [_entry(it, data_in, reg, base) for it in kernels if _is_const(it)]
    cond = [_entry(it, data_in, reg, base) for it in kernels if it.id not in body and not _is_const(it)]
    body_entries = [_entry(it, data_in, reg, base) for it in kernels if it.id in body and not _is_const(it)]
    # Loop invariants: registers the loop does not write (values from outside it), the Consts' and
    # the hoisted kernels'.
    written = {r for it in sf.items for r in range(base[it.id], base[it.id] + max(it.n_out, 1))}
    invariant = {r for e in cond + body_entries for r in e[6] if r not in written}
    invariant.update(e[3] for e in consts)
    hoisted_cond, cond = loop_invariants.hoist(cond, invariant)
    plan.first, body_entries = loop_invariants.hoist(body_entries, invariant)
    plan.before = tuple(consts) + hoisted_cond
    plan.cond = tuple(cond)
    plan.body = tuple(body_entries)
    plan.exits = tuple(exits)
    plan.stream = _loop_stream(sf, kernels)
    if plan.stream is None:  # (a device's variables swap in a new buffer at every update anyway)
        plan.body = _with_clears(plan.body, {n for _, _, n in merges})
    return plan


def _with_clears(body, carried):
    """`body` with, after the last reader of each register that may hold a view of a variable's
    value (a variable read, and what non-fresh kernels make of it), an entry clearing it (mode 5).
    Held until the next iteration, such a view made every update of the variable copy its buffer
    (copy on write: state_ops.VariableState.exclusive); the host schedule drops it the same way."""
    views = set()
    for fn, mode, get, out, n_out, it, ins in body:
        if it.deref or (not it.kdef.fresh_outputs and views.intersection(ins)):
            views.update(range(out, out + n_out))
    views -= carried  # the next iteration reads those
    last = {}
    for pos, entry in enumerate(body):
        for r in entry[6]:
            if r in views:
                last[r] = pos
    if not last:
        return body
    clears = collections.defaultdict(list)
    for r, pos in last.items():
        clears[pos].append(r)
    out = []
    for pos, entry in enumerate(body):
        out.append(entry)
        if pos in clears:
            out.append((None, 5, None, -1, 0, entry[5], tuple(sorted(clears[pos]))))
    return tuple(out)


def _inline_kernel(it):
    """The DeviceKernel of a sim device's node (which can run on the calling thread), else None."""
    kernel = getattr(it.fn, "__self__", None)
    if type(kernel).__name__ == "DeviceKernel" and kernel.numpy and getattr(kernel, "run_inline", None):
        return kernel
    return None


def _loop_stream(sf, kernels):
    """The compute stream a loop of device kernels runs on as one launch, or None (a host loop)."""
    streams = {k.stream for k in map(_inline_kernel, kernels) if k is not None}
    if len(streams) > 1:
        raise _Reject(f"{sf.name} runs kernels on several streams")
    return streams.pop() if streams else None


def _is_const(it):
    """A Const in a loop gives the same value every iteration: it runs once, before the loop (hoisted)."""
    return it.op == "Const" and it.kind == SYNC and it.n_data == 0


def _is_alias(it):
    """An Identity only passes its input on (on every device): its consumers read the input's register."""
    return it.op == "Identity" and not it.deref and it.n_data == 1 and (
        it.kind == SYNC or (it.frame.parent is not None and _inline_kernel(it) is not None))


def _entry(it, data_in, reg, base):
    """(fn, mode, getter, out register, n_out, item, input registers) where mode 0/1/2 is a
    plain kernel of 0/1/more inputs, 3 one that needs the step or reads a variable, and 4
    an asynchronous kernel of the root frame (5: no kernel, clears the registers `ins`; see
    _with_clears; 7: an Identity of a variable, the variable's read, getter its register).
    A device kernel in a loop runs inline: the loop is one launch on the device's compute
    stream (mode 6, fn(step, getter(regs)), the getter giving the inputs as a sequence,
    variables read)."""
    ins = tuple(reg(s, k) for s, k in data_in[it.id])
    out = base[it.id]
    fn = it.fn
    get = operator.itemgetter(*ins) if ins else None
    if it.kind == ASYNC:
        inline = _inline_kernel(it)
        if it.frame.parent is not None and inline is not None:
            fn, mode, get = inline.run_inline, 6, _args_getter(it, ins)
        else:
            mode = 4
    elif it.kind == SYNC and it.deref == (0,) and it.op in _FORWARDS:
        mode, get = 7, ins[0]  # a read of a variable passed on: the read is the value
    else:
        mode = 3 if (it.kind == STEP or it.deref) else min(len(ins), 2)
    return (fn, mode, get, out, it.n_out, it, ins)


_FORWARDS = frozenset({"Identity", "Snapshot", "StopGradient", "PreventGradient"})  # kernels returning their input


def _args_getter(it, ins):
    """regs -> the inputs of `it` as a sequence, variables read (an inline device kernel's arguments)."""
    if it.deref:
        return functools.partial(_read_args, it, ins)
    if len(ins) > 1:
        return operator.itemgetter(*ins)
    if ins:
        r, = ins
        return lambda regs: (regs[r],)
    return lambda regs: ()


def _read_args(it, ins, regs):
    args = [regs[r] for r in ins]
    for j in it.deref:
        args[j] = args[j].read(it.name)
    return args


_CONTROL_FLOW_OPS = frozenset({"Enter", "RefEnter", "Exit", "RefExit", "NextIteration", "RefNextIteration",
                               "Merge", "RefMerge", "Switch", "RefSwitch", "LoopCond", "ControlTrigger"})


def run_class(ex, step):
    """The run of `ex` for `step`: compiled unless the step is traced."""
    if step.stats is not None:
        return FrameRun(ex, step)
    return CompiledLoopRun(ex, step)


class CompiledLoopRun(compiled_schedule.CompiledRun):
    """One compiled-loop executor running one step.

    Without asynchronous units the units run in order. With them, a pass runs
    (or starts) every unit whose dependencies are complete and leaves the rest
    for the next pass; when nothing more can run, the run waits, and the done
    of an asynchronous unit resumes it on the thread that calls done. So, as in
    the dataflow executor, a `_Recv` never holds up work that does not need it
    (another partition may be waiting for that work)."""

    __slots__ = ("iterations", "lock", "todo", "complete", "outstanding", "completions", "waiting")

    def __init__(self, ex, step):
        self.ex = ex
        self.step = step
        plan = ex.loop_plan
        self.regs = [None] * plan.num_registers
        self.running = False
        self.failed = False
        self.reported = False
        self.position = 0
        self.iterations = 0
        if plan.has_async:
            self.lock = threading.Lock()
            self.todo = range(len(plan.units))  # units not run yet
            self.complete = bytearray(len(plan.units))
            self.outstanding = 0    # asynchronous units started and not done
            self.completions = 0    # asynchronous units done so far
            self.waiting = False    # the run waits for a done to resume it

    def _loop(self, deferred):
        ended = self._run_passes(deferred) if self.ex.loop_plan.has_async else self._run_units(deferred)
        if ended:
            self.running = False
            self.regs = None
            self.ex._note_run()
            self._report_done()

    def _run_units(self, deferred):
        """Runs the units in order (none is asynchronous); True: the run has ended."""
        regs = self.regs
        step = self.step
        ex = self.ex
        profiling = ex.runs_to_profile > 0
        release = ex.runner is not None
        for pos, unit in enumerate(ex.loop_plan.units):
            self.position = pos
            if step.error is not None:
                self.failed = True
                return True
            if deferred and release and (type(unit) is LoopPlan or unit[5].expensive):
                compiled_schedule._release(ex, deferred)  # a loop may be long: the other partitions go on
            if not self._run_unit(unit, regs, step, profiling):
                return True
        self.position = len(ex.loop_plan.units)
        return True

    def _run_passes(self, deferred):
        """Passes over the units not run yet until all have run and every asynchronous
        one is done (True), or until the run must wait for a done (False)."""
        plan = self.ex.loop_plan
        regs, step, complete = self.regs, self.step, self.complete
        profiling = self.ex.runs_to_profile > 0
        while True:
            seen = self.completions
            left = []
            for pos in self.todo:
                if step.error is not None or self.failed:
                    self.failed = True
                    left = []
                    break
                if not all(complete[d] for d in plan.deps[pos]):
                    left.append(pos)
                    continue
                unit = plan.units[pos]
                if plan.is_async[pos]:
                    self._start(pos, unit)
                elif self._run_unit(unit, regs, step, profiling):
                    complete[pos] = 1
                    self.position += 1
            self.todo = left
            with self.lock:
                if not left and not self.outstanding:
                    return True
                if self.completions == seen:
                    self.waiting = True
                    return False

    def _run_unit(self, unit, regs, step, profiling):
        if type(unit) is LoopPlan:
            return self._run_loop(unit, regs, step, profiling)
        return self._run_entries((unit,), regs, step, profiling)

    def _start(self, pos, unit):
        """Starts an asynchronous unit; its done marks it complete and resumes a waiting run."""
        with self.lock:
            self.outstanding += 1
        done = functools.partial(self._done, pos, unit)
        try:
            if type(unit) is LoopPlan:
                # a loop of device kernels is one launch on the device's compute stream: its kernels
                # run there inline, with no hand-off between the executor and the stream
                unit.stream.then_launch(self._loop_on_stream, unit, done)
            else:
                fn, _, _, _, _, it, ins = unit
                args = [self.regs[r] for r in ins]
                for j in it.deref:
                    args[j] = args[j].read(it.name)
                fn(self.step, args, done)
        except Exception as exc:  # noqa: BLE001 - becomes the step's error
            done(exc)

    def _done(self, pos, unit, err, out=None, is_dead=False):
        # (a _Recv passes the rendezvous's is_dead on; compiled loops take no dead receives)
        if is_dead:
            out = None
        if err is _REPORTED:
            self.failed = True
        elif err is not None:
            self._fail_item(unit.pred_node if type(unit) is LoopPlan else unit[5], err)
        elif type(unit) is not LoopPlan:
            n_out, out_reg = unit[4], unit[3]
            if n_out == 1:
                self.regs[out_reg] = out
            elif n_out > 1:
                for k in range(n_out):
                    self.regs[out_reg + k] = out[k]
        with self.lock:
            self.complete[pos] = 1
            self.position += 1
            self.outstanding -= 1
            self.completions += 1
            resume, self.waiting = self.waiting, False
        if resume:
            ge.resume(self)

    def _loop_on_stream(self, plan, done):
        # The loop's buffers: what one iteration frees, the next takes again (executor/reuse_pool.py)
        executor = plan.stream.executor
        pool = executor.open_reuse_pool()
        try:
            with np.errstate(all="ignore"):  # TF reports inf/nan silently; so do kernels here
                ok = self._run_loop(plan, self.regs, self.step, self.ex.runs_to_profile > 0)
        except Exception as exc:  # noqa: BLE001 - never the stream's error: the step's
            ok = exc
        finally:
            executor.close_reuse_pool(pool)
        ge.run_device_callback(self.ex.device, done, None if ok is True else _REPORTED if ok is False else ok)

    # -- loops and kernels ---------------------------------------------------------------
    def _run_loop(self, plan, regs, step, profiling):
        """Runs one loop to its end; False (the step's error reported) when a kernel fails.
        The kernel calls are inlined: the hot loop of a compiled loop."""
        for m, init, _ in plan.merges:
            regs[m] = regs[init]
        if not self._run_entries(plan.before, regs, step, profiling):
            return False
        cond, body, pred_reg, moves = plan.cond, plan.body, plan.pred_reg, plan.moves
        first = plan.first  # run at the first iteration (not before: a loop may run none)
        on_device = plan.stream is not None
        timed = self._run_timed
        count = 0
        it = None
        try:
            while True:
                if step.error is not None:
                    self.failed = True
                    return False
                if profiling:
                    if not timed(cond, regs, step):
                        return False
                else:
                    for fn, mode, get, out_reg, n_out, it, ins in cond:
                        if mode == 6:
                            out = fn(step, get(regs))
                        elif mode == 2:
                            out = fn(*get(regs))
                        elif mode == 1:
                            out = fn(get(regs))
                        elif mode == 0:
                            out = fn()
                        else:
                            out = _call(it, fn, ins, regs, step)
                        if n_out == 1:
                            regs[out_reg] = out
                        elif n_out > 1:
                            for k in range(n_out):
                                regs[out_reg + k] = out[k]
                pred = regs[pred_reg]
                if type(pred) is not _BOOL:  # (the common case: a comparison's numpy bool)
                    if on_device and isinstance(pred, DeviceTensor):
                        pred = _device_value(pred, plan.stream.executor)
                    if getattr(pred, "ndim", 0) != 0:
                        it = plan.pred_node
                        raise errors.InvalidArgumentError(
                            f"The second input must be a scalar, but it has shape {list(pred.shape)}", node=it.name)
                if not pred:
                    break
                count += 1
                if first:
                    if not self._run_entries(first, regs, step, profiling):
                        return False
                    first = ()
                if profiling:
                    if not timed(body, regs, step):
                        return False
                else:
                    for fn, mode, get, out_reg, n_out, it, ins in body:
                        if mode == 6:
                            out = fn(step, get(regs))
                        elif mode == 2:
                            out = fn(*get(regs))
                        elif mode == 1:
                            out = fn(get(regs))
                        elif mode == 0:
                            out = fn()
                        elif mode == 7:
                            out = regs[get].read(it.name)
                        elif mode == 3:
                            out = _call(it, fn, ins, regs, step)
                        else:  # 5: the last reader of a variable's view has run
                            for r in ins:
                                regs[r] = None
                            continue
                        if n_out == 1:
                            regs[out_reg] = out
                        elif n_out > 1:
                            for k in range(n_out):
                                regs[out_reg + k] = out[k]
                if moves is None:
                    _parallel_moves(plan.merges, regs)
                else:
                    for target, source in moves:
                        regs[target] = regs[source]
        except Exception as exc:  # noqa: BLE001 - becomes the step's error
            self._fail_item(it, exc)
            return False
        finally:
            self.iterations += count
        for out, src in plan.exits:
            regs[out] = regs[src]
        return True

    def _run_entries(self, entries, regs, step, profiling):
        """Runs kernels in order; False (the step's error reported) when one fails."""
        if profiling:
            return self._run_timed(entries, regs, step)
        it = None
        try:
            for fn, mode, get, out_reg, n_out, it, ins in entries:
                if mode == 1:
                    out = fn(get(regs))
                elif mode == 2:
                    out = fn(*get(regs))
                elif mode == 0:
                    out = fn()
                elif mode == 6:
                    out = fn(step, get(regs))
                else:
                    out = _call(it, fn, ins, regs, step)
                if n_out == 1:
                    regs[out_reg] = out
                elif n_out > 1:
                    for k in range(n_out):
                        regs[out_reg + k] = out[k]
        except Exception as exc:  # noqa: BLE001 - becomes the step's error
            self._fail_item(it, exc)
            return False
        return True

    def _run_timed(self, entries, regs, step):
        now = ge._now_ns
        for fn, mode, get, out_reg, n_out, it, ins in entries:
            if mode == 5:
                for r in ins:
                    regs[r] = None
                continue
            t0 = now()
            try:
                if mode == 6:
                    out = fn(step, get(regs))
                elif mode == 3 or mode == 7:
                    out = _call(it, fn, ins, regs, step)
                else:
                    out = fn(*[regs[r] for r in ins])
            except Exception as exc:  # noqa: BLE001
                self._fail_item(it, exc)
                return False
            ge.note_cost(it, now() - t0)
            if n_out == 1:
                regs[out_reg] = out
            elif n_out > 1:
                for k in range(n_out):
                    regs[out_reg + k] = out[k]
        return True

    def _fail_item(self, it, exc):
        self.failed = True
        self.step.report_error(ge._kernel_error(it, exc, self.step))

    def __repr__(self):
        return (f"<CompiledLoopRun {self.ex.device.name} step {self.step.step_id}: "
                f"{self.position}/{len(self.ex.loop_plan.units)} units, {self.iterations} iterations>")


def _device_value(tensor, executor):
    """A device tensor's array, read on its device's compute stream (the caller's thread, of
    `executor`) once the copy that made it, if any (a constant's upload), is done."""
    ready = getattr(tensor, "ready", None)
    if ready is not None:
        ready.synchronize()
    elif getattr(tensor, "array", None) is not None and tensor.executor is executor:
        return tensor.array  # (the predicate a kernel of the loop just made: read every iteration)
    return tensor.as_array()


_REPORTED = object()
_BOOL = np.bool_  # an asynchronous unit's error that is the step's already


def _parallel_moves(merges, regs):
    """Each loop variable takes its NextIteration's value, all at once (some read another's)."""
    values = [regs[n] for _, _, n in merges]
    for (m, _, _), v in zip(merges, values):
        regs[m] = v


def _moves(merges):
    """The (target, source) register moves of an iteration's end in an order that is the same as
    moving all at once, or None when there is none (a source is an earlier move's target)."""
    moves = tuple((m, n) for m, _, n in merges if m != n)
    targets = set()
    for m, n in moves:
        if n in targets:
            return None
        targets.add(m)
    return moves


def _call(it, fn, ins, regs, step):
    """A kernel that needs the step or reads variables."""
    args = [regs[r] for r in ins]
    for j in it.deref:
        args[j] = args[j].read(it.name)
    return fn(*args) if it.kind == SYNC else fn(step, *args)
