"""`tf.parse_example` / `tf.parse_single_example` with `tf.FixedLenFeature`,
`tf.FixedLenSequenceFeature` and `tf.VarLenFeature` (a SparseTensor), as one
`ParseExampleV2` op (TF's inputs, attrs and outputs; the ragged lists stay
empty: graphrt has no RaggedFeature).

As in TF the features are taken in sorted key order; a sequence feature's
shape gets a leading unknown dimension (`_prepend_none_dimension`), which
tells the kernel to pad the values to the longest example."""
import collections
import re

import numpy as np
from google.protobuf.message import DecodeError

from .. import errors
from ..framework import dtypes
from ..framework.graph import get_default_graph
from ..framework.op_builder import constant, convert_to_tensor
from ..framework.registry import not_differentiable, register_kernel, register_op
from ..framework.tensor_shape import TensorShape, as_shape
from ..ops import array_ops
from ..sparse.sparse_tensor import SparseTensor
from .example_pb2 import Example

_PARSE_TYPES = {dtypes.float32, dtypes.int64, dtypes.string}


def _parse_shapes(ctx):
    batch, n = ctx.shape(0), ctx.attr("num_sparse")
    rank = None if batch.ndims is None else batch.ndims + 1
    dense = [batch.concatenate(as_shape(s)) for s in ctx.attr("dense_shapes")]
    return [TensorShape([None, rank])] * n + [TensorShape([None])] * n + [TensorShape([rank])] * n + dense


register_op("ParseExampleV2", ["serialized: string", "names: string", "sparse_keys: string", "dense_keys: string",
                               "ragged_keys: string", "dense_defaults: Tdense"],
            ["sparse_indices: num_sparse * int64", "sparse_values: sparse_types",
             "sparse_shapes: num_sparse * int64", "dense_values: Tdense", "ragged_values: ragged_value_types",
             "ragged_row_splits: ragged_split_types"],
            attrs={"Tdense": [], "num_sparse": 0, "sparse_types": [], "ragged_value_types": [],
                   "ragged_split_types": [], "dense_shapes": []},
            shape_fn=_parse_shapes, allowed_types={"Tdense": _PARSE_TYPES, "sparse_types": _PARSE_TYPES})
not_differentiable("ParseExampleV2")


class FixedLenFeature(collections.namedtuple("FixedLenFeature", ["shape", "dtype", "default_value"])):
    """A feature of a fixed number of values, parsed into a dense tensor of `shape`."""

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtype, default_value)


class FixedLenSequenceFeature(collections.namedtuple(
        "FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"])):
    """A feature of any number of blocks of `shape`, parsed into [max blocks] + shape, padded."""

    def __new__(cls, shape, dtype, allow_missing=False, default_value=None):
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """A feature of any number of values, parsed into a SparseTensor ([batch, longest] dense shape)."""


def _key_name(prefix, key):
    return prefix + re.sub(r"[^A-Za-z0-9_.\-/]", "_", key)


def _dense_default(key, feature, shape):
    dtype = feature.dtype
    if shape.ndims and shape.dims[0].value is None:  # a sequence: the default is the scalar padding value
        if feature.default_value is None:
            return convert_to_tensor("" if dtype == dtypes.string else 0, dtype=dtype)
        value = convert_to_tensor(feature.default_value, dtype=dtype, name=_key_name("padding_", key))
        return array_ops.reshape(value, [])
    if feature.default_value is None:
        return constant([], dtype=dtype)  # empty: the feature is required
    value = convert_to_tensor(feature.default_value, dtype=dtype, name=_key_name("key_", key))
    return array_ops.reshape(value, shape.as_list())


def _params(features):
    """(sparse keys, their dtypes), (dense keys, dtypes, shapes), in sorted key order, checked as TF checks them."""
    if not features:
        raise ValueError(f"Argument `features` cannot be None or falsy. Got {features}")
    sparse_keys, sparse_types, keys, types, shapes = [], [], [], [], []
    for key in sorted(features):
        feature = features[key]
        if isinstance(feature, VarLenFeature):
            if not feature.dtype:
                raise ValueError(f"Missing type for feature {key}. Received feature={feature}.")
            sparse_keys.append(key)
            sparse_types.append(dtypes.as_dtype(feature.dtype))
            continue
        if not isinstance(feature, (FixedLenFeature, FixedLenSequenceFeature)):
            raise ValueError(f"Unsupported {type(feature).__name__} {feature} for key '{key}'")
        if not feature.dtype:
            raise ValueError(f"Missing type for feature {key}. Received feature={feature}.")
        if feature.shape is None:
            raise ValueError(f"Missing shape for feature {key}. Received feature={feature}.")
        shape = as_shape(feature.shape)
        if isinstance(feature, FixedLenSequenceFeature):
            if not feature.allow_missing:
                raise ValueError("Unsupported: FixedLenSequenceFeature requires allow_missing to be True.")
            shape = TensorShape([None]).concatenate(shape)
        elif shape.ndims and shape.dims[0].value is None:
            raise ValueError(f"First dimension of shape for feature {key} unknown. Consider using "
                             f"FixedLenSequenceFeature. Received feature={feature}.")
        elif not shape.is_fully_defined():
            raise ValueError(f"All dimensions of shape for feature {key} need to be known but received "
                             f"{feature.shape!s}.")
        keys.append(key)
        types.append(dtypes.as_dtype(feature.dtype))
        shapes.append(shape)
    return (sparse_keys, sparse_types), (keys, types, shapes)


def parse_example(serialized, features, name=None, example_names=None):
    """Parses a batch (vector) of serialized Example protos into {key: dense tensor}."""
    return _parse(serialized, features, example_names, name, "ParseExample")


def parse_single_example(serialized, features, name=None, example_names=None):
    """Parses one serialized Example (a scalar) into {key: dense tensor}."""
    if not features:
        raise ValueError("Invalid argument: features cannot be None.")
    g = get_default_graph()
    with g.name_scope(name or "ParseSingleExample"):
        serialized = convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
        if serialized.shape.ndims is not None and serialized.shape.ndims != 0:
            raise ValueError("Input serialized must be a scalar")
        return _parse(serialized, features, example_names, None, "ParseExample")


def _parse(serialized, features, example_names, name, scope_name):
    (sparse_keys, sparse_types), (keys, types, shapes) = _params(features)
    g = get_default_graph()
    with g.name_scope(name or scope_name):
        serialized = convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
        names = convert_to_tensor([] if example_names is None else example_names, dtype=dtypes.string)
        defaults = [_dense_default(k, features[k], s) for k, s in zip(keys, shapes)]
        inputs = [serialized, names, constant(sparse_keys, dtype=dtypes.string),
                  constant(keys, dtype=dtypes.string), constant([], dtype=dtypes.string)] + defaults
        op = g.create_op("ParseExampleV2", inputs, {"Tdense": types, "num_sparse": len(sparse_keys),
                                                     "sparse_types": sparse_types, "ragged_value_types": [],
                                                     "ragged_split_types": [], "dense_shapes": shapes},
                         name=name or "ParseExampleV2")
        n = len(sparse_keys)
        outs = op.outputs
        sparse = [SparseTensor(outs[i], outs[n + i], outs[2 * n + i]) for i in range(n)]
    return dict(zip(sparse_keys + keys, sparse + list(outs[3 * n:])))


# -- the kernel --------------------------------------------------------------------------------

_KIND = {dtypes.float32: "float_list", dtypes.int64: "int64_list", dtypes.string: "bytes_list"}
_TYPE_NAME = {"float_list": "float", "int64_list": "int64", "bytes_list": "string"}


def _np_type(dtype):
    return object if dtype == dtypes.string else dtype.np


def _dense_values(feature, kind, dtype, where):
    """The values of one present feature as a flat array, or an error when its type is not `dtype`'s."""
    got = feature.WhichOneof("kind")
    if got != kind:
        raise errors.InvalidArgumentError(f"{where}.  Data types don't match. Data type: {_TYPE_NAME.get(got, got)} "
                                          f"but expected type: {_TYPE_NAME[kind]}")
    values = getattr(feature, kind).value
    return np.array(list(values), dtype=_np_type(dtype)) if dtype == dtypes.string else \
        np.asarray(values, dtype=_np_type(dtype))


@register_kernel("ParseExampleV2", "CPU", host_only=True)
def _parse_example_kernel(ctx):
    node, types, sparse_types = ctx.name, ctx.attr("Tdense"), ctx.attr("sparse_types")
    shapes = [as_shape(s) for s in ctx.attr("dense_shapes")]

    def parse(serialized, names, sparse_keys, dense_keys, _ragged_keys, *defaults):
        serialized = np.asarray(serialized)
        batch = serialized.reshape(-1)
        names = [n.decode() if isinstance(n, bytes) else str(n) for n in np.asarray(names).reshape(-1)]
        examples = []
        for i, s in enumerate(batch):
            try:
                examples.append(Example.FromString(s))
            except DecodeError:
                raise errors.InvalidArgumentError(f"Could not parse example input, value: '{s!r}'", node=node) \
                    from None
        sparse = [_sparse_column(examples, _text(key), sparse_types[j], serialized.ndim, node)
                  for j, key in enumerate(np.asarray(sparse_keys).reshape(-1))]
        out = [s[0] for s in sparse] + [s[1] for s in sparse] + [s[2] for s in sparse]
        for j, key in enumerate(np.asarray(dense_keys).reshape(-1)):
            key = _text(key)
            column = []
            for i, example in enumerate(examples):
                prefix = "" if serialized.ndim == 0 else f"Name: {names[i] if names else '<unknown>'}, "
                column.append(_dense_column(example, key, types[j], shapes[j], defaults[j], prefix, i, node))
            out.append(_stack(column, types[j], shapes[j], defaults[j], serialized.shape))
        return tuple(out) if len(out) != 1 else out[0]  # a kernel of one output returns it bare
    return parse


def _text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def _sparse_column(examples, key, dtype, batch_rank, node):
    """(indices, values, dense shape) of a VarLenFeature: [example, position] per value in a batch, [position]
    for one example."""
    kind, indices, values = _KIND[dtype], [], []
    longest = 0
    for i, example in enumerate(examples):
        feature = example.features.feature.get(key)
        if feature is None or feature.WhichOneof("kind") is None:
            continue
        where = f"Name: <unknown>, Key: {key}, Index: {i}" if batch_rank else f"Key: {key}"
        try:
            v = _dense_values(feature, kind, dtype, where)
        except errors.OpError as e:
            raise type(e)(e.message, node=node) from None
        indices.extend([i, k] for k in range(v.size))
        values.append(v)
        longest = max(longest, v.size)
    index = np.array(indices, dtype=np.int64).reshape(-1, 2)
    flat = np.concatenate(values) if values else np.zeros(0, dtype=_np_type(dtype))
    if batch_rank:
        return index, flat, np.array([len(examples), longest], dtype=np.int64)
    return index[:, 1:].copy(), flat, np.array([longest], dtype=np.int64)


def _dense_column(example, key, dtype, shape, default, prefix, index, node):
    """One example's values of a dense feature: an array of `shape`, or of [blocks] + shape[1:] for a sequence."""
    kind = _KIND[dtype]
    feature_map = example.features.feature
    sequence = shape.ndims and shape.dims[0].value is None
    if key not in feature_map or feature_map[key].WhichOneof("kind") is None:
        if sequence:
            return np.zeros([0] + shape.as_list()[1:], dtype=_np_type(dtype))
        if np.size(default) == 0:
            raise errors.InvalidArgumentError(f"{prefix}Feature: {key} (data type: {_TYPE_NAME[kind]}) is required "
                                              "but could not be found.", node=node)
        return np.asarray(default)
    where = f"{prefix}Key: {key}, Index: {index}"
    try:
        values = _dense_values(feature_map[key], kind, dtype, where)
    except errors.OpError as e:
        raise type(e)(e.message, node=node) from None
    if sequence:
        stride = int(np.prod(shape.as_list()[1:], dtype=np.int64))
        if stride and values.size % stride:
            raise errors.InvalidArgumentError(
                f"{where}.  Number of {_TYPE_NAME[kind]} values is not a multiple of stride length. Saw "
                f"{values.size} values but output shape is: {_shape_text(shape)}", node=node)
        return values.reshape([-1] + shape.as_list()[1:])
    if values.size != shape.num_elements():
        raise errors.InvalidArgumentError(
            f"{where}.  Number of {_TYPE_NAME[kind]} values != expected.  Values size: {values.size} but output "
            f"shape: {_shape_text(shape)}", node=node)
    return values.reshape(shape.as_list())


def _shape_text(shape):
    return "[" + ",".join("?" if d is None else str(d) for d in shape.as_list()) + "]"


def _stack(column, dtype, shape, default, batch_shape):
    """The examples' values as one array of batch_shape + shape, sequences padded with `default`."""
    if shape.ndims and shape.dims[0].value is None:
        longest = max((c.shape[0] for c in column), default=0)
        padded = np.full([len(column), longest] + shape.as_list()[1:], np.asarray(default).item(),
                         dtype=_np_type(dtype))
        for i, c in enumerate(column):
            padded[i, :c.shape[0]] = c
        return padded.reshape(list(batch_shape) + list(padded.shape[1:]))
    out = np.empty([len(column)] + shape.as_list(), dtype=_np_type(dtype))
    for i, c in enumerate(column):
        out[i] = c
    return out.reshape(list(batch_shape) + shape.as_list())
