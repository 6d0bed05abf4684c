"""`tf.variable_scope` and `tf.get_variable`: named, shareable variables (TF1).

As in TensorFlow 1.x:

- A graph holds one variable store (collection `("__variable_store",)`: full
  variable name -> Variable) and a per-thread scope store (collection
  `("__varscope",)`: the current `VariableScope` and how often each scope
  name was opened, for `default_name` uniquification).
- `get_variable(name)` prefixes `name` with the current variable scope (not
  the name scope) and creates the variable with the name scope reset, so its
  ops are `<scope>/<name>`, `<scope>/<name>/Initializer/...`, `.../Assign`,
  `.../read`. Reuse: False (the default at top level) refuses an existing
  name, True refuses a missing one, AUTO_REUSE creates or returns.
- `variable_scope("layer1")` also opens a name scope, made unique by the
  graph (`layer1`, then `layer1_1` on re-entry), while the variable scope
  name stays `layer1`. `variable_scope(None, default_name="dense")` makes
  the variable scope unique too (`dense`, `dense_1`).
- A regularizer's loss goes into REGULARIZATION_LOSSES, built under
  `<name>/Regularizer/`.
"""
import contextlib
import enum
import inspect
import threading

from ..framework import dtypes
from ..framework.graph import GraphKeys, Tensor, get_default_graph, graph_of
from ..framework.op_builder import convert_to_tensor, register_tensor_conversion_function
from ..framework.tensor_shape import as_shape
from . import array_ops
from . import partitioned_variable as partitioned
from . import variables as variables_lib


class _ReuseMode(enum.Enum):
    """Mode for variable access within a variable scope."""
    AUTO_REUSE = 1


AUTO_REUSE = _ReuseMode.AUTO_REUSE

_VARSTORE_KEY = ("__variable_store",)
_VARSCOPESTORE_KEY = ("__varscope",)


@contextlib.contextmanager
def init_scope(graph=None):
    """TF's `ops.init_scope` in graph mode: lifts out of control-flow contexts and
    clears control dependencies; the name scope and device stay as they are."""
    g = graph or get_default_graph()
    saved = g._get_control_flow_context()
    g._set_control_flow_context(None)
    try:
        with g.control_dependencies(None):
            yield
    finally:
        g._set_control_flow_context(saved)


def no_regularizer(_):
    """Use this function to prevent regularization of variables."""
    return None


# -- regularization losses that rebuild on use (as TF's _LazyEvalTensor) ---------------

class _LazyEvalTensor:
    """A regularization loss in the collection: it reads like its first build (name,
    dtype, shape) and builds its ops again each time it is converted to a Tensor."""

    def __init__(self, thunk):
        self._thunk = thunk
        self._master_tensor = thunk()

    def _as_tensor(self, dtype=None, name=None, as_ref=False):
        return self._thunk()

    def _as_graph_element(self):
        return self._master_tensor

    name = property(lambda self: self._master_tensor.name)
    dtype = property(lambda self: self._master_tensor.dtype)
    shape = property(lambda self: self._master_tensor.shape)
    op = property(lambda self: self._master_tensor.op)
    graph = property(lambda self: self._master_tensor.graph)
    device = property(lambda self: self._master_tensor.device)
    value_index = property(lambda self: self._master_tensor.value_index)

    def get_shape(self):
        return self._master_tensor.get_shape()

    def eval(self, feed_dict=None, session=None):
        return self._master_tensor.eval(feed_dict, session)

    def __repr__(self):
        return repr(self._master_tensor)

    def __str__(self):
        return str(self._master_tensor)


def _lazy_op(name):
    def method(self, *args):
        return getattr(self._as_tensor(), name)(*args)
    return method


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
              "__rtruediv__", "__neg__", "__pow__", "__rpow__", "__getitem__"):
    setattr(_LazyEvalTensor, _name, _lazy_op(_name))

register_tensor_conversion_function(
    _LazyEvalTensor, lambda value, dtype=None, name=None, as_ref=False: value._as_tensor(dtype, name, as_ref))


# -- the variable store ------------------------------------------------------------------

def _takes_no_required_args(fn):
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return False
    return all(p.default is not inspect.Parameter.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
               for p in sig.parameters.values())


def _accepts(fn, arg):
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return True
    return arg in params or any(p.kind == p.VAR_KEYWORD for p in params.values())


class _VariableStore:
    """Variables created by get_variable, by full name."""

    def __init__(self):
        self._vars = {}
        self._partitioned_vars = {}

    def get_variable(self, name, shape=None, dtype=dtypes.float32, initializer=None, regularizer=None, reuse=None,
                     trainable=None, collections=None, caching_device=None, partitioner=None, validate_shape=True,
                     use_resource=None, custom_getter=None, constraint=None, synchronization=None,
                     aggregation=None):
        if custom_getter is not None and not callable(custom_getter):
            raise ValueError(f"Passed a custom_getter which is not callable: {custom_getter}")
        if dtype is not None:
            dtype = dtypes.as_dtype(dtype).base_dtype

        def _true_getter(name, shape=None, dtype=dtypes.float32, initializer=None, regularizer=None, reuse=None,
                         trainable=None, collections=None, caching_device=None, partitioner=None,
                         validate_shape=True, use_resource=None, constraint=None, synchronization=None,
                         aggregation=None):
            is_scalar = shape is not None and isinstance(shape, (list, tuple)) and not shape
            if partitioner is not None and not is_scalar:
                if not callable(partitioner):
                    raise ValueError(f"Partitioner must be callable, but received: {partitioner}")
                with get_default_graph().name_scope(None):
                    return self._get_partitioned_variable(
                        name, partitioner, shape=shape, dtype=dtype, initializer=initializer,
                        regularizer=regularizer, reuse=reuse, trainable=trainable, collections=collections,
                        caching_device=caching_device, validate_shape=validate_shape, constraint=constraint)
            if reuse is True and partitioner is None and name in self._partitioned_vars:
                # reusing a partitioned variable needs no partitioner
                return self._get_partitioned_variable(name, None, shape=shape, dtype=dtype, reuse=reuse)
            if f"{name}/part_0" in self._vars:
                raise ValueError(f"No partitioner was provided, but a partitioned version of the variable was "
                                 f"found: {name}/part_0. Perhaps a variable of the same name was already created "
                                 f"with partitioning?")
            return self._get_single_variable(name, shape=shape, dtype=dtype, initializer=initializer,
                                             regularizer=regularizer, reuse=reuse, trainable=trainable,
                                             collections=collections, caching_device=caching_device,
                                             validate_shape=validate_shape, constraint=constraint)

        if trainable is None:
            trainable = True
        if custom_getter is not None:
            kwargs = dict(getter=_true_getter, name=name, shape=shape, dtype=dtype, initializer=initializer,
                          regularizer=regularizer, reuse=reuse, trainable=trainable, collections=collections,
                          caching_device=caching_device, partitioner=partitioner, validate_shape=validate_shape,
                          use_resource=use_resource, synchronization=synchronization, aggregation=aggregation)
            if _accepts(custom_getter, "constraint"):
                kwargs["constraint"] = constraint
            return custom_getter(**kwargs)
        return _true_getter(name, shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer,
                            reuse=reuse, trainable=trainable, collections=collections,
                            caching_device=caching_device, partitioner=partitioner, validate_shape=validate_shape,
                            use_resource=use_resource, constraint=constraint)

    def _get_partitioned_variable(self, name, partitioner, shape=None, dtype=dtypes.float32, initializer=None,
                                  regularizer=None, reuse=None, trainable=None, collections=None,
                                  caching_device=None, validate_shape=True, constraint=None):
        """A PartitionedVariable: the parts `<name>/part_<i>` (each a variable of the store, with its
        SaveSliceInfo), created or, under reuse, found with the same shape, dtype and partitions."""
        initializing_from_value = initializer is not None and isinstance(initializer, Tensor)
        if name in self._vars:
            raise ValueError(f"A partitioner was provided, but an unpartitioned version of the variable was found: "
                             f"{name}.  Perhaps a variable of the same name was already created without "
                             f"partitioning?")
        shape = as_shape(shape)
        if initializing_from_value:
            shape = shape.merge_with(initializer.get_shape())
        dtype = dtypes.as_dtype(dtype)
        partitions = None
        if not reuse or partitioner:
            partitions = partitioned.call_partitioner(partitioner, shape, dtype)

        if name in self._partitioned_vars:
            if reuse is False:
                raise ValueError(f"Partitioned variable with name {name} already exists. Did you mean to set "
                                 f"reuse=True or reuse=tf.AUTO_REUSE in VarScope?")
            found = self._partitioned_vars[name]
            if not shape.is_compatible_with(found.get_shape()):
                raise ValueError(f"Trying to reuse partitioned variable {name}, but specified shape {shape} and "
                                 f"found shape {found.get_shape()}.")
            if not dtype.is_compatible_with(found.dtype):
                raise ValueError(f"Trying to reuse partitioned variable {name}, but specified dtype {dtype.name} "
                                 f"and found dtype {found.dtype.name}.")
            if partitions is not None and found._get_partitions() != partitions:
                raise ValueError(f"Trying to reuse partitioned variable {name}, but specified partitions "
                                 f"{partitions} and found partitions {found._get_partitions()}.")
            return found
        if reuse is True:
            raise ValueError(f"PartitionedVariable {name} does not exist, or was not created with "
                             f"tf.get_variable(). Did you mean to set reuse=False or reuse=tf.AUTO_REUSE in "
                             f"VarScope?")

        axis, num_slices = partitioned.slice_axis_and_count(partitions)
        if f"{name}/part_0" in self._vars:
            if f"{name}/part_{num_slices - 1}" not in self._vars:
                raise ValueError(f"Partitioner returned a different partitioning than what was already found.  "
                                 f"Partitioner returned {num_slices} shards, and shard {name}/part_0 was found, "
                                 f"but {name}/part_{num_slices - 1} was not.")
            if f"{name}/part_{num_slices}" in self._vars:
                raise ValueError(f"Partitioner returned a different partitioning than what was already found.  "
                                 f"Partitioner returned {num_slices} shards, and shard {name}/part_0 was found, "
                                 f"but so was the extra shard {name}/part_{num_slices}.")
        if initializer is None:
            initializer, _ = _default_initializer(name, dtype)
        g = get_default_graph()
        parts = []
        for i, (offset, part_shape) in enumerate(partitioned.iter_slices(shape.as_list(), num_slices, axis)):
            part_name = f"{name}/part_{i}"
            info = partitioned.PartitionInfo(full_shape=shape.as_list(), var_offset=offset)
            with g.name_scope(part_name + "/PartitionedInitializer"):
                if callable(initializer):
                    init, init_shape = initializer, part_shape
                else:
                    whole = initializer if isinstance(initializer, Tensor) else convert_to_tensor(initializer,
                                                                                                  dtype=dtype)
                    init = array_ops.slice(whole, offset, part_shape)
                    dtype = init.dtype.base_dtype
                    init_shape = None
            with g.name_scope(None):
                v = self._get_single_variable(part_name, shape=init_shape, dtype=dtype, initializer=init,
                                              partition_info=info, regularizer=regularizer, reuse=reuse,
                                              trainable=trainable, collections=collections,
                                              caching_device=caching_device, validate_shape=validate_shape,
                                              constraint=constraint)
            v._set_save_slice_info(variables_lib.SaveSliceInfo(name, shape.as_list(), offset, part_shape))
            parts.append(v)
        result = partitioned.PartitionedVariable(name=name, shape=shape, dtype=dtype, variable_list=parts,
                                                 partitions=partitions)
        self._partitioned_vars[name] = result
        return result

    def _get_single_variable(self, name, shape=None, dtype=dtypes.float32, initializer=None, regularizer=None,
                             reuse=None, trainable=None, collections=None, caching_device=None, validate_shape=True,
                             constraint=None, partition_info=None):
        initializing_from_value = initializer is not None and not callable(initializer)
        if shape is not None and initializing_from_value:
            raise ValueError("If initializer is a constant, do not specify shape.")
        dtype = dtypes.as_dtype(dtype)
        if shape is not None:
            shape = as_shape(shape)

        if name in self._vars:
            found = self._vars[name]
            if reuse is False:
                raise ValueError(f"Variable {name} already exists, disallowed. Did you mean to set reuse=True or "
                                 f"reuse=tf.AUTO_REUSE in VarScope?")
            if shape is not None and not shape.is_compatible_with(found.get_shape()):
                raise ValueError(f"Trying to share variable {name}, but specified shape {shape} and found shape "
                                 f"{found.get_shape()}.")
            if not dtype.is_compatible_with(found.dtype):
                raise ValueError(f"Trying to share variable {name}, but specified dtype {dtype.name} and found "
                                 f"dtype {found.dtype.base_dtype.name}.")
            return found

        if reuse is True:
            raise ValueError(f"Variable {name} does not exist, or was not created with tf.get_variable(). Did you "
                             f"mean to set reuse=tf.AUTO_REUSE in VarScope?")

        if initializer is None and shape is None:
            raise ValueError(f"Variable {name} did not get an initializer, so its `shape` argument must be "
                             f"specified.")
        if initializer is None:
            initializer, initializing_from_value = _default_initializer(name, dtype)
        g = get_default_graph()
        with init_scope(g):
            if initializing_from_value:
                init_val = initializer
                variable_dtype = None
            else:
                if inspect.isclass(initializer):
                    initializer = initializer()
                if shape is not None and shape.is_fully_defined():
                    dims = shape.as_list()
                    if _accepts(initializer, "partition_info"):
                        def init_val(init=initializer, dims=dims, dtype=dtype):
                            return init(dims, dtype=dtype, partition_info=partition_info)
                    else:
                        def init_val(init=initializer, dims=dims, dtype=dtype):
                            return init(dims, dtype=dtype)
                    variable_dtype = dtype.base_dtype
                elif _takes_no_required_args(initializer):
                    init_val = initializer
                    variable_dtype = None
                else:
                    raise ValueError("The initializer passed is not valid. It should be a callable with no "
                                     "arguments and the shape should not be provided or an instance of "
                                     "`tf.keras.initializers.*' and `shape` should be fully defined.")
            v = variables_lib.Variable(initial_value=init_val, name=name, trainable=trainable,
                                       collections=collections, caching_device=caching_device,
                                       dtype=variable_dtype, validate_shape=validate_shape, constraint=constraint)
        self._vars[name] = v

        if regularizer:
            def make_regularizer_op():
                with g.colocate_with(v.op), g.name_scope(name + "/Regularizer/"):
                    return regularizer(v)

            if regularizer(v) is not None:  # TF calls it once here, outside the Regularizer scope
                g.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, _LazyEvalTensor(make_regularizer_op))
        return v


def _default_initializer(name, dtype):
    if dtype.is_floating:
        return variables_lib.GlorotUniform(), False
    if dtype.is_integer or dtype.is_unsigned or dtype.is_bool or dtype == dtypes.string:
        return variables_lib.Zeros(), False
    raise ValueError(f"An initializer for variable {name} of {dtype.base_dtype} is required")


# -- scopes --------------------------------------------------------------------------------

class VariableScope:
    """Defaults for `get_variable` inside a `variable_scope`: name prefix, reuse,
    initializer, regularizer, dtype, custom getter, constraint."""

    def __init__(self, reuse, name="", initializer=None, regularizer=None, caching_device=None, partitioner=None,
                 custom_getter=None, name_scope="", dtype=dtypes.float32, use_resource=None, constraint=None):
        self._name = name
        self._initializer = initializer
        self._regularizer = regularizer
        self._reuse = reuse
        self._caching_device = caching_device
        self._partitioner = partitioner
        self._custom_getter = custom_getter
        self._name_scope = name_scope
        self._dtype = dtype
        self._use_resource = use_resource
        self._constraint = constraint

    name = property(lambda self: self._name)
    original_name_scope = property(lambda self: self._name_scope)
    reuse = property(lambda self: self._reuse)
    initializer = property(lambda self: self._initializer)
    dtype = property(lambda self: self._dtype)
    use_resource = property(lambda self: self._use_resource)
    regularizer = property(lambda self: self._regularizer)
    caching_device = property(lambda self: self._caching_device)
    partitioner = property(lambda self: self._partitioner)
    custom_getter = property(lambda self: self._custom_getter)
    constraint = property(lambda self: self._constraint)

    def reuse_variables(self):
        """Reuse variables in this scope."""
        self._reuse = True

    def set_initializer(self, initializer):
        self._initializer = initializer

    def set_dtype(self, dtype):
        self._dtype = dtype

    def set_use_resource(self, use_resource):
        self._use_resource = use_resource

    def set_regularizer(self, regularizer):
        self._regularizer = regularizer

    def set_caching_device(self, caching_device):
        self._caching_device = caching_device

    def set_partitioner(self, partitioner):
        self._partitioner = partitioner

    def set_custom_getter(self, custom_getter):
        self._custom_getter = custom_getter

    def get_collection(self, name):
        scope = self._name + "/" if self._name else ""
        return get_default_graph().get_collection(name, scope)

    def trainable_variables(self):
        return self.get_collection(GraphKeys.TRAINABLE_VARIABLES)

    def global_variables(self):
        return self.get_collection(GraphKeys.GLOBAL_VARIABLES)

    def local_variables(self):
        return self.get_collection(GraphKeys.LOCAL_VARIABLES)

    def get_variable(self, var_store, name, shape=None, dtype=None, initializer=None, regularizer=None, reuse=None,
                     trainable=None, collections=None, caching_device=None, partitioner=None, validate_shape=True,
                     use_resource=None, custom_getter=None, constraint=None, synchronization=None,
                     aggregation=None):
        if regularizer is None:
            regularizer = self._regularizer
        if caching_device is None:
            caching_device = self._caching_device
        if partitioner is None:
            partitioner = self._partitioner
        if custom_getter is None:
            custom_getter = self._custom_getter
        if reuse is None:
            reuse = self._reuse
        if use_resource is None:
            use_resource = self._use_resource
        full_name = self.name + "/" + name if self.name else name
        g = get_default_graph()
        # variable names depend only on the variable scope: the name scope is reset meanwhile
        with g.name_scope(None):
            if dtype is not None and initializer is not None and not callable(initializer):
                init_dtype = convert_to_tensor(initializer).dtype.base_dtype
                if init_dtype != dtypes.as_dtype(dtype).base_dtype:
                    raise ValueError(f"Initializer type '{init_dtype}' and explicit dtype "
                                     f"'{dtypes.as_dtype(dtype)}' don't match.")
            if initializer is None:
                initializer = self._initializer
            if constraint is None:
                constraint = self._constraint
            if dtype is None:
                dtype = self._dtype
            return var_store.get_variable(full_name, shape=shape, dtype=dtype, initializer=initializer,
                                          regularizer=regularizer, reuse=reuse, trainable=trainable,
                                          collections=collections, caching_device=caching_device,
                                          partitioner=partitioner, validate_shape=validate_shape,
                                          use_resource=use_resource, custom_getter=custom_getter,
                                          constraint=constraint, synchronization=synchronization,
                                          aggregation=aggregation)

    def __repr__(self):
        return f"<tf.VariableScope '{self._name}' reuse={self._reuse}>"


class _VariableScopeStore(threading.local):
    """The current variable scope and the open-count of each scope name, per thread."""

    def __init__(self):
        super().__init__()
        self.current_scope = VariableScope(False)
        self.variable_scopes_count = {}

    def open_variable_scope(self, scope_name):
        self.variable_scopes_count[scope_name] = self.variable_scopes_count.get(scope_name, 0) + 1

    def close_variable_subscopes(self, scope_name):
        for k in list(self.variable_scopes_count):
            if scope_name is None or k.startswith(scope_name + "/"):
                self.variable_scopes_count[k] = 0

    def variable_scope_count(self, scope_name):
        return self.variable_scopes_count.get(scope_name, 0)


def get_variable_scope_store(graph=None):
    g = graph or get_default_graph()
    found = g.get_collection(_VARSCOPESTORE_KEY)
    if found:
        return found[0]
    store = _VariableScopeStore()
    g.add_to_collection(_VARSCOPESTORE_KEY, store)
    return store


def get_variable_scope():
    """The current variable scope."""
    return get_variable_scope_store().current_scope


def _get_default_variable_store(graph=None):
    g = graph or get_default_graph()
    found = g.get_collection(_VARSTORE_KEY)
    if found:
        return found[0]
    store = _VariableStore()
    g.add_to_collection(_VARSTORE_KEY, store)
    return store


def get_variable(name, shape=None, dtype=None, initializer=None, regularizer=None, trainable=None,
                 collections=None, caching_device=None, partitioner=None, validate_shape=True, use_resource=None,
                 custom_getter=None, constraint=None, synchronization=None, aggregation=None):
    """Gets an existing variable with these parameters or creates a new one (TF1)."""
    return get_variable_scope().get_variable(
        _get_default_variable_store(), name, shape=shape, dtype=dtype, initializer=initializer,
        regularizer=regularizer, trainable=trainable, collections=collections, caching_device=caching_device,
        partitioner=partitioner, validate_shape=validate_shape, use_resource=use_resource,
        custom_getter=custom_getter, constraint=constraint, synchronization=synchronization,
        aggregation=aggregation)


def get_local_variable(name, shape=None, dtype=None, initializer=None, regularizer=None, trainable=False,
                       collections=None, caching_device=None, partitioner=None, validate_shape=True,
                       use_resource=None, custom_getter=None, constraint=None, synchronization=None,
                       aggregation=None):
    """Like get_variable, but in LOCAL_VARIABLES and never trainable."""
    collections = list(collections) + [GraphKeys.LOCAL_VARIABLES] if collections else [GraphKeys.LOCAL_VARIABLES]
    return get_variable(name, shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer,
                        trainable=False, collections=collections, caching_device=caching_device,
                        partitioner=partitioner, validate_shape=validate_shape, use_resource=use_resource,
                        custom_getter=custom_getter, constraint=constraint)


def _maybe_wrap_custom_getter(custom_getter, old_getter):
    if old_getter is None:
        return custom_getter

    def wrapped_custom_getter(getter, *args, **kwargs):
        return custom_getter(lambda *a, **k: old_getter(getter, *a, **k), *args, **kwargs)
    return wrapped_custom_getter


def _apply_overrides(scope_obj, initializer, regularizer, caching_device, partitioner, custom_getter, dtype,
                     use_resource, old_getter):
    if initializer is not None:
        scope_obj.set_initializer(initializer)
    if regularizer is not None:
        scope_obj.set_regularizer(regularizer)
    if caching_device is not None:
        scope_obj.set_caching_device(caching_device)
    if partitioner is not None:
        scope_obj.set_partitioner(partitioner)
    if custom_getter is not None:
        scope_obj.set_custom_getter(_maybe_wrap_custom_getter(custom_getter, old_getter))
    if dtype is not None:
        scope_obj.set_dtype(dtype)
    if use_resource is not None:
        scope_obj.set_use_resource(use_resource)


class _pure_variable_scope:  # noqa: N801 - TF's name
    """Enters a variable scope without touching name scopes."""

    def __init__(self, name_or_scope, reuse=None, initializer=None, regularizer=None, caching_device=None,
                 partitioner=None, custom_getter=None, old_name_scope=None, dtype=dtypes.float32,
                 use_resource=None, constraint=None):
        self._name_or_scope = name_or_scope
        self._reuse = reuse
        self._initializer = initializer
        self._regularizer = regularizer
        self._caching_device = caching_device
        self._partitioner = partitioner
        self._custom_getter = custom_getter
        self._old_name_scope = old_name_scope
        self._dtype = dtype
        self._use_resource = use_resource
        self._constraint = constraint
        self._var_scope_store = get_variable_scope_store()
        self._last_variable_scope_object = None
        if isinstance(name_or_scope, VariableScope):
            self._new_name = name_or_scope.name
            src = name_or_scope
            obj = VariableScope(src.reuse if not reuse else reuse, name=self._new_name,
                                initializer=src.initializer, regularizer=src.regularizer,
                                caching_device=src.caching_device, partitioner=src.partitioner, dtype=src.dtype,
                                custom_getter=src.custom_getter, name_scope=src.original_name_scope,
                                use_resource=src.use_resource, constraint=constraint)
            _apply_overrides(obj, initializer, regularizer, caching_device, partitioner, custom_getter, dtype,
                             use_resource, src.custom_getter)
            self._cached_variable_scope_object = obj

    def __enter__(self):
        store = self._var_scope_store
        self._old = store.current_scope
        if isinstance(self._name_or_scope, VariableScope):
            store.open_variable_scope(self._new_name)
            self._old_subscopes = dict(store.variable_scopes_count)
            obj = self._cached_variable_scope_object
        else:
            old = self._old
            self._new_name = old.name + "/" + self._name_or_scope if old.name else self._name_or_scope
            self._reuse = self._reuse or old.reuse  # reuse is inherited by sub-scopes
            name_scope = self._name_or_scope if self._old_name_scope is None else self._old_name_scope
            obj = VariableScope(self._reuse, name=self._new_name, initializer=old.initializer,
                                regularizer=old.regularizer, caching_device=old.caching_device,
                                partitioner=old.partitioner, dtype=old.dtype, use_resource=old.use_resource,
                                custom_getter=old.custom_getter, name_scope=name_scope,
                                constraint=self._constraint)
            _apply_overrides(obj, self._initializer, self._regularizer, self._caching_device, self._partitioner,
                             self._custom_getter, self._dtype, self._use_resource, old.custom_getter)
            store.open_variable_scope(self._new_name)
        store.current_scope = obj
        self._last_variable_scope_object = obj
        return obj

    def __exit__(self, *exc):
        store = self._var_scope_store
        if store.current_scope is not self._last_variable_scope_object:
            raise RuntimeError("Improper nesting of variable_scope.")
        if isinstance(self._name_or_scope, VariableScope):
            store.variable_scopes_count = self._old_subscopes
        else:
            store.close_variable_subscopes(self._new_name)
        store.current_scope = self._old
        return False


def _get_unique_variable_scope(prefix):
    store = get_variable_scope_store()
    current = get_variable_scope()
    name = current.name + "/" + prefix if current.name else prefix
    if store.variable_scope_count(name) == 0:
        return prefix
    idx = 1
    while store.variable_scope_count(f"{name}_{idx}") > 0:
        idx += 1
    return f"{prefix}_{idx}"


class _NameScope:
    """A re-enterable `graph.name_scope(name)` (TF's name_scope objects can be entered again)."""

    def __init__(self, graph, name):
        self._graph, self._name, self._stack = graph, name, []

    def __enter__(self):
        cm = self._graph.name_scope(self._name)
        value = cm.__enter__()
        self._stack.append(cm)
        return value

    def __exit__(self, *exc):
        return self._stack.pop().__exit__(*exc)


class variable_scope:  # noqa: N801 - TF's name
    """A context manager for defining ops that create variables (layers): validates that
    `values` come from one graph, makes it the default, and pushes a name scope and a
    variable scope (see the module doc for naming and reuse)."""

    def __init__(self, name_or_scope, default_name=None, values=None, initializer=None, regularizer=None,
                 caching_device=None, partitioner=None, custom_getter=None, reuse=None, dtype=None,
                 use_resource=None, constraint=None, auxiliary_name_scope=True):
        self._name_or_scope = name_or_scope
        self._default_name = default_name
        self._initializer = initializer
        self._regularizer = regularizer
        self._caching_device = caching_device
        self._partitioner = partitioner
        self._custom_getter = custom_getter
        self._reuse = reuse
        self._dtype = dtype
        self._use_resource = use_resource
        self._constraint = constraint
        if default_name is None and name_or_scope is None:
            raise TypeError("If default_name is None then name_or_scope is required")
        if self._reuse is False:
            self._reuse = None  # False means None since TF 1.1: no non-inheriting scopes
        if not (self._reuse is True or self._reuse is None or self._reuse is AUTO_REUSE):
            raise ValueError("The reuse parameter must be True or False or None.")
        self._graph = graph_of(values or [])
        self._cached_pure_variable_scope = None
        self._current_name_scope = None
        if not isinstance(auxiliary_name_scope, bool):
            raise TypeError(f"The auxiliary_name_scope must be `True` or `False`, while get {auxiliary_name_scope}")
        self._auxiliary_name_scope = auxiliary_name_scope

    def __enter__(self):
        self._graph_context_manager = self._graph.as_default()
        self._graph_context_manager.__enter__()
        if self._cached_pure_variable_scope is not None:
            if self._current_name_scope is not None:
                self._current_name_scope.__enter__()
            return self._cached_pure_variable_scope.__enter__()
        try:
            return self._enter_scope_uncached()
        except BaseException:
            self._graph_context_manager.__exit__(None, None, None)
            raise

    def _pure(self, name_or_scope, old_name_scope=None):
        return _pure_variable_scope(name_or_scope, reuse=self._reuse, initializer=self._initializer,
                                    regularizer=self._regularizer, caching_device=self._caching_device,
                                    partitioner=self._partitioner, custom_getter=self._custom_getter,
                                    old_name_scope=old_name_scope, dtype=self._dtype,
                                    use_resource=self._use_resource, constraint=self._constraint)

    def _enter_scope_uncached(self):
        g = self._graph
        if self._auxiliary_name_scope:
            current_name_scope = None
        else:
            here = g.get_name_scope()
            current_name_scope = _NameScope(g, here + "/" if here else "")
        if self._name_or_scope is not None:
            if not isinstance(self._name_or_scope, (VariableScope, str)):
                raise TypeError("VariableScope: name_or_scope must be a string or VariableScope.")
            if isinstance(self._name_or_scope, str):
                name_scope = self._name_or_scope
            else:
                name_scope = self._name_or_scope.name.split("/")[-1]
            if name_scope or current_name_scope:
                current_name_scope = current_name_scope or _NameScope(g, name_scope)
                entered_name = current_name_scope.__enter__()
                self._current_name_scope = current_name_scope
                old_name_scope = entered_name if isinstance(self._name_or_scope, str) else \
                    self._name_or_scope.original_name_scope
                pure = self._pure(self._name_or_scope, old_name_scope)
            else:
                self._current_name_scope = None
                pure = self._pure(self._name_or_scope)
        else:
            if self._reuse:
                raise ValueError("reuse=True cannot be used without a name_or_scope")
            current_name_scope = current_name_scope or _NameScope(g, self._default_name)
            entered_name = current_name_scope.__enter__()
            self._current_name_scope = current_name_scope
            unique = _get_unique_variable_scope(self._default_name)
            pure = _pure_variable_scope(unique, initializer=self._initializer, regularizer=self._regularizer,
                                        caching_device=self._caching_device, partitioner=self._partitioner,
                                        custom_getter=self._custom_getter, old_name_scope=entered_name,
                                        dtype=self._dtype, use_resource=self._use_resource,
                                        constraint=self._constraint)
        try:
            entered = pure.__enter__()
        except BaseException:
            if self._current_name_scope is not None:
                self._current_name_scope.__exit__(None, None, None)
            raise
        self._cached_pure_variable_scope = pure
        return entered

    def __exit__(self, *exc):
        try:
            self._cached_pure_variable_scope.__exit__(*exc)
        finally:
            try:
                if self._current_name_scope is not None:
                    self._current_name_scope.__exit__(*exc)
            finally:
                self._graph_context_manager.__exit__(*exc)
        return False


@contextlib.contextmanager
def variable_op_scope(values, name_or_scope, default_name=None, initializer=None, regularizer=None,
                      caching_device=None, partitioner=None, custom_getter=None, reuse=None, dtype=None,
                      use_resource=None, constraint=None):
    """Deprecated: `variable_scope(name_or_scope, default_name, values)`."""
    with variable_scope(name_or_scope, default_name=default_name, values=values, initializer=initializer,
                        regularizer=regularizer, caching_device=caching_device, partitioner=partitioner,
                        custom_getter=custom_getter, reuse=reuse, dtype=dtype, use_resource=use_resource,
                        constraint=constraint) as scope:
        yield scope


__all__ = ["AUTO_REUSE", "VariableScope", "get_variable", "get_local_variable", "get_variable_scope",
           "variable_scope", "variable_op_scope", "no_regularizer", "init_scope"]


class Template:
    """A function whose variables are made on its first call and shared by every later call
    (tf.make_template): each call runs in the template's variable scope, reusing after the first."""

    def __init__(self, name, func, create_scope_now=False, unique_name=None, custom_getter=None):
        if name is None:
            raise ValueError("name cannot be None.")
        self._func = func
        self._name = name
        self._unique_name = unique_name
        self._custom_getter = custom_getter
        self._variable_scope = None
        if create_scope_now:
            with _pure_variable_scope(unique_name or _get_unique_variable_scope(name),
                                      custom_getter=custom_getter) as vs:
                self._variable_scope = vs
        self._variables_created = False
        self._first_call = True

    def _call_func(self, args, kwargs):
        g = get_default_graph()
        trainable_at_start = len(g.get_collection(GraphKeys.TRAINABLE_VARIABLES))
        result = self._func(*args, **kwargs)
        if self._variables_created:
            trainable = g.get_collection(GraphKeys.TRAINABLE_VARIABLES)
            if len(trainable) != trainable_at_start:
                raise ValueError(f"Trainable variable created when calling a template after the first time, perhaps "
                                 f"you used tf.Variable when you meant tf.get_variable: "
                                 f"{trainable[trainable_at_start:]}")
        else:
            self._variables_created = True
        return result

    def __call__(self, *args, **kwargs):
        if self._variable_scope is not None:
            with variable_scope(self._variable_scope, reuse=not self._first_call):
                try:
                    return self._call_func(args, kwargs)
                finally:
                    self._first_call = False
        with variable_scope(self._unique_name, self._name, custom_getter=self._custom_getter) as vs:
            self._variable_scope = vs
            try:
                return self._call_func(args, kwargs)
            finally:
                self._first_call = False

    @property
    def name(self):
        return self._name

    @property
    def func(self):
        return self._func

    @property
    def variable_scope(self):
        return self._variable_scope

    @property
    def variable_scope_name(self):
        """The scope's name ending in '/', so that it matches no other scope as a prefix (as TF's)."""
        if self._variable_scope is None:
            return None
        name = self._variable_scope.name
        return name if not name or name.endswith("/") else name + "/"

    def _scoped(self, key):
        if self._variable_scope is None:
            return []
        prefix = self.variable_scope_name
        return [v for v in get_default_graph().get_collection(key) if v.name.startswith(prefix)]

    @property
    def variables(self):
        return self.global_variables + self.local_variables

    @property
    def trainable_variables(self):
        return self._scoped(GraphKeys.TRAINABLE_VARIABLES)

    @property
    def non_trainable_variables(self):
        trainable = set(id(v) for v in self.trainable_variables)
        return [v for v in self.global_variables if id(v) not in trainable]

    @property
    def global_variables(self):
        return self._scoped(GraphKeys.GLOBAL_VARIABLES)

    @property
    def local_variables(self):
        return self._scoped(GraphKeys.LOCAL_VARIABLES)


def make_template(name_, func_, create_scope_now_=False, unique_name_=None, custom_getter_=None, **kwargs):
    """A Template of func_ (with **kwargs bound): variables made by tf.get_variable on the first
    call are reused by every later call."""
    import functools
    if kwargs:
        func_ = functools.partial(func_, **kwargs)
    return Template(name_, func_, create_scope_now=create_scope_now_, unique_name=unique_name_,
                    custom_getter=custom_getter_)
