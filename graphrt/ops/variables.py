"""`tf.Variable` (TF1 ref variables), initializers, and variable collections.

`Variable(init, name="v")` builds, as TensorFlow 1.x does: `v/initial_value`
(or `v/Initializer/...` for a callable), the `v` VariableV2 op, `v/Assign`
(its initializer) and `v/read`, the snapshot every value use goes through.
"""
import os

import numpy as np

from ..framework import dtypes
from ..framework.default_session import get_default_session
from ..framework.graph import GraphKeys, Tensor, get_default_graph
from ..framework.op_builder import convert_to_tensor, register_tensor_conversion_function
from ..framework.tensor_shape import TensorShape
from . import array_ops, control_ops, math_ops, state_ops


class SaveSliceInfo:
    """Where a part of a partitioned variable sits in the whole (`tf.Variable.SaveSliceInfo`): the
    whole's name and shape, this part's offset and shape. Savers save the part under the whole's name."""

    def __init__(self, full_name=None, full_shape=None, var_offset=None, var_shape=None, save_slice_info_def=None,
                 import_scope=None):
        if save_slice_info_def is not None:
            full_name = save_slice_info_def.full_name
            if import_scope:
                full_name = f"{import_scope}/{full_name}"
            full_shape = list(save_slice_info_def.full_shape)
            var_offset = list(save_slice_info_def.var_offset)
            var_shape = list(save_slice_info_def.var_shape)
        self.full_name = full_name
        self.full_shape = [int(d) for d in full_shape]
        self.var_offset = [int(d) for d in var_offset]
        self.var_shape = [int(d) for d in var_shape]

    @property
    def spec(self):
        """The part's shape_and_slice string, e.g. "10 4 4,3:0,4" (TF's checkpoint slice spec)."""
        extents = ":".join(f"{o},{n}" for o, n in zip(self.var_offset, self.var_shape))
        return " ".join(str(d) for d in self.full_shape) + " " + extents

    def to_proto(self, export_scope=None):
        from tensorboard.compat.proto import variable_pb2
        name = self.full_name
        if export_scope and name.startswith(export_scope + "/"):
            name = name[len(export_scope) + 1:]
        elif export_scope:
            return None
        return variable_pb2.SaveSliceInfoDef(full_name=name, full_shape=self.full_shape, var_offset=self.var_offset,
                                             var_shape=self.var_shape)

    def __repr__(self):
        return f"<SaveSliceInfo {self.full_name} {self.spec}>"


def variable_collections(collections, trainable):
    """The collections a new variable joins: GLOBAL_VARIABLES unless told, and TRAINABLE_VARIABLES
    too when it is trainable."""
    collections = list(collections) if collections is not None else [GraphKeys.GLOBAL_VARIABLES]
    if trainable and GraphKeys.TRAINABLE_VARIABLES not in collections:
        collections.append(GraphKeys.TRAINABLE_VARIABLES)
    return collections


class Variable:
    """A mutable tensor that lives across `run` calls (per session, on its device)."""

    SaveSliceInfo = SaveSliceInfo

    def __init__(self, initial_value=None, trainable=True, collections=None, validate_shape=True,
                 caching_device=None, name=None, variable_def=None, dtype=None, expected_shape=None,
                 import_scope=None, constraint=None, use_resource=None, synchronization=None, aggregation=None):
        if variable_def is not None:
            if initial_value is not None:
                raise ValueError("variable_def and initial_value are mutually exclusive.")
            self._init_from_proto(variable_def, import_scope)
            return
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        collections = variable_collections(collections, trainable)
        self._trainable = trainable
        self._constraint = constraint
        g = get_default_graph()
        init_from_fn = callable(initial_value)
        with g.name_scope(name or "Variable") as scope:
            true_name = scope[:-1]
            if init_from_fn:
                with g.name_scope("Initializer"), g.device(None):
                    value = initial_value()
                    self._initial_value = convert_to_tensor(value, name="initial_value", dtype=dtype)
                    self._initial_value.op._set_attr("_class", [f"loc:@{true_name}"])
            else:
                self._initial_value = convert_to_tensor(initial_value, name="initial_value", dtype=dtype)
            shape = self._initial_value.shape if validate_shape else TensorShape(None)
            if validate_shape and not shape.is_fully_defined():
                raise ValueError(f"initial_value must have a shape specified: {self._initial_value}")
            self._variable = state_ops.variable_op_v2(shape, self._initial_value.dtype.base_dtype, name=scope)
            with g.colocate_with(self._variable.op):
                self._initializer_op = state_ops.assign(self._variable, self._initial_value,
                                                        validate_shape=validate_shape).op
            with g.device(caching_device or self._variable.device or None) if (
                    caching_device or self._variable.device) else g.device(""):
                with g.colocate_with(self._variable.op) if caching_device is None else _noop():
                    self._snapshot = array_ops.identity(self._variable, name="read")
        g.add_to_collections(collections, self)
        self._save_slice_info = None

    def _init_from_proto(self, variable_def, import_scope=None):
        """A Variable over ops already in the graph (an imported MetaGraphDef's VariableDef)."""
        g = get_default_graph()

        def element(name):
            return g.as_graph_element(f"{import_scope}/{name}" if import_scope else name)

        self._variable = element(variable_def.variable_name)
        self._initializer_op = element(variable_def.initializer_name)
        self._initial_value = element(variable_def.initial_value_name) if variable_def.initial_value_name else None
        self._snapshot = element(variable_def.snapshot_name)
        self._trainable = variable_def.trainable
        self._constraint = None
        self._save_slice_info = (SaveSliceInfo(save_slice_info_def=variable_def.save_slice_info_def,
                                               import_scope=import_scope)
                                 if variable_def.HasField("save_slice_info_def") else None)

    def to_proto(self, export_scope=None):
        """This Variable as TF's VariableDef (names of its ops), for MetaGraphDef collections."""
        from tensorboard.compat.proto import variable_pb2

        def strip(name):
            return name[len(export_scope) + 1:] if export_scope and name.startswith(export_scope + "/") else name

        proto = variable_pb2.VariableDef(
            variable_name=strip(self._variable.name), initializer_name=strip(self._initializer_op.name),
            snapshot_name=strip(self._snapshot.name), trainable=self._trainable,
            initial_value_name=strip(self._initial_value.name) if self._initial_value is not None else "")
        if self._save_slice_info is not None:
            slice_def = self._save_slice_info.to_proto(export_scope)
            if slice_def is not None:
                proto.save_slice_info_def.CopyFrom(slice_def)
        return proto

    @staticmethod
    def from_proto(variable_def, import_scope=None):
        return Variable(variable_def=variable_def, import_scope=import_scope)

    def _set_save_slice_info(self, save_slice_info):
        self._save_slice_info = save_slice_info

    def _get_save_slice_info(self):
        return self._save_slice_info

    # -- identity ------------------------------------------------------------------
    @property
    def name(self):
        return self._variable.name

    @property
    def op(self):
        return self._variable.op

    @property
    def graph(self):
        return self._variable.graph

    @property
    def device(self):
        return self._variable.device

    @property
    def dtype(self):
        # The element type, as a TF2-era compat.v1 variable reports it (float32,
        # not float32_ref); the ref tensor is `_ref()`.
        return self._variable.dtype.base_dtype

    @property
    def shape(self):
        return self._variable.shape

    def get_shape(self):
        return self._variable.shape

    @property
    def trainable(self):
        return self._trainable

    @property
    def initializer(self):
        return self._initializer_op

    @property
    def initial_value(self):
        return self._initial_value

    @property
    def constraint(self):
        return self._constraint

    def _ref(self):
        return self._variable

    def _as_graph_element(self):
        return self._variable

    # -- values --------------------------------------------------------------------
    def value(self):
        """The variable's value for a use here.

        Outside control dependencies and control flow this is the shared
        snapshot `v/read`. Inside them it is a read of its own, created here,
        so it happens after those dependencies and once per loop iteration
        (as each use of a resource variable makes its own ReadVariableOp in
        TensorFlow's compat.v1 graph mode).
        """
        g = self._variable.graph
        if not g._control_stack and g._control_flow_context is None:
            return self._snapshot
        with g.colocate_with(self._variable.op):
            return array_ops.identity(self._variable, name="ReadVariableOp")

    def read_value(self):
        return array_ops.identity(self._variable, name="read")

    def initialized_value(self):
        with get_default_graph().control_dependencies(None):
            return control_ops.with_dependencies([self._initializer_op], self._snapshot)

    def eval(self, session=None):
        return self._variable.eval(session=session)

    def load(self, value, session=None):
        sess = session or get_default_session()
        if sess is None:
            raise ValueError("Either session argument should be provided or default session should be established")
        sess.run(self._initializer_op, {self._initial_value: value})

    def assign(self, value, use_locking=False, name=None, read_value=True):
        out = state_ops.assign(self._variable, value, use_locking=use_locking, name=name)
        return out if read_value else out.op

    def assign_add(self, delta, use_locking=False, name=None, read_value=True):
        out = state_ops.assign_add(self._variable, delta, use_locking=use_locking, name=name)
        return out if read_value else out.op

    def assign_sub(self, delta, use_locking=False, name=None, read_value=True):
        out = state_ops.assign_sub(self._variable, delta, use_locking=use_locking, name=name)
        return out if read_value else out.op

    def set_shape(self, shape):
        self._variable.set_shape(shape)
        self._snapshot.set_shape(shape)

    def __repr__(self):
        return f"<tf.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}>"

    __hash__ = object.__hash__  # by identity, as __eq__; in C (fetches and feeds are dict keys every run)

    def __eq__(self, other):
        return self is other

    def __bool__(self):
        # A symbolic value has no truth value (TF raises as for a Tensor).
        return bool(self._snapshot)

    def __iter__(self):
        raise TypeError("'Variable' object is not iterable.")

    def __getitem__(self, item):
        return self.value()[item]

    def __array__(self, dtype=None, copy=None):
        raise NotImplementedError(f"Cannot convert a symbolic Variable ({self.name}) to a numpy array.")


class _noop:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def _install_variable_operators():
    names = ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or"]
    for n in names:
        for prefix in ("__", "__r"):
            attr = f"{prefix}{n}__"
            tensor_fn = getattr(Tensor, attr)
            setattr(Variable, attr, (lambda fn: lambda self, other: fn(self.value(), other))(tensor_fn))
    for attr in ("__neg__", "__abs__", "__invert__"):
        tensor_fn = getattr(Tensor, attr)
        setattr(Variable, attr, (lambda fn: lambda self: fn(self.value()))(tensor_fn))
    for attr in ("__lt__", "__le__", "__gt__", "__ge__"):
        tensor_fn = getattr(Tensor, attr)
        setattr(Variable, attr, (lambda fn: lambda self, other: fn(self.value(), other))(tensor_fn))
    Variable.__div__ = Variable.__truediv__


_install_variable_operators()


def _variable_to_tensor(v, dtype=None, name=None, as_ref=False):
    t = v._variable if as_ref else v.value()
    if dtype is not None and dtypes.as_dtype(dtype).base_dtype != t.dtype.base_dtype:
        raise ValueError(f"Incompatible type conversion requested to type '{dtypes.as_dtype(dtype).name}' for "
                         f"variable of type '{t.dtype.name}'")
    return t


register_tensor_conversion_function(Variable, _variable_to_tensor)

# -- collections and initialization ------------------------------------------------------


def global_variables(scope=None):
    return get_default_graph().get_collection(GraphKeys.GLOBAL_VARIABLES, scope)


all_variables = global_variables


def local_variables(scope=None):
    return get_default_graph().get_collection(GraphKeys.LOCAL_VARIABLES, scope)


def trainable_variables(scope=None):
    return get_default_graph().get_collection(GraphKeys.TRAINABLE_VARIABLES, scope)


def model_variables(scope=None):
    return get_default_graph().get_collection(GraphKeys.MODEL_VARIABLES, scope)


def moving_average_variables(scope=None):
    return get_default_graph().get_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, scope)


def variables_initializer(var_list, name="init"):
    if var_list:
        return control_ops.group(*[v.initializer for v in var_list], name=name)
    return control_ops.no_op(name=name)


def global_variables_initializer():
    return variables_initializer(global_variables())


initialize_all_variables = global_variables_initializer


def local_variables_initializer():
    return variables_initializer(local_variables(), name="init")


def is_variable_initialized(variable):
    return state_ops.is_variable_initialized(variable)


def report_uninitialized_variables(var_list=None, name="report_uninitialized_variables"):
    """A string vector of the names of uninitialized variables."""
    var_list = global_variables() + local_variables() if var_list is None else var_list
    g = get_default_graph()
    with g.name_scope(name):
        # Each check lives with its variable; the mask is built on this task's CPU, as TF's.
        flags = [state_ops.is_variable_initialized(v) for v in var_list]
        with g.device(os.environ.get("TF_DEVICE_FOR_UNINITIALIZED_VARIABLE_REPORTING", "/cpu:0")):
            if not var_list:
                return convert_to_tensor(np.array([], dtype=object))
            names = convert_to_tensor(np.array([v.op.name.encode() for v in var_list], dtype=object))
            return array_ops.boolean_mask(names, math_ops.logical_not(array_ops.stack(flags)))


def assert_variables_initialized(var_list=None):
    """TF's check: the rank of each variable's ref, which fails with FailedPreconditionError
    when the variable is not initialized; None without variables."""
    var_list = global_variables() + local_variables() if var_list is None else var_list
    if not var_list:
        return None
    g = get_default_graph()
    ranks = []
    for v in var_list:
        with g.colocate_with(v.op):
            ranks.append(array_ops.rank(v._ref() if isinstance(v, Variable) else v))
    return ranks[0] if len(ranks) == 1 else array_ops.stack(ranks)


# -- initializers ---------------------------------------------------------------------------

class Initializer:
    """`init(shape, dtype=None, partition_info=None) -> Tensor` (TF1 init_ops)."""

    def __init__(self, dtype=dtypes.float32):
        self.dtype = dtypes.as_dtype(dtype)

    def _dtype(self, dtype):
        return dtypes.as_dtype(dtype).base_dtype if dtype is not None else self.dtype

    def get_config(self):
        return {"dtype": self.dtype.name}


class Zeros(Initializer):
    def __call__(self, shape, dtype=None, partition_info=None):
        return array_ops.zeros(_dims(shape), self._dtype(dtype))


class Ones(Initializer):
    def __call__(self, shape, dtype=None, partition_info=None):
        return array_ops.ones(_dims(shape), self._dtype(dtype))


class Constant(Initializer):
    def __init__(self, value=0, dtype=dtypes.float32, verify_shape=False):
        super().__init__(dtype)
        self.value = value
        self.verify_shape = verify_shape

    def get_config(self):
        return {"value": self.value, "dtype": self.dtype.name}

    def __call__(self, shape, dtype=None, partition_info=None, verify_shape=None):
        from ..framework.op_builder import constant
        return constant(self.value, dtype=self._dtype(dtype), shape=_dims(shape),
                        verify_shape=self.verify_shape if verify_shape is None else verify_shape)


class RandomNormal(Initializer):
    def __init__(self, mean=0.0, stddev=1.0, seed=None, dtype=dtypes.float32):
        super().__init__(float_dtype(dtype))
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed, "dtype": self.dtype.name}

    def __call__(self, shape, dtype=None, partition_info=None):
        return random_ops_api().random_normal(_dims(shape), self.mean, self.stddev, self._dtype(dtype),
                                              seed=self.seed)


class TruncatedNormal(RandomNormal):
    def __call__(self, shape, dtype=None, partition_info=None):
        return random_ops_api().truncated_normal(_dims(shape), self.mean, self.stddev, self._dtype(dtype),
                                                 seed=self.seed)


class RandomUniform(Initializer):
    def __init__(self, minval=0, maxval=None, seed=None, dtype=dtypes.float32):
        super().__init__(dtype)
        self.minval, self.maxval, self.seed = minval, maxval, seed

    def get_config(self):
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed, "dtype": self.dtype.name}

    def __call__(self, shape, dtype=None, partition_info=None):
        return random_ops_api().random_uniform(_dims(shape), self.minval, self.maxval, self._dtype(dtype),
                                               seed=self.seed)


class VarianceScaling(Initializer):
    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None, dtype=dtypes.float32):
        super().__init__(float_dtype(dtype))
        if scale <= 0.0:
            raise ValueError("`scale` must be positive float.")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"Invalid `mode` argument: {mode}")
        distribution = distribution.lower()
        if distribution == "normal":
            distribution = "truncated_normal"
        if distribution not in ("uniform", "truncated_normal", "untruncated_normal"):
            raise ValueError(f"Invalid `distribution` argument: {distribution}")
        self.scale, self.mode, self.distribution, self.seed = scale, mode, distribution, seed

    def get_config(self):
        return {"scale": self.scale, "mode": self.mode, "distribution": self.distribution, "seed": self.seed,
                "dtype": self.dtype.name}

    def __call__(self, shape, dtype=None, partition_info=None):
        shape = _dims(shape)
        # a part of a partitioned variable scales as the whole variable does
        fan_in, fan_out = _compute_fans(partition_info.full_shape if partition_info is not None else shape)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        scale = self.scale / max(1.0, n)
        rops = random_ops_api()
        dt = self._dtype(dtype)
        if self.distribution == "truncated_normal":
            return rops.truncated_normal(shape, 0.0, np.sqrt(scale) / 0.87962566103423978, dt, seed=self.seed)
        if self.distribution == "untruncated_normal":
            return rops.random_normal(shape, 0.0, np.sqrt(scale), dt, seed=self.seed)
        limit = np.sqrt(3.0 * scale)
        return rops.random_uniform(shape, -limit, limit, dt, seed=self.seed)


class GlorotUniform(VarianceScaling):
    def __init__(self, seed=None, dtype=dtypes.float32):
        super().__init__(1.0, "fan_avg", "uniform", seed, dtype)

    def get_config(self):
        return {"seed": self.seed, "dtype": self.dtype.name}


class GlorotNormal(VarianceScaling):
    def __init__(self, seed=None, dtype=dtypes.float32):
        super().__init__(1.0, "fan_avg", "truncated_normal", seed, dtype)

    def get_config(self):
        return {"seed": self.seed, "dtype": self.dtype.name}


def he_normal(seed=None):
    return VarianceScaling(2.0, "fan_in", "truncated_normal", seed)


def he_uniform(seed=None):
    return VarianceScaling(2.0, "fan_in", "uniform", seed)


def lecun_normal(seed=None):
    return VarianceScaling(1.0, "fan_in", "truncated_normal", seed)


def lecun_uniform(seed=None):
    return VarianceScaling(1.0, "fan_in", "uniform", seed)


def float_dtype(dtype):
    """`dtype` as a DType; TF's initializers that only draw floats refuse the others."""
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"Argument `dtype` is expected to be floating point. Received: {dtype}.")
    return dtype


class UniformUnitScaling(Initializer):
    """Uniform in +-sqrt(3 / input_size) * factor, input_size the product of all dims but the last."""

    def __init__(self, factor=1.0, seed=None, dtype=dtypes.float32):
        super().__init__(float_dtype(dtype))
        self.factor, self.seed = factor, seed

    def get_config(self):
        return {"factor": self.factor, "seed": self.seed, "dtype": self.dtype.name}

    def __call__(self, shape, dtype=None, partition_info=None):
        shape = _dims(shape)
        full = partition_info.full_shape if partition_info is not None else shape
        input_size = max(float(np.prod([float(d) for d in full[:-1]])), 1.0)
        limit = np.sqrt(3.0 / input_size) * self.factor
        return random_ops_api().random_uniform(shape, -limit, limit, self._dtype(dtype), seed=self.seed)


class Identity(Initializer):
    """gain * the identity matrix (2-D shapes only)."""

    def __init__(self, gain=1.0, dtype=dtypes.float32):
        super().__init__(float_dtype(dtype))
        self.gain = gain

    def get_config(self):
        return {"gain": self.gain, "dtype": self.dtype.name}

    def __call__(self, shape, dtype=None, partition_info=None):
        shape = _dims(shape)
        full = partition_info.full_shape if partition_info is not None else shape
        if len(full) != 2:
            raise ValueError("The tensor to initialize, specified by argument `shape` must be at least "
                             f"two-dimensional. Received shape={shape}")
        from .extra_ops import eye  # extra_ops registers after this module
        value = eye(*full, dtype=self._dtype(dtype))
        if partition_info is not None:
            value = array_ops.slice(value, partition_info.var_offset, shape)
        return self.gain * value


def random_ops_api():
    from . import random_ops  # imported late: random ops register after the core families
    return random_ops


def _dims(shape):
    if isinstance(shape, TensorShape):
        return shape.as_list()
    return [int(d) for d in shape] if isinstance(shape, (list, tuple)) else shape


def _compute_fans(shape):
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = int(np.prod(shape[:-2]))
    return shape[-2] * receptive, shape[-1] * receptive


zeros_initializer = Zeros
ones_initializer = Ones
constant_initializer = Constant
random_normal_initializer = RandomNormal
truncated_normal_initializer = TruncatedNormal
random_uniform_initializer = RandomUniform
variance_scaling_initializer = VarianceScaling
glorot_uniform_initializer = GlorotUniform
glorot_normal_initializer = GlorotNormal
uniform_unit_scaling_initializer = UniformUnitScaling
