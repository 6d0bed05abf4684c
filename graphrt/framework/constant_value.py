"""Values known at graph-build time.

Two readers, as in TensorFlow:

* `constant_value` / `constant_value_as_shape`, for Python code deciding how to
  build (TF's Python `tensor_util.constant_value`): only a few op types fold -
  constants, identities, shapes of fully known tensors, and packing,
  concatenating and casting of those.
* `inferred_value` / `inferred_shape`, for shape functions (TF's C++ shape
  refiner, by its rules): a subgraph of stateless ops that ends in constants
  and in shapes known statically is evaluated with the ops' own CPU kernels,
  and a shape vector is read piecewise (`Pack`, `ConcatV2`, `Cast`, simple
  `StridedSlice`s of `Shape`). So `tf.zeros([tf.shape(y)[0] * 2])` has a
  static shape when y's first dimension is known, as in TensorFlow.
"""
import numpy as np

from . import registry
from .tensor_shape import TensorShape


def constant_value(tensor):
    op = tensor.op
    kind = op.type
    if kind == "Const":
        return op.get_attr("value")
    if kind in ("Identity", "StopGradient", "Snapshot"):
        return constant_value(op.inputs[0])
    if kind == "Shape":
        shape = op.inputs[0].shape
        if shape.is_fully_defined():
            return np.array(shape.as_list(), dtype=op.get_attr("out_type").np)
        return None
    if kind == "Size":
        n = op.inputs[0].shape.num_elements()
        return None if n is None else np.array(n, dtype=op.get_attr("out_type").np)
    if kind == "Rank":
        rank = op.inputs[0].shape.ndims
        return None if rank is None else np.array(rank, dtype=np.int32)
    if kind == "Pack":
        values = [constant_value(t) for t in op.inputs]
        if any(v is None for v in values):
            return None
        return np.stack(values, axis=op.get_attr("axis"))
    if kind == "ConcatV2":
        values = [constant_value(t) for t in op.inputs]
        if any(v is None for v in values):
            return None
        return np.concatenate(values[:-1], axis=int(values[-1]))
    if kind == "Cast":
        v = constant_value(op.inputs[0])
        return None if v is None else np.asarray(v).astype(op.get_attr("DstT").np)
    return None


def constant_value_as_shape(tensor):
    """Reads a 1-D int tensor as a (partial) shape: unknown elements become None."""
    value = constant_value(tensor)
    if value is not None:
        value = np.asarray(value)
        if value.ndim == 0:
            return TensorShape(None)
        return TensorShape([None if int(d) == -1 else int(d) for d in value])
    op = tensor.op
    rank = tensor.shape.ndims
    if op.type == "Shape":
        return op.inputs[0].shape
    if op.type == "Pack":
        dims = []
        for t in op.inputs:
            v = constant_value(t)
            dims.append(None if v is None or int(v) == -1 else int(v))
        return TensorShape(dims)
    if op.type == "ConcatV2":
        result = TensorShape([])
        for t in op.inputs[:-1]:
            result = result.concatenate(constant_value_as_shape(t))
        return result
    if rank == 1 and tensor.shape[0] is not None:
        return TensorShape([None] * tensor.shape[0])
    return TensorShape(None)


# -- inferred values (shape functions) -------------------------------------------------------

# Never evaluated: values of a step, not of the graph (TF's refiner skips the same, and stateful
# ops by their OpDef). A Switch passes one branch only, so it is left out too.
_NEVER_EVALUATED = frozenset({
    "Merge", "RefMerge", "Enter", "RefEnter", "Exit", "RefExit", "Switch", "RefSwitch", "PlaceholderWithDefault",
    "PyFunc", "PyFuncStateless", "EagerPyFunc", "PartitionedCall", "StatefulPartitionedCall", "SymbolicGradient",
    "If", "StatelessIf", "While", "StatelessWhile", "_Recv", "_Send", "_HostRecv", "_HostSend"})
# Bounds on one question, so that building a graph stays fast (TF's refiner has none; a shape input
# is a short chain of small values in practice).
_MAX_EVALUATED_OPS = 256
_MAX_INPUT_ELEMENTS = 1 << 20


class _BuildTimeDevice:
    """The device a kernel evaluated at graph-build time believes it runs on."""
    name = "/job:localhost/replica:0/task:0/device:CPU:0"
    device_type = "CPU"
    index = 0
    executor = None

    def __repr__(self):
        return "<build-time CPU>"


_BUILD_TIME_DEVICE = _BuildTimeDevice()


def inferred_value(tensor):
    """`tensor`'s value if shape inference knows it at graph-build time, else None."""
    return _Evaluation().value(tensor)


def inferred_shape(tensor):
    """`tensor` (a 1-D int tensor, or -1) read as a shape by shape inference: what cannot be known
    is None (TF's `ConstantPartialShape`)."""
    return _Evaluation().shape(tensor)


_CACHED_ELEMENTS = 1024  # values kept between questions are small ones (TF's refiner keeps <= 1 KiB)


class _Evaluation:
    """One question's walk back through the graph, with its budget and memo. What it learns
    is kept in the graph's `_inferred_values` for later questions (a tensor's inputs never
    change; `Tensor.set_shape` clears it, as a refined shape may make more readable)."""

    def __init__(self):
        self.budget = _MAX_EVALUATED_OPS
        self.exhausted = False
        self.memo = {}

    # values -------------------------------------------------------------------
    def value(self, tensor):
        op = tensor.op
        if op.type == "Const":
            return op.get_attr("value")
        memo = self.memo
        if tensor in memo:
            return memo[tensor]
        cache = op._graph._inferred_values
        if tensor in cache:
            return cache[tensor]
        memo[tensor] = None  # a cycle (a loop's back edge) is unknown
        value = _from_shapes(tensor)
        if value is None and _evaluable(op):
            value = self._evaluate(tensor)
        memo[tensor] = value
        if value is None:
            if not self.exhausted:  # (a walk cut short may succeed with a fresh budget)
                cache[tensor] = None
        elif np.size(value) <= _CACHED_ELEMENTS:
            cache[tensor] = value
        return value

    def _evaluate(self, tensor):
        op = tensor.op
        self.budget -= 1
        if self.budget < 0:
            self.exhausted = True
            return None
        values = []
        for t in op.inputs:
            v = self.value(t)
            if v is None or np.size(v) > _MAX_INPUT_ELEMENTS:
                return None
            values.append(v)
        return _run_kernel(op, values, tensor.value_index)

    def scalar(self, tensor):
        """An int scalar (or one-element vector) input's value, or None."""
        v = self.value(tensor)
        if v is None or np.size(v) != 1 or np.asarray(v).dtype.kind not in "iu":
            return None
        return int(np.asarray(v).reshape(()))

    # shapes -------------------------------------------------------------------
    def shape(self, tensor):
        static = tensor.shape
        if static.ndims == 0:
            return TensorShape(None)  # -1: an unknown shape (anything else fails in the shape function)
        if static.ndims == 1 and static[0] == 0:
            return TensorShape([])
        op = tensor.op
        if op.type == "Cast":
            value = self.value(tensor)
            if value is not None:
                return _shape_from_value(value)
            pre_cast = self.shape(op.inputs[0])
            if pre_cast.ndims is None:
                return pre_cast
            if op.get_attr("DstT").base_dtype.name not in ("int32", "int64"):
                return TensorShape([None] * pre_cast.ndims)
            return pre_cast
        if op.type == "Shape":
            return op.inputs[0].shape
        if op.type == "Pack":
            dims = []
            for t in op.inputs:
                d = self.scalar(t)
                dims.append(None if d is None or d < 0 else d)
            return TensorShape(dims)
        if op.type == "ConcatV2":
            result = TensorShape([])
            for t in op.inputs[:-1]:
                part = self.shape(t)
                if part.ndims is None:
                    return TensorShape(None)
                result = result.concatenate(part)
            return result
        if op.type == "StridedSlice":
            return self._sliced_shape(op)
        value = self.value(tensor)
        if value is not None:
            return _shape_from_value(value)
        return _unknown_dims(static)

    def _sliced_shape(self, op):
        """`tf.shape(x)[a:b:c]` of a partly known shape (TF's `PartialStridedSliceShape`): only
        single begin/end/stride values and begin/end masks of 0 or 1."""
        if any(t.shape.ndims != 1 or t.shape[0] != 1 for t in op.inputs[1:]):
            return TensorShape(None)
        masks = [op.get_attr(m) for m in ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask",
                                          "shrink_axis_mask")]
        if masks[0] not in (0, 1) or masks[1] not in (0, 1) or any(masks[2:]):
            return TensorShape(None)
        begin = None if masks[0] else self.scalar(op.inputs[1])
        end = None if masks[1] else self.scalar(op.inputs[2])
        stride = self.scalar(op.inputs[3])
        if (begin is None and not masks[0]) or (end is None and not masks[1]) or not stride:
            return TensorShape(None)
        source = self.shape(op.inputs[0])
        if source.ndims is None:
            return TensorShape(None)
        return TensorShape(source.as_list()[slice(begin, end, stride)])


def _from_shapes(tensor):
    """What shapes known statically say of `tensor` (TF's `TryInferFromShapes`): `tf.shape(x)`,
    `tf.size(x)`, `tf.rank(x)` and `tf.shape(x)[i]` (or `tf.unstack(tf.shape(x))[i]`)."""
    op = tensor.op
    if not op.inputs or tensor.dtype.base_dtype.name not in ("int32", "int64"):
        return None
    dtype = tensor.dtype.base_dtype.np
    shape = op.inputs[0].shape
    if op.type == "Shape":
        return np.array(shape.as_list(), dtype) if shape.is_fully_defined() else None
    if op.type == "Size":
        return np.array(shape.num_elements(), dtype) if shape.is_fully_defined() else None
    if op.type == "Rank":
        return None if shape.ndims is None else np.array(shape.ndims, dtype)
    source = op.inputs[0].op
    if source.type != "Shape" or source.inputs[0].shape.ndims is None:
        return None
    dims = source.inputs[0].shape.as_list()
    index = None
    if op.type == "Unpack" and op.get_attr("axis") == 0:
        index = tensor.value_index
    elif (op.type == "StridedSlice" and op.inputs[1].op.type == "Const" and op.get_attr("shrink_axis_mask") == 1
          and not any(op.get_attr(m) for m in ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask"))):
        begin = np.asarray(op.inputs[1].op.get_attr("value"))
        index = int(begin.reshape(())) if begin.size == 1 and begin.dtype.kind in "iu" else None
    if index is None or not -len(dims) <= index < len(dims) or dims[index] is None:
        return None
    return np.array(dims[index], dtype)


_EVALUABLE_TYPES = {}  # op type -> whether its kind of op may ever be run by shape inference


def _evaluable(op):
    """Whether shape inference may run `op` (TF's `IsSupportedForEvaluation`)."""
    if not op.inputs:
        return False
    kind = _EVALUABLE_TYPES.get(op.type)
    if kind is None:
        kdef = registry.get_kernel_def(op.type, "CPU")
        kind = _EVALUABLE_TYPES[op.type] = (op.type not in _NEVER_EVALUATED and not op.op_def.is_stateful
                                            and kdef is not None and kdef.kind == registry.SYNC)
    if not kind:
        return False
    return not any(t.dtype.is_ref_dtype for t in op.inputs) and not _has_function_attr(op)


def _has_function_attr(op):
    """Whether an attr holds a function (a dataset's map, a call's body): TF's refiner runs no functions."""
    from .function import FunctionDef  # (function.py builds on the graph, which reads values lazily)
    for value in op._attrs.values():
        if isinstance(value, FunctionDef) or (
                isinstance(value, (list, tuple)) and any(isinstance(v, FunctionDef) for v in value)):
            return True
    return False


def _run_kernel(op, values, index):
    kdef = registry.get_kernel_def(op.type, "CPU")
    ctx = registry.KernelContext(op.node_def, [t.dtype for t in op.inputs], [t.dtype for t in op.outputs],
                                 _BUILD_TIME_DEVICE, np)
    try:
        with np.errstate(all="ignore"):
            out = kdef.factory(ctx)(*[np.asarray(v, t.dtype.base_dtype.np) for v, t in zip(values, op.inputs)])
        if len(op.outputs) > 1:
            out = out[index]
        return np.array(out, dtype=op.outputs[index].dtype.base_dtype.np)
    except Exception:  # best effort, as TF's: the shape stays unknown, and the step reports the error
        return None


def _shape_from_value(value):
    value = np.asarray(value)
    if value.ndim == 0:
        return TensorShape(None)
    return TensorShape([None if int(d) < 0 else int(d) for d in value.reshape(-1)])


def _unknown_dims(static):
    if static.ndims == 1 and static[0] is not None:
        return TensorShape([None] * static[0])
    return TensorShape(None)
