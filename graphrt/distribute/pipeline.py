"""Pipeline parallelism: GPipe and 1F1B schedules built as one graph.

    pipe = tf.distribute.pipeline([stage0, stage1, stage2, stage3], devices, inputs=x, labels=y,
                                  loss_fn=loss_fn, micro_batches=8, schedule="1f1b")
    train_op = pipe.minimize(tf.train.GradientDescentOptimizer(0.1))

Stage k runs on devices[k]. The batch is split into M micro-batches; each
stage's forward is built once by calling its function (variables are made
there, once) and copied for the other micro-batches. Each (stage,
micro-batch) backward is its own `gradients` call from the stage's outputs
to its inputs and variables. Gradients are summed over micro-batches as
they come (one running sum per variable), and `minimize` applies them once
per step: the result is the step of the unpipelined model on the whole
batch (the loss is the mean of the micro-batch losses).

The schedule is a list of tasks per device, F(i) and B(i) for micro-batch
i, and it is enforced with control edges: the inputs of a task pass
through Identity ops that wait for the previous task of that device. So
the executor, which runs one kernel at a time per device, follows it:

    gpipe  F0 F1 .. F(M-1) B(M-1) .. B0    M micro-batches of activations alive
    1f1b   K-k-1 forwards, then one forward one backward, then the backwards:
           at most K-k micro-batches alive on stage k (PipeDream-flush)

The batch (and the labels) are split on the host. A micro-batch's piece goes
to its device only once that device has started the task before the piece's
forward: one piece is copied ahead while the device computes, and the others
wait on the host, so they do not count against the device's memory.

`bubble_fraction(step_stats, devices)` measures the idle share of the
devices in a traced step (GPipe's textbook figure is (K-1)/(M+K-1)).
"""
import collections

from .. import errors
from ..framework.graph import Tensor, get_default_graph
from ..framework.op_categories import TRANSFER_OPS
from ..framework.op_builder import convert_to_tensor
from ..ops import array_ops, math_ops, nest
from ..recompute import copy as copy_lib
from ..recompute.recompute_grad import _block_ops

SCHEDULES = ("gpipe", "1f1b")


def schedule_tasks(schedule, num_stages, micro_batches):
    """Per stage, the ordered tasks ('F', i) / ('B', i) of a schedule."""
    if schedule not in SCHEDULES:
        raise errors.InvalidArgumentError(f"pipeline schedule must be one of {SCHEDULES}, got {schedule!r}")
    m = micro_batches
    out = []
    for k in range(num_stages):
        if schedule == "gpipe":
            tasks = [("F", i) for i in range(m)] + [("B", i) for i in reversed(range(m))]
        else:
            warmup = min(num_stages - k - 1, m)
            tasks = [("F", i) for i in range(warmup)]
            for i in range(m - warmup):
                tasks += [("F", warmup + i), ("B", i)]
            tasks += [("B", i) for i in range(m - warmup, m)]
        out.append(tasks)
    return out


class Pipeline:
    """What `pipeline` built.

    Attributes:
        loss: mean of the micro-batch losses (the full-batch loss).
        grads_and_vars: (gradient summed over micro-batches, variable) pairs.
        schedule: the schedule's name; `tasks` the per-stage task lists.
        devices, micro_batches.
    """

    def __init__(self, loss, grads_and_vars, schedule, tasks, devices, micro_batches):
        self.loss = loss
        self.grads_and_vars = grads_and_vars
        self.schedule = schedule
        self.tasks = tasks
        self.devices = list(devices)
        self.micro_batches = micro_batches

    def minimize(self, optimizer, global_step=None, name=None):
        """One update of `optimizer` from the accumulated gradients (the train op)."""
        return optimizer.apply_gradients(self.grads_and_vars, global_step=global_step, name=name)

    def __repr__(self):
        return (f"<Pipeline {self.schedule} {len(self.devices)} stages x {self.micro_batches} micro-batches, "
                f"{len(self.grads_and_vars)} variables>")


def pipeline(stage_fns, devices, inputs, labels=None, loss_fn=None, micro_batches=1, schedule="gpipe",
             name="pipeline"):
    """Builds forward and backward of `stage_fns` over `devices` for `micro_batches`.

    Args:
        stage_fns: K callables. Stage 0 gets the micro-batch of `inputs` (a
            tensor, or a tuple given as positional arguments); stage k the
            outputs of stage k-1.
        devices: K device names, one per stage.
        inputs: tensor or tuple of tensors, batch on axis 0.
        labels: optional tensor, split like inputs, given to `loss_fn` on the last device.
        loss_fn: `loss_fn(outputs, labels)` (or `loss_fn(outputs)`) -> scalar
            micro-batch loss; without it the last stage returns that loss.
        micro_batches: M; must divide the batch.
        schedule: "gpipe" or "1f1b".

    Returns:
        A Pipeline (loss, grads_and_vars, minimize()).

    Raises:
        InvalidArgumentError: stage and device counts differ, M does not
            divide the batch, a stage cannot take its predecessor's output.
    """
    stage_fns, devices = list(stage_fns), list(devices)
    if not stage_fns or len(stage_fns) != len(devices):
        raise errors.InvalidArgumentError(f"pipeline needs one device per stage: {len(stage_fns)} stages, "
                                          f"{len(devices)} devices")
    m = int(micro_batches)
    if m < 1:
        raise errors.InvalidArgumentError(f"pipeline micro_batches must be >= 1, got {micro_batches}")
    tasks = schedule_tasks(schedule, len(stage_fns), m)
    g = get_default_graph()
    flat_inputs = [convert_to_tensor(t) for t in nest.flatten(inputs)]
    with g.name_scope(name):
        # The batch is split on the host (the infeed), as GPipe feeds micro-batches: a split on stage 0's
        # device would be work outside the pipeline, before its first forward (the labels' before the last
        # stage's), and each stage then receives only its micro-batches.
        micro_inputs = list(zip(*[_split(g, t, m, "inputs", _host_of(devices[0])) for t in flat_inputs]))
        micro_labels = None if labels is None else _split(g, convert_to_tensor(labels), m, "labels",
                                                          _host_of(devices[-1]))
        hosts = (_host_of(devices[0]), _host_of(devices[-1])) if m > 1 else None
        builder = _Builder(g, stage_fns, devices, micro_inputs, micro_labels, loss_fn, m, name, hosts)
        builder.build(tasks)
        with g.device(devices[-1]):
            loss = math_ops.multiply(math_ops.add_n(builder.losses), 1.0 / m, name="loss")
    grads_and_vars = [(builder.grad_sums[v], v) for v in builder.variables]
    return Pipeline(loss, grads_and_vars, schedule, tasks, devices, m)


def _host_of(device):
    """The CPU of the task of `device` (a name or DeviceSpec string)."""
    from ..framework import device_spec
    spec = device_spec.DeviceSpec.from_string(device if isinstance(device, str) else device.name)
    return spec.replace(device_type="CPU", device_index=0).to_string()


def _split(g, t, m, what, host):
    batch = t.shape[0] if t.shape.ndims else None
    if t.shape.ndims == 0:
        raise errors.InvalidArgumentError(f"pipeline {what} {t.name} is a scalar: there is no batch to split")
    if batch is not None and batch % m:
        raise errors.InvalidArgumentError(f"pipeline: {m} micro-batches do not divide the batch of {batch} of "
                                          f"{what} {t.name}")
    if m == 1:
        return [t]
    with g.device(host):
        return array_ops.split(t, m, axis=0, name=f"split_{what}")


class _Stage:
    __slots__ = ("inputs", "block", "outputs", "variables", "captured")


class _Builder:
    """Builds the tasks in an order that respects data and schedule edges."""

    def __init__(self, g, stage_fns, devices, micro_inputs, micro_labels, loss_fn, m, name, hosts=None):
        self.g, self.fns, self.devices = g, stage_fns, devices
        self.hosts = hosts  # where the batch was split (inputs, labels), or None: not split
        self.micro_inputs, self.micro_labels, self.loss_fn = micro_inputs, micro_labels, loss_fn
        self.m, self.name = m, name
        self.k = len(stage_fns)
        self.stages = [None] * self.k          # template of each stage (its first forward)
        self.fwd = {}                           # (k, i) -> (inputs, outputs)
        self.bwd = {}                           # (k, i) -> gradients of the inputs
        self.last_ops = [[] for _ in range(self.k)]   # ops the next task of a device waits for
        self.task_starts = [[] for _ in range(self.k)]  # the gates of each device's latest task
        self.losses = [None] * m
        self.grad_sums = {}
        self.variables = []

    def build(self, tasks):
        position = [0] * self.k
        while any(p < len(t) for p, t in zip(position, tasks)):
            progressed = False
            for k in range(self.k):
                while position[k] < len(tasks[k]) and self._ready(k, tasks[k][position[k]]):
                    kind, i = tasks[k][position[k]]
                    with self.g.device(self.devices[k]), self.g.name_scope(f"stage{k}/{kind}{i}"):
                        (self._forward if kind == "F" else self._backward)(k, i)
                    position[k] += 1
                    progressed = True
            if not progressed:  # a schedule bug, never the user's input
                raise errors.InternalError(f"pipeline schedule deadlocks at {position}")

    def _ready(self, k, task):
        kind, i = task
        if kind == "F":
            return k == 0 or (k - 1, i) in self.fwd
        return (k, i) in self.fwd and (k == self.k - 1 or (k + 1, i) in self.bwd)

    def _gate(self, k, tensors):
        """The task's inputs, released only when the device's previous task is done."""
        with self.g.control_dependencies(self.last_ops[k]):
            gated = [array_ops.identity(t) for t in tensors]
        self.task_starts[k] = [t.op for t in gated]
        return gated

    def _prefetch(self, k, host, pieces):
        """Micro-batch pieces of the batch split on `host`, sent to device k only once the device
        has started the task before this forward: one micro-batch copied ahead, as a pipeline's
        infeed streams them, instead of all M copied at the step's start and held there until their
        backward (which on stage 0 would keep M micro-batches of inputs alive under 1F1B too)."""
        if not self.task_starts[k]:
            return pieces
        with self.g.device(host), self.g.control_dependencies(self.task_starts[k]):
            return [array_ops.identity(t, name="prefetch") for t in pieces]

    def _forward(self, k, i):
        raw = list(self.micro_inputs[i]) if k == 0 else list(self.fwd[(k - 1, i)][1])
        extra = [self.micro_labels[i]] if k == self.k - 1 and self.micro_labels is not None else []
        if self.hosts is not None:
            if k == 0:
                raw = self._prefetch(k, self.hosts[0], raw)
            if extra:
                extra = self._prefetch(k, self.hosts[1], extra)
        gated = self._gate(k, raw + extra)
        if self.stages[k] is None:
            outputs = self._call_stage(k, gated[:len(raw)], gated[len(raw):])
            self.stages[k] = self._template(k, gated, outputs)
        else:
            stage = self.stages[k]
            mapping = copy_lib.copy_ops(stage.block, dict(zip(stage.inputs, gated)), scope="forward")
            outputs = [mapping.get(t, t) for t in stage.outputs]
        self.fwd[(k, i)] = (gated, outputs)
        if k == self.k - 1:
            self.losses[i] = outputs[0]
        self.last_ops[k] = [t.op for t in outputs]

    def _call_stage(self, k, args, labels):
        fn = self.fns[k]
        what = getattr(fn, "__name__", "stage")
        with self.g.name_scope(None):  # variables and layers keep the names they would have unpipelined
            try:
                out = fn(*args)
                flat = [convert_to_tensor(t) for t in nest.flatten(out)]
                if k == self.k - 1 and self.loss_fn is not None:
                    out = self.loss_fn(*flat, *labels)
                    flat = [convert_to_tensor(out)]
            except (ValueError, TypeError) as e:
                shapes = ", ".join(str(a.shape) for a in args)
                raise errors.InvalidArgumentError(
                    f"pipeline stage {k} ({what}) cannot take its input{'s' if len(args) > 1 else ''} of shape "
                    f"{shapes}{' from stage ' + str(k - 1) if k else ''}: {e}") from None
        if k == self.k - 1 and (len(flat) != 1 or flat[0].shape.ndims != 0):
            raise errors.InvalidArgumentError(
                f"pipeline stage {k} ({what}) is the last: it (or loss_fn) must return a scalar loss, got "
                f"{[str(t.shape) for t in flat]}")
        return flat

    def _template(self, k, inputs, outputs):
        stage = _Stage()
        stage.inputs, stage.outputs = inputs, outputs
        start = min(op._id for op in (t.op for t in inputs))
        stage.block = _block_ops(self.g._ops[start:], inputs, outputs)
        block = set(stage.block)
        stage.captured = [t for op in stage.block for t in op.inputs
                          if t.op not in block and t not in inputs and t.dtype.base_dtype.is_trainable]
        stage.variables = self._variables_behind(stage.captured)
        for v in stage.variables:
            if v not in self.grad_sums:
                self.grad_sums[v] = None
                self.variables.append(v)
        return stage

    def _variables_behind(self, captured):
        from ..ops import variables as variables_lib
        by_op = {v.op: v for v in variables_lib.trainable_variables()}
        found, seen, stack = [], set(), [t.op for t in captured]
        while stack:
            op = stack.pop()
            if op in seen:
                continue
            seen.add(op)
            if op in by_op:
                found.append(by_op[op])
                continue
            stack.extend(t.op for t in op.inputs)
        return sorted(found, key=lambda v: v.op._id)

    def _backward(self, k, i):
        from ..gradients import gradients
        inputs, outputs = self.fwd[(k, i)]
        previous, first_new = self.last_ops[k], len(self.g._ops)
        if k == self.k - 1:
            seed = self._gate(k, [array_ops.fill(array_ops.shape(outputs[0]), 1.0 / self.m)])
        else:
            seed = self._gate(k, self.bwd[(k + 1, i)])
        stage = self.stages[k]
        # Nothing takes the gradient of stage 0's inputs (the batch) nor of the labels, which are gated
        # inputs of the last stage too: computing them would be a matmul or more per micro-batch, wasted.
        diff_inputs = [] if k == 0 else [t for t in inputs[:len(inputs) - self._label_count(k)]
                                         if t.dtype.base_dtype.is_trainable]
        wrt = diff_inputs + stage.variables
        grads = gradients(outputs, wrt, grad_ys=seed, stop_gradients=list(inputs),
                          colocate_gradients_with_ops=True, name="gradients")
        input_grads = grads[:len(diff_inputs)]
        if k > 0:
            prev_out = self.fwd[(k - 1, i)][1]
            by_input = dict(zip(diff_inputs, input_grads))
            self.bwd[(k, i)] = [_dense(by_input.get(t), t) for t in inputs[:len(prev_out)]]
        done = [gr for gr in input_grads if gr is not None]
        for v, gr in zip(stage.variables, grads[len(diff_inputs):]):
            if gr is None:
                continue
            gr = convert_to_tensor(gr)
            total = self.grad_sums[v]
            self.grad_sums[v] = gr if total is None else math_ops.add(total, gr, name="accumulate")
            done.append(self.grad_sums[v])
        self.last_ops[k] = [t.op for t in done] or [t.op for t in seed]
        _gate_roots(self.g._ops[first_new:], previous)

    def _label_count(self, k):
        return 1 if k == self.k - 1 and self.micro_labels is not None else 0


def _gate_roots(new_ops, previous):
    """Makes every op of a task that no other op of the task feeds wait for `previous`.

    Gating the task's inputs is not enough for a backward: the gradients of
    ops such as Square or Mul read only forward activations, and would run
    as soon as those exist, in the middle of the device's later forwards
    (on the last stage, between the forwards of the next micro-batches),
    instead of in the backward's slot of the schedule.
    """
    task = set(new_ops)
    for op in new_ops:
        if not any(t.op in task for t in op.inputs) and not any(c in task for c in op.control_inputs):
            op._add_control_inputs(previous)


def _dense(grad, like):
    if grad is None:
        return array_ops.zeros_like(like)
    return convert_to_tensor(grad)


def bubble_fraction(step_stats, devices):
    """Idle share of `devices` over a traced step: 1 - busy / (K * span), where
    busy is the time a device's compute stream ran kernels (on a host
    device: the time it ran kernels other than transfers) and span runs from the first
    kernel of any of them to the last."""
    names = {_full_name(d) for d in devices}
    intervals = collections.defaultdict(list)
    for dev in step_stats.dev_stats:
        if dev.device not in names:
            continue
        # On an accelerator the compute stream's events are the kernels; the executor's own events for
        # them also count the time they queued. A host device has only the executor's events.
        streamed = any(getattr(ns, "stream", None) == "compute" for ns in dev.node_stats)
        for ns in dev.node_stats:
            if ns.op in TRANSFER_OPS or ns.all_end_rel_micros <= 0 or \
                    (streamed and getattr(ns, "stream", None) != "compute"):
                continue
            intervals[dev.device].append((ns.all_start_micros, ns.all_start_micros + ns.all_end_rel_micros))
    if not intervals:
        raise errors.InvalidArgumentError(f"bubble_fraction: no kernels of {sorted(names)} in the step stats "
                                          "(run with RunOptions(trace_level=FULL_TRACE))")
    start = min(s for iv in intervals.values() for s, _ in iv)
    end = max(e for iv in intervals.values() for _, e in iv)
    busy = sum(_union(iv) for iv in intervals.values())
    return 1.0 - busy / (len(names) * (end - start))


def textbook_bubble(num_stages, micro_batches):
    """GPipe's idle fraction (K-1)/(M+K-1)."""
    return (num_stages - 1) / (micro_batches + num_stages - 1)


def _union(intervals):
    total, cur_s, cur_e = 0, None, None
    for s, e in sorted(intervals):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    return total + (cur_e - cur_s if cur_e is not None else 0)


def _full_name(device):
    from ..framework import device_spec
    spec = device_spec.DeviceSpec.from_string(device if isinstance(device, str) else device.name)
    return device_spec.full_name(spec.job or "localhost", spec.replica or 0, spec.task or 0, spec.device_type,
                                 spec.device_index or 0)
