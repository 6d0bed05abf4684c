"""TF 2's TensorList ops over a `variant` that holds a `TensorList`: an immutable Python list of
arrays (None for an element not yet set) with its element dtype and shape. Each op that changes a
list returns a new one, as TF's copy-on-write lists behave."""
import numpy as np

from .. import errors
from ..framework import dtypes
from ..framework.registry import not_differentiable, register_kernel, register_op
from ..framework.tensor_shape import TensorShape


class TensorList:
    __slots__ = ("items", "dtype", "element_shape")

    def __init__(self, items, dtype, element_shape):
        self.items, self.dtype, self.element_shape = list(items), dtype, element_shape

    def replace(self, items):
        return TensorList(items, self.dtype, self.element_shape)

    def __add__(self, other):
        """Element by element (unset elements count as zeros): how TF adds gradient TensorLists."""
        if not isinstance(other, TensorList) or len(other.items) != len(self.items):
            raise errors.InvalidArgumentError(f"Trying to add two lists of differing lengths: {len(self.items)} vs. "
                                              f"{len(getattr(other, 'items', ()))}")
        return self.replace([b if a is None else a if b is None else a + b for a, b in zip(self.items, other.items)])

    def zeros_like(self):
        """A list of as many unset elements (zeros when read)."""
        return self.replace([None] * len(self.items))

    def __repr__(self):
        return f"<TensorList of {len(self.items)} {self.dtype.name} {self.element_shape}>"


_SHAPE = {"shape_type": {dtypes.int32, dtypes.int64}}
_SCALAR, _VECTOR = TensorShape([]), TensorShape([None])
register_op("EmptyTensorList", ["element_shape: shape_type", "max_num_elements: int32"], ["handle: variant"],
            attrs={"element_dtype": None}, shape_fn=lambda ctx: _SCALAR, allowed_types=_SHAPE)
register_op("TensorListReserve", ["element_shape: shape_type", "num_elements: int32"], ["handle: variant"],
            attrs={"element_dtype": None}, shape_fn=lambda ctx: _SCALAR, allowed_types=_SHAPE)
register_op("TensorListFromTensor", ["tensor: element_dtype", "element_shape: shape_type"],
            ["output_handle: variant"], shape_fn=lambda ctx: _SCALAR, allowed_types=_SHAPE)
register_op("TensorListStack", ["input_handle: variant", "element_shape: int32"], ["tensor: element_dtype"],
            attrs={"num_elements": -1}, shape_fn=lambda ctx: TensorShape(None))
register_op("TensorListGetItem", ["input_handle: variant", "index: int32", "element_shape: int32"],
            ["item: element_dtype"], shape_fn=lambda ctx: TensorShape(None))
register_op("TensorListSetItem", ["input_handle: variant", "index: int32", "item: element_dtype"],
            ["output_handle: variant"], attrs={"resize_if_index_out_of_bounds": False},
            shape_fn=lambda ctx: _SCALAR)
register_op("TensorListPushBack", ["input_handle: variant", "tensor: element_dtype"], ["output_handle: variant"],
            shape_fn=lambda ctx: _SCALAR)
register_op("TensorListPopBack", ["input_handle: variant", "element_shape: int32"],
            ["output_handle: variant", "tensor: element_dtype"],
            shape_fn=lambda ctx: [_SCALAR, TensorShape(None)])
register_op("TensorListLength", ["input_handle: variant"], ["length: int32"], shape_fn=lambda ctx: _SCALAR)
register_op("TensorListElementShape", ["input_handle: variant"], ["element_shape: shape_type"],
            shape_fn=lambda ctx: _VECTOR, allowed_types=_SHAPE)
for _name in ("EmptyTensorList", "TensorListReserve", "TensorListFromTensor", "TensorListStack",
              "TensorListGetItem", "TensorListSetItem", "TensorListPushBack", "TensorListPopBack", "TensorListLength",
              "TensorListElementShape"):
    not_differentiable(_name)


def _shape_from(value):
    """TF's element_shape input: -1 (a scalar) for unknown, or dims with -1 for an unknown one."""
    value = np.asarray(value)
    if value.ndim == 0:
        return TensorShape(None) if int(value) == -1 else TensorShape([])
    return TensorShape([None if int(d) < 0 else int(d) for d in value])


def _lst(value, name):
    if not isinstance(value, TensorList):
        raise errors.InvalidArgumentError(f"{name}: expected a TensorList, got {type(value).__name__}", node=name)
    return value


def _index(lst, index, name, op):
    i = int(index)
    if not 0 <= i < len(lst.items):
        raise errors.InvalidArgumentError(f"Trying to access element {i} in a list with {len(lst.items)} elements.",
                                          node=name)
    return i


def _zeros(lst, element_shape, name):
    shape = lst.element_shape.merge_with(element_shape) if lst.element_shape.ndims is not None and \
        element_shape.ndims is not None else (element_shape if element_shape.ndims is not None else
                                              lst.element_shape)
    if not shape.is_fully_defined():
        raise errors.InvalidArgumentError(f"{name}: an element that was never set has no known shape "
                                          f"({shape}) to fill with zeros", node=name)
    return np.zeros(shape.as_list(), lst.dtype.np)


def _kernel(op_type, make, **kw):
    register_kernel(op_type, ("CPU",), host_only=True, **kw)(make)


_kernel("EmptyTensorList", lambda ctx: lambda shape, max_n: TensorList([], ctx.attr("element_dtype"),
                                                                       _shape_from(shape)),
        host_memory=("element_shape", "max_num_elements"))
_kernel("TensorListReserve", lambda ctx: lambda shape, n: TensorList([None] * int(n), ctx.attr("element_dtype"),
                                                                      _shape_from(shape)),
        host_memory=("element_shape", "num_elements"))


def _from_tensor(ctx):
    dtype = ctx.attr("element_dtype")

    def make(tensor, shape):
        tensor = np.asarray(tensor)
        if tensor.ndim == 0:
            raise errors.InvalidArgumentError("Tensor must be at least a vector, but saw shape: []", node=ctx.name)
        return TensorList([tensor[i, ...] for i in range(tensor.shape[0])], dtype, TensorShape(tensor.shape[1:]))
    return make


_kernel("TensorListFromTensor", _from_tensor, host_memory=("element_shape",))


def _stack(ctx):
    name = ctx.name

    def stack(handle, shape):
        lst = _lst(handle, name)
        element_shape = _shape_from(shape)
        items = [item if item is not None else _zeros(lst, element_shape, name) for item in lst.items]
        if not items:
            shape = lst.element_shape if lst.element_shape.ndims is not None else element_shape
            if not shape.is_fully_defined():
                raise errors.InvalidArgumentError(f"{name}: stacking an empty list of unknown element shape",
                                                  node=name)
            return np.zeros([0] + shape.as_list(), lst.dtype.np)
        return np.stack(items)
    return stack


_kernel("TensorListStack", _stack, host_memory=("element_shape",))


def _get_item(ctx):
    name = ctx.name

    def get(handle, index, shape):
        lst = _lst(handle, name)
        item = lst.items[_index(lst, index, name, "get")]
        return item if item is not None else _zeros(lst, _shape_from(shape), name)
    return get


_kernel("TensorListGetItem", _get_item, host_memory=("index", "element_shape"))


def _set_item(ctx):
    name, resize = ctx.name, ctx.attr("resize_if_index_out_of_bounds")

    def set_item(handle, index, item):
        lst = _lst(handle, name)
        items = list(lst.items)
        i = int(index)
        if resize and i >= len(items):
            items.extend([None] * (i + 1 - len(items)))
        items[_index(lst.replace(items), i, name, "set")] = np.array(item, copy=True)
        return lst.replace(items)
    return set_item


_kernel("TensorListSetItem", _set_item, host_memory=("index",))
_kernel("TensorListPushBack", lambda ctx: lambda handle, tensor: _lst(handle, ctx.name).replace(
    _lst(handle, ctx.name).items + [np.array(tensor, copy=True)]))


def _pop_back(ctx):
    name = ctx.name

    def pop(handle, shape):
        lst = _lst(handle, name)
        if not lst.items:
            raise errors.InvalidArgumentError("Trying to pop from an empty list.", node=name)
        item = lst.items[-1]
        return lst.replace(lst.items[:-1]), (item if item is not None else _zeros(lst, _shape_from(shape), name))
    return pop


_kernel("TensorListPopBack", _pop_back, host_memory=("element_shape",))
_kernel("TensorListLength", lambda ctx: lambda handle: np.array(len(_lst(handle, ctx.name).items), np.int32))


def _element_shape(ctx):
    out = ctx.attr("shape_type").np

    def element_shape(handle):
        shape = _lst(handle, ctx.name).element_shape
        if shape.ndims is None:
            return np.array(-1, out)
        return np.array([-1 if d is None else d for d in shape.as_list()], out)
    return element_shape


_kernel("TensorListElementShape", _element_shape)
