"""numpy kernels of the sparse ops (CPU; SIM reuses them).

Entries are visited in TF's orders: SparseAdd and SparseSparseMaximum/Minimum
merge their operands as sorted lists (TF's two-pointer walk, so unsorted
operands give TF's result), SparseSoftmax groups runs of consecutive entries,
SparseReduce* and SparseConcat sort first. Bad input is an
InvalidArgumentError naming the node, with TF's message.
"""
import numpy as np

from .. import errors
from ..framework.registry import register_kernel

CPU = ("CPU",)


def _bad(message, name):
    return errors.InvalidArgumentError(message, node=name)


def _fmt(index):
    return "[" + ",".join(str(int(i)) for i in index) + "]"


def _as_matrix(indices):
    """int64 [N, rank] from the 0-D, 1-D or 2-D indices SparseToDense accepts."""
    indices = np.asarray(indices, dtype=np.int64)
    if indices.ndim == 0:
        return indices.reshape(1, 1)
    if indices.ndim == 1:
        return indices.reshape(-1, 1)
    return indices


def _lex_order(indices):
    """The stable permutation that sorts index rows lexicographically (row-major order)."""
    if indices.shape[0] == 0 or indices.shape[1] == 0:
        return np.arange(indices.shape[0])
    return np.lexsort(indices.T[::-1])


def _compare_consecutive(indices):
    """For each row n >= 1: -1, 0 or 1 as row n-1 is before, equal to or after row n."""
    if indices.shape[0] < 2:
        return np.zeros(0, np.int64)
    diff = indices[1:] - indices[:-1]
    nonzero = diff != 0
    first = np.argmax(nonzero, axis=1)
    sign = np.sign(diff[np.arange(diff.shape[0]), first])
    return np.where(nonzero.any(axis=1), -sign, 0)


def _out_of_bounds(indices, shape):
    """Rows holding an index outside [0, shape)."""
    return np.flatnonzero(((indices < 0) | (indices >= np.asarray(shape, np.int64))).any(axis=1))


def validate_indices(indices, shape, name):
    """TF's SparseTensor::IndicesValid: in bounds, strictly increasing (first fault wins)."""
    bad = _out_of_bounds(indices, shape)
    cmp = _compare_consecutive(indices)
    disorder = np.flatnonzero(cmp >= 0) + 1
    n_bad = bad[0] if bad.size else None
    n_order = disorder[0] if disorder.size else None
    if n_bad is not None and (n_order is None or n_bad <= n_order):
        raise _bad(f"indices[{n_bad}] = {_fmt(indices[n_bad])} is out of bounds: need 0 <= index < "
                   f"{_fmt(shape)}", name)
    if n_order is not None:
        if cmp[n_order - 1] == 0:
            raise _bad(f"indices[{n_order}] = {_fmt(indices[n_order])} is repeated", name)
        raise _bad(f"indices[{n_order}] = {_fmt(indices[n_order])} is out of order. Many sparse ops require "
                   f"sorted indices.\n    Use `tf.sparse.reorder` to create a correctly ordered copy.\n\n", name)


def _check_same_shape(a_shape, b_shape, name):
    if a_shape.shape != b_shape.shape:
        raise _bad(f"Operands do not have the same ranks; got shapes: {_fmt(a_shape)} and {_fmt(b_shape)}", name)
    for d, (x, y) in enumerate(zip(a_shape, b_shape)):
        if x != y:
            raise _bad(f"Operands' shapes do not match: got {x} and {y} for dimension {d}", name)


def _flat_positions(indices, shape, name):
    """Row-major offsets of index rows in a dense tensor of `shape`."""
    bad = _out_of_bounds(indices, shape)
    if bad.size:
        raise _bad(f"indices[{bad[0]}] = {_fmt(indices[bad[0]])} is out of bounds: need 0 <= index < "
                   f"{_fmt(shape)}", name)
    strides = np.ones(len(shape), np.int64)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    return indices @ strides if len(shape) else np.zeros(indices.shape[0], np.int64)


# -- to dense, reorder, reshape ---------------------------------------------------------

@register_kernel("SparseToDense", CPU, fresh_outputs=True)
def _sparse_to_dense(ctx):
    name, validate = ctx.name, ctx.attr("validate_indices")

    def to_dense(indices, output_shape, values, default_value):
        shape = np.asarray(output_shape, np.int64).reshape(-1)
        idx = _as_matrix(indices)
        n = idx.shape[0]
        if values.ndim > 1 or (values.ndim == 1 and values.shape[0] != n):
            raise _bad(f"sparse_values has incorrect shape {_fmt(values.shape)}, should be [] or [{n}]", name)
        if default_value.ndim != 0:
            raise _bad(f"default_value should be a scalar, got shape {_fmt(default_value.shape)}", name)
        if idx.shape[1] != shape.shape[0]:
            raise _bad(f"sparse_indices[1] ({idx.shape[1]}) must equal the length of output_shape "
                       f"({shape.shape[0]})", name)
        if validate:
            validate_indices(idx, shape, name)
        elif _out_of_bounds(idx, shape).size:
            raise _bad(f"Indices are not valid (out of bounds).  Shape: {_fmt(shape)}", name)
        dense = np.full(tuple(shape), default_value, dtype=values.dtype)
        if n:
            dense[tuple(idx.T)] = values
        return dense
    return to_dense


@register_kernel("SparseReorder", CPU, fresh_outputs=True)
def _sparse_reorder(ctx):
    def reorder(indices, values, shape):
        order = _lex_order(indices)
        return indices[order], values[order]
    return reorder


def _reshape_target(in_shape, new_shape, name):
    dense_size = int(np.prod(in_shape)) if len(in_shape) else 1
    out = [int(d) for d in new_shape]
    unknown = [i for i, d in enumerate(out) if d == -1]
    if len(unknown) > 1:
        raise _bad(f"only one output dimension may be -1, not both {unknown[0]} and {unknown[1]}", name)
    for i, d in enumerate(out):
        if d < -1:
            raise _bad(f"size {i} must be non-negative, not {d}", name)
    product = int(np.prod([d for d in out if d != -1])) if out else 1
    if unknown:
        shown = [1 if d == -1 else d for d in out]
        if product == 0 or dense_size % product:
            raise _bad(f"Input to reshape is a SparseTensor with {dense_size} dense values, but the requested "
                       f"shape requires a multiple of {product}. input_shape={_fmt(in_shape)} "
                       f"output_shape={_fmt(shown)}", name)
        out[unknown[0]] = dense_size // product
    elif product != dense_size:
        raise _bad(f"Input to reshape is a tensor with {dense_size} dense values, but the requested shape has "
                   f"{product}. input_shape={_fmt(in_shape)} output_shape={_fmt(out)}", name)
    return np.array(out, np.int64)


@register_kernel("SparseReshape", CPU, fresh_outputs=True)
def _sparse_reshape(ctx):
    name = ctx.name

    def reshape(indices, input_shape, new_shape):
        out_shape = _reshape_target(input_shape, new_shape, name)
        if indices.shape[1] != input_shape.shape[0]:
            raise _bad(f"Input SparseTensor rank {indices.shape[1]} does not match the length of input_shape "
                       f"{input_shape.shape[0]}", name)
        flat = _flat_positions(indices, input_shape, name)
        out = np.zeros((indices.shape[0], out_shape.shape[0]), np.int64)
        for d in range(out_shape.shape[0] - 1, -1, -1):
            size = max(int(out_shape[d]), 1)
            out[:, d] = flat % size
            flat = flat // size
        return out, out_shape
    return reshape


# -- slice, concat, split ----------------------------------------------------------------

@register_kernel("SparseSlice", CPU, fresh_outputs=True)
def _sparse_slice(ctx):
    name = ctx.name

    def sparse_slice(indices, values, shape, start, size):
        rank = shape.shape[0]
        for what, v in (("start", start), ("size", size)):
            if v.shape[0] != rank:
                raise _bad(f"Expected {what} to be a vector of length {rank} but got length {v.shape[0]}", name)
        end = np.minimum(start + size, shape)
        keep = ((indices >= start) & (indices < end)).all(axis=1)
        out_shape = np.maximum(end - start, 0).astype(np.int64)
        return indices[keep] - start, values[keep], out_shape
    return sparse_slice


@register_kernel("SparseSliceGrad", CPU, fresh_outputs=True)
def _sparse_slice_grad(ctx):
    def slice_grad(grad, input_indices, input_start, output_indices):
        where = {tuple(row): k for k, row in enumerate((output_indices + input_start).tolist())}
        out = np.zeros(input_indices.shape[0], grad.dtype)
        for i, row in enumerate(input_indices.tolist()):
            k = where.get(tuple(row))
            if k is not None:
                out[i] = grad[k]
        return out
    return slice_grad


@register_kernel("SparseConcat", CPU, fresh_outputs=True)
def _sparse_concat(ctx):
    name, n, axis = ctx.name, ctx.attr("N"), ctx.attr("concat_dim")

    def concat(*args):
        inds, vals, shapes = args[:n], args[n:2 * n], args[2 * n:]
        rank = shapes[0].shape[0]
        if not -rank <= axis < rank:
            raise _bad(f"Concat dimension must be in range [{-rank}, {rank}), got {axis}", name)
        dim = axis % rank
        out_shape = shapes[0].copy()
        offsets = [0]
        for k, s in enumerate(shapes[1:], 1):
            if s.shape[0] != rank:
                raise _bad(f"Ranks of all input tensors must match: expected {rank} but got {s.shape[0]} at "
                           f"position {k}", name)
            for d in range(rank):
                if d != dim and s[d] != shapes[0][d]:
                    raise _bad(f"Input shapes must match: expected {shapes[0][d]} for dimension {d} but got "
                               f"{s[d]} at position {k}", name)
            offsets.append(int(out_shape[dim]))
            out_shape[dim] += s[dim]
        moved = []
        for ind, off in zip(inds, offsets):
            ind = ind.copy()
            ind[:, dim] += off
            moved.append(ind)
        indices = np.concatenate(moved, 0)
        values = np.concatenate(vals, 0)
        order = _lex_order(indices)
        return indices[order], values[order], out_shape
    return concat


@register_kernel("SparseSplit", CPU, fresh_outputs=True)
def _sparse_split(ctx):
    name, k = ctx.name, ctx.attr("num_split")

    def split(split_dim, indices, values, shape):
        rank = shape.shape[0]
        dim = int(split_dim)
        if not -rank <= dim < rank:
            raise _bad(f"Input split_dim should be between {-rank} and {rank}, got {dim}", name)
        dim %= rank
        size = int(shape[dim])
        if not 0 < k <= max(size, 1):
            raise _bad(f"Input num_split should be between 1 and {size}, got {k}", name)
        base, extra = divmod(size, k)
        bounds = np.cumsum([0] + [base + 1 if i < extra else base for i in range(k)])
        out_i, out_v, out_s = [], [], []
        for lo, hi in zip(bounds[:-1], bounds[1:]):
            keep = (indices[:, dim] >= lo) & (indices[:, dim] < hi)
            ind = indices[keep].copy()
            ind[:, dim] -= lo
            s = shape.copy()
            s[dim] = hi - lo
            out_i.append(ind)
            out_v.append(values[keep])
            out_s.append(s)
        return tuple(out_i + out_v + out_s)
    return split


# -- elementwise: add, maximum/minimum, dense operands ------------------------------------

def _cmp(a, b):
    return (a > b) - (a < b)


@register_kernel("SparseAdd", CPU, fresh_outputs=True)
def _sparse_add(ctx):
    name = ctx.name

    def add(a_indices, a_values, a_shape, b_indices, b_values, b_shape, thresh):
        _check_same_shape(a_shape, b_shape, name)
        a, b = a_indices.tolist(), b_indices.tolist()
        t = thresh.item()
        rows, vals = [], []
        i = j = 0
        while i < len(a) and j < len(b):  # TF's merge of two (assumed sorted) lists
            c = _cmp(a[i], b[j])
            if c < 0:
                rows.append(a[i])
                vals.append(a_values[i])
                i += 1
            elif c > 0:
                rows.append(b[j])
                vals.append(b_values[j])
                j += 1
            else:
                s = a_values[i] + b_values[j]
                if t <= abs(s):
                    rows.append(a[i])
                    vals.append(s)
                i += 1
                j += 1
        rows += a[i:] + b[j:]
        vals += list(a_values[i:]) + list(b_values[j:])
        rank = a_shape.shape[0]
        return (np.array(rows, np.int64).reshape(-1, rank), np.array(vals, a_values.dtype).reshape(-1),
                a_shape.copy())
    return add


@register_kernel("SparseAddGrad", CPU, fresh_outputs=True)
def _sparse_add_grad(ctx):
    def add_grad(grad, a_indices, b_indices, sum_indices):
        where = {tuple(row): k for k, row in enumerate(sum_indices.tolist())}

        def pick(indices):
            out = np.zeros(indices.shape[0], grad.dtype)
            for i, row in enumerate(indices.tolist()):
                k = where.get(tuple(row))
                if k is not None:
                    out[i] = grad[k]
            return out
        return pick(a_indices), pick(b_indices)
    return add_grad


def _sparse_sparse(fn):
    def factory(ctx):
        name = ctx.name

        def binary(a_indices, a_values, a_shape, b_indices, b_values, b_shape):
            _check_same_shape(a_shape, b_shape, name)
            zero = np.zeros((), a_values.dtype)
            a, b = a_indices.tolist(), b_indices.tolist()
            rows, vals = [], []
            i = j = 0
            while i < len(a) or j < len(b):  # the union, an absent entry counting as zero
                c = -1 if j >= len(b) else 1 if i >= len(a) else _cmp(a[i], b[j])
                if c < 0:
                    rows.append(a[i])
                    vals.append(fn(a_values[i], zero))
                    i += 1
                elif c > 0:
                    rows.append(b[j])
                    vals.append(fn(zero, b_values[j]))
                    j += 1
                else:
                    rows.append(a[i])
                    vals.append(fn(a_values[i], b_values[j]))
                    i += 1
                    j += 1
            rank = a_shape.shape[0]
            return np.array(rows, np.int64).reshape(-1, rank), np.array(vals, a_values.dtype).reshape(-1)
        return binary
    return factory


register_kernel("SparseSparseMaximum", CPU, fresh_outputs=True)(_sparse_sparse(np.maximum))
register_kernel("SparseSparseMinimum", CPU, fresh_outputs=True)(_sparse_sparse(np.minimum))


def _dense_at(indices, shape, dense, name):
    """dense broadcast to `shape` (only dense -> sparse broadcasting), read at the index rows."""
    rank = shape.shape[0]
    ok = dense.ndim <= rank and all(d in (1, s) for d, s in zip(dense.shape[::-1], shape[::-1]))
    if not ok:
        raise _bad(f"SparseDenseBinaryOpShared broadcasts dense to sparse only; got incompatible shapes: "
                   f"{_fmt(shape)} vs. {_fmt(dense.shape)}", name)
    full = np.broadcast_to(dense, tuple(int(s) for s in shape))
    return full[tuple(indices.T)] if indices.shape[0] else np.zeros(0, dense.dtype)


def _sparse_dense(fn):
    def factory(ctx):
        name = ctx.name

        def binary(indices, values, shape, dense):
            return np.asarray(fn(values, _dense_at(indices, shape, dense, name))).astype(values.dtype, copy=False)
        return binary
    return factory


def _divide(x, y):
    if x.dtype.kind in "iu":  # C++ integer division truncates
        return np.trunc(np.true_divide(x, y))
    return x / y


register_kernel("SparseDenseCwiseMul", CPU, fresh_outputs=True)(_sparse_dense(np.multiply))
register_kernel("SparseDenseCwiseDiv", CPU, fresh_outputs=True)(_sparse_dense(_divide))
register_kernel("SparseDenseCwiseAdd", CPU, fresh_outputs=True)(_sparse_dense(np.add))


@register_kernel("SparseTensorDenseAdd", CPU, fresh_outputs=True)
def _sparse_tensor_dense_add(ctx):
    name = ctx.name

    def add(a_indices, a_values, a_shape, b):
        if a_shape.shape[0] != b.ndim:
            raise _bad(f"Input tensor should have the same rank as the shape of the sparse tensor: "
                       f"{b.ndim} vs. {a_shape.shape[0]}", name)
        for d, (s, t) in enumerate(zip(a_shape, b.shape)):
            if s != t:
                raise _bad(f"Dimension {d} does not equal (no broadcasting is supported): sparse side {s} vs "
                           f"dense side {t}", name)
        out = b.copy()
        if a_indices.shape[0]:
            np.add.at(out, tuple(np.asarray(a_indices, np.int64).T), a_values)
        return out
    return add


# -- reductions, softmax ----------------------------------------------------------------

def _reduction(indices, shape, axes, keep_dims, name):
    """(output shape, group key per entry, kept dims) of a reduction over `axes`."""
    rank = shape.shape[0]
    reduced = set()
    for a in np.asarray(axes).reshape(-1).tolist():
        if not -rank <= a < rank:
            raise _bad(f"Invalid reduction dimension {a}, for input with {rank} dimensions.", name)
        reduced.add(a % rank)
    kept = [d for d in range(rank) if d not in reduced]
    out_shape = [1 if d in reduced else int(shape[d]) for d in range(rank) if keep_dims or d in kept]
    _flat_positions(indices, shape, name)
    group = _flat_positions(indices[:, kept], shape[kept], name)
    return out_shape, group, kept


def _reduce_dense(ufunc):
    def factory(ctx):
        name, keep = ctx.name, ctx.attr("keep_dims")

        def reduce(indices, values, shape, axes):
            out_shape, group, _ = _reduction(indices, shape, axes, keep, name)
            size = int(np.prod(out_shape)) if out_shape else 1
            out = np.zeros(size, values.dtype)
            if ufunc is np.add:
                np.add.at(out, group, values)
            elif values.size:  # the max of the entries present (absent entries are not zeros)
                present = np.unique(group)
                acc = np.full(size, values.min(), values.dtype)
                ufunc.at(acc, group, values)
                out[present] = acc[present]
            return out.reshape(out_shape)
        return reduce
    return factory


def _reduce_sparse(ufunc):
    def factory(ctx):
        name, keep = ctx.name, ctx.attr("keep_dims")

        def reduce(indices, values, shape, axes):
            out_shape, group, kept = _reduction(indices, shape, axes, keep, name)
            groups, first, inverse = np.unique(group, return_index=True, return_inverse=True)
            if ufunc is np.add:
                out = np.zeros(groups.shape[0], values.dtype)
            else:
                out = np.full(groups.shape[0], values.min() if values.size else 0, values.dtype)
            ufunc.at(out, inverse.reshape(-1), values)
            rows = indices[first]
            if keep:
                rows = rows.copy()
                rows[:, [d for d in range(shape.shape[0]) if d not in kept]] = 0
            else:
                rows = rows[:, kept]
            return rows.reshape(groups.shape[0], len(out_shape)), out, np.array(out_shape, np.int64)
        return reduce
    return factory


register_kernel("SparseReduceSum", CPU, fresh_outputs=True)(_reduce_dense(np.add))
register_kernel("SparseReduceMax", CPU, fresh_outputs=True)(_reduce_dense(np.maximum))
register_kernel("SparseReduceSumSparse", CPU, fresh_outputs=True)(_reduce_sparse(np.add))
register_kernel("SparseReduceMaxSparse", CPU, fresh_outputs=True)(_reduce_sparse(np.maximum))


@register_kernel("SparseSoftmax", CPU, fresh_outputs=True)
def _sparse_softmax(ctx):
    name = ctx.name

    def softmax(indices, values, shape):
        if shape.shape[0] < 2:
            raise _bad(f"Input should have rank >= 2, but received shape: {_fmt(shape)}", name)
        out = np.empty_like(values)
        n = values.shape[0]
        if not n:
            return out
        prefix = indices[:, :-1]
        starts = np.concatenate([[0], np.flatnonzero((prefix[1:] != prefix[:-1]).any(axis=1)) + 1, [n]])
        for lo, hi in zip(starts[:-1], starts[1:]):  # runs of one row, as TF's group iterator
            e = np.exp(values[lo:hi] - values[lo:hi].max())
            out[lo:hi] = e / e.sum()
        return out
    return softmax


# -- matmul -------------------------------------------------------------------------------

@register_kernel("SparseTensorDenseMatMul", CPU, fresh_outputs=True)
def _sparse_dense_matmul(ctx):
    name, adj_a, adj_b = ctx.name, ctx.attr("adjoint_a"), ctx.attr("adjoint_b")

    def matmul(a_indices, a_values, a_shape, b):
        if a_shape.shape[0] != 2:
            raise _bad(f"Tensor 'a_shape' is not a vector of length 2 but has {a_shape.shape[0]} elements", name)
        if b.ndim != 2:
            raise _bad(f"Tensor 'b' is not a matrix but has rank {b.ndim}", name)
        rows_a, cols_a = (int(a_shape[1]), int(a_shape[0])) if adj_a else (int(a_shape[0]), int(a_shape[1]))
        inner_b, cols_b = (b.shape[1], b.shape[0]) if adj_b else b.shape
        if cols_a != inner_b:
            raise _bad(f"Cannot multiply A and B because inner dimension does not match: {cols_a} vs. {inner_b}.  "
                       f"Did you forget a transpose?  Dimensions of A: [{a_shape[0]}, {a_shape[1]}).  "
                       f"Dimensions of B: {_fmt(b.shape)}", name)
        li, ri = (1, 0) if adj_a else (0, 1)
        m, k = a_indices[:, li].astype(np.int64), a_indices[:, ri].astype(np.int64)
        for what, col, v, limit in (("m", li, m, rows_a), ("k", ri, k, cols_a)):
            bad = np.flatnonzero((v < 0) | (v >= limit))
            if bad.size:
                raise _bad(f"{what} ({v[bad[0]]}) from index[{bad[0]},{col}] out of bounds (>={limit})", name)
        vals = np.conj(a_values) if adj_a and np.iscomplexobj(a_values) else a_values
        rhs = (np.conj(b.T) if np.iscomplexobj(b) else b.T) if adj_b else b
        out = np.zeros((rows_a, cols_b), b.dtype)
        if m.size:
            np.add.at(out, m, vals[:, None] * rhs[k])
        return out
    return matmul


# -- fill empty rows --------------------------------------------------------------------

@register_kernel("SparseFillEmptyRows", CPU, fresh_outputs=True)
def _sparse_fill_empty_rows(ctx):
    name = ctx.name

    def fill(indices, values, dense_shape, default_value):
        if default_value.ndim != 0:
            raise _bad(f"default_value must be a scalar, saw: {_fmt(default_value.shape)}", name)
        if dense_shape.shape[0] < 1:
            raise _bad("dense_shape must be a vector of length >= 1", name)
        n_rows, rank = int(dense_shape[0]), dense_shape.shape[0]
        rows = indices[:, 0] if indices.shape[0] else np.zeros(0, np.int64)
        for i, r in enumerate(rows.tolist()):
            if r < 0:
                raise _bad(f"indices({i}, 0) is invalid: {r} < 0", name)
            if r >= n_rows:
                raise _bad(f"indices({i}, 0) is invalid: {r} >= {n_rows}", name)
        counts = np.bincount(rows, minlength=n_rows)
        empty = counts == 0
        filled = np.where(empty, 1, counts)
        starts = np.concatenate([[0], np.cumsum(filled)[:-1]]).astype(np.int64)
        total = int(filled.sum())
        out_indices = np.zeros((total, rank), np.int64)
        out_values = np.full(total, default_value, values.dtype)
        empty_rows = np.flatnonzero(empty)
        out_indices[starts[empty_rows], 0] = empty_rows
        order = np.argsort(rows, kind="stable")
        within = np.arange(rows.shape[0]) - np.concatenate([[0], np.cumsum(counts)[:-1]])[rows[order]]
        reverse = np.empty(rows.shape[0], np.int64)
        reverse[order] = starts[rows[order]] + within
        out_indices[reverse] = indices
        out_values[reverse] = values
        return out_indices, out_values, empty, reverse
    return fill


@register_kernel("SparseFillEmptyRowsGrad", CPU, fresh_outputs=True)
def _sparse_fill_empty_rows_grad(ctx):
    def fill_grad(reverse_index_map, grad_values):
        d_values = grad_values[reverse_index_map]
        unused = np.ones(grad_values.shape[0], bool)
        unused[reverse_index_map] = False
        return d_values, np.asarray(grad_values[unused].sum(dtype=grad_values.dtype), grad_values.dtype)
    return fill_grad


# -- segment reductions ----------------------------------------------------------------------

def _segments(data_rows, indices, segment_ids, num_segments, name):
    """Checked int64 indices and segment ids, and the number of output rows."""
    idx = np.asarray(indices, np.int64)
    seg = np.asarray(segment_ids, np.int64)
    if idx.shape != seg.shape:
        raise _bad("segment_ids and indices should have same size.", name)
    if num_segments is None:
        rows = int(seg[-1]) + 1 if seg.size else 0
        if rows < 0:
            raise _bad("segment ids must be >= 0", name)
    else:
        rows = int(num_segments)
        if seg.size and seg[-1] >= rows:
            raise _bad("segment ids must be < num_segments", name)
    if seg.size and (np.diff(seg) < 0).any():
        raise _bad("segment ids are not increasing", name)
    if seg.size and seg[0] < 0:
        raise _bad(f"Segment id {seg[0]} out of range [0, {rows}), possibly because 'segment_ids' input is "
                   f"not sorted.", name)
    bad = np.flatnonzero((idx < 0) | (idx >= data_rows))
    if bad.size:
        raise _bad(f"Bad: indices[{bad[0]}] == {idx[bad[0]]} out of range [0, {data_rows})", name)
    return idx, seg, rows


def _scale(kind, seg, rows, dtype):
    """Per-segment factor: 1 (sum), 1/N (mean), 1/sqrt(N) (sqrtn); empty segments give zeros anyway."""
    counts = np.bincount(seg, minlength=rows).astype(dtype)
    counts = np.maximum(counts, 1)
    if kind == "Sum":
        return None
    return 1 / counts if kind == "Mean" else 1 / np.sqrt(counts)


def _segment_reduce(kind, with_num):
    def factory(ctx):
        name = ctx.name

        def reduce(data, indices, segment_ids, num_segments=None):
            idx, seg, rows = _segments(data.shape[0], indices, segment_ids, num_segments, name)
            out = np.zeros((rows,) + data.shape[1:], data.dtype)
            np.add.at(out, seg, data[idx])
            scale = _scale(kind, seg, rows, data.dtype)
            if scale is not None:
                out *= scale.reshape((-1,) + (1,) * (data.ndim - 1))
            return out
        if with_num:
            return reduce
        return lambda data, indices, segment_ids: reduce(data, indices, segment_ids)
    return factory


def _segment_grad(kind, v2):
    def factory(ctx):
        name = ctx.name

        def grad_fn(grad, indices, segment_ids, output_dim0):
            idx = np.asarray(indices, np.int64)
            seg = np.asarray(segment_ids, np.int64)
            dim0 = int(output_dim0)
            bad = np.flatnonzero((idx < 0) | (idx >= dim0))
            if bad.size:
                raise _bad(f"Index {idx[bad[0]]} out of range [0, {dim0}).", name)
            rows = grad.shape[0]
            if seg.size and ((seg < 0) | (seg >= rows)).any():
                raise _bad(f"Segment id out of range [0, {rows}).", name)
            scale = _scale(kind, seg, rows, grad.dtype)
            scaled = grad if scale is None else grad * scale.reshape((-1,) + (1,) * (grad.ndim - 1))
            out = np.zeros((dim0,) + grad.shape[1:], grad.dtype)
            np.add.at(out, idx, scaled[seg])
            if not v2:
                return out
            unique = np.unique(idx)
            return out[unique], unique.astype(indices.dtype)
        return grad_fn
    return factory


for _kind in ("Sum", "Mean", "SqrtN"):
    _op = "SparseSegment" + _kind
    register_kernel(_op, CPU, fresh_outputs=True)(_segment_reduce(_kind, False))
    register_kernel(_op + "WithNumSegments", CPU, fresh_outputs=True)(_segment_reduce(_kind, True))
    register_kernel(_op + "Grad", CPU, fresh_outputs=True)(_segment_grad(_kind, False))
    register_kernel(_op + "GradV2", CPU, fresh_outputs=True)(_segment_grad(_kind, True))


@register_kernel("ListDiff", CPU, fresh_outputs=True)
def _list_diff(ctx):
    out_idx = ctx.output_dtypes[1].np

    def list_diff(x, y):
        keep = ~np.isin(x, y)
        return x[keep], np.flatnonzero(keep).astype(out_idx)
    return list_diff
