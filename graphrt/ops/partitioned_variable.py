"""Partitioned variables: one logical variable stored as several, split along one axis.

`get_variable(name, shape, partitioner=p)` asks `p(shape=..., dtype=...)`
how many parts each axis gets (exactly one axis may get more than one),
creates `<name>/part_0`, `<name>/part_1`, ... (the first `dim % n` parts one
row longer, as TensorFlow splits), each with a `SaveSliceInfo` saying where
it sits, and returns a `PartitionedVariable` over them. Used as a tensor it
is the parts' concatenation (`<name>/ConcatPartitions/concat`, then an
Identity named `<name>`); optimizers, savers and `embedding_lookup` see the
parts. With `tf.train.replica_device_setter` the parts land on different
parameter-server tasks, which is what partitioning is for.
"""
from collections.abc import Sequence

from ..framework.graph import get_default_graph
from ..framework import dtypes
from ..framework.op_builder import register_tensor_conversion_function
from ..framework.tensor_shape import TensorShape
from . import array_ops


class PartitionInfo:
    """What an initializer of one part is told: the whole shape and where the part starts
    (VarianceScaling draws with the whole variable's fans)."""

    def __init__(self, full_shape, var_offset):
        if not isinstance(full_shape, Sequence) or isinstance(full_shape, str):
            raise TypeError(f"`full_shape` must be a sequence (like tuple or list) instead of "
                            f"{type(full_shape).__name__}")
        if not isinstance(var_offset, Sequence) or isinstance(var_offset, str):
            raise TypeError(f"`var_offset` must be a sequence (like tuple or list) instead of "
                            f"{type(var_offset).__name__}")
        if len(var_offset) != len(full_shape):
            raise ValueError(f"Expected equal length, but `var_offset` is of length {len(var_offset)} while "
                             f"full_shape is of length {len(full_shape)}.")
        for offset, dim in zip(var_offset, full_shape):
            if offset < 0 or offset >= dim:
                raise ValueError(f"Expected 0 <= offset < shape but found offset={var_offset}, "
                                 f"full_shape={full_shape}")
        self.full_shape = list(full_shape)
        self.var_offset = list(var_offset)

    def single_offset(self, shape):
        """The offset along the one partitioned axis."""
        axis = self.single_slice_dim(shape)
        return 0 if axis is None else self.var_offset[axis]

    def single_slice_dim(self, shape):
        """The axis along which the parts are split, or None for a whole variable."""
        if shape is None:
            return None
        shape = list(shape)
        if len(shape) != len(self.full_shape):
            raise ValueError(f"Expected equal length, but received shape={shape} of length {len(shape)} while "
                             f"self.full_shape={self.full_shape} is of length {len(self.full_shape)}.")
        for i, (s, full, offset) in enumerate(zip(shape, self.full_shape, self.var_offset)):
            if offset + s > full:
                raise ValueError(f"With self.var_offset={self.var_offset}, a partition of shape={shape} would "
                                 f"exceed self.full_shape={self.full_shape} in dimension {i}.")
        dims = [i for i, (s, full) in enumerate(zip(shape, self.full_shape)) if s != full]
        if len(dims) > 1:
            raise ValueError(f"Cannot use single_slice_dim() with shape={shape} and "
                             f"self.full_shape={self.full_shape} since slice dim could be any of {dims}")
        return dims[0] if dims else None


def call_partitioner(partitioner, shape, dtype):
    """The partitioner's answer for a new variable, checked: one count per axis, each >= 1,
    at most one above 1."""
    if not shape.is_fully_defined():
        raise ValueError(f"Shape of a new partitioned variable must be fully defined, but instead was {shape}.")
    if shape.ndims < 1:
        raise ValueError(f"A partitioned Variable must have rank at least 1, shape: {shape}")
    slicing = partitioner(shape=shape, dtype=dtype)
    if not isinstance(slicing, Sequence) or isinstance(slicing, str):
        raise ValueError(f"Partitioner must return a sequence, but saw: {slicing}")
    if len(slicing) != shape.ndims:
        raise ValueError(f"Partitioner returned a partition list that does not match the Variable's rank: "
                         f"{slicing} vs. {shape}")
    if any(p < 1 for p in slicing):
        raise ValueError(f"Partitioner returned zero partitions for some axes: {slicing}")
    if sum(p > 1 for p in slicing) > 1:
        raise ValueError(f"Can only slice a variable along one dimension: shape: {shape}, partitioning: {slicing}")
    return [int(p) for p in slicing]


def slice_axis_and_count(partitions):
    """(axis, number of parts); axis 0 when nothing is split."""
    for axis, count in enumerate(partitions):
        if count > 1:
            return axis, count
    return 0, 1


def iter_slices(full_shape, num_slices, axis):
    """(offset, shape) of each part: the first `full % num_slices` parts one longer along `axis`."""
    longer = full_shape[axis] % num_slices
    base = full_shape[axis] // num_slices
    offset = [0] * len(full_shape)
    for i in range(num_slices):
        shape = list(full_shape)
        shape[axis] = base + (1 if i < longer else 0)
        yield list(offset), shape
        offset[axis] += shape[axis]


class PartitionedVariable:
    """A variable stored as parts (`tf.get_variable(..., partitioner=...)` returns one).

    Iterating gives the parts in order of their offsets; converting to a
    tensor concatenates them. It has no arithmetic operators of its own (as
    in TensorFlow): use it through `tf.convert_to_tensor`, an op, or
    `embedding_lookup`, which reads the parts where they live.
    """

    def __init__(self, name, shape, dtype, variable_list, partitions):
        if not isinstance(variable_list, (list, tuple)):
            raise TypeError(f"variable_list is not a list or tuple: {variable_list}")
        if not isinstance(partitions, (list, tuple)):
            raise TypeError(f"partitions is not a list or tuple: {partitions}")
        if not all(p >= 1 for p in partitions):
            raise ValueError(f"partition values must be positive: {partitions}")
        if not variable_list:
            raise ValueError("variable_list may not be empty")
        shape = TensorShape(shape)
        if any(v._get_save_slice_info() is None for v in variable_list):
            raise ValueError(f"All variables must have a save_slice_info available: "
                             f"{[v.name for v in variable_list]}")
        if len(shape) != len(partitions):
            raise ValueError(f"len(shape) != len(partitions): {shape} vs. {partitions}")
        for v in variable_list:
            if v._get_save_slice_info().full_shape != shape.as_list():
                raise ValueError(f"All variables' full shapes must match shape: {shape}; but full shapes were: "
                                 f"{[v._get_save_slice_info().full_shape for v in variable_list]}")
        self._variable_list = sorted(variable_list, key=lambda v: v._get_save_slice_info().var_offset)
        self._name = name
        self._shape = shape
        self._dtype = dtype
        self._partitions = list(partitions)

    def __iter__(self):
        return iter(self._variable_list)

    def __len__(self):
        axes = self._partition_axes()
        if len(axes) > 1:
            raise ValueError(f"Cannot get a length for {len(axes)} > 1 partition axes")
        return len(self._variable_list)

    def _partition_axes(self):
        if all(p == 1 for p in self._partitions):
            return [0]
        return [i for i, p in enumerate(self._partitions) if p > 1]

    def _concat(self):
        """The whole value: the parts concatenated (an Identity of the one part when there is one)."""
        g = get_default_graph()
        if len(self._variable_list) == 1:
            with g.name_scope(None):
                return array_ops.identity(self._variable_list[0], name=self._name)
        axes = self._partition_axes()
        if len(axes) > 1:
            raise NotImplementedError(f"Cannot concatenate along more than one dimension: {axes}.  Multi-axis "
                                      f"partition concat is not supported")
        with g.name_scope(self._name + "/ConcatPartitions/"):
            whole = array_ops.concat(self._variable_list, axes[0])
        with g.name_scope(None):
            return array_ops.identity(whole, name=self._name)

    def as_tensor(self):
        """The whole value, read outside the control dependencies of the caller's scope
        (as a Variable's shared snapshot is)."""
        with get_default_graph().control_dependencies(None):
            return self._concat()

    @property
    def name(self):
        return self._name

    @property
    def dtype(self):
        return self._dtype

    @property
    def shape(self):
        return self._shape

    def get_shape(self):
        return self._shape

    @property
    def graph(self):
        return self._variable_list[0].graph

    def _get_variable_list(self):
        return self._variable_list

    def _get_partitions(self):
        return self._partitions

    def _apply_assign_fn(self, assign_fn, value):
        axes = self._partition_axes()
        if len(axes) > 1:
            raise NotImplementedError(f"Cannot do assign action along more than one dimension: {axes}.  "
                                      f"Multi-axis partition assign action is not supported ")
        if isinstance(value, list):
            if len(value) != len(self._variable_list):
                raise ValueError(f"Assigning a list of {len(value)} values to partitioned variable {self._name} "
                                 f"of {len(self._variable_list)} parts")
            values = value
        elif isinstance(value, PartitionedVariable):
            values = list(value)
        else:
            sizes = [v.shape[axes[0]] for v in self._variable_list]
            values = array_ops.split(value, sizes, axis=axes[0])
        return [assign_fn(v, part) for v, part in zip(self._variable_list, values)]

    def assign(self, value, use_locking=False, name=None, read_value=True):
        """Assigns each part its slice of `value` (a whole value, a list of parts, or another
        PartitionedVariable); returns the list of assignments."""
        out = self._apply_assign_fn(
            lambda v, part: v.assign(part, use_locking=use_locking, name=name, read_value=read_value), value)
        return out

    def assign_add(self, value, use_locking=False, name=None, read_value=True):
        return self._apply_assign_fn(
            lambda v, part: v.assign_add(part, use_locking=use_locking, name=name, read_value=read_value), value)

    def assign_sub(self, value, use_locking=False, name=None, read_value=True):
        return self._apply_assign_fn(
            lambda v, part: v.assign_sub(part, use_locking=use_locking, name=name, read_value=read_value), value)

    def __repr__(self):
        parts = ", ".join(f"{v.op.name}{v.shape.as_list()}" for v in self._variable_list)
        return (f"<PartitionedVariable '{self._name}' shape={self._shape} dtype={self._dtype.name} "
                f"parts=[{parts}]>")


def _partitioned_to_tensor(v, dtype=None, name=None, as_ref=False):
    if dtype is not None and not dtypes.as_dtype(dtype).is_compatible_with(v.dtype):
        raise ValueError(f"Incompatible type conversion requested to type '{dtypes.as_dtype(dtype).name}' for "
                         f"variable of type '{v.dtype.name}'")
    if as_ref:
        raise NotImplementedError("PartitionedVariable doesn't support being used as a reference.")
    return v.as_tensor()


register_tensor_conversion_function(PartitionedVariable, _partitioned_to_tensor)
