"""`tf.io.parse_sequence_example` / `tf.parse_single_sequence_example`: SequenceExample protos
(a `context` of features, and `feature_lists` of one feature per step) as one
`ParseSequenceExampleV2` op, with TF's inputs, attrs and outputs (the ragged ones stay empty).

- context features are parsed as `parse_example` parses features;
- a `FixedLenSequenceFeature` feature list becomes [steps] + shape (a batch pads every example
  to the longest with zeros, and its lengths come back in a third dict); a list that is absent
  is an error unless `allow_missing`, which makes it empty;
- a `VarLenFeature` feature list becomes a SparseTensor indexed [step, value] ([example, step,
  value] in a batch).
"""
import numpy as np
from google.protobuf.message import DecodeError

from .. import errors
from ..framework import dtypes
from ..framework.graph import get_default_graph
from ..framework.op_builder import constant, convert_to_tensor
from ..framework.registry import not_differentiable, register_kernel, register_op
from ..framework.tensor_shape import TensorShape, as_shape
from ..sparse.sparse_tensor import SparseTensor
from .example_pb2 import SequenceExample
from .parsing import (_KIND, _PARSE_TYPES, _TYPE_NAME, FixedLenSequenceFeature, VarLenFeature, _dense_column,
                      _dense_default, _np_type, _params, _shape_text, _sparse_column, _stack, _text)


def _sequence_shapes(ctx):
    batch = ctx.shape(0)
    rank = batch.ndims
    n_ctx, n_list, n_dense = ctx.attr("Ncontext_sparse"), ctx.attr("Nfeature_list_sparse"), \
        ctx.attr("Nfeature_list_dense")

    def sparse(extra, n):
        r = None if rank is None else rank + extra
        return [TensorShape([None, r])] * n + [TensorShape([None])] * n + [TensorShape([r])] * n

    return (sparse(1, n_ctx)
            + [batch.concatenate(as_shape(s)) for s in ctx.attr("context_dense_shapes")]
            + sparse(2, n_list)
            + [batch.concatenate([None]).concatenate(as_shape(s)) for s in ctx.attr("feature_list_dense_shapes")]
            + [batch] * n_dense)


register_op("ParseSequenceExampleV2",
            ["serialized: string", "debug_name: string", "context_sparse_keys: string",
             "context_dense_keys: string", "context_ragged_keys: string", "feature_list_sparse_keys: string",
             "feature_list_dense_keys: string", "feature_list_ragged_keys: string",
             "feature_list_dense_missing_assumed_empty: bool", "context_dense_defaults: Tcontext_dense"],
            ["context_sparse_indices: Ncontext_sparse * int64", "context_sparse_values: context_sparse_types",
             "context_sparse_shapes: Ncontext_sparse * int64", "context_dense_values: Tcontext_dense",
             "context_ragged_values: context_ragged_value_types",
             "context_ragged_row_splits: context_ragged_split_types",
             "feature_list_sparse_indices: Nfeature_list_sparse * int64",
             "feature_list_sparse_values: feature_list_sparse_types",
             "feature_list_sparse_shapes: Nfeature_list_sparse * int64",
             "feature_list_dense_values: feature_list_dense_types",
             "feature_list_dense_lengths: Nfeature_list_dense * int64",
             "feature_list_ragged_values: feature_list_ragged_value_types",
             "feature_list_ragged_outer_splits: feature_list_ragged_split_types",
             "feature_list_ragged_inner_splits: feature_list_ragged_split_types"],
            attrs={"Ncontext_sparse": 0, "Tcontext_dense": [], "context_sparse_types": [],
                   "context_ragged_value_types": [], "context_ragged_split_types": [], "context_dense_shapes": [],
                   "Nfeature_list_sparse": 0, "Nfeature_list_dense": 0, "feature_list_dense_types": [],
                   "feature_list_sparse_types": [], "feature_list_ragged_value_types": [],
                   "feature_list_ragged_split_types": [], "feature_list_dense_shapes": []},
            shape_fn=_sequence_shapes,
            allowed_types={"Tcontext_dense": _PARSE_TYPES, "context_sparse_types": _PARSE_TYPES,
                           "feature_list_dense_types": _PARSE_TYPES, "feature_list_sparse_types": _PARSE_TYPES})
not_differentiable("ParseSequenceExampleV2")


def _sequence_params(sequence_features):
    """(sparse keys, types), (dense keys, types, step shapes, missing-assumed-empty flags), sorted by key."""
    sparse_keys, sparse_types, keys, types, shapes, empty = [], [], [], [], [], []
    for key in sorted(sequence_features or {}):
        feature = sequence_features[key]
        if isinstance(feature, VarLenFeature):
            sparse_keys.append(key)
            sparse_types.append(dtypes.as_dtype(feature.dtype))
        elif isinstance(feature, FixedLenSequenceFeature):
            if feature.default_value is not None:
                raise ValueError(f"Value feature_list.dense_defaults[{key}] must be None")
            shape = as_shape(feature.shape)
            if not shape.is_fully_defined():
                raise ValueError(f"All dimensions of shape for feature {key} need to be known but received "
                                 f"{feature.shape!s}.")
            keys.append(key)
            types.append(dtypes.as_dtype(feature.dtype))
            shapes.append(shape)
            empty.append(bool(feature.allow_missing))
        else:
            raise ValueError(f"Unsupported {type(feature).__name__} {feature} for key '{key}'")
    return (sparse_keys, sparse_types), (keys, types, shapes, empty)


def parse_sequence_example(serialized, context_features=None, sequence_features=None, example_names=None,
                           name=None):
    """Parses a vector of SequenceExamples: (context dict, feature-list dict, lengths dict)."""
    if not (context_features or sequence_features):
        raise ValueError("Both `context_features` and `sequence_features` argument are None, but at least one "
                         "should have values.")
    return _parse(serialized, context_features, sequence_features, example_names, name, "ParseSequenceExample")


def parse_single_sequence_example(serialized, context_features=None, sequence_features=None, example_name=None,
                                  name=None):
    """Parses one SequenceExample (a scalar): (context dict, feature-list dict)."""
    if not (context_features or sequence_features):
        raise ValueError("Both context_features and sequence_features are None, but at least one should have "
                         "values.")
    g = get_default_graph()
    with g.name_scope(name or "ParseSingleSequenceExample"):
        serialized = convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
        if serialized.shape.ndims is not None and serialized.shape.ndims != 0:
            raise ValueError("Input serialized must be a scalar")
        return _parse(serialized, context_features, sequence_features, example_name, None,
                      "ParseSequenceExample")[:2]


def _parse(serialized, context_features, sequence_features, debug_names, name, scope_name):
    if context_features:
        (ctx_sparse, ctx_sparse_types), (ctx_keys, ctx_types, ctx_shapes) = _params(context_features)
    else:
        ctx_sparse, ctx_sparse_types, ctx_keys, ctx_types, ctx_shapes = [], [], [], [], []
    (list_sparse, list_sparse_types), (list_keys, list_types, list_shapes, empty) = \
        _sequence_params(sequence_features)
    g = get_default_graph()
    with g.name_scope(name or scope_name):
        serialized = convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
        names = convert_to_tensor([] if debug_names is None else debug_names, dtype=dtypes.string)

        def keys(values):
            return constant(values, dtype=dtypes.string)

        defaults = [_dense_default(k, context_features[k], s) for k, s in zip(ctx_keys, ctx_shapes)]
        inputs = [serialized, names, keys(ctx_sparse), keys(ctx_keys), keys([]), keys(list_sparse), keys(list_keys),
                  keys([]), constant(empty, dtype=dtypes.bool)] + defaults
        op = g.create_op("ParseSequenceExampleV2", inputs, {
            "Ncontext_sparse": len(ctx_sparse), "Tcontext_dense": ctx_types, "context_sparse_types": ctx_sparse_types,
            "context_ragged_value_types": [], "context_ragged_split_types": [], "context_dense_shapes": ctx_shapes,
            "Nfeature_list_sparse": len(list_sparse), "Nfeature_list_dense": len(list_keys),
            "feature_list_dense_types": list_types, "feature_list_sparse_types": list_sparse_types,
            "feature_list_ragged_value_types": [], "feature_list_ragged_split_types": [],
            "feature_list_dense_shapes": list_shapes}, name="ParseSequenceExampleV2")
    outs, at = list(op.outputs), 0

    def take(n):
        nonlocal at
        at += n
        return outs[at - n:at]

    def sparse_tensors(n):
        indices, values, shapes = take(n), take(n), take(n)
        return [SparseTensor(i, v, s) for i, v, s in zip(indices, values, shapes)]

    context = dict(zip(ctx_sparse, sparse_tensors(len(ctx_sparse))))
    context.update(zip(ctx_keys, take(len(ctx_keys))))
    feature_lists = dict(zip(list_sparse, sparse_tensors(len(list_sparse))))
    feature_lists.update(zip(list_keys, take(len(list_keys))))
    lengths = dict(zip(list_keys, take(len(list_keys))))
    return context, feature_lists, lengths


# -- the kernel --------------------------------------------------------------------------------

class _Context:
    """A SequenceExample's context, shaped as parse_example's helpers read an Example."""

    def __init__(self, features):
        self.features = features


def _step_values(feature, kind, dtype, where):
    got = feature.WhichOneof("kind")
    if got is not None and got != kind:
        raise errors.InvalidArgumentError(f"{where}.  Data types don't match. Expected type: {_TYPE_NAME[kind]}")
    values = list(getattr(feature, kind).value) if got is not None else []
    return np.array(values, dtype=_np_type(dtype)) if dtype == dtypes.string else \
        np.asarray(values, dtype=_np_type(dtype))


@register_kernel("ParseSequenceExampleV2", "CPU", host_only=True)
def _parse_sequence_example_kernel(ctx):
    node = ctx.name
    ctx_types, ctx_sparse_types = ctx.attr("Tcontext_dense"), ctx.attr("context_sparse_types")
    ctx_shapes = [as_shape(s) for s in ctx.attr("context_dense_shapes")]
    list_types, list_sparse_types = ctx.attr("feature_list_dense_types"), ctx.attr("feature_list_sparse_types")
    list_shapes = [as_shape(s) for s in ctx.attr("feature_list_dense_shapes")]

    def parse(serialized, debug_name, ctx_sparse_keys, ctx_dense_keys, _ctx_ragged, list_sparse_keys,
              list_dense_keys, _list_ragged, missing_assumed_empty, *defaults):
        serialized = np.asarray(serialized)
        batched = serialized.ndim > 0
        names = [_text(n) for n in np.asarray(debug_name).reshape(-1)]

        def name_of(i):
            return names[i] if names else "<unknown>"

        examples = []
        for i, s in enumerate(serialized.reshape(-1)):
            try:
                examples.append(SequenceExample.FromString(s))
            except DecodeError:
                raise errors.InvalidArgumentError(f"Invalid protocol message input, example id: {name_of(i)}",
                                                  node=node) from None
        contexts = [_Context(e.context) for e in examples]
        out = []
        sparse = [_sparse_column(contexts, _text(k), ctx_sparse_types[j], serialized.ndim, node)
                  for j, k in enumerate(np.asarray(ctx_sparse_keys).reshape(-1))]
        out += [s[0] for s in sparse] + [s[1] for s in sparse] + [s[2] for s in sparse]
        for j, key in enumerate(np.asarray(ctx_dense_keys).reshape(-1)):
            key, column = _text(key), []
            for i, c in enumerate(contexts):
                feature = c.features.feature.get(key)
                sequence = ctx_shapes[j].ndims and ctx_shapes[j].dims[0].value is None
                if (feature is None or feature.WhichOneof("kind") is None) and np.size(defaults[j]) == 0 \
                        and not sequence:
                    raise errors.InvalidArgumentError(
                        f"Inconsistent max number of elements for feature {key}: expected "
                        f"{ctx_shapes[j].num_elements()}, but found 0", node=node)
                prefix = f"Name: {name_of(i)}, " if batched else ""
                column.append(_dense_column(c, key, ctx_types[j], ctx_shapes[j], defaults[j], prefix, i, node))
            out.append(_stack(column, ctx_types[j], ctx_shapes[j], defaults[j], serialized.shape))
        list_sparse = [_list_sparse(examples, _text(k), list_sparse_types[j], batched, name_of, node)
                       for j, k in enumerate(np.asarray(list_sparse_keys).reshape(-1))]
        out += [s[0] for s in list_sparse] + [s[1] for s in list_sparse] + [s[2] for s in list_sparse]
        dense, lengths = [], []
        empty_ok = np.asarray(missing_assumed_empty).reshape(-1)
        for j, key in enumerate(np.asarray(list_dense_keys).reshape(-1)):
            key = _text(key)
            column = [_list_dense(e, key, list_types[j], list_shapes[j], bool(empty_ok[j]), name_of(i), node)
                      for i, e in enumerate(examples)]
            steps = [c.shape[0] for c in column]
            longest = max(steps, default=0)
            padded = np.zeros([len(column), longest] + list_shapes[j].as_list(), dtype=_np_type(list_types[j]))
            if list_types[j] == dtypes.string:
                padded[...] = b""
            for i, c in enumerate(column):
                padded[i, :c.shape[0]] = c
            dense.append(padded.reshape(list(serialized.shape) + list(padded.shape[1:])))
            lengths.append(np.array(steps, dtype=np.int64).reshape(serialized.shape))
        out += dense + lengths
        return tuple(out) if len(out) != 1 else out[0]
    return parse


def _list_dense(example, key, dtype, shape, empty_ok, name, node):
    """One example's feature list `key` as [steps] + shape."""
    kind = _KIND[dtype]
    lists = example.feature_lists.feature_list
    if key not in lists:
        if not empty_ok:
            raise errors.InvalidArgumentError(
                f"Name: {name}, Feature list '{key}' is required but could not be found.  Did you mean to include "
                f"it in feature_list_dense_missing_assumed_empty or feature_list_dense_defaults?", node=node)
        return np.zeros([0] + shape.as_list(), dtype=_np_type(dtype))
    stride = shape.num_elements()
    steps = []
    for i, feature in enumerate(lists[key].feature):
        try:
            steps.append(_step_values(feature, kind, dtype, f"Name: {name}, Feature list: {key}, Index: {i}"))
        except errors.OpError as e:
            raise type(e)(e.message, node=node) from None
    total = sum(s.size for s in steps)
    if stride and total % stride:
        raise errors.InvalidArgumentError(
            f"Feature list '{key}' has an unexpected number of values.  Total values size: {total} is not "
            f"consistent with output shape: {_shape_text(TensorShape([None]).concatenate(shape))}", node=node)
    for i, s in enumerate(steps):
        if s.size != stride:
            raise errors.InvalidArgumentError(
                f"Name: {name}, Key: {key}, Index: {i}.  Number of values != expected.  values size: {s.size} but "
                f"output shape: {_shape_text(shape)}", node=node)
    if not steps:
        return np.zeros([0] + shape.as_list(), dtype=_np_type(dtype))
    return np.stack([s.reshape(shape.as_list()) for s in steps])


def _list_sparse(examples, key, dtype, batched, name_of, node):
    """(indices, values, dense shape) of a VarLenFeature feature list: [step, position] per value
    ([example, step, position] in a batch)."""
    kind, indices, values = _KIND[dtype], [], []
    most_steps = longest = 0
    for b, example in enumerate(examples):
        lists = example.feature_lists.feature_list
        if key not in lists:
            continue
        features = lists[key].feature
        most_steps = max(most_steps, len(features))
        for step, feature in enumerate(features):
            try:
                v = _step_values(feature, kind, dtype, f"Name: {name_of(b)}, Feature list: {key}, Index: {step}")
            except errors.OpError as e:
                raise type(e)(e.message, node=node) from None
            indices.extend(([b] if batched else []) + [step, k] for k in range(v.size))
            values.append(v)
            longest = max(longest, v.size)
    rank = 3 if batched else 2
    index = np.array(indices, dtype=np.int64).reshape(-1, rank)
    flat = np.concatenate(values) if values else np.zeros(0, dtype=_np_type(dtype))
    shape = ([len(examples)] if batched else []) + [most_steps, longest]
    return index, flat, np.array(shape, dtype=np.int64)

