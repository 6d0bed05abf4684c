"""`tf.sparse.cross` and `tf.sparse.cross_hashed`: TF's SparseCrossV2 and SparseCross ops,
their kernel and API.

Each input is a batch of feature lists (a rank-2 SparseTensor, row = batch entry, or a
rank-2 dense tensor). Row b of the result holds one feature per combination of one
feature from each input, the last input varying fastest (TF's ProductIterator); inputs
are taken sparse first, then dense, as TF's kernel takes them. String crosses join the
features with the separator (integers printed in decimal); hashed crosses fold
`FingerprintCat64(h, feature)` from `hash_key` over the features, a string feature
being its farmhash Fingerprint64 and an integer feature itself, then take the result
mod num_buckets (mod 2**63 - 1 when num_buckets is 0), so the ids are TF's.
"""
import numpy as np

from .. import errors
from ..framework import dtypes
from ..framework.graph import Tensor, graph_of
from ..framework.op_builder import convert_to_tensor
from ..framework.registry import not_differentiable, register_kernel, register_op
from ..framework.tensor_shape import TensorShape
from ..ops import math_ops
from ..util.hashing import MASK64, fingerprint64
from .sparse_tensor import SparseTensor

_DEFAULT_HASH_KEY = 0xDECAFCAFFE
_FEATURE_TYPES = (dtypes.int64, dtypes.string)
_MUL = 0xc6a4a7935bd1e995
_INT64_MAX = (1 << 63) - 1


def _cross_shape(ctx):
    return [TensorShape([None, 2]), TensorShape([None]), TensorShape([2])]


_INPUTS = ["indices: N * int64", "values: sparse_types", "shapes: N * int64", "dense_inputs: dense_types"]
register_op("SparseCross", _INPUTS, ["output_indices: int64", "output_values: out_type", "output_shape: int64"],
            attrs={"N": 0, "hashed_output": False, "num_buckets": 0, "hash_key": 0, "sparse_types": [],
                   "dense_types": [], "out_type": dtypes.string, "internal_type": dtypes.string},
            shape_fn=_cross_shape,
            allowed_types={"sparse_types": _FEATURE_TYPES, "dense_types": _FEATURE_TYPES,
                           "out_type": _FEATURE_TYPES, "internal_type": _FEATURE_TYPES})
register_op("SparseCrossV2", _INPUTS + ["sep: string"],
            ["output_indices: int64", "output_values: string", "output_shape: int64"],
            attrs={"N": 0, "sparse_types": [], "dense_types": []}, shape_fn=_cross_shape,
            allowed_types={"sparse_types": _FEATURE_TYPES, "dense_types": _FEATURE_TYPES})
not_differentiable("SparseCross")
not_differentiable("SparseCrossV2")


# -- the kernel ----------------------------------------------------------------------------

def _shift_mix(v):
    return v ^ (v >> 47)


def fingerprint_cat64(fp1, fp2):
    """TF's FingerprintCat64: combines two 64-bit fingerprints (order matters)."""
    result = fp1 ^ _MUL
    result ^= (_shift_mix((fp2 * _MUL) & MASK64) * _MUL) & MASK64
    result = (result * _MUL) & MASK64
    result = (_shift_mix(result) * _MUL) & MASK64
    return _shift_mix(result)


def _columns(node, n_sparse, inputs):
    """Per input, a function batch -> its list of features (numpy scalars), and the batch size."""
    indices, values, shapes = inputs[:n_sparse], inputs[n_sparse:2 * n_sparse], inputs[2 * n_sparse:3 * n_sparse]
    dense = inputs[3 * n_sparse:]
    for i, (ind, shape) in enumerate(zip(indices, shapes)):
        if ind.ndim != 2:
            raise errors.InvalidArgumentError(f"Input indices should be a matrix but received shape "
                                              f"{list(ind.shape)} at position {i}", node=node)
        if np.asarray(shape).shape != (2,):
            raise errors.InvalidArgumentError(f"Input shapes should be a vector of size 2 but received shape "
                                              f"{list(np.asarray(shape).shape)} at position {i}", node=node)
    for i, d in enumerate(dense):
        if d.ndim != 2:
            raise errors.InvalidArgumentError(f"Dense inputs should be a matrix but received shape "
                                              f"{list(d.shape)} at position {i}", node=node)
    sizes = [int(s[0]) for s in shapes] + [d.shape[0] for d in dense]
    batch = sizes[0] if sizes else 0
    for size in sizes:
        if size != batch:
            raise errors.InvalidArgumentError(f"Expected batch size {batch} got {size}", node=node)
    columns = []
    for ind, vals in zip(indices, values):
        counts = np.bincount(ind[:, 0], minlength=batch)[:batch] if ind.shape[0] else np.zeros(batch, np.int64)
        starts = np.concatenate([[0], np.cumsum(counts)])
        columns.append(lambda b, v=vals, s=starts: list(v[s[b]:s[b + 1]]))
    for d in dense:
        columns.append(lambda b, d=d: list(d[b]))
    return columns, batch


def _string_feature(f):
    return f if isinstance(f, bytes) else str(int(f)).encode()


def _hash_feature(f):
    return fingerprint64(f) if isinstance(f, bytes) else int(f) & MASK64


def _cross(node, n_sparse, inputs, combine, out_dtype):
    columns, batch = _columns(node, n_sparse, inputs)
    out_indices, out_values, width = [], [], 0
    for b in range(batch):
        features = [col(b) for col in columns]
        combos = _product(features) if columns else []
        out_indices.extend([b, k] for k in range(len(combos)))
        out_values.extend(combine(c) for c in combos)
        width = max(width, len(combos))
    return (np.asarray(out_indices, np.int64).reshape(-1, 2), np.asarray(out_values, dtype=out_dtype),
            np.asarray([batch, width], np.int64))


def _product(features):
    """All combinations, the last list varying fastest (none if any list is empty)."""
    combos = [[]]
    for feats in features:
        combos = [c + [f] for c in combos for f in feats]
    return combos


@register_kernel("SparseCross", "CPU", host_only=True, fresh_outputs=True)
def _sparse_cross(ctx):
    node, n_sparse = ctx.name, ctx.attr("N")
    if ctx.attr("hashed_output"):
        key, buckets = ctx.attr("hash_key") & MASK64, ctx.attr("num_buckets")
        modulus = buckets if buckets > 0 else _INT64_MAX

        def combine(features):
            h = key
            for f in features:
                h = fingerprint_cat64(h, _hash_feature(f))
            return h % modulus
        return lambda *inputs: _cross(node, n_sparse, inputs, combine, np.int64)
    return lambda *inputs: _cross(node, n_sparse, inputs,
                                  lambda fs: b"_X_".join(_string_feature(f) for f in fs), object)


@register_kernel("SparseCrossV2", "CPU", host_only=True, fresh_outputs=True)
def _sparse_cross_v2(ctx):
    node, n_sparse = ctx.name, ctx.attr("N")

    def cross(*inputs):
        sep = np.asarray(inputs[-1], dtype=object).item()
        return _cross(node, n_sparse, inputs[:-1], lambda fs: sep.join(_string_feature(f) for f in fs), object)
    return cross


# -- the API -------------------------------------------------------------------------------

def _split_inputs(inputs, message):
    if not isinstance(inputs, (tuple, list)):
        raise TypeError("Inputs must be a list")
    if not all(isinstance(i, (SparseTensor, Tensor)) for i in inputs):
        raise TypeError(message)
    sparse = [i for i in inputs if isinstance(i, SparseTensor)]
    dense = [i for i in inputs if not isinstance(i, SparseTensor)]
    values = [v if v.dtype == dtypes.string else math_ops.cast(v, dtypes.int64) for v in (s.values for s in sparse)]
    dense = [d if d.dtype == dtypes.string else math_ops.cast(d, dtypes.int64) for d in dense]
    return sparse, values, dense


def _create(op_type, sparse, values, dense, extra, name, attrs):
    g = graph_of([t for s in sparse for t in (s.indices, s.values, s.dense_shape)] + dense + extra)
    with g.as_default(), g.name_scope(name or op_type) as scope:
        # list(type) inputs: created directly, as queues create their enqueue ops
        op = g.create_op(op_type, [s.indices for s in sparse] + values + [s.dense_shape for s in sparse] + dense
                         + extra, dict(attrs, N=len(sparse), sparse_types=[v.dtype for v in values],
                                       dense_types=[d.dtype for d in dense]), name=scope)
    return SparseTensor(*op.outputs)


def sparse_cross(inputs, name=None, separator=None):
    """The string crosses of the features of `inputs` (SparseTensors and dense tensors), row by row,
    joined by `separator` (default '_X_')."""
    sep = convert_to_tensor("_X_" if separator is None else separator, dtypes.string)
    sparse, values, dense = _split_inputs(inputs, "All inputs must be Tensor or SparseTensor.")
    return _create("SparseCrossV2", sparse, values, dense, [sep], name, {})


def sparse_cross_hashed(inputs, num_buckets=0, hash_key=None, name=None):
    """The hashed crosses of the features of `inputs` (int64 ids, TF's FingerprintCat64 fold)."""
    sparse, values, dense = _split_inputs(inputs, "All inputs must be SparseTensors")
    internal = dtypes.int64 if any(t.dtype == dtypes.int64 for t in values + dense) else dtypes.string
    return _create("SparseCross", sparse, values, dense, [], name,
                   {"hashed_output": True, "num_buckets": int(num_buckets),
                    "hash_key": int(hash_key or _DEFAULT_HASH_KEY), "out_type": dtypes.int64,
                    "internal_type": internal})
