"""The frame-aware propagator: runs partitions with control flow (TF's
ExecutorState with frames; graph_executor.py keeps the simple propagator
for everything else).

A value is identified by (node, frame, iteration). A *frame* is one
execution of a while loop (the root frame is the step itself); it holds
*iterations*, each with its own input slots, pending counts and dead
counts for the frame's nodes. The static part (which frame each node is in,
slot layout, initial counts, out edges) is computed once per executor
(`prepare`); a step allocates an iteration's arrays when it starts and drops
them when it is done, so per-iteration values are freed as loops advance.

Propagation follows TF's rules (reference §10.3-10.4):

* a node with a dead input does not run; its outputs are dead. A node waits
  for all its inputs even when it already knows it is dead. `_Send`/`_Recv`
  run even when dead, so deadness crosses devices (`is_dead` in the
  rendezvous); a dead-tagged `_Retval` is a fetch with no value: an error.
* Merge: pending = 1 + 2 x (control inputs); the first live data input runs
  it, later ones are ignored; it runs dead when all data inputs are dead
  (or a dead Enter feeds it: a loop in an untaken branch).
* Switch emits one live and one dead output (its kernel returns None on the
  untaken side); a `_Recv` of a dead tensor returns None too.
* Enter sends its value into iteration 0 of the child frame (made on first
  use for this parent iteration); a constant Enter (loop invariant) into
  every iteration, present and future. Exit sends into the parent frame; a
  dead Exit is remembered if it is in the newest iteration and propagated
  when the frame ends. NextIteration sends into the next iteration, starting
  it, unless `parallel_iterations` are already in flight: then it waits.
* An iteration is done when it has no outstanding nodes or child frames and
  the previous one is done; a frame is done when all its Enters arrived and
  its iterations are done. Done iterations and frames are deleted at once.

Frame ids are a 64-bit blake2b hash of (parent frame id, parent iteration,
frame name), so every device derives the same id for the same loop
execution and their rendezvous keys (`;frame_id:iter_id`) match.
"""
import functools
import hashlib

from .. import errors
from ..framework.op_categories import (CONTROL_FLOW_OPS, ENTER_OPS, EXIT_OPS, MERGE_OPS, NEXT_ITERATION_OPS,
                                       RECV_OPS, SWITCH_OPS, TRANSFER_OPS)
from ..framework.registry import ASYNC, SYNC
from ..partition import control_flow
from . import graph_executor
from .graph_executor import _now_ns, _Run
from .step import FrameStep

NORMAL, ENTER, EXIT, NEXT_ITERATION = 0, 1, 2, 3
_CF_KIND = {**dict.fromkeys(ENTER_OPS, ENTER), **dict.fromkeys(EXIT_OPS, EXIT),
            **dict.fromkeys(NEXT_ITERATION_OPS, NEXT_ITERATION)}
_MAY_EMIT_NONE = SWITCH_OPS | RECV_OPS  # their None output is a dead one


def needs_frames(nodes):
    """Frames are needed for control-flow ops, and for a `_Recv` that may bring a dead tensor."""
    for n in nodes:
        if n.op in CONTROL_FLOW_OPS:
            return True
        if n.op in RECV_OPS and n.attrs.get("_may_be_dead"):
            return True
    return False


@functools.lru_cache(maxsize=65536)
def frame_id(parent_id, parent_iter, frame_name):
    """The id of the frame `frame_name` entered from iteration `parent_iter` of frame `parent_id`."""
    digest = hashlib.blake2b(f"{parent_id};{parent_iter};{frame_name}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") or 1  # 0 is the root frame


# -- static structure ------------------------------------------------------------------------

class StaticFrame:
    """One frame of the partition: its nodes, their slot layout and initial counts."""

    __slots__ = ("name", "parent", "items", "num_slots", "initial_pending", "num_enters", "is_root")

    def __init__(self, name, parent):
        self.name = name
        self.parent = parent
        self.items = []
        self.num_slots = 0
        self.initial_pending = []
        self.num_enters = 0
        self.is_root = parent is None

    def __repr__(self):
        return f"<StaticFrame {self.name or '_root'}: {len(self.items)} nodes>"


def prepare(ex, srcs, data_in, ctrl_in):
    """Adds the frame structure to the executor `ex` (whose items are built).

    `srcs[i]`: item ids of item i's inputs; `data_in[i]`: (src id, src slot)
    per data input; `ctrl_in[i]`: src ids of its control inputs."""
    items = ex.items
    device = ex.device
    home, frames = control_flow.control_flow_info([it.node for it in items], srcs)
    statics = {}
    for name, frame in sorted(frames.items(), key=lambda kv: kv[1].depth):
        statics[name] = StaticFrame(name, statics[frame.parent.name] if frame.parent is not None else None)
    for it in items:
        sf = statics[home[it.id].name]
        it.frame = sf
        it.local = len(sf.items)
        sf.items.append(it)
        n_data = len(data_in[it.id])
        it.n_data = n_data
        it.fstart = sf.num_slots
        it.fend = sf.num_slots + n_data
        it.fnones = (None,) * n_data
        sf.num_slots += n_data
        it.cf = _CF_KIND.get(it.op, NORMAL)
        it.is_merge = it.op in MERGE_OPS
        it.is_transfer = it.op in TRANSFER_OPS
        it.is_trigger = it.op == "ControlTrigger"
        it.is_retval = it.op == "_Retval"
        it.is_const_enter = it.cf == ENTER and bool(it.node.attrs.get("is_constant"))
        it.child = None
        it.parallel = 1
        sf.initial_pending.append(1 + 2 * len(ctrl_in[it.id]) if it.is_merge else n_data + len(ctrl_in[it.id]))
        if it.is_retval and not sf.is_root:
            raise errors.InvalidArgumentError(
                f"Cannot fetch '{it.node.input[0]}': it is inside the while loop '{sf.name}'; only the loop's "
                f"results (its Exit outputs) can be fetched", node=it.name, device=device.name)
    for it in items:
        if it.cf == ENTER:
            it.child = statics[it.node.attrs["frame_name"]]
            it.child.num_enters += 1
            it.parallel = max(1, int(it.node.attrs.get("parallel_iterations", 10)))
    edges = [[] for _ in items]
    for it in items:  # (consumer, its local index, its input slot or -1, output index or -1, consumer is Merge)
        for pos, (src, slot) in enumerate(data_in[it.id]):
            edges[src].append((it, it.local, it.fstart + pos, slot, it.is_merge))
        for src in ctrl_in[it.id]:
            edges[src].append((it, it.local, -1, -1, it.is_merge))
    for it in items:
        it.edges = tuple(edges[it.id])
        # The fast path: one output that is never "no value", no Merge consumer.
        it.fast = it.n_out <= 1 and it.op not in _MAY_EMIT_NONE and not any(e[4] for e in it.edges)
        it.fslots = tuple(e[2] for e in it.edges if e[2] >= 0) if it.fast else ()
        it.fsucc = tuple(e[0] for e in it.edges) if it.fast else ()
    root = statics[""]
    ex.root_frame = root
    ex.frame_roots = tuple(it for it in root.items if root.initial_pending[it.local] == 0 and not it.is_merge)
    ex.static_frames = statics


# -- per-step state ------------------------------------------------------------------------

class IterationState:
    """One iteration of one frame: input slots, pending and dead counts."""

    __slots__ = ("iter", "inputs", "pending", "dead_count", "outstanding_ops", "outstanding_frames", "children")

    def __init__(self, i, static):
        self.iter = i
        self.inputs = [None] * static.num_slots
        self.pending = static.initial_pending.copy()
        self.dead_count = [0] * len(static.items)
        self.outstanding_ops = 0      # nodes made ready in this iteration and not yet done
        self.outstanding_frames = 0   # child frames entered from this iteration, not yet done
        self.children = None          # StaticFrame -> FrameState entered from this iteration

    def __repr__(self):
        return f"<iteration {self.iter}: {self.outstanding_ops} ops, {self.outstanding_frames} frames outstanding>"


class FrameState:
    """One execution of a while loop (or the root frame)."""

    __slots__ = ("static", "name", "frame_id", "parent", "parent_iter", "max_parallel", "iterations",
                 "iteration_count", "num_outstanding_iterations", "num_pending_inputs", "dead_exits",
                 "next_iter_roots", "inv_values")

    def __init__(self, static, fid, parent, parent_iter, max_parallel):
        self.static = static
        self.name = static.name
        self.frame_id = fid
        self.parent = parent
        self.parent_iter = parent_iter
        self.max_parallel = max_parallel
        self.iterations = {0: IterationState(0, static)}
        self.iteration_count = 0          # the newest iteration started
        self.num_outstanding_iterations = 1
        self.num_pending_inputs = static.num_enters
        self.dead_exits = []
        self.next_iter_roots = []         # (NextIteration item, value) waiting for a free iteration slot
        self.inv_values = []              # (constant Enter item, value, dead): given to every iteration

    def __repr__(self):
        return (f"<Frame {self.name or '_root'} id={self.frame_id:016x} live iterations "
                f"{sorted(self.iterations)}, {self.num_pending_inputs} enters pending>")


class FrameRun(_Run):
    """One executor running one step with frames (see module doc)."""

    __slots__ = ("root",)

    def __init__(self, ex, step):
        super().__init__(ex, step)  # the shared state (lock, completions, registration with the step)
        self.inputs = self.pending = None  # the frames' iterations hold the slots and counts
        self.remaining = len(ex.root_frame.items)   # root-frame nodes not yet done
        root = self.root = FrameState(ex.root_frame, 0, None, None, 1)
        ist = root.iterations[0]
        ready = self.ready
        ready.clear()
        for it in ex.frame_roots:
            ready.append((it, root, ist, False))
        ist.outstanding_ops = len(ready)

    # -- the loop -------------------------------------------------------------------------
    def _loop(self, deferred):
        ex = self.ex
        ready = self.ready
        popleft = ready.popleft
        push = ready.append
        step = self.step
        stats = step.stats
        profiling = ex.runs_to_profile > 0
        timed = profiling or stats is not None
        release = ex.runner is not None
        propagate = self._propagate
        activate = self._activate_live
        while True:
            while ready and not self.failed:
                tag = popleft()
                it, frame, ist, dead = tag
                if deferred and release and it.expensive:
                    self._release(deferred)
                s, e = it.fstart, it.fend
                if s != e:
                    inputs = ist.inputs
                    args = inputs[s:e]
                    inputs[s:e] = it.fnones
                else:
                    args = ()
                if dead:
                    if not it.is_transfer:
                        if it.is_retval:
                            self._fail(it, _dead_fetch_error(it))
                            break
                        propagate(it, frame, ist, None, True)
                        continue
                    args = it.fnones  # a dead transfer sends / receives "no value"
                elif it.deref and not self._deref(it, args):
                    break
                kind = it.kind
                if kind == ASYNC:
                    self._launch_in_frame(tag, step, args)
                    continue
                if timed:
                    t0 = _now_ns()
                try:
                    out = it.fn(*args) if kind == SYNC else it.fn(_step_for(it, frame, ist, step), *args)
                except Exception as exc:  # noqa: BLE001
                    self._fail(it, exc)
                    break
                if timed:
                    self._timed(it, t0, out, profiling, stats)
                if it.cf or dead:  # (a dead node here is a transfer: it ran to carry the deadness)
                    propagate(it, frame, ist, out, dead)
                    continue
                # The common case, inline: a live node of no special kind.
                if it.fast:
                    pending = ist.pending
                    if it.fslots:
                        inputs = ist.inputs
                        for slot in it.fslots:
                            inputs[slot] = out
                    n = ist.outstanding_ops - 1
                    for dst in it.fsucc:
                        d = dst.local
                        p = pending[d] - 1
                        pending[d] = p
                        if not p:
                            push((dst, frame, ist, ist.dead_count[d] > 0 and not dst.is_trigger))
                            n += 1
                else:
                    n = ist.outstanding_ops + activate(it, frame, ist, out) - 1
                ist.outstanding_ops = n
                if frame.parent is None:
                    self.remaining -= 1
                elif not n and not ist.outstanding_frames:
                    self._retire_iteration(frame, ist)
            more, finished = self._complete(stats)
            if not more:
                break
        if finished:
            self._finish()

    def _deref(self, it, args):
        """Reads the variables `it` takes by value into `args`; False (and the step failed) on an error."""
        try:
            for j in it.deref:
                if args[j] is not None:
                    args[j] = args[j].read(it.name)
        except Exception as exc:  # noqa: BLE001 - becomes the step's error
            self._fail(it, exc)
            return False
        return True

    def _launch_in_frame(self, tag, step, args):
        """Starts an async kernel (a transfer inside a loop keys its value by frame and iteration)."""
        it, frame, ist, _ = tag
        self._launch(it, _step_for(it, frame, ist, step), args, tag)

    def _complete(self, stats):
        """As _Run._complete, for completions tagged with their frame and iteration."""
        comps, finished = self._take_completions()
        if comps is None:
            return False, finished
        for tag, err, out, t0 in comps:
            self.async_outstanding -= 1
            if self.failed:
                continue
            it, frame, ist, dead = tag
            if err is not None:
                self._fail(it, err)
                continue
            if stats is not None:
                self._record(it, t0, out)
            self._propagate(it, frame, ist, out, dead)
        return True, False

    # -- propagation ------------------------------------------------------------------------
    def _propagate(self, it, frame, ist, out, dead):
        """Delivers a finished node's outputs (by its kind, see module doc), then
        retires the node from its iteration, which may end the iteration and frame."""
        cf = it.cf
        if cf == NORMAL:
            self._activate(it, frame, ist, out, dead)
        elif cf == ENTER:
            child = self._child_frame(frame, ist, it)
            if it.is_const_enter:
                child.inv_values.append((it, out, dead))
                iterations = child.iterations
                for i in range(child.iteration_count + 1):
                    self._activate(it, child, iterations[i], out, dead)
            else:
                self._activate(it, child, child.iterations[0], out, dead)
            child.num_pending_inputs -= 1
            if child.num_pending_inputs == 0:
                first = child.iterations.get(0)
                if first is not None and not first.outstanding_ops and not first.outstanding_frames:
                    if self._cleanup_iterations(child, 0):
                        self._delete_frame(child)
        elif cf == EXIT:
            if dead:
                if ist.iter == frame.iteration_count:
                    frame.dead_exits.append(it)
            else:
                self._activate(it, frame.parent, frame.parent_iter, out, False)
        elif not dead:  # NextIteration; a dead one stops the dead loop body here
            i = ist.iter
            if i == frame.iteration_count and frame.num_outstanding_iterations == frame.max_parallel:
                frame.next_iter_roots.append((it, out))
            else:
                if i == frame.iteration_count and not self._increment_iteration(frame):
                    return  # the step is over
                self._activate(it, frame, frame.iterations[i + 1], out, False)
        n = ist.outstanding_ops - 1
        ist.outstanding_ops = n
        if frame.parent is None:
            self.remaining -= 1
        elif not n and not ist.outstanding_frames:
            self._retire_iteration(frame, ist)

    def _retire_iteration(self, frame, ist):
        if self._cleanup_iterations(frame, ist.iter):
            self._delete_frame(frame)

    def _activate(self, it, frame, ist, out, dead):
        """Hands `it`'s outputs to its consumers in iteration `ist` of `frame`;
        queues the ones that became ready (TF's ActivateNodes)."""
        if not dead:
            ist.outstanding_ops += self._activate_live(it, frame, ist, out)
            return
        pending = ist.pending
        dead_count = ist.dead_count
        push = self.ready.append
        activated = 0
        for dst, d, slot, k, merge in it.edges:
            if merge:
                if k < 0:
                    p = pending[d] - 2
                    pending[d] = p
                    dst_dead = dead_count[d] == dst.n_data
                    if not (p == 0 or (p == 1 and dst_dead)):
                        continue
                else:
                    c = dead_count[d] + 1
                    dead_count[d] = c
                    # A dead Enter kills the Merge: the loop sits in an untaken branch.
                    dst_dead = c == dst.n_data or it.cf == ENTER
                    if not (pending[d] == 1 and dst_dead):
                        continue
            else:
                dead_count[d] += 1
                p = pending[d] - 1
                pending[d] = p
                if p:
                    continue
                dst_dead = True
            push((dst, frame, ist, dst_dead and not dst.is_trigger))
            activated += 1
        ist.outstanding_ops += activated

    def _activate_live(self, it, frame, ist, out):
        """`_activate` for a live node; returns how many consumers became ready
        (the caller adds them to the iteration's outstanding ops)."""
        pending = ist.pending
        dead_count = ist.dead_count
        inputs = ist.inputs
        push = self.ready.append
        activated = 0
        if it.fast:
            for slot in it.fslots:
                inputs[slot] = out
            for dst in it.fsucc:
                d = dst.local
                p = pending[d] - 1
                pending[d] = p
                if not p:
                    push((dst, frame, ist, dead_count[d] > 0 and not dst.is_trigger))
                    activated += 1
            return activated
        single = it.n_out == 1
        for dst, d, slot, k, merge in it.edges:
            if merge:
                if k < 0:
                    p = pending[d] - 2
                    pending[d] = p
                    dst_dead = dead_count[d] == dst.n_data
                    if not (p == 0 or (p == 1 and dst_dead)):
                        continue
                else:
                    v = out if single else out[k]
                    if v is not None:
                        p = pending[d]
                        pending[d] = p & ~1  # a live input has arrived
                        if p & 1:
                            inputs[slot] = v
                        if p != 1:
                            continue
                        dst_dead = False
                    else:
                        c = dead_count[d] + 1
                        dead_count[d] = c
                        dst_dead = c == dst.n_data
                        if not (pending[d] == 1 and dst_dead):
                            continue
            else:
                if k >= 0:
                    v = out if single else out[k]
                    if v is None:  # the untaken side of a Switch, a dead _Recv
                        dead_count[d] += 1
                    else:
                        inputs[slot] = v
                p = pending[d] - 1
                pending[d] = p
                if p:
                    continue
                dst_dead = dead_count[d] > 0
            push((dst, frame, ist, dst_dead and not dst.is_trigger))
            activated += 1
        return activated

    def _child_frame(self, frame, ist, enter):
        children = ist.children
        if children is None:
            children = ist.children = {}
        static = enter.child
        child = children.get(static)
        if child is None:
            child = FrameState(static, frame_id(frame.frame_id, ist.iter, static.name), frame, ist, enter.parallel)
            children[static] = child
            ist.outstanding_frames += 1
        return child

    def _increment_iteration(self, frame):
        """Starts the frame's next iteration; False if the step has failed meanwhile."""
        if self.step.error is not None:
            # The step failed or timed out (an infinite loop): stop starting iterations.
            self.failed = True
            self.ready.clear()
            return False
        frame.iteration_count += 1
        i = frame.iteration_count
        new = IterationState(i, frame.static)
        frame.iterations[i] = new
        frame.num_outstanding_iterations += 1
        frame.dead_exits = []
        roots = frame.next_iter_roots
        if roots:
            frame.next_iter_roots = []
            for it, out in roots:
                self._activate(it, frame, new, out, False)
        for it, out, dead in frame.inv_values:
            self._activate(it, frame, new, out, dead)
        return True

    def _cleanup_iterations(self, frame, i):
        """Deletes the done iterations from `i` on; True if the frame is done."""
        iterations = frame.iterations
        while i <= frame.iteration_count:
            ist = iterations.get(i)
            if ist is None or ist.outstanding_ops or ist.outstanding_frames:
                break
            if i == 0:
                if frame.num_pending_inputs:
                    break
            elif (i - 1) in iterations:
                break
            del iterations[i]
            frame.num_outstanding_iterations -= 1
            i += 1
            if frame.next_iter_roots and not self._increment_iteration(frame):
                return False
        return frame.num_pending_inputs == 0 and frame.num_outstanding_iterations == 0

    def _delete_frame(self, frame):
        """A finished frame: its dead exits reach the parent, then it is dropped."""
        while True:
            parent, pist = frame.parent, frame.parent_iter
            for it in frame.dead_exits:
                self._activate(it, parent, pist, None, True)
            del pist.children[frame.static]
            pist.outstanding_frames -= 1
            if parent.parent is None or pist.outstanding_ops or pist.outstanding_frames:
                return
            if not self._cleanup_iterations(parent, pist.iter):
                return
            frame = parent

    # -- the end ---------------------------------------------------------------------------
    def _finish(self):
        err = None
        root_iter = self.root.iterations.get(0)
        if not self.failed and (self.remaining != 0 or (root_iter is not None and root_iter.outstanding_frames)):
            waiting = [it.name for it in self.ex.root_frame.items if root_iter.pending[it.local] > 0][:8]
            frames = list((root_iter.children or {}).values())[:4]
            err = errors.InternalError(f"Executor for {self.ex.device.name} stalled with {self.remaining} nodes not "
                                       f"run; waiting: {waiting}; frames still open: {frames}",
                                       device=self.ex.device.name)
        self.root = None
        self.ex._note_run()
        self._report_done(err)

    def __repr__(self):
        return f"<FrameRun {self.ex.device.name} step {self.step.step_id}: {self.remaining} root nodes left>"


def _step_for(it, frame, ist, step):
    """What a kernel that needs the step gets: a transfer inside a loop keys
    its value by frame and iteration."""
    if it.is_transfer and frame.parent is not None:
        return FrameStep(step, frame.frame_id, ist.iter)
    return step


def _dead_fetch_error(it):
    index = it.node.attrs.get("index", 0)
    return errors.InvalidArgumentError(
        f"Retval[{index}] does not have value: the fetch '{_fetched_tensor(it.name, index)}' is dead (it is on "
        f"the side of a cond or Switch that was not taken in this step)", node=it.name)


def _fetched_tensor(retval_name, index):
    """The tensor a `_retval_<op>_<output>_<index>` node fetches (see partition/subgraph.py)."""
    stem = retval_name[len("_retval_"):] if retval_name.startswith("_retval_") else retval_name
    suffix = f"_{index}"
    if stem.endswith(suffix):
        stem = stem[:-len(suffix)]
    op, _, slot = stem.rpartition("_")
    return f"{op}:{slot}" if op and slot.isdigit() else retval_name

