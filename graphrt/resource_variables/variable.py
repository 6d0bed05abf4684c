"""`ResourceVariable`: the Python object over a resource variable, built as TensorFlow 2's
compat.v1 graphs build one (`v` a VarHandleOp, `v/IsInitialized/VarIsInitializedOp`,
`v/Assign` an AssignVariableOp, `v/Read/ReadVariableOp` the snapshot), or over those ops
when a MetaGraphDef's VariableDef says `is_resource`."""
from ..framework import dtypes
from ..framework.graph import get_default_graph
from ..framework.op_builder import apply_op, convert_to_tensor, register_tensor_conversion_function
from ..framework.tensor_shape import TensorShape
from ..ops import variables as variables_lib
from .ops import read_variable_op, var_handle_op


class ResourceVariable(variables_lib.Variable):
    """A variable read by ReadVariableOps and updated through its handle (TF's ResourceVariable).

    It is a `tf.Variable` for collections, savers and `isinstance`; its `handle` is the
    VarHandleOp's output, which update ops (`AssignVariableOp`, `ResourceApply...`) take.
    """

    def __init__(self, initial_value=None, trainable=True, collections=None, validate_shape=True,
                 caching_device=None, name=None, dtype=None, variable_def=None, import_scope=None, constraint=None,
                 **unused):
        if variable_def is not None:
            if initial_value is not None:
                raise ValueError("variable_def and initial_value are mutually exclusive.")
            self._init_from_proto(variable_def, import_scope)
            return
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        collections = variables_lib.variable_collections(collections, trainable)
        self._trainable, self._constraint, self._save_slice_info = trainable, constraint, None
        g = get_default_graph()
        with g.name_scope(name or "Variable") as scope:
            handle_name = scope[:-1]
            if callable(initial_value):
                with g.name_scope("Initializer"), g.device(None):
                    self._initial_value = convert_to_tensor(initial_value(), name="initial_value", dtype=dtype)
                    self._initial_value.op._set_attr("_class", [f"loc:@{handle_name}"])
            else:
                self._initial_value = convert_to_tensor(initial_value, name="initial_value", dtype=dtype)
            shape = self._initial_value.shape if validate_shape else TensorShape(None)
            if validate_shape and not shape.is_fully_defined():
                raise ValueError(f"initial_value must have a shape specified: {self._initial_value}")
            self._dtype = self._initial_value.dtype.base_dtype
            self._variable = var_handle_op(self._dtype, shape, handle_name, name=scope)
            with g.colocate_with(self._variable.op):
                with g.name_scope("IsInitialized"):
                    self._is_initialized = apply_op("VarIsInitializedOp", [self._variable]).outputs[0]
                self._initializer_op = apply_op("AssignVariableOp", [self._variable, self._initial_value],
                                                name="Assign")
                with g.name_scope("Read"):
                    self._snapshot = read_variable_op(self._variable, self._dtype)
        g.add_to_collections(collections, self)

    def _init_from_proto(self, variable_def, import_scope=None):
        super()._init_from_proto(variable_def, import_scope)
        self._dtype = self._variable.op.get_attr("dtype").base_dtype

    def to_proto(self, export_scope=None):
        proto = super().to_proto(export_scope)
        proto.is_resource = True
        return proto

    @staticmethod
    def from_proto(variable_def, import_scope=None):
        return ResourceVariable(variable_def=variable_def, import_scope=import_scope)

    # -- what differs from a ref variable ------------------------------------------------
    @property
    def handle(self):
        return self._variable

    @property
    def dtype(self):
        return self._dtype

    @property
    def shape(self):
        return self._variable.op.get_attr("shape")

    def get_shape(self):
        return self.shape

    def _ref(self):
        raise NotImplementedError(f"{self.name} is a resource variable: it has no ref; update ops take its "
                                  f"handle (`.handle`)")

    def value(self):
        g = self._variable.graph
        if not g._control_stack and g._control_flow_context is None:
            return self._snapshot
        return self.read_value()

    def read_value(self):
        with self._variable.graph.colocate_with(self._variable.op):
            return read_variable_op(self._variable, self._dtype)

    def sparse_read(self, indices, name=None):
        with self._variable.graph.colocate_with(self._variable.op):
            return apply_op("ResourceGather", [self._variable, convert_to_tensor(indices, name="indices")],
                            name=name or "ResourceGather", dtype=self._dtype).outputs[0]

    def eval(self, session=None):
        return self._snapshot.eval(session=session)

    def _update(self, op_type, value, name, read_value):
        g = self._variable.graph
        with g.colocate_with(self._variable.op):
            op = apply_op(op_type, [self._variable, convert_to_tensor(value, dtype=self._dtype)],
                          name=name or op_type)
        if not read_value:
            return op
        with g.control_dependencies([op]):
            return self.read_value()

    def assign(self, value, use_locking=None, name=None, read_value=True):
        return self._update("AssignVariableOp", value, name, read_value)

    def assign_add(self, delta, use_locking=None, name=None, read_value=True):
        return self._update("AssignAddVariableOp", delta, name, read_value)

    def assign_sub(self, delta, use_locking=None, name=None, read_value=True):
        return self._update("AssignSubVariableOp", delta, name, read_value)

    def set_shape(self, shape):
        raise NotImplementedError("ResourceVariable does not implement set_shape()")

    def _as_graph_element(self):
        return self._snapshot

    def __repr__(self):
        return f"<tf.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}>"


def _resource_variable_to_tensor(v, dtype=None, name=None, as_ref=False):
    if as_ref:
        return v.handle  # what gradients with respect to the variable are taken at
    t = v.value()
    if dtype is not None and dtypes.as_dtype(dtype).base_dtype != t.dtype.base_dtype:
        raise ValueError(f"Incompatible type conversion requested to type '{dtypes.as_dtype(dtype).name}' for "
                         f"variable of type '{t.dtype.name}'")
    return t


# ahead of tf.Variable's conversion (priority 100), which would also match this subclass
register_tensor_conversion_function(ResourceVariable, _resource_variable_to_tensor, priority=90)
