"""TensorArray kernels: the array itself is a `TensorArrayState` that the
TensorArrayV3 kernel makes each time it runs (once per step, or per
iteration of a loop it sits in), so nothing outlives the step.

The rules are those of the arrays TensorFlow 2 builds for compat.v1 graphs
(TensorList-backed), so programs behave as TensorFlow 2.21 runs them:
* a second write to an index replaces the value, except in a gradient array,
  where writes to one index are summed (several forward reads of one element
  each send it a gradient); an overwritten write's gradient is the final
  value's (TF gives it zeros), the one place this array differs;
* reads leave the value in place: `clear_after_read` is accepted and, as in
  TF 2, not enforced, so an element may be read (stacked, gathered) again;
* the element shape a write is checked against is the declared one (TF 1's
  arrays also fixed it at the first write; TF 2's do not, so `split` may give
  elements of different lengths);
* reading an element never written gives zeros when its shape is known
  (a gradient array knows the shapes of its forward array's elements:
  an element whose forward value got no gradient reads as zeros), and is
  an error otherwise;
* a fixed-size array rejects indices past its size; `dynamic_size` grows it.

Kernels run concurrently (iterations of a loop in parallel), so every
access to one array holds its lock.
"""
import threading

import numpy as np

from .. import errors
from ..framework.registry import register_kernel
from ..framework.tensor_shape import TensorShape, as_shape
from ..ops.math_kernels import ALL_DEVICES


class _Element:
    __slots__ = ("value", "shape", "written")

    def __init__(self, shape=None):
        self.value = None
        self.shape = shape      # the shape written, or known for an unwritten element (gradient arrays)
        self.written = False


class TensorArrayState:
    """The elements of one TensorArray in one step."""

    def __init__(self, name, dtype, size, element_shape, dynamic_size=False,
                 identical_element_shapes=False, aggregate_writes=False, xp=np):
        self.name = name
        self.element_dtype = dtype  # not `dtype`: device kernels take anything with one for a tensor
        self.elements = [_Element() for _ in range(size)]
        self.element_shape = as_shape(element_shape)
        self.dynamic_size = dynamic_size
        self.identical_element_shapes = identical_element_shapes
        self.written_shape = None
        self.aggregate_writes = aggregate_writes
        self.closed = False
        self.grads = {}  # gradient source ("gradients", "gradients_1", ...) -> TensorArrayState
        self.lock = threading.Lock()
        self.xp = xp

    def __repr__(self):
        written = sum(e.written for e in self.elements)
        return f"<TensorArray {self.name}: {written}/{len(self.elements)} written, dtype={self.element_dtype.name}>"

    def error(self, message, node):
        return errors.InvalidArgumentError(f"TensorArray {self.name}: {message}", node=node)

    def check_open(self, node):
        if self.closed:
            raise self.error("has already been closed.", node)

    # -- writes ----------------------------------------------------------------------------
    def write(self, index, value, node):
        """Stores `value` (copied: the array keeps it past its producer's life) at `index`."""
        if not hasattr(value, "shape"):
            value = np.array(value, dtype=object)  # an element of a string array (scatter, split) is bytes
        if index < 0:
            raise self.error(f"Tried to write to index {index} but array size is: {len(self.elements)}", node)
        if index >= len(self.elements):
            if not self.dynamic_size:
                raise self.error(f"Tried to write to index {index} but array is not resizeable and size is: "
                                 f"{len(self.elements)}", node)
            self.elements.extend(_Element() for _ in range(index + 1 - len(self.elements)))
        shape = TensorShape(list(value.shape))
        if not self.element_shape.is_compatible_with(shape):
            raise self.error(f"Could not write to TensorArray index {index} because the value shape is "
                             f"{_dims(shape)} which is incompatible with the TensorArray's inferred element "
                             f"shape: {_dims(self.element_shape)} (consider setting infer_shape=False).", node)
        if self.identical_element_shapes and self.written_shape is None:
            self.written_shape = shape  # what an unwritten element reads as zeros of, if nothing says more
        element = self.elements[index]
        if element.written and self.aggregate_writes:
            if tuple(element.value.shape) != tuple(value.shape):
                raise self.error(f"Could not aggregate to TensorArray index {index} because the existing shape "
                                 f"is {_dims(element.value.shape)} but the new input shape is "
                                 f"{_dims(value.shape)}.", node)
            element.value = element.value + value
            return
        element.value = self.xp.array(value, copy=True)
        element.shape = shape
        element.written = True

    # -- reads -----------------------------------------------------------------------------
    def read(self, index, node):
        if index < 0 or index >= len(self.elements):
            raise self.error(f"Tried to read from index {index} but array size is: {len(self.elements)}", node)
        element = self.elements[index]
        if not element.written:
            shape = element.shape if element.shape is not None else self.element_shape
            if not shape.is_fully_defined() and self.written_shape is not None \
                    and shape.is_compatible_with(self.written_shape):
                shape = shape.merge_with(self.written_shape)
            if not shape.is_fully_defined():
                raise self.error(f"Could not read from TensorArray index {index}.  Furthermore, the element shape "
                                 f"is not fully defined: {_dims(shape)}.  It is possible you are working with a "
                                 f"resizeable TensorArray and stop_gradients is not allowing the gradients to be "
                                 f"written.  If you set the full element_shape property on the forward "
                                 f"TensorArray, the proper all-zeros tensor will be returned instead of incurring "
                                 f"this error.", node)
            return self.xp.zeros(shape.as_list(), dtype=self.element_dtype.np)
        return element.value

    def read_many(self, indices, node, empty_shape):
        """The elements at `indices` stacked (gather, stack); `empty_shape` is the
        element shape to use when there are none."""
        values = [self.read(int(i), node) for i in indices]
        if not values:
            shape = self.element_shape if not self.element_shape.is_compatible_with(empty_shape) else \
                self.element_shape.merge_with(empty_shape)
            if not shape.is_fully_defined():
                raise errors.UnimplementedError(
                    f"TensorArray {self.name}: TensorArray has size zero, but element shape {_dims(shape)} is not "
                    f"fully defined. Currently only static shapes are supported when packing zero-size "
                    f"TensorArrays.", node=node)
            return self.xp.zeros([0] + shape.as_list(), dtype=self.element_dtype.np)
        first = values[0].shape
        for i, v in zip(indices, values):
            if v.shape != first:
                raise self.error(f"TensorArray has inconsistent shapes.  Index 0 has shape: {_dims(first)} but "
                                 f"index {int(i)} has shape: {_dims(v.shape)}", node)
        return self.xp.stack(values)

    def gradient_array(self, source):
        """The gradient array for gradient `source` (made on first use): same
        size, element shapes from this array's writes, writes summed."""
        grad = self.grads.get(source)
        if grad is None:
            self.dynamic_size = False  # the gradient array's size is now fixed
            grad = TensorArrayState(f"{self.name}@{source}", self.element_dtype, len(self.elements), self.element_shape,
                                    aggregate_writes=True, xp=self.xp)
            for mine, theirs in zip(self.elements, grad.elements):
                theirs.shape = mine.shape
            self.grads[source] = grad
        return grad


def _dims(shape):
    shape = as_shape(shape) if not isinstance(shape, TensorShape) else shape
    if shape.ndims is None:
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(d) for d in shape.as_list()) + "]"


def _flow(ctx):
    return np.zeros((), dtype=np.float32)


# -- kernels ---------------------------------------------------------------------------------

@register_kernel("TensorArrayV3", ALL_DEVICES, inexpensive=True, host_memory=("size",))
def _create(ctx):
    dtype = ctx.attr("dtype")
    name = ctx.attr("tensor_array_name") or ctx.name
    element_shape = ctx.attr("element_shape")
    flags = dict(dynamic_size=bool(ctx.attr("dynamic_size")),
                 identical_element_shapes=bool(ctx.attr("identical_element_shapes")))
    node, xp = ctx.name, ctx.xp

    def create(size):
        size = int(size)
        if size < 0:
            raise errors.InvalidArgumentError(f"Size should be >= 0, but saw {size} for TensorArray {name}",
                                              node=node)
        return TensorArrayState(name, dtype, size, element_shape, xp=xp, **flags), _flow(ctx)
    return create


def _locked(fn):
    """`fn(state, *args)` under the array's lock, after checking it is open."""
    def run(ctx):
        node = ctx.name
        body = fn(ctx)

        def kernel(state, *args):
            with state.lock:
                state.check_open(node)
                return body(state, *args)
        return kernel
    return run


@register_kernel("TensorArrayWriteV3", ALL_DEVICES, host_memory=("index",))
@_locked
def _write(ctx):
    node = ctx.name

    def write(state, index, value, flow):
        _check_dtype(state, ctx.attr("T"), node)
        state.write(int(index), value, node)
        return flow
    return write


@register_kernel("TensorArrayReadV3", ALL_DEVICES, host_memory=("index",))
@_locked
def _read(ctx):
    node = ctx.name
    want = ctx.attr("dtype")

    def read(state, index, flow):
        _check_dtype(state, want, node, reading=True)
        return state.read(int(index), node)
    return read


@register_kernel("TensorArrayGatherV3", ALL_DEVICES, host_memory=("indices",))
@_locked
def _gather(ctx):
    node = ctx.name
    element_shape = as_shape(ctx.attr("element_shape"))
    want = ctx.attr("dtype")

    def gather(state, indices, flow):
        _check_dtype(state, want, node, reading=True)
        indices = np.asarray(indices).reshape(-1)
        return state.read_many(indices, node, element_shape)
    return gather


@register_kernel("TensorArrayScatterV3", ALL_DEVICES, host_memory=("indices",))
@_locked
def _scatter(ctx):
    node = ctx.name

    def scatter(state, indices, value, flow):
        _check_dtype(state, ctx.attr("T"), node)
        indices = np.asarray(indices).reshape(-1)
        if value.ndim < 1 or len(indices) != value.shape[0]:
            raise state.error(f"Expected len(indices) == values.shape[0], but saw: {len(indices)} vs. "
                              f"{value.shape[0] if value.ndim else 'a scalar'}", node)
        for i, index in enumerate(indices):
            state.write(int(index), value[i], node)
        return flow
    return scatter


@register_kernel("TensorArrayConcatV3", ALL_DEVICES, host_memory=("lengths",))
@_locked
def _concat(ctx):
    node = ctx.name
    except0 = as_shape(ctx.attr("element_shape_except0"))
    want = ctx.attr("dtype")

    def concat(state, flow):
        _check_dtype(state, want, node, reading=True)
        values = [state.read(i, node) for i in range(len(state.elements))]
        for i, v in enumerate(values):
            if v.ndim == 0:
                raise state.error(f"Concat saw a scalar shape at index {i} but requires at least vectors.", node)
        lengths = np.array([v.shape[0] for v in values], dtype=np.int64)
        if not values:
            if not except0.is_fully_defined():
                raise state.error(f"Concat saw a zero-size TensorArray and element_shape_except0 "
                                  f"{_dims(except0)} is not fully defined.", node)
            return state.xp.zeros([0] + except0.as_list(), dtype=state.element_dtype.np), lengths
        rest = values[0].shape[1:]
        for i, v in enumerate(values):
            if v.shape[1:] != rest:
                raise state.error(f"Concat saw index {i} with shape {_dims(v.shape)} but the first element has "
                                  f"shape {_dims(values[0].shape)}: the shapes past the first dimension must "
                                  f"match.", node)
        return state.xp.concatenate(values, axis=0), lengths
    return concat


@register_kernel("TensorArraySplitV3", ALL_DEVICES, host_memory=("lengths",))
@_locked
def _split(ctx):
    node = ctx.name

    def split(state, value, lengths, flow):
        _check_dtype(state, ctx.attr("T"), node)
        lengths = np.asarray(lengths).reshape(-1)
        if value.ndim < 1:
            raise state.error("Expected value to be at least a vector, but received a scalar.", node)
        if int(lengths.sum()) != value.shape[0]:
            raise state.error(f"Expected sum of lengths to be equal to values.shape[0], but sum of lengths is "
                              f"{int(lengths.sum())} and value's shape is: {_dims(value.shape)}", node)
        if not state.dynamic_size and len(lengths) != len(state.elements):
            raise state.error(f"TensorArray's size is not equal to the size of lengths ({len(state.elements)} vs. "
                              f"{len(lengths)}), and the TensorArray is not marked as dynamically resizeable",
                              node)
        start = 0
        for i, n in enumerate(lengths):
            state.write(i, value[start:start + int(n)], node)
            start += int(n)
        return flow
    return split


@register_kernel("TensorArraySizeV3", ALL_DEVICES, inexpensive=True, host_memory=("size",))
@_locked
def _size(ctx):
    return lambda state, flow: np.array(len(state.elements), dtype=np.int32)


@register_kernel("TensorArrayGradV3", ALL_DEVICES, inexpensive=True)
@_locked
def _grad(ctx):
    source = ctx.attr("source")
    return lambda state, flow: (state.gradient_array(source), flow)


@register_kernel("TensorArrayCloseV3", ALL_DEVICES, inexpensive=True)
def _close(ctx):
    def close(state):
        with state.lock:
            state.closed = True
            for element in state.elements:
                element.value = None
    return close


def _check_dtype(state, dtype, node, reading=False):
    if dtype.base_dtype != state.element_dtype:
        verb = "read" if reading else "write"
        raise state.error(f"TensorArray dtype is {state.element_dtype.name} but Op is trying to {verb} dtype "
                          f"{dtype.base_dtype.name}.", node)
