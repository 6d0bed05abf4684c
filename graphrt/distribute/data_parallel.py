"""In-graph data parallelism: one tower per device, mirrored variables,
gradients all-reduced (in buckets), and optionally ZeRO-sharded updates.

    dp = tf.distribute.DataParallel(["/device:SIM:0", "/device:SIM:1"], algorithm="ring")
    train_op = dp.minimize(tf.train.AdamOptimizer(1e-3), loss_fn, [x, y], global_step=step)
    sess.run(train_op, {x: batch_x, y: batch_y}); sess.run(dp.loss, ...)

`minimize` splits each input along axis 0 into N equal shards, calls
`loss_fn(*shard)` once per device under `tf.device(device)` (so replica i's
ops run on device i), and then:

* variables: replica 0's `tf.get_variable`/`tf.layers` calls create the
  variables as usual, on device 0; replica i's k-th call gets a mirror of
  replica 0's k-th variable, `<name>/replica_<i>`, on device i, initialized
  from the same initial value in the same run. Mirrors are global but not
  trainable variables; `dp.mirrors(v)` lists them.
* gradients: each replica differentiates its own loss; the gradients are
  fused into buckets (bucketing.py) and all-reduced with `op="mean"`, so
  every replica applies the gradient of the mean loss over the whole batch.
* updates (zero_stage=0): a copy of the optimizer per replica (its own
  slots and accumulators) applies the same gradients to every replica, so
  the mirrors stay identical. zero_stage=1 (PyTorch DDP +
  ZeroRedundancyOptimizer): gradients are all-reduced as in stage 0 but
  only each variable's owner (zero.py) has slots and updates it, then
  broadcasts the new value; zero_stage=2: the buckets of each owner are
  reduced onto the owner only, so the others never hold the reduced
  gradients. Every stage gives the same parameters.
* global_step is incremented once, after every replica's update.

Variables must be made with tf.get_variable (tf.layers does) inside
loss_fn; a variable regularizer there is refused (it would only see replica
0's variables): add the penalty to the returned loss instead.
"""
import copy

from .. import errors
from ..framework.device_spec import DeviceSpec
from ..framework.graph import GraphKeys, get_default_graph
from ..framework.indexed_slices import IndexedSlices
from ..framework.op_builder import convert_to_tensor
from ..gradients import gradients
from ..ops import array_ops, control_ops, math_ops, state_ops
from ..ops import variable_scope as vs
from ..ops import variables as variables_lib
from . import bucketing, collectives, zero
from .replicas import canonical_device

DEFAULT_BUCKET_BYTES = 25 << 20  # PyTorch DDP's bucket_cap_mb


class DataParallel:
    """Trains one model on several devices with the batch split between them.

    Args:
        devices: device names, one replica each (e.g. ['/device:SIM:0', ...],
            or devices of several tasks).
        algorithm: the all-reduce algorithm ('ring', 'tree',
            'halving_doubling', 'auto').
        bucket_bytes: gradients are fused into buckets of at least this many
            bytes (one all-reduce each); 0 reduces each gradient on its own.
        zero_stage: 0 (every replica keeps optimizer slots), 1 (slots
            sharded across replicas), 2 (slots and reduced gradients sharded).
        gradient_buffers: keep each replica's reduced gradients in variables
            `<var>/grad_buffer` (replica i's are on device i) from one step to
            the next, as PyTorch keeps `.grad` and DeepSpeed its gradient
            partitions: all of them at stages 0 and 1, the owned ones at
            stage 2. ZeRO's memory accounting (16, 8 + 8/N, 4 + 12/N bytes per
            parameter with Adam) counts these buffers. Off, gradients are
            transient tensors freed as soon as they are applied.

    Attributes (after minimize):
        loss: the mean of the replicas' losses (on devices[0]).
        replica_losses: each replica's loss on its shard.
        optimizers: the optimizer of each replica (the one passed in is replica 0's).
        buckets: the gradient buckets, as lists of variables.
        owners: {variable: replica index} for zero_stage 1 and 2.
        gradient_buffer_variables: {replica's variable: its gradient buffer}.
    """

    def __init__(self, devices, algorithm="ring", bucket_bytes=DEFAULT_BUCKET_BYTES, zero_stage=0,
                 gradient_buffers=False):
        names = [canonical_device(d) for d in devices]
        if not names:
            raise errors.InvalidArgumentError("DataParallel needs at least 1 device, got 0")
        for i, d in enumerate(names):
            if not d:
                raise errors.InvalidArgumentError(f"DataParallel: device {devices[i]!r} is empty")
            if d in names[:i]:
                raise errors.InvalidArgumentError(f"DataParallel: device {d} is listed twice")
        if algorithm not in collectives.ALGORITHMS:
            raise errors.InvalidArgumentError(
                f"DataParallel: unknown algorithm {algorithm!r}; one of {collectives.ALGORITHMS}")
        if not isinstance(bucket_bytes, int) or bucket_bytes < 0:
            raise errors.InvalidArgumentError(f"DataParallel: bucket_bytes must be an int >= 0, got {bucket_bytes!r}")
        if zero_stage not in (0, 1, 2):
            raise errors.InvalidArgumentError(f"DataParallel: zero_stage must be 0, 1 or 2, got {zero_stage!r}")
        self.devices = names
        self.algorithm = algorithm
        self.bucket_bytes = bucket_bytes
        self.zero_stage = zero_stage
        self.loss = None
        self.replica_losses = []
        self.optimizers = []
        self.buckets = []
        self.owners = {}
        self.gradient_buffers = gradient_buffers
        self.gradient_buffer_variables = {}
        self._kept_buffers = []
        self._mirrors = {}  # replica 0's variable -> [its copy on each replica]

    @property
    def num_replicas(self):
        return len(self.devices)

    def mirrors(self, variable):
        """[the copy of `variable` on each replica]; element 0 is `variable` itself."""
        return list(self._mirrors[variable])

    def __repr__(self):
        return (f"<DataParallel {self.num_replicas} replicas {self.algorithm} bucket_bytes={self.bucket_bytes} "
                f"zero_stage={self.zero_stage}>")

    # -- building ---------------------------------------------------------------------
    def minimize(self, optimizer, loss_fn, inputs, global_step=None, name="data_parallel"):
        """Builds the towers, the gradient reduction and the updates; returns the train op.

        Args:
            optimizer: any tf.train optimizer; it becomes replica 0's, and a
                copy of it (same hyper-parameters, own slots) each other's.
            loss_fn: `loss_fn(*inputs_shard) -> scalar loss`, the loss of one
                shard (a mean over its examples, so that the mean over replicas
                is the loss of the whole batch).
            inputs: a tensor or a list of tensors whose axis 0 is the batch;
                its size must be divisible by the number of devices.
            global_step: incremented by 1 after every replica's update.
        """
        g = get_default_graph()
        inputs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        if self.loss is not None:
            raise errors.FailedPreconditionError("DataParallel.minimize was already called on this object")
        with g.name_scope(name) as scope:
            shards = self._split(inputs)
            losses, tower_scopes, primaries = self._build_towers(loss_fn, shards)
            trainable = [v for v in primaries if v.trainable]
            if not trainable:
                raise errors.InvalidArgumentError(
                    "DataParallel.minimize: loss_fn made no trainable variables with tf.get_variable")
            var_lists = [[self._mirrors[v][i] for v in trainable] for i in range(self.num_replicas)]
            grads = self._gradients(losses, var_lists, tower_scopes)
            self.optimizers = [optimizer] + [_replica_optimizer(optimizer) for _ in self.devices[1:]]
            with g.device(self.devices[0]):
                self.loss = math_ops.multiply(math_ops.add_n(losses) if len(losses) > 1 else losses[0],
                                              1.0 / self.num_replicas, name="loss")
            self.replica_losses = losses
            if self.zero_stage == 0:
                updates = self._stage0(grads, var_lists)
            else:
                updates = self._sharded(grads, var_lists, trainable)
            if global_step is None:
                train_op = control_ops.group(*updates, name="train")
            else:
                with g.control_dependencies(updates), g.colocate_with(global_step):
                    train_op = state_ops.assign_add(global_step, 1, name="global_step_increment").op
        train_ops = g.get_collection_ref(GraphKeys.TRAIN_OP)
        if train_op not in train_ops:
            train_ops.append(train_op)
        return train_op

    def _split(self, inputs):
        n = self.num_replicas
        g = get_default_graph()
        host = DeviceSpec.from_string(self.devices[0]).replace(device_type="CPU", device_index=0).to_string()
        per_input = []
        for j, x in enumerate(inputs):
            x = convert_to_tensor(x)
            if x.shape.ndims == 0:
                raise errors.InvalidArgumentError(f"DataParallel: input {x.name} is a scalar; inputs need a batch axis")
            batch = x.shape.as_list()[0] if x.shape.ndims is not None else None
            if batch is not None and batch % n:
                raise errors.InvalidArgumentError(
                    f"DataParallel: input {x.name} has batch size {batch}, not divisible by the {n} devices")
            if n == 1:
                per_input.append([x])
                continue
            with g.device(None), g.device(x.op.device or host):  # split on the host, once, not on an accelerator
                per_input.append(array_ops.split(x, n, axis=0, name=f"split_input{j}"))
        return [[parts[i] for parts in per_input] for i in range(n)]

    def _build_towers(self, loss_fn, shards):
        g = get_default_graph()
        requests = [[] for _ in self.devices]  # the variables each replica's get_variable calls returned
        losses, scopes = [], []
        for i, device in enumerate(self.devices):
            getter = self._primary_getter(requests[0]) if i == 0 else self._mirror_getter(i, requests)
            before = set(variables_lib.trainable_variables())
            with g.device(device), g.name_scope(f"replica_{i}") as tower_scope, \
                    vs.variable_scope(vs.get_variable_scope(), custom_getter=getter):
                loss = convert_to_tensor(loss_fn(*shards[i]))
            scopes.append(tower_scope)
            stray = [v for v in variables_lib.trainable_variables() if v not in before and v not in self._mirrors]
            if stray:
                raise errors.InvalidArgumentError(
                    f"DataParallel: loss_fn made trainable variable {stray[0].name} without tf.get_variable; "
                    "DataParallel can only mirror variables made with tf.get_variable (or tf.layers)")
            if loss.shape.ndims not in (0, None) or not loss.dtype.base_dtype.is_floating:
                raise errors.InvalidArgumentError(
                    f"DataParallel: loss_fn must return a floating scalar, got {loss.name} {loss.dtype.name} "
                    f"{loss.shape}")
            if len(requests[i]) != len(requests[0]):
                raise errors.InvalidArgumentError(
                    f"DataParallel: replica {i} asked for {len(requests[i])} variables, replica 0 for "
                    f"{len(requests[0])}; loss_fn must build the same model every call")
            losses.append(loss)
        primaries = list(dict.fromkeys(requests[0]))
        return losses, scopes, primaries

    def _primary_getter(self, requests):
        device = self.devices[0]

        def getter(getter, name, *args, **kwargs):
            _refuse_regularizer(name, kwargs)
            v = getter(name, *args, **kwargs)
            if canonical_device(v.device) != device:
                raise errors.InvalidArgumentError(
                    f"DataParallel: variable {v.name} is on {v.device or 'no device'}, not on replica 0's "
                    f"device {device}; create the model's variables inside loss_fn")
            self._mirrors.setdefault(v, [v])
            requests.append(v)
            return v
        return getter

    def _mirror_getter(self, i, requests):
        g = get_default_graph()
        device = self.devices[i]

        def getter(getter, name, *args, **kwargs):
            _refuse_regularizer(name, kwargs)
            k = len(requests[i])
            if k >= len(requests[0]):
                raise errors.InvalidArgumentError(
                    f"DataParallel: replica {i} asked for more variables than replica 0 (at {name}); loss_fn "
                    "must build the same model every call")
            primary = requests[0][k]
            shape = kwargs.get("shape")
            if shape is not None and list(shape) != primary.shape.as_list():
                raise errors.InvalidArgumentError(
                    f"DataParallel: replica {i}'s variable {name} has shape {list(shape)}, replica 0's "
                    f"{primary.name} has {primary.shape}")
            copies = self._mirrors[primary]
            if len(copies) <= i:
                with g.name_scope(None), g.device(None), g.device(device), g.control_dependencies(None):
                    copies.append(variables_lib.Variable(
                        primary.initial_value, trainable=False, name=f"{primary.op.name}/replica_{i}",
                        collections=[GraphKeys.GLOBAL_VARIABLES]))
            requests[i].append(copies[i])
            return copies[i]
        return getter

    def _gradients(self, losses, var_lists, scopes):
        g = get_default_graph()
        out = []
        for i, device in enumerate(self.devices):
            with g.device(device), g.name_scope(scopes[i]):
                grads = gradients(losses[i], var_lists[i], colocate_gradients_with_ops=True)
                out.append([_dense(gr, v) for gr, v in zip(grads, var_lists[i])])
        missing = [i for i, gr in enumerate(out[0]) if gr is None]
        if len(missing) == len(out[0]):
            raise errors.InvalidArgumentError("DataParallel: the loss depends on none of the trainable variables")
        return out

    # -- reducing and applying --------------------------------------------------------
    def _all_reduce_buckets(self, grads, positions):
        """{position: [reduced gradient on each replica]} for the buckets over `positions`."""
        g = get_default_graph()
        specs = [(grads[0][k].shape.as_list(), grads[0][k].dtype.base_dtype) for k in positions]
        reduced = {}
        for j, bucket in enumerate(bucketing.plan_buckets(specs, self.bucket_bytes)):
            ks = [positions[p] for p in bucket.indices]
            fused = []
            for i, device in enumerate(self.devices):
                with g.device(device):
                    fused.append(bucketing.fuse([grads[i][k] for k in ks], name=f"bucket{j}/fuse_dev{i}"))
            out = collectives.all_reduce(fused, op="mean", algorithm=self.algorithm, name=f"bucket{j}")
            per_replica = []
            for i, device in enumerate(self.devices):
                with g.device(device):
                    per_replica.append(bucketing.unfuse(out[i], [grads[i][k] for k in ks], name=f"bucket{j}/unfuse"))
            for p, k in enumerate(ks):
                reduced[k] = [per_replica[i][p] for i in range(self.num_replicas)]
            self.buckets.append(ks)
        return reduced

    def _stage0(self, grads, var_lists):
        positions = [k for k, gr in enumerate(grads[0]) if gr is not None]
        reduced = self._all_reduce_buckets(grads, positions)
        self.buckets = [[var_lists[0][k] for k in ks] for ks in self.buckets]
        updates = []
        for i, opt in enumerate(self.optimizers):
            pairs = [(self._buffered(reduced[k][i], var_lists[i][k]), var_lists[i][k]) for k in positions]
            updates.append(opt.apply_gradients(pairs, name=f"{opt.get_name()}_replica_{i}"))
        return updates

    def _sharded(self, grads, var_lists, trainable):
        g = get_default_graph()
        n = self.num_replicas
        positions = [k for k, gr in enumerate(grads[0]) if gr is not None]
        owner = zero.assign_owners([trainable[k].shape.num_elements() * trainable[k].dtype.size
                                    for k in positions], n)
        owner = dict(zip(positions, owner))
        self.owners = {trainable[k]: owner[k] for k in positions}
        if self.zero_stage == 1:
            all_reduced = self._all_reduce_buckets(grads, positions)
            # stage 1 shards only the optimizer state: every replica keeps the whole reduced gradient
            reduced = {}
            for k in positions:
                for i in range(n):
                    kept = self._buffered(all_reduced[k][i], var_lists[i][k])
                    if i == owner[k]:
                        reduced[k] = kept
        else:
            reduced = self._reduce_to_owners(grads, positions, owner)
            reduced = {k: self._buffered(reduced[k], var_lists[owner[k]][k]) for k in positions}
        self.buckets = [[var_lists[0][k] for k in ks] for ks in self.buckets]
        updates = list(self._kept_buffers)
        for r in range(n):
            owned = [k for k in positions if owner[k] == r]
            if not owned:
                continue
            opt = self.optimizers[r]
            update = opt.apply_gradients([(reduced[k], var_lists[r][k]) for k in owned],
                                         name=f"{opt.get_name()}_replica_{r}")
            updates.append(update)
            others = [d for i, d in enumerate(self.devices) if i != r]
            if not others:
                continue
            with g.device(self.devices[r]), g.control_dependencies([update]):
                fused = bucketing.fuse([var_lists[r][k].read_value() for k in owned], name=f"params_dev{r}")
            copies = collectives.broadcast(fused, others, name=f"params_from_dev{r}")
            for device, value in zip(others, copies):
                i = self.devices.index(device)
                with g.device(device):
                    parts = bucketing.unfuse(value, [var_lists[i][k] for k in owned], name=f"params_from_dev{r}")
                    for k, part in zip(owned, parts):
                        updates.append(state_ops.assign(var_lists[i][k], part).op)
        return updates

    def _buffered(self, grad, variable):
        """With gradient_buffers: `grad` stored into the variable's gradient buffer (made here, on the
        variable's device), and the buffer's new value returned; else `grad` itself."""
        if not self.gradient_buffers:
            return grad
        g = get_default_graph()
        with g.name_scope(None), g.control_dependencies(None), g.colocate_with(variable.op):
            buffer = variables_lib.Variable(array_ops.zeros(variable.shape.as_list(), variable.dtype.base_dtype),
                                            trainable=False, name=f"{variable.op.name}/grad_buffer")
        self.gradient_buffer_variables[variable] = buffer
        with g.colocate_with(variable.op):
            stored = state_ops.assign(buffer, grad)
        self._kept_buffers.append(stored.op)
        return stored

    def _reduce_to_owners(self, grads, positions, owner):
        g = get_default_graph()
        specs = {k: (grads[0][k].shape.as_list(), grads[0][k].dtype.base_dtype) for k in positions}
        reduced = {}
        j = 0
        for r in range(self.num_replicas):
            owned = [k for k in positions if owner[k] == r]
            for bucket in bucketing.plan_buckets([specs[k] for k in owned], self.bucket_bytes):
                ks = [owned[p] for p in bucket.indices]
                fused = []
                for i, device in enumerate(self.devices):
                    with g.device(device):
                        fused.append(bucketing.fuse([grads[i][k] for k in ks], name=f"bucket{j}/fuse_dev{i}"))
                total = collectives.reduce(fused, root=r, op="mean", name=f"bucket{j}")
                with g.device(self.devices[r]):
                    parts = bucketing.unfuse(total, [grads[r][k] for k in ks], name=f"bucket{j}/unfuse")
                reduced.update(zip(ks, parts))
                self.buckets.append(ks)
                j += 1
        return reduced


def _dense(grad, variable):
    """A gradient as a tensor of the variable's static shape (an embedding's IndexedSlices densified:
    buckets fuse whole gradients)."""
    if isinstance(grad, IndexedSlices):
        grad = convert_to_tensor(grad)
        grad.set_shape(variable.shape)
    return grad


def _refuse_regularizer(name, kwargs):
    if kwargs.get("regularizer") is not None:
        raise errors.InvalidArgumentError(
            f"DataParallel: variable {name} has a regularizer, which would only see replica 0's copy; "
            "add the penalty to the loss that loss_fn returns")


def _replica_optimizer(optimizer):
    """The same optimizer (hyper-parameters, class) with slots and accumulators of its own."""
    opt = copy.copy(optimizer)
    opt._slots = {}
    opt._non_slot = {}
    return opt
