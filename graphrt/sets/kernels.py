"""numpy kernels of the set ops, walking groups as TF's set_kernels.cc does.

A group is one index of all dimensions but the last; its set is the distinct values in
it. A dense operand has every group; a sparse one has its runs of consecutive entries
with one group index (TF's SparseTensor::group, so with validate_indices=False an
unsorted operand gives what TF gives). Sparse-sparse walks both operands' groups in
step, as TF does; dense-sparse visits every dense group in row-major order. A result
lists, group by group, the sorted values (bytes order for strings) of non-empty results,
with dense shape group shape + [largest result].
"""
import numpy as np

from .. import errors
from ..framework.registry import register_kernel
from ..sparse.kernels import validate_indices


def _bad(message, node):
    return errors.InvalidArgumentError(message, node=node)


def _fmt(dims):
    return "[" + ",".join(str(int(d)) for d in dims) + "]"


def _sparse_groups(node, indices, values, shape, validate):
    """[(group index tuple, set)] of the sparse operand's runs, in the order they appear."""
    indices, shape = np.asarray(indices, np.int64), np.asarray(shape, np.int64)
    if shape.size < 2:
        raise _bad(f"Invalid rank {shape.size}.", node)
    if indices.ndim != 2 or indices.shape[1] != shape.size:
        raise _bad(f"Expected indices of shape [N, {shape.size}], got {_fmt(indices.shape)}", node)
    if validate:
        validate_indices(indices, shape, node)
    groups = []
    for row, value in zip(indices[:, :-1], values):
        key = tuple(int(i) for i in row)
        if groups and groups[-1][0] == key:
            groups[-1][1].add(value)
        else:
            groups.append((key, {value}))
    return groups, tuple(int(d) for d in shape[:-1])


def _dense_groups(node, dense):
    if dense.ndim < 2:
        raise _bad(f"Invalid rank {dense.ndim}.", node)
    rows = dense.reshape(int(np.prod(dense.shape[:-1])), dense.shape[-1])
    return [(key, set(rows[n])) for n, key in enumerate(np.ndindex(*dense.shape[:-1]))], dense.shape[:-1]


def _check_groups(node, a, b):
    if tuple(a) != tuple(b):
        raise _bad(f"Mismatched shapes {_fmt(a)} vs {_fmt(b)}", node)


_APPLY = {"a-b": lambda a, b: a - b, "b-a": lambda a, b: b - a,
          "intersection": lambda a, b: a & b, "union": lambda a, b: a | b}


def _result(results, group_shape, dtype):
    """The SparseTensor of [(group index, set)] results, empty sets left out."""
    indices, values, width = [], [], 0
    for key, result in results:
        ordered = sorted(result)
        indices.extend(key + (k,) for k in range(len(ordered)))
        values.extend(ordered)
        width = max(width, len(ordered))
    rank = len(group_shape) + 1
    return (np.asarray(indices, np.int64).reshape(-1, rank), np.asarray(values, dtype=dtype).reshape(-1),
            np.asarray(tuple(group_shape) + (width,), np.int64))


def _operation(ctx):
    op = ctx.attr("set_operation")
    if op not in _APPLY:
        raise _bad(f"Invalid set_operation {op}.", ctx.name)
    return _APPLY[op]


@register_kernel("DenseToDenseSetOperation", "CPU", fresh_outputs=True)
def _dense_dense(ctx):
    node, apply = ctx.name, _operation(ctx)

    def run(a, b):
        a_groups, a_shape = _dense_groups(node, a)
        b_groups, b_shape = _dense_groups(node, b)
        _check_groups(node, a_shape, b_shape)
        return _result([(key, apply(sa, sb)) for (key, sa), (_, sb) in zip(a_groups, b_groups)], a_shape, a.dtype)
    return run


@register_kernel("DenseToSparseSetOperation", "CPU", fresh_outputs=True)
def _dense_sparse(ctx):
    node, apply, validate = ctx.name, _operation(ctx), ctx.attr("validate_indices")

    def run(a, b_indices, b_values, b_shape):
        a_groups, a_shape = _dense_groups(node, a)
        b_groups, b_group_shape = _sparse_groups(node, b_indices, b_values, b_shape, validate)
        _check_groups(node, a_shape, b_group_shape)
        b_sets = {}
        for key, s in b_groups:
            b_sets.setdefault(key, set()).update(s)
        return _result([(key, apply(sa, b_sets.get(key, set()))) for key, sa in a_groups], a_shape, a.dtype)
    return run


@register_kernel("SparseToSparseSetOperation", "CPU", fresh_outputs=True)
def _sparse_sparse(ctx):
    node, apply, validate = ctx.name, _operation(ctx), ctx.attr("validate_indices")

    def run(a_indices, a_values, a_shape, b_indices, b_values, b_shape):
        a_groups, a_group_shape = _sparse_groups(node, a_indices, a_values, a_shape, validate)
        b_groups, b_group_shape = _sparse_groups(node, b_indices, b_values, b_shape, validate)
        _check_groups(node, a_group_shape, b_group_shape)
        results, i, j = [], 0, 0
        while i < len(a_groups) or j < len(b_groups):
            a_key = a_groups[i][0] if i < len(a_groups) else None
            b_key = b_groups[j][0] if j < len(b_groups) else None
            take_a = b_key is None or (a_key is not None and a_key <= b_key)
            take_b = a_key is None or (b_key is not None and b_key <= a_key)
            results.append((a_key if take_a else b_key, apply(a_groups[i][1] if take_a else set(),
                                                              b_groups[j][1] if take_b else set())))
            i, j = i + take_a, j + take_b
        return _result(results, a_group_shape, a_values.dtype)
    return run


@register_kernel("SetSize", "CPU", fresh_outputs=True)
def _set_size(ctx):
    node, validate = ctx.name, ctx.attr("validate_indices")

    def run(indices, values, shape):
        groups, group_shape = _sparse_groups(node, indices, values, shape, validate)
        sizes = np.zeros(group_shape, np.int32)
        for key, s in groups:
            if any(k < 0 or k >= d for k, d in zip(key, group_shape)):
                raise _bad(f"Group index {_fmt(key)} out of bounds of {_fmt(group_shape)}", node)
            sizes[key] = len(s)
        return sizes
    return run
