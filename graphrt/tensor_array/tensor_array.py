"""`tf.TensorArray`: a list of tensors written and read one element at a time,
built as TF1 builds it (TensorArrayV3 and friends).

An object is a (handle, flow) pair. Every write returns a *new* TensorArray
object over the same handle with the write's `flow_out` as its flow, so a
while loop carries the array as that flow (while_loop turns the objects in
its loop variables into flows and back), and gradients reach every write
along it. Objects made from one array share their static element shape,
which writes refine.

Placement: by default (`colocate_with_first_write_call=True`) the
TensorArrayV3 op gets no device of its own; the first write is colocated
with the value it writes, and since every op taking the handle sits with
the op that made it, the whole array lives where its first value was made.

    ta = tf.TensorArray(tf.float32, size=3)
    ta = ta.write(0, 1.0).write(1, 2.0).write(2, 3.0)
    ta.stack()                       # [1., 2., 3.]
"""
import contextlib

import numpy as np

from ..framework import dtypes
from ..framework.constant_value import constant_value
from ..framework.graph import get_default_graph, graph_of
from ..framework.op_builder import apply_op, convert_to_tensor
from ..framework.tensor_shape import TensorShape, as_shape, unknown_shape
from ..ops import array_ops, math_ops


class TensorArray:
    """TF1's TensorArray (graph mode).

    Args:
        dtype: the element type.
        size: the number of elements (an int32 scalar); required unless `handle` is given.
        dynamic_size: writes past `size` grow the array.
        clear_after_read: a read forgets the value (the default), so each index is read once.
        tensor_array_name: a name for the array's run-time state (error messages).
        handle, flow: wrap an existing array instead of making one.
        infer_shape: every element must have the same shape, learnt from the writes.
        element_shape: the elements' (partial) shape, if known.
        colocate_with_first_write_call: put the array where its first written value is.
        name: the name scope of the creating op.
    """

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None, tensor_array_name=None,
                 handle=None, flow=None, infer_shape=True, element_shape=None, colocate_with_first_write_call=True,
                 name=None):
        if clear_after_read is None:
            clear_after_read = True
        if handle is not None and tensor_array_name:
            raise ValueError("Cannot construct with both handle and tensor_array_name")
        if handle is not None and size is not None:
            raise ValueError("Cannot provide both a handle and size at the same time")
        if handle is not None and element_shape is not None:
            raise ValueError("Cannot provide both a handle and element_shape at the same time")
        if handle is not None and dynamic_size is not None:
            raise ValueError("Cannot provide both a handle and dynamic_size at the same time")
        if handle is not None and clear_after_read is not True:
            raise ValueError("Cannot provide both a handle and clear_after_read at the same time")
        if handle is None and size is None:
            raise ValueError("Size must be provided if handle is not provided")
        if handle is not None and flow is None:
            raise ValueError("flow must be provided when handle is provided")
        self._dtype = dtypes.as_dtype(dtype).base_dtype
        self._dynamic_size = bool(dynamic_size)
        # The size as given: a fixed-size array answers size() with it, and stack() knows its length.
        self._size = None if handle is not None else size
        self._infer_shape = infer_shape
        # One list shared by every TensorArray object over this handle: what the writes taught us.
        self._element_shape = [unknown_shape() if element_shape is None else as_shape(element_shape)]
        self._colocate_with_first_write_call = colocate_with_first_write_call
        self._colocate_with = [] if colocate_with_first_write_call else None
        g = graph_of([t for t in (handle, size, flow) if t is not None and not isinstance(t, (int, np.integer))])
        with g.as_default(), g.name_scope(name or "TensorArray") as scope:
            if handle is not None:
                self._handle = handle
                self._flow = convert_to_tensor(flow)
                return
            size = convert_to_tensor(size, dtype=dtypes.int32, name="size")
            attrs = dict(dtype=self._dtype, element_shape=self._element_shape[0], dynamic_size=self._dynamic_size,
                         clear_after_read=bool(clear_after_read), identical_element_shapes=bool(infer_shape),
                         tensor_array_name=tensor_array_name or "")
            if colocate_with_first_write_call:
                # No device now: the first write decides (see the module doc).
                with g.device(None), g.colocate_with(None, ignore_existing=True):
                    op = apply_op("TensorArrayV3", [size], name=scope, **attrs)
            else:
                op = apply_op("TensorArrayV3", [size], name=scope, **attrs)
            self._handle, self._flow = op.outputs

    # -- properties ------------------------------------------------------------------------
    @property
    def flow(self):
        """The float scalar that orders this array's ops (and carries its gradients)."""
        return self._flow

    @property
    def handle(self):
        return self._handle

    @property
    def dtype(self):
        return self._dtype

    @property
    def element_shape(self):
        return self._element_shape[0]

    @property
    def dynamic_size(self):
        return self._dynamic_size

    def __repr__(self):
        return f"<graphrt.TensorArray '{self._handle.op.name}' dtype={self._dtype.name} " \
               f"element_shape={self.element_shape}>"

    # -- helpers ---------------------------------------------------------------------------
    def _with_flow(self, flow):
        """This array with a new flow (after a write, or inside a while loop)."""
        ta = TensorArray.__new__(TensorArray)
        ta._dtype, ta._dynamic_size, ta._infer_shape = self._dtype, self._dynamic_size, self._infer_shape
        ta._size = self._size
        ta._element_shape = self._element_shape
        ta._colocate_with_first_write_call = self._colocate_with_first_write_call
        ta._colocate_with = self._colocate_with
        ta._handle, ta._flow = self._handle, flow
        return ta

    def _merge_element_shape(self, shape):
        shape = as_shape(shape)
        if not self._element_shape[0].is_compatible_with(shape):
            raise ValueError(f"Inconsistent shapes: saw {shape} but expected {self._element_shape[0]} "
                             f"(and infer_shape=True)")
        self._element_shape[0] = self._element_shape[0].merge_with(shape)

    @contextlib.contextmanager
    def _maybe_colocate_with(self, value):
        if not self._colocate_with_first_write_call:
            yield
            return
        if not self._colocate_with:
            self._colocate_with.append(value)
        with get_default_graph().colocate_with(self._colocate_with[0]):
            yield

    def _check_dtype(self, value):
        if value.dtype.base_dtype != self._dtype:
            raise ValueError(f"TensorArray dtype is {self._dtype.name} but Op is trying to write dtype "
                             f"{value.dtype.base_dtype.name}.")

    def _convert_value(self, value):
        value = convert_to_tensor(value, dtype=self._dtype if not hasattr(value, "dtype") else None, name="value")
        self._check_dtype(value)
        return value

    # -- operations ------------------------------------------------------------------------
    def identity(self):
        """This array with its flow through an Identity (a new value to hang control dependencies on)."""
        return self._with_flow(array_ops.identity(self._flow))

    def grad(self, source, flow=None, name=None):
        """The gradient array of this one for the `gradients` call named `source`."""
        flow = self._flow if flow is None else flow
        g = self._handle.graph
        with g.as_default(), g.name_scope(name or "TensorArrayGrad"), g.colocate_with(self._handle):
            op = apply_op("TensorArrayGradV3", [self._handle, flow], source=source)
            grad_handle = op.outputs[0]
            with g.control_dependencies([grad_handle]):
                flow_out = array_ops.identity(flow, name="gradient_flow")
        ta = TensorArray(dtype=self._dtype, handle=grad_handle, flow=flow_out, infer_shape=self._infer_shape,
                         colocate_with_first_write_call=False)
        ta._element_shape = self._element_shape
        return ta

    def read(self, index, name=None):
        """The element at `index` (an int32 scalar)."""
        value = apply_op("TensorArrayReadV3", [self._handle, index, self._flow], name=name,
                         dtype=self._dtype).outputs[0]
        if self._element_shape[0].ndims is not None:
            value.set_shape(self._element_shape[0])
        return value

    def write(self, index, value, name=None):
        """A TensorArray with `value` written at `index`."""
        g = self._handle.graph
        with g.as_default(), g.name_scope(name or "TensorArrayWrite"):
            value = self._convert_value(value)
            if self._infer_shape:
                self._merge_element_shape(value.shape)
            with self._maybe_colocate_with(value):
                flow_out = apply_op("TensorArrayWriteV3", [self._handle, index, value, self._flow]).outputs[0]
        return self._with_flow(flow_out)

    def stack(self, name=None):
        """All elements stacked along a new first dimension."""
        g = self._handle.graph
        with g.as_default(), g.name_scope(name or "TensorArrayStack"):
            value = self.gather(math_ops.range(0, self.size()), name=name)
            if self._element_shape[0].ndims is not None and not self._dynamic_size and self._size is not None:
                value.set_shape(TensorShape([_static_size(self._size)]).concatenate(self._element_shape[0]))
            return value

    def gather(self, indices, name=None):
        """The elements at `indices`, stacked."""
        element_shape = self._element_shape[0] if self._element_shape[0].ndims is not None else unknown_shape()
        value = apply_op("TensorArrayGatherV3", [self._handle, indices, self._flow], name=name,
                         dtype=self._dtype, element_shape=element_shape).outputs[0]
        if self._element_shape[0].ndims is not None:
            value.set_shape(TensorShape([None]).concatenate(self._element_shape[0]))
        return value

    def concat(self, name=None):
        """All elements concatenated along their first dimension."""
        shape = self._element_shape[0]
        except0 = TensorShape(shape.dims[1:]) if shape.ndims else unknown_shape()
        value, _ = apply_op("TensorArrayConcatV3", [self._handle, self._flow], name=name, dtype=self._dtype,
                            element_shape_except0=except0).outputs
        if shape.ndims is not None:
            # the first dimension stays unknown, as for TF 2's arrays (elements may differ in length)
            value.set_shape(TensorShape([None]).concatenate(except0))
        return value

    def unstack(self, value, name=None):
        """A TensorArray holding the slices of `value` along its first dimension."""
        g = get_default_graph()
        with g.name_scope(name or "TensorArrayUnstack"):
            value = self._convert_value(value)
            num_elements = array_ops.shape(value)[0]
            return self.scatter(math_ops.range(0, num_elements), value, name=name)

    def scatter(self, indices, value, name=None):
        """A TensorArray with `value[i]` written at `indices[i]`."""
        g = get_default_graph()
        with g.name_scope(name or "TensorArrayScatter"):
            value = self._convert_value(value)
            if self._infer_shape and value.shape.ndims is not None:
                self._merge_element_shape(TensorShape(value.shape.dims[1:]))
            with self._maybe_colocate_with(value):
                flow_out = apply_op("TensorArrayScatterV3", [self._handle, indices, value, self._flow]).outputs[0]
        return self._with_flow(flow_out)

    def split(self, value, lengths, name=None):
        """A TensorArray holding consecutive pieces of `value` of the given `lengths`."""
        g = get_default_graph()
        with g.name_scope(name or "TensorArraySplit"):
            value = self._convert_value(value)
            lengths_64 = math_ops.cast(lengths, dtypes.int64)
            if self._infer_shape and value.shape.ndims is not None:
                clengths = constant_value(lengths_64)
                if clengths is not None and clengths.size and clengths.max() == clengths.min():
                    self._merge_element_shape(TensorShape([int(clengths[0])] + list(value.shape.dims[1:])))
            with self._maybe_colocate_with(value):
                flow_out = apply_op("TensorArraySplitV3", [self._handle, value, lengths_64, self._flow]).outputs[0]
        return self._with_flow(flow_out)

    def size(self, name=None):
        """The current number of elements (an int32 scalar): the size given, for a fixed-size array."""
        if not self._dynamic_size and self._size is not None:
            return convert_to_tensor(self._size, dtype=dtypes.int32)
        return apply_op("TensorArraySizeV3", [self._handle, self._flow], name=name).outputs[0]

    def close(self, name=None):
        """Frees the elements; later ops on this array fail."""
        return apply_op("TensorArrayCloseV3", [self._handle], name=name)


def _static_size(size):
    value = constant_value(convert_to_tensor(size, dtype=dtypes.int32)) if not isinstance(size, int) else size
    return None if value is None else int(value)
