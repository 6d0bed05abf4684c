"""Graph, Operation and Tensor: the user-visible dataflow graph.

A `Graph` owns its operations in creation order and hands out unique names
(`add`, `Add_1`, `layer1/MatMul`): uniqueness is case-insensitive, as in
TensorFlow. While an op is created, the graph applies the active scopes:
name scopes, control dependencies, device scopes (innermost wins, field by
field) and colocation. Shape and dtype inference run at creation, so a bad
line fails where the user wrote it.

The graph is never mutated by placement or partitioning; those passes read
it and return new objects.
"""
import contextlib
import os
import re
import sys
import threading

from .. import errors
from . import default_session
from . import device_spec as device_lib
from . import dtypes as dtypes_lib
from . import registry
from .tensor_shape import TensorShape, as_shape

_VALID_OP_NAME = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\-/>]*$")
_VALID_SCOPE_NAME = re.compile(r"^[A-Za-z0-9_.\-/>]*$")
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class GraphKeys:
    """Standard collection names."""
    GLOBAL_VARIABLES = "variables"
    VARIABLES = GLOBAL_VARIABLES
    LOCAL_VARIABLES = "local_variables"
    MODEL_VARIABLES = "model_variables"
    MOVING_AVERAGE_VARIABLES = "moving_average_variables"
    METRIC_VARIABLES = "metric_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    GLOBAL_STEP = "global_step"
    UPDATE_OPS = "update_ops"
    LOSSES = "losses"
    REGULARIZATION_LOSSES = "regularization_losses"
    SUMMARIES = "summaries"
    QUEUE_RUNNERS = "queue_runners"
    TRAIN_OP = "train_op"
    INIT_OP = "init_op"
    LOCAL_INIT_OP = "local_init_op"
    SAVERS = "savers"
    ASSET_FILEPATHS = "asset_filepaths"
    TABLE_INITIALIZERS = "table_initializer"
    COND_CONTEXT = "cond_context"
    WHILE_CONTEXT = "while_context"


def _user_frame():
    """(file, line) of the innermost caller outside graphrt: where the user wrote the op."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
    if frame is None:
        return None
    return (frame.f_code.co_filename, frame.f_lineno)


class Tensor:
    """One output of an Operation: `<op name>:<index>`, with a dtype and a static shape."""

    __array_priority__ = 100  # numpy defers `ndarray + Tensor` to Tensor.__radd__

    def __init__(self, op, value_index, dtype, shape=None):
        self._op = op
        self._value_index = value_index
        self._dtype = dtype
        self._shape = TensorShape(None) if shape is None else as_shape(shape)
        self._consumers = []

    @property
    def op(self):
        return self._op

    @property
    def value_index(self):
        return self._value_index

    @property
    def dtype(self):
        return self._dtype

    @property
    def graph(self):
        return self._op.graph

    @property
    def name(self):
        return f"{self._op.name}:{self._value_index}"

    @property
    def device(self):
        return self._op.device

    @property
    def shape(self):
        return self._shape

    def get_shape(self):
        return self._shape

    def set_shape(self, shape):
        """Narrows the static shape; an incompatible shape is a ValueError."""
        self._shape = self._shape.merge_with(shape)
        # what shape inference could not read before may be readable now (constant_value.py)
        self._op._graph._inferred_values.clear()

    def consumers(self):
        return list(self._consumers)

    def eval(self, feed_dict=None, session=None):
        return default_session.run_with_default(self, feed_dict, session, "eval")

    def _as_node_def_input(self):
        return self._op.name if self._value_index == 0 else f"{self._op.name}:{self._value_index}"

    def __repr__(self):
        return f"<tf.Tensor '{self.name}' shape={self._shape} dtype={self._dtype.name}>"

    def __str__(self):
        shape = f", shape={self._shape}" if self._shape.ndims is not None else ""
        device = f", device={self.device}" if self.device else ""
        return f"Tensor(\"{self.name}\"{shape}, dtype={self._dtype.name}{device})"

    __hash__ = object.__hash__  # by identity, as __eq__; in C (fetches and feeds are dict keys every run)

    def __eq__(self, other):
        return self is other

    def __bool__(self):
        raise errors.OperatorNotAllowedInGraphError(
            "Using a `tf.Tensor` as a Python `bool` is not allowed. Use `if t is not None:` instead of `if t:` "
            "to test if a tensor is defined, and use TensorFlow ops such as tf.cond to execute subgraphs "
            "conditioned on the value of a tensor.")

    def __iter__(self):
        raise errors.OperatorNotAllowedInGraphError(
            "Tensor objects are only iterable when eager execution is enabled. To iterate over this tensor "
            "use tf.unstack or tf.map_fn.")

    def __len__(self):
        raise TypeError(f"len is not well defined for symbolic Tensors. ({self.name}) "
                        "Please call `x.shape` rather than `len(x)` for shape information.")

    def __array__(self, dtype=None, copy=None):
        raise NotImplementedError(f"Cannot convert a symbolic Tensor ({self.name}) to a numpy array. "
                                  "Run it in a Session to get its value.")

    @classmethod
    def _override_operator(cls, operator, func):
        setattr(cls, operator, func)


class Operation:
    """A node: name, type, inputs, control inputs, attrs, requested device, outputs."""

    def __init__(self, graph, op_def, name, inputs, attrs, control_inputs, output_dtypes):
        self._graph = graph
        self._op_def = op_def
        self._name = name
        self._inputs = tuple(inputs)
        self._control_inputs = list(control_inputs)
        self._attrs = dict(attrs)
        self._device = ""
        self._id = None
        self._outputs = [Tensor(self, i, dt) for i, dt in enumerate(output_dtypes)]
        self._control_outputs = []
        self._traceback = _user_frame()
        self._control_flow_context = None
        self._gradient_op_type = None  # set by gradient_override_map when the op is created

    # -- identity -------------------------------------------------------
    @property
    def name(self):
        return self._name

    @property
    def type(self):
        return self._op_def.name

    @property
    def op_def(self):
        return self._op_def

    @property
    def graph(self):
        return self._graph

    @property
    def inputs(self):
        return self._inputs

    @property
    def outputs(self):
        return list(self._outputs)

    @property
    def control_inputs(self):
        return list(self._control_inputs)

    @property
    def device(self):
        return self._device

    @property
    def traceback(self):
        return self._traceback

    def values(self):
        return tuple(self._outputs)

    def get_attr(self, name):
        if name not in self._attrs:
            raise ValueError(f"Operation '{self._name}' has no attr named '{name}'.")
        return self._attrs[name]

    @property
    def attrs(self):
        return dict(self._attrs)

    def colocation_groups(self):
        """The `loc:@name` groups this op belongs to (bytes, as TF's); its own name if none."""
        return [group.encode() for group in self._colocation_groups()]

    def _colocation_groups(self):
        groups = [g for g in self._attrs.get("_class", ()) if g.startswith("loc:@")]
        return groups or [f"loc:@{self._name}"]

    def run(self, feed_dict=None, session=None):
        default_session.run_with_default(self, feed_dict, session, "run")

    # -- mutation (graph construction only) ------------------------------
    def _set_device(self, device):
        self._device = device_lib.canonical_name(device)

    def _set_attr(self, name, value):
        self._attrs[name] = value

    def _add_control_input(self, op):
        if op not in self._control_inputs:
            self._control_inputs.append(op)
            op._control_outputs.append(self)
            self._graph._version += 1

    def _add_control_inputs(self, ops):
        for op in ops:
            self._add_control_input(op)

    def _remove_all_control_inputs(self):
        for op in self._control_inputs:
            if self in op._control_outputs:
                op._control_outputs.remove(self)
        self._control_inputs = []
        self._graph._version += 1

    def _update_input(self, index, tensor):
        """Rewires input `index` to `tensor` (control flow builds a loop's back
        edge this way: the Merge exists before the NextIteration that feeds it)."""
        old = self._inputs[index]
        if tensor.dtype.base_dtype != old.dtype.base_dtype:
            raise TypeError(f"Cannot update input {index} of '{self._name}': {tensor.name} has dtype "
                            f"{tensor.dtype.name}, expected {old.dtype.name}")
        inputs = list(self._inputs)
        inputs[index] = tensor
        self._inputs = tuple(inputs)
        if self in old._consumers:
            old._consumers.remove(self)
        tensor._consumers.append(self)
        self._graph._version += 1

    def _set_control_flow_context(self, ctx):
        self._control_flow_context = ctx

    def _get_control_flow_context(self):
        return self._control_flow_context

    # -- views ------------------------------------------------------------
    @property
    def node_def(self):
        from .graph_def import NodeDef  # graph_def depends on this module's types
        inputs = [t._as_node_def_input() for t in self._inputs]
        inputs += [f"^{op.name}" for op in self._control_inputs]
        return NodeDef(self._name, self.type, inputs, self._device, dict(self._attrs))

    def format(self):
        """One readable line: `%name : f32[2,3] @/device:CPU:0 = MatMul(%x:0, %w:0) {transpose_a=False}`."""
        outs = ", ".join(f"{t.dtype.name}{t.shape.short()}" for t in self._outputs) or "()"
        args = [f"%{t.name}" for t in self._inputs] + [f"^{op.name}" for op in self._control_inputs]
        attrs = {k: v for k, v in self._attrs.items() if not k.startswith("_") and k not in ("T", "value")}
        attr_text = (" {" + ", ".join(f"{k}={_short_attr(v)}" for k, v in sorted(attrs.items())) + "}") if attrs else ""
        device = f" @{self._device}" if self._device else ""
        return f"%{self._name} : {outs}{device} = {self.type}({', '.join(args)}){attr_text}"

    def __repr__(self):
        return f"<tf.Operation '{self._name}' type={self.type}>"

    def __str__(self):
        return self.format()

    __hash__ = object.__hash__  # by identity, as __eq__; in C (fetches and feeds are dict keys every run)

    def __eq__(self, other):
        return self is other


def _short_attr(value):
    if isinstance(value, dtypes_lib.DType):
        return value.name
    if isinstance(value, TensorShape):
        return value.short()
    if isinstance(value, (list, tuple)) and len(value) > 8:
        return f"[{', '.join(map(str, value[:8]))}, ...]"
    return repr(value) if isinstance(value, str) else str(value)


def _check_input_types(op_def, attrs, name, inputs):
    """Each input's dtype must be the declared one; a ref may feed a value input
    (TF's TypesCompatible), never the other way round."""
    expected = op_def.input_dtypes(attrs)
    if len(expected) != len(inputs):
        raise ValueError(f"Op '{name}' of type {op_def.name} expects {len(expected)} inputs, got {len(inputs)}")
    for i, (t, want) in enumerate(zip(inputs, expected)):
        got = t.dtype
        if got != want and not (got.is_ref_dtype and got.base_dtype == want):
            raise ValueError(f"Input {i} of node {name} was passed {got.name} from {t.name} incompatible with "
                             f"expected {want.name}.")


class _ControlDependencies:
    """One active `control_dependencies` block and the ops created inside it."""

    def __init__(self, control_inputs):
        self.control_inputs = control_inputs
        self.created = set()


class Graph:
    """A dataflow graph: operations in creation order, plus scopes and collections.

    Example:
        >>> g = Graph()
        >>> with g.as_default():
        ...     x = placeholder(float32, [None, 3], name="x")
        ...     y = reduce_sum(x * 2.0)
        >>> print(g)
        %x : float32[?,3] = Placeholder() {dtype=float32, shape=[?,3]}
        ...
    """

    def __init__(self):
        self._lock = threading.RLock()
        self._ops = []
        # tensor -> the value shape inference reads for it, or None (framework/constant_value.py)
        self._inferred_values = {}
        self._by_name = {}
        self._names_in_use = {}
        self._name_stack = ""
        self._device_stack = []
        self._control_stack = []
        self._colocation_stack = []
        self._collections = {}
        self._finalized = False
        self._version = 0
        self.seed = None
        self._last_op_seed = 0
        self._gradient_override_map = {}
        self._control_flow_context = None
        self._container = ""

    # -- default graph ------------------------------------------------------
    def as_default(self):
        return _default_graph_context(self)

    # -- ops ------------------------------------------------------------------
    def get_operations(self):
        return list(self._ops)

    def get_operation_by_name(self, name):
        if not isinstance(name, str):
            raise TypeError(f"Operation names are strings (or similar), not {type(name).__name__}.")
        return self.as_graph_element(name, allow_tensor=False, allow_operation=True)

    def get_tensor_by_name(self, name):
        if not isinstance(name, str):
            raise TypeError(f"Tensor names are strings (or similar), not {type(name).__name__}.")
        return self.as_graph_element(name, allow_tensor=True, allow_operation=False)

    def as_graph_element(self, obj, allow_tensor=True, allow_operation=True):
        """Resolves a Tensor, Operation, or their name (`op:0` or `op`) in this graph."""
        if allow_tensor and hasattr(obj, "_as_graph_element") and not isinstance(obj, (Tensor, Operation)):
            obj = obj._as_graph_element()
        if isinstance(obj, Tensor) and allow_tensor:
            if obj.graph is not self:
                raise ValueError(f"Tensor {obj} is not an element of this graph.")
            return obj
        if isinstance(obj, Operation) and allow_operation:
            if obj.graph is not self:
                raise ValueError(f"Operation {obj} is not an element of this graph.")
            return obj
        if isinstance(obj, bytes):
            obj = obj.decode()
        if isinstance(obj, str):
            types = "Tensor or Operation" if allow_tensor and allow_operation else \
                "Tensor" if allow_tensor else "Operation"
            if ":" in obj and allow_tensor:
                try:
                    op_name, index = obj.split(":")
                    index = int(index)
                except ValueError:
                    raise ValueError(f"The name {obj!r} looks a like a Tensor name, but is not a valid one. "
                                     "Tensor names must be of the form \"<op_name>:<output_index>\".") from None
                op = self._by_name.get(op_name)
                if op is None:
                    raise KeyError(f"The name {obj!r} refers to a Tensor which does not exist. "
                                   f"The operation, {op_name!r}, does not exist in the graph.")
                try:
                    return op._outputs[index]  # a negative index counts from the end, as in TF
                except IndexError:
                    raise KeyError(f"The name {obj!r} refers to a Tensor which does not exist. The operation, "
                                   f"{op_name!r}, exists but only has {len(op._outputs)} outputs.") from None
            if ":" in obj:
                raise ValueError(f"Name {obj!r} appears to refer to a Tensor, not a {types}.")
            if allow_operation:
                op = self._by_name.get(obj)
                if op is None:
                    raise KeyError(f"The name {obj!r} refers to an Operation not in the graph.")
                return op
            what = "refers to an Operation" if obj in self._by_name else "looks like an (invalid) Operation name"
            raise ValueError(f"The name {obj!r} {what}, not a {types}. "
                             "Tensor names must be of the form \"<op_name>:<output_index>\".")
        kinds = " or ".join(k for k, ok in (("Tensor", allow_tensor), ("Operation", allow_operation)) if ok)
        raise TypeError(f"Can not convert a {type(obj).__name__} into a {kinds}.")

    @property
    def version(self):
        return self._version

    @property
    def finalized(self):
        return self._finalized

    def finalize(self):
        self._finalized = True

    def _unsafe_unfinalize(self):
        self._finalized = False

    def _check_not_finalized(self):
        if self._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")

    def create_op(self, op_type, inputs, attrs=None, name=None, control_inputs=(), output_dtypes=None):
        """Adds an op. `inputs` are Tensors of this graph; `attrs` must be complete.

        A `name` ending in '/' is taken as is (it came from a name scope);
        any other name is made unique under the current name scope.
        """
        op_def = registry.get_op_def(op_type)
        with self._lock:
            self._check_not_finalized()
            name = name or op_type
            if name.endswith("/"):
                name = name[:-1]
            else:
                name = self.unique_name(name)
            if name in self._by_name:
                raise ValueError(f"Duplicate node name in graph: '{name}'")
            attrs = op_def.complete_attrs(attrs or {}, name)
            if self._container and attrs.get("container") == "":
                attrs["container"] = self._container
            _check_input_types(op_def, attrs, name, inputs)
            if output_dtypes is None:
                output_dtypes = op_def.output_dtypes(attrs, name)
            input_ops = [t.op for t in inputs]
            controls = list(control_inputs) + self._control_dependencies_for_inputs(input_ops)
            seen = set()
            controls = [c for c in controls if not (c in seen or seen.add(c))]
            op = Operation(self, op_def, name, inputs, attrs, controls, output_dtypes)
            op._control_flow_context = self._control_flow_context
            op._gradient_op_type = self._gradient_override_map.get(op_type)
            shapes = op_def.infer_shapes(op)
            for tensor, shape in zip(op._outputs, shapes):
                tensor._shape = as_shape(shape)
            self._apply_device_functions(op)
            if self._colocation_stack:
                groups = set(op._attrs.get("_class", ()))
                for coloc in self._colocation_stack:
                    groups.update(coloc._colocation_groups())
                    if coloc.device:
                        op._device = coloc.device
                op._attrs["_class"] = sorted(groups)
            self._add_op(op)
            for controller in self._control_stack:
                controller.created.add(op)
            if self._control_flow_context is not None:
                self._control_flow_context.add_op(op)
            return op

    def _add_op(self, op):
        op._id = len(self._ops)
        self._ops.append(op)
        self._by_name[op.name] = op
        for t in op._inputs:
            t._consumers.append(op)
        for c in op._control_inputs:
            c._control_outputs.append(op)
        self._version += 1

    # -- names --------------------------------------------------------------
    def unique_name(self, name, mark_as_used=True):
        if self._name_stack:
            name = f"{self._name_stack}/{name}"
        key = name.lower()
        i = self._names_in_use.get(key, 0)
        if mark_as_used:
            self._names_in_use[key] = i + 1
        if i > 0:
            base_key = key
            while key in self._names_in_use:
                key = f"{base_key}_{i}"
                i += 1
            if mark_as_used:
                self._names_in_use[key] = 1
            name = f"{name}_{i - 1}"
        return name

    def get_name_scope(self):
        return self._name_stack

    @contextlib.contextmanager
    def name_scope(self, name):
        """Enters a name scope; yields the scope string ending in '/' ('' at the top).

        `name` is made unique (`layer1`, `layer1_1`); a name ending in '/'
        re-enters that exact scope; None or '' resets to the top level.
        """
        if name:
            if not isinstance(name, str):
                raise TypeError(f"name_scope name must be a string, got {type(name).__name__}")
            pattern = _VALID_SCOPE_NAME if self._name_stack else _VALID_OP_NAME
            if not pattern.match(name):
                raise ValueError(f"'{name}' is not a valid scope name")
        old = self._name_stack
        if not name:
            new = ""
        elif name.endswith("/"):
            new = name[:-1]
        else:
            new = self.unique_name(name)
        self._name_stack = new
        try:
            yield f"{new}/" if new else ""
        finally:
            self._name_stack = old

    # -- control dependencies -----------------------------------------------
    @contextlib.contextmanager
    def control_dependencies(self, control_inputs):
        """Ops created inside run after `control_inputs`; None clears outer blocks."""
        if control_inputs is None:
            saved = self._control_stack
            self._control_stack = []
            try:
                yield
            finally:
                self._control_stack = saved
            return
        ops = []
        for c in control_inputs:
            if hasattr(c, "_as_graph_element") and not isinstance(c, (Tensor, Operation)):
                c = c._as_graph_element()
            if isinstance(c, (str, bytes)):
                c = self.as_graph_element(c)
            if isinstance(c, Tensor):
                c = c.op
            if not isinstance(c, Operation):
                raise TypeError(f"Control input must be Operation or Tensor: {c!r}")
            if c.graph is not self:
                raise ValueError(f"Control input {c.name} is not an element of this graph.")
            if c not in ops:
                ops.append(c)
        controller = _ControlDependencies(ops)
        self._control_stack.append(controller)
        try:
            yield
        finally:
            self._control_stack.remove(controller)

    def _control_dependencies_for_inputs(self, input_ops):
        out = []
        for controller in self._control_stack:
            if any(op in controller.created for op in input_ops):
                continue  # an input already depends on this block's control inputs
            out.extend(c for c in controller.control_inputs if c not in input_ops)
        return out

    # -- devices --------------------------------------------------------------
    @contextlib.contextmanager
    def device(self, device_name_or_function):
        """Device scope: a spec string/DeviceSpec (merged field by field, inner wins),
        a function op -> device, or None (ignore outer scopes)."""
        entry = device_name_or_function
        if entry is not None and not callable(entry):
            spec = entry if isinstance(entry, device_lib.DeviceSpec) else device_lib.DeviceSpec.from_string(entry)
            entry = spec
        self._device_stack.append(entry)
        try:
            yield
        finally:
            self._device_stack.pop()

    def _apply_device_functions(self, op):
        current = device_lib.DeviceSpec()
        for entry in reversed(self._device_stack):  # innermost first; it wins field by field
            if entry is None:
                break
            if isinstance(entry, device_lib.DeviceSpec):
                if entry.is_empty():
                    continue
                current = entry.make_merged_spec(current)
            else:
                op._device = current.to_string()
                result = entry(op)
                current = device_lib.DeviceSpec.from_string(result.to_string() if isinstance(
                    result, device_lib.DeviceSpec) else (result or ""))
        op._device = current.to_string()

    @contextlib.contextmanager
    def colocate_with(self, op, ignore_existing=False):
        """Ops created inside share `op`'s colocation group and device."""
        if op is None:
            if not ignore_existing:
                raise ValueError("Trying to reset colocation (op is None) but ignore_existing is not True")
            saved = self._colocation_stack
            self._colocation_stack = []
            try:
                yield
            finally:
                self._colocation_stack = saved
            return
        if hasattr(op, "_as_graph_element") and not isinstance(op, (Tensor, Operation)):
            op = op._as_graph_element()
        if isinstance(op, Tensor):
            op = op.op
        if not isinstance(op, Operation):
            raise TypeError(f"colocate_with expects an Operation or Tensor, got {op!r}")
        saved_devices = self._device_stack
        saved_stack = self._colocation_stack
        self._device_stack = []  # inside colocate_with, the colocated op's device wins
        self._colocation_stack = ([] if ignore_existing else list(saved_stack)) + [op]
        try:
            yield
        finally:
            self._device_stack = saved_devices
            self._colocation_stack = saved_stack

    @contextlib.contextmanager
    def container(self, container_name):
        """Stateful ops created inside (those with an empty `container` attr) keep their state
        in `container_name`; yields the name."""
        saved = self._container
        self._container = container_name
        try:
            yield container_name
        finally:
            self._container = saved

    # -- collections ------------------------------------------------------------
    def add_to_collection(self, name, value):
        self._check_not_finalized()
        self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names, value):
        for name in ([names] if isinstance(names, str) else names):
            self.add_to_collection(name, value)

    def get_collection_ref(self, name):
        return self._collections.setdefault(name, [])

    def get_collection(self, name, scope=None):
        items = self._collections.get(name, [])
        if scope is None:
            return list(items)
        pattern = re.compile(scope)
        return [item for item in items if hasattr(item, "name") and pattern.match(item.name)]

    def get_all_collection_keys(self):
        # as TF: every string key, an emptied one too (a get_collection_ref creates one)
        return [k for k in self._collections if isinstance(k, str)]

    def clear_collection(self, name):
        self._check_not_finalized()
        self._collections.pop(name, None)

    # -- control flow ------------------------------------------------------------
    def _get_control_flow_context(self):
        """The cond/while context ops created now belong to (None at top level)."""
        return self._control_flow_context

    def _set_control_flow_context(self, ctx):
        self._control_flow_context = ctx

    # -- gradients ----------------------------------------------------------------
    @contextlib.contextmanager
    def gradient_override_map(self, op_type_map):
        saved = dict(self._gradient_override_map)
        self._gradient_override_map.update(op_type_map)
        try:
            yield
        finally:
            self._gradient_override_map = saved

    # -- views ----------------------------------------------------------------------
    def as_graph_def(self, add_shapes=False):
        from .graph_def import graph_to_graph_def
        return graph_to_graph_def(self, add_shapes=add_shapes)

    def to_networkx(self):
        """A networkx.MultiDiGraph: nodes are op names (attrs op, device), edges carry
        `tensor` and `kind` ('data' or 'control')."""
        import networkx as nx
        g = nx.MultiDiGraph()
        for op in self._ops:
            g.add_node(op.name, op=op.type, device=op.device)
        for op in self._ops:
            for i, t in enumerate(op._inputs):
                g.add_edge(t.op.name, op.name, tensor=t.name, kind="data", dst_input=i)
            for c in op._control_inputs:
                g.add_edge(c.name, op.name, tensor=None, kind="control")
        return g

    def __str__(self):
        return "\n".join(op.format() for op in self._ops)

    def __repr__(self):
        return f"<tf.Graph with {len(self._ops)} ops>"


# -- the default graph ----------------------------------------------------------------

class _DefaultGraphStack(threading.local):
    def __init__(self):
        self.stack = []


_default_stack = _DefaultGraphStack()
_global_default_graph = None
_global_lock = threading.Lock()


def get_default_graph():
    """The innermost graph entered with `as_default()` on this thread, else the global one."""
    if _default_stack.stack:
        return _default_stack.stack[-1]
    global _global_default_graph
    if _global_default_graph is None:
        with _global_lock:
            if _global_default_graph is None:
                _global_default_graph = Graph()
    return _global_default_graph


def reset_default_graph():
    if _default_stack.stack:
        raise AssertionError("Do not use tf.reset_default_graph() to clear nested graphs. "
                             "If you need a cleared graph, exit the nesting and create a new graph.")
    global _global_default_graph
    _global_default_graph = Graph()


@contextlib.contextmanager
def _default_graph_context(graph):
    _default_stack.stack.append(graph)
    try:
        yield graph
    finally:
        _default_stack.stack.pop()


def graph_of(values, default=None):
    """The graph shared by `values` (Tensors/Operations/objects with `.graph`); ValueError if mixed.

    While a function body is being built (the default graph is a FuncGraph),
    values of the graphs it is nested in belong to it too: it captures them."""
    graph = None
    current = _default_stack.stack[-1] if _default_stack.stack else None
    outer = getattr(current, "outer_graphs", ())
    for v in values:
        if hasattr(v, "_as_graph_element") and not isinstance(v, (Tensor, Operation)):
            v = v._as_graph_element()
        g = getattr(v, "graph", None) if isinstance(v, (Tensor, Operation)) else None
        if g is None:
            continue
        if outer and g in outer:
            g = current
        if graph is None:
            graph = g
        elif g is not graph:
            raise ValueError(f"{v!r} must be from the same graph as the other inputs.")
    return graph or default or get_default_graph()
