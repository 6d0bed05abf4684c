"""What every collective checks first: one tensor per distinct device, all of
the same static shape and dtype, and where each op of the algorithm goes.

A collective is built from ordinary ops, each pinned to one replica's device
by `Builder.at(device, "step3")`, which also names it exactly
(`allreduce/ring/step3/dev2`): the partitioner then inserts the `_Send`/
`_Recv` of every hop, and `inspect`, the trace and the partition graphs
show the algorithm step by step.
"""
import contextlib

import numpy as np

from .. import errors
from ..framework.device_spec import DeviceSpec
from ..framework.graph import get_default_graph
from ..framework.op_builder import convert_to_tensor
from ..ops import array_ops, math_ops

REDUCE_OPS = ("sum", "mean", "max")


def canonical_device(name):
    """'/cpu:1' and '/device:CPU:1' name the same device: both give '/device:CPU:1'."""
    return DeviceSpec.from_string(name or "").to_string()


def device_of(tensor):
    return canonical_device(tensor.device)


class Replicas:
    """The validated inputs of a collective: tensors[i] lives on devices[i].

    Raises InvalidArgumentError (naming the tensors) for an empty list, a
    tensor without a device, a device listed twice, or shapes/dtypes that
    differ across replicas (`same_shape=False` only asks for the same rank
    and the same shape past axis 0, as all_gather concatenates on axis 0).
    """

    def __init__(self, values, what, same_shape=True):
        if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
            raise errors.InvalidArgumentError(f"{what} takes a list of tensors, one per device; got {values!r}")
        if len(values) < 1:
            raise errors.InvalidArgumentError(f"{what} needs at least 1 value (one tensor per device), got 0")
        self.what = what
        self.tensors = [convert_to_tensor(v) for v in values]
        self.tensors = [t.op.outputs[t.value_index] if t.dtype.is_ref_dtype else t for t in self.tensors]
        self.devices = []
        for t in self.tensors:
            dev = device_of(t)
            if not dev:
                raise errors.InvalidArgumentError(
                    f"{what}: tensor {t.name} has no device; build each value under tf.device(...)")
            if dev in self.devices:
                other = self.tensors[self.devices.index(dev)]
                raise errors.InvalidArgumentError(
                    f"{what}: device {dev} is listed twice (tensors {other.name} and {t.name}); "
                    "give one value per device")
            self.devices.append(dev)
        first = self.tensors[0]
        self.dtype = first.dtype.base_dtype
        for t in self.tensors:
            if not t.shape.is_fully_defined():
                raise errors.InvalidArgumentError(
                    f"{what}: tensor {t.name} has shape {t.shape}, not fully defined; collectives split "
                    "tensors into chunks at graph construction time, so every shape must be known")
            if t.dtype.base_dtype != self.dtype:
                raise errors.InvalidArgumentError(
                    f"{what}: dtypes differ across replicas: {first.name} is {self.dtype.name}, "
                    f"{t.name} is {t.dtype.base_dtype.name}")
            if same_shape and t.shape.as_list() != first.shape.as_list():
                raise errors.InvalidArgumentError(
                    f"{what}: shapes differ across replicas: {first.name} has shape {first.shape}, "
                    f"{t.name} has shape {t.shape}")
            if not same_shape and (t.shape.ndims == 0 or t.shape.as_list()[1:] != first.shape.as_list()[1:]):
                raise errors.InvalidArgumentError(
                    f"{what}: tensors must have rank >= 1 and the same shape past axis 0: {first.name} has "
                    f"shape {first.shape}, {t.name} has shape {t.shape}")
        self.shape = first.shape.as_list()
        self.num_elements = int(np.prod(self.shape, dtype=np.int64))

    def __len__(self):
        return len(self.tensors)

    @property
    def nbytes(self):
        return self.num_elements * self.dtype.size


def check_op(op, dtype, what):
    if op not in REDUCE_OPS:
        raise errors.InvalidArgumentError(f"{what}: op must be one of {REDUCE_OPS}, got {op!r}")
    if op == "mean" and not (dtype.is_floating or dtype.is_complex):
        raise errors.InvalidArgumentError(f"{what}: op='mean' needs a floating dtype, got {dtype.name}")


def chunk_sizes(n, parts):
    """`n` elements in `parts` near-equal chunks: the first n % parts get one more."""
    base, extra = divmod(int(n), parts)
    return [base + (1 if k < extra else 0) for k in range(parts)]


class Builder:
    """Places and names the ops of one collective under one unique scope."""

    def __init__(self, scope_name, algorithm):
        self.graph = get_default_graph()
        with self.graph.name_scope(scope_name) as scope:
            self.scope = f"{scope}{algorithm}/"  # e.g. 'allreduce/ring/' or 'allreduce_1/ring/'

    @contextlib.contextmanager
    def at(self, device, subscope):
        """Ops made inside go on `device` (outer device scopes ignored) in `<scope><subscope>/`."""
        g = self.graph
        with g.device(None), g.device(device), g.name_scope(f"{self.scope}{subscope}/"):
            yield

    def reduce(self, op, a, b, device, subscope, name):
        """op(a, b) on `device`; `a` is the value from earlier in the fixed reduction order."""
        with self.at(device, subscope):
            if op == "max":
                return math_ops.maximum(a, b, name=name)
            return math_ops.add(a, b, name=name)

    def copy(self, value, device, subscope, name):
        """An Identity on `device`: a hop of the algorithm (the value crosses to `device` here)."""
        with self.at(device, subscope):
            return array_ops.identity(value, name=name)

    def scale(self, value, factor, device, subscope, name):
        with self.at(device, subscope):
            return math_ops.multiply(value, np.asarray(factor, dtype=value.dtype.as_numpy_dtype), name=name)

    def flatten(self, tensor, device, name):
        with self.at(device, "flat"):
            return array_ops.reshape(tensor, [-1], name=name)

    def split(self, flat, sizes, device, subscope, name):
        """`flat` cut into pieces of `sizes` elements on `device` (a list even for one piece)."""
        if len(sizes) == 1:
            return [flat]
        with self.at(device, subscope):
            return list(array_ops.split(flat, [int(s) for s in sizes], axis=0, name=name))

    def concat(self, pieces, device, subscope, name, axis=0):
        if len(pieces) == 1:
            return pieces[0]
        with self.at(device, subscope):
            return array_ops.concat(list(pieces), axis, name=name)

    def reshape(self, flat, shape, device, name):
        with self.at(device, "out"):
            return array_ops.reshape(flat, shape, name=name)
