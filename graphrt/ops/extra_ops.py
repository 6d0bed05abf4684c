"""More TF1 ops and functions: gather_nd/scatter_nd, is_nan/is_inf/is_finite,
div_no_nan, sequence_mask, linspace, eye and the matrix-diagonal ops,
tensordot, einsum, segment reductions, unique, sort/argsort, identity_n,
the check_ops asserts and py_func. Declarations and the Python API; kernels
are in extra_kernels.py, gradients in extra_grad.py.
"""
import string

import numpy as np

from .. import errors
from ..framework import dtypes
from ..framework.constant_value import constant_value
from ..framework.graph import Tensor, get_default_graph, graph_of
from ..framework.op_builder import apply_op, constant, convert_to_tensor, is_tensor_like
from ..framework.registry import register_op
from ..framework.tensor_shape import Dimension, TensorShape
from . import array_ops, control_ops, math_ops, nn_ops, py_func_registry, shape_fns

FLOAT = dtypes.FLOATING
INDEX = (dtypes.int32, dtypes.int64)


# -- declarations ---------------------------------------------------------------------

def _gather_nd_shape(ctx):
    params, indices = ctx.shape(0), ctx.shape(1)
    if params.ndims is None or indices.ndims is None:
        return TensorShape(None)
    if indices.ndims < 1:
        raise ValueError(f"Shape must be at least rank 1 but is rank {indices.ndims}")
    r = indices[-1]
    if r is None:
        return TensorShape(None)
    if r > params.ndims:
        raise ValueError(f"indices.shape[-1] must be <= params.rank, but saw indices shape: {indices.short()} "
                         f"and params shape: {params.short()}")
    return TensorShape(indices.dims[:-1] + params.dims[r:])


register_op("GatherNd", ["params: Tparams", "indices: Tindices"], ["output: Tparams"], shape_fn=_gather_nd_shape,
            allowed_types={"Tindices": INDEX})


def _scatter_nd_shape(ctx):
    shape = ctx.constant_shape(2)
    indices, updates = ctx.shape(0), ctx.shape(1)
    if shape.ndims is not None and indices.ndims is not None and updates.ndims is not None and \
            indices[-1] is not None:
        r = indices[-1]
        outer = indices.ndims - 1
        want = TensorShape(indices.dims[:-1] + shape.dims[r:])
        if updates.ndims != want.ndims or not updates.is_compatible_with(want):
            raise ValueError(f"Dimensions [{outer},{updates.ndims}) of updates[shape={updates.short()}] = "
                             f"must match dimensions [{r},{shape.ndims}) of output[shape={shape.short()}]")
    return shape


register_op("ScatterNd", ["indices: Tindices", "updates: T", "shape: Tindices"], ["output: T"],
            shape_fn=_scatter_nd_shape, allowed_types={"Tindices": INDEX})

for _name in ("IsNan", "IsInf", "IsFinite"):
    register_op(_name, ["x: T"], ["y: bool"], shape_fn=shape_fns.unchanged, allowed_types={"T": FLOAT})

register_op("DivNoNan", ["x: T", "y: T"], ["z: T"], shape_fn=shape_fns.broadcast,
            allowed_types={"T": FLOAT + (dtypes.complex64, dtypes.complex128)})


def _lin_space_shape(ctx):
    for i, what in ((0, "start"), (1, "stop"), (2, "num")):
        s = ctx.shape(i)
        if s.ndims not in (None, 0):
            raise ValueError(f"Shape must be rank 0 but is rank {s.ndims} for {what}")
    num = ctx.constant(2)
    if num is None:
        return TensorShape([None])
    if int(num) <= 0:
        raise ValueError(f"Requires num > 0: {int(num)}")
    return TensorShape([int(num)])


register_op("LinSpace", ["start: T", "stop: T", "num: Tidx"], ["output: T"], attrs={"Tidx": dtypes.int32},
            shape_fn=_lin_space_shape, allowed_types={"T": FLOAT, "Tidx": INDEX})


def _matrix_diag_shape(ctx):
    s = ctx.shape(0)
    if s.ndims is None:
        return TensorShape(None)
    if s.ndims < 1:
        raise ValueError(f"Shape must be at least rank 1 but is rank {s.ndims}")
    return s.concatenate([s[-1]])


def _matrix_diag_part_shape(ctx):
    s = ctx.shape(0)
    if s.ndims is None:
        return TensorShape(None)
    if s.ndims < 2:
        raise ValueError(f"Shape must be at least rank 2 but is rank {s.ndims}")
    m, n = s[-2], s[-1]
    d = None if m is None or n is None else min(m, n)
    return TensorShape(s.dims[:-2] + [d])


def _matrix_set_diag_shape(ctx):
    s, d = ctx.shape(0), ctx.shape(1)
    if s.ndims is not None and s.ndims < 2:
        raise ValueError(f"Shape must be at least rank 2 but is rank {s.ndims}")
    if s.ndims is not None and d.ndims is not None:
        m, n = s[-2], s[-1]
        want = TensorShape(s.dims[:-2] + [None if m is None or n is None else min(m, n)])
        if d.ndims != want.ndims or not d.is_compatible_with(want):
            raise ValueError(f"Dimensions must be equal: diagonal shape {d.short()} vs input shape {s.short()}")
    return s


register_op("MatrixDiag", ["diagonal: T"], ["output: T"], shape_fn=_matrix_diag_shape)
register_op("MatrixDiagPart", ["input: T"], ["diagonal: T"], shape_fn=_matrix_diag_part_shape)
register_op("MatrixSetDiag", ["input: T", "diagonal: T"], ["output: T"], shape_fn=_matrix_set_diag_shape)


# Einsum: the equation is normalized when the op is built (explicit output).

def _parse_equation(equation, n_inputs):
    eq = equation.replace(" ", "")
    if "->" in eq:
        lhs, out = eq.split("->", 1)
        explicit = True
    else:
        lhs, out, explicit = eq, None, False
    ins = lhs.split(",")
    if len(ins) != n_inputs:
        raise ValueError(f"Expected {len(ins)} inputs but got: {n_inputs}")
    for spec in ins + ([out] if explicit else []):
        body = spec.replace("...", "")
        if "." in body or any(c not in string.ascii_letters for c in body):
            raise ValueError(f"Invalid einsum equation: {equation!r}")
    if not explicit:
        counts = {}
        for spec in ins:
            for c in spec.replace("...", ""):
                counts[c] = counts.get(c, 0) + 1
        ell = "..." if any("..." in s for s in ins) else ""
        out = ell + "".join(sorted(c for c, k in counts.items() if k == 1))
    present = set("".join(ins))
    for c in out.replace("...", ""):
        if c not in present:
            raise ValueError(f"Output subscript {c!r} does not appear in any input of einsum equation "
                             f"{equation!r}")
        if out.count(c) > 1:
            raise ValueError(f"Output subscript {c!r} appears more than once in einsum equation {equation!r}")
    return ins, out


def _tokens(spec):
    """'a...bc' -> ['a', '...', 'b', 'c']."""
    out, i = [], 0
    while i < len(spec):
        if spec.startswith("...", i):
            out.append("...")
            i += 3
        else:
            out.append(spec[i])
            i += 1
    return out


def _einsum_shape(ctx):
    eq = ctx.attr("equation")
    lhs, out = eq.split("->")
    ins = lhs.split(",")
    dims, ell_dims = {}, []
    for i, spec in enumerate(ins):
        s = ctx.shape(i)
        if s.ndims is None:
            return TensorShape(None)
        toks = _tokens(spec)
        n_named = len([t for t in toks if t != "..."])
        if "..." not in toks and n_named != s.ndims:
            raise ValueError(f"Expected input {i} to have rank {n_named} but got: {s.ndims}")
        if n_named > s.ndims:
            raise ValueError(f"Expected input {i} to have rank at least {n_named} but got: {s.ndims}")
        pos = 0
        for t in toks:
            if t == "...":
                k = s.ndims - n_named
                ell = s.dims[pos:pos + k]
                ell_dims = _broadcast_dims(ell_dims, ell)
                pos += k
                continue
            d = s.dim(pos)
            pos += 1
            prev = dims.get(t)
            if prev is None or prev.value is None or prev.value == 1:
                dims[t] = d if (prev is None or d.value is not None) else prev
            elif d.value is not None and d.value != 1 and d.value != prev.value:
                raise ValueError(f"Expected dimension {prev.value} at axis {pos - 1} of input {i} (subscript "
                                 f"{t!r}), got {d.value}")
    result = []
    for t in _tokens(out):
        if t == "...":
            result.extend(ell_dims)
        else:
            result.append(dims[t])
    return TensorShape(result)


def _broadcast_dims(a, b):
    a, b = list(a), list(b)
    n = max(len(a), len(b))
    a = [Dimension(1)] * (n - len(a)) + a
    b = [Dimension(1)] * (n - len(b)) + b
    out = []
    for x, y in zip(a, b):
        if x.value == 1:
            out.append(y)
        elif y.value == 1 or y.value is None:
            out.append(x if y.value == 1 or x.value is not None else y)
        else:
            out.append(y if x.value is None else x)
    return out


register_op("Einsum", ["inputs: N * T"], ["output: T"], attrs={"equation": ""}, shape_fn=_einsum_shape)


def _segment_shape(ctx):
    data, ids = ctx.shape(0), ctx.shape(1)
    if ids.ndims is not None and ids.ndims != 1:
        raise ValueError(f"Shape must be rank 1 but is rank {ids.ndims}")
    if data.ndims is None:
        return TensorShape(None)
    if data.ndims < 1:
        raise ValueError(f"Shape must be at least rank 1 but is rank {data.ndims}")
    if not data.dim(0).is_compatible_with(ids.with_rank(1)[0] if ids.ndims is not None else Dimension(None)):
        raise ValueError(f"Dimensions must be equal, but are {data[0]} and {ids[0]}")
    return TensorShape([None] + data.dims[1:])  # (as TF: the ids are not read at graph-build time)


for _name in ("SegmentSum", "SegmentMean", "SegmentMax", "SegmentMin"):
    register_op(_name, ["data: T", "segment_ids: Tindices"], ["output: T"], shape_fn=_segment_shape,
                allowed_types={"Tindices": INDEX})


def _unsorted_segment_shape(ctx):
    data, ids = ctx.shape(0), ctx.shape(1)
    n = ctx.constant(2)
    if data.ndims is None or ids.ndims is None:
        return TensorShape(None)
    if not TensorShape(data.dims[:ids.ndims]).is_compatible_with(ids):
        raise ValueError(f"data.shape = {data.short()} does not start with segment_ids.shape = {ids.short()}")
    return TensorShape([None if n is None else int(n)] + data.dims[ids.ndims:])


for _name in ("UnsortedSegmentMax", "UnsortedSegmentMin"):
    register_op(_name, ["data: T", "segment_ids: Tindices", "num_segments: Tnumsegments"], ["output: T"],
                attrs={"Tnumsegments": dtypes.int32}, shape_fn=_unsorted_segment_shape,
                allowed_types={"Tindices": INDEX, "Tnumsegments": INDEX, "T": dtypes.FLOATING + dtypes.INTEGER})


def _unique_shape(ctx):
    s = ctx.shape(0)
    if s.ndims is not None and s.ndims != 1:
        raise ValueError(f"Shape must be rank 1 but is rank {s.ndims}")
    return [TensorShape([None]), s.with_rank(1) if s.ndims is not None else TensorShape([None])]


register_op("Unique", ["x: T"], ["y: T", "idx: out_idx"], attrs={"out_idx": dtypes.int32}, shape_fn=_unique_shape,
            allowed_types={"out_idx": INDEX})

register_op("IdentityN", ["input: T"], ["output: T"],
            shape_fn=lambda ctx: [ctx.shape(i) for i in range(ctx.num_inputs)])
register_op("PyFunc", ["input: Tin"], ["output: Tout"], attrs={"token": "", "Tin": [], "Tout": []},
            shape_fn=shape_fns.unknown, is_stateful=True, may_block=True)
register_op("PyFuncStateless", ["input: Tin"], ["output: Tout"], attrs={"token": "", "Tin": [], "Tout": []},
            shape_fn=shape_fns.unknown, may_block=True)


# -- Python API ------------------------------------------------------------------------------

def gather_nd(params, indices, name=None, batch_dims=0):
    """Slices of `params` at the index vectors in the last dimension of `indices`."""
    if batch_dims != 0:
        raise ValueError("gather_nd with batch_dims != 0 is not supported by graphrt")
    return apply_op("GatherNd", [params, indices], name=name or "GatherNd").outputs[0]


def scatter_nd(indices, updates, shape, name=None):
    """A tensor of `shape`, zeros except `updates` summed in at `indices`."""
    return apply_op("ScatterNd", [indices, updates, array_ops._shape_arg(shape)],
                    name=name or "ScatterNd").outputs[0]


def is_nan(x, name=None):
    return apply_op("IsNan", [x], name=name or "IsNan").outputs[0]


def is_inf(x, name=None):
    return apply_op("IsInf", [x], name=name or "IsInf").outputs[0]


def is_finite(x, name=None):
    return apply_op("IsFinite", [x], name=name or "IsFinite").outputs[0]


def div_no_nan(x, y, name=None):
    """x / y, and 0 wherever y is 0; integers are cast to floating point first as truediv casts
    them (int8/16 -> float32, int32/64 -> float64)."""
    g = graph_of([v for v in (x, y) if is_tensor_like(v)])
    with g.as_default(), g.name_scope(name or "div_no_nan") as scope:
        if not is_tensor_like(x) and is_tensor_like(y):  # a Python x takes y's dtype, as in TF
            y = convert_to_tensor(y, name="y")
            x = convert_to_tensor(x, dtype=y.dtype.base_dtype, name="x")
        else:
            x = convert_to_tensor(x, name="x")
            y = convert_to_tensor(y, name="y", preferred_dtype=x.dtype.base_dtype)
        dt = x.dtype.base_dtype
        if dt != y.dtype.base_dtype:
            raise TypeError(f"`x` and `y` must have the same dtype, got {dt!r} != {y.dtype.base_dtype!r}.")
        if dt.is_bool or dt == dtypes.string:
            raise TypeError(f"Invalid dtype {dt!r} in tf.math.divide_no_nan.")
        if dt.is_integer:
            target = dtypes.float32 if dt.size <= 2 else dtypes.float64
            x, y = math_ops.cast(x, target), math_ops.cast(y, target)
        return apply_op("DivNoNan", [x, y], name=scope).outputs[0]


def sequence_mask(lengths, maxlen=None, dtype=dtypes.bool, name=None):
    """mask[i, j] = j < lengths[i] (over the last dimension, for any rank of lengths)."""
    g = get_default_graph()
    with g.name_scope(name or "SequenceMask"):
        lengths = convert_to_tensor(lengths)
        if maxlen is None:
            maxlen = math_ops.reduce_max(lengths)
            maxlen = math_ops.maximum(constant(0, dtype=maxlen.dtype), maxlen)
        else:
            maxlen = convert_to_tensor(maxlen)
        if maxlen.shape.ndims is not None and maxlen.shape.ndims != 0:
            raise ValueError("maxlen must be scalar for sequence_mask")
        row_vector = apply_op("Range", [constant(0, dtype=maxlen.dtype), maxlen, constant(1, dtype=maxlen.dtype)],
                              name="Range").outputs[0]
        matrix = apply_op("Cast", [array_ops.expand_dims(lengths, -1)], name="Cast", DstT=maxlen.dtype.base_dtype,
                          SrcT=lengths.dtype.base_dtype).outputs[0]
        result = row_vector < matrix
        maxlen_value = _folded_max_length(maxlen, lengths)
        if maxlen_value is not None and lengths.shape.ndims is not None:
            result.set_shape(lengths.shape.concatenate([maxlen_value]))
        if dtype is None or result.dtype.base_dtype == dtypes.as_dtype(dtype).base_dtype:
            return result
        return math_ops.cast(result, dtype)


def _folded_max_length(maxlen, lengths):
    """maxlen's value when the graph fixes it (a constant, or the max of constant lengths),
    as TF's shape inference folds it."""
    value = constant_value(maxlen)
    if value is not None:
        return int(value)
    if maxlen.op.type == "Maximum" and maxlen.op.inputs[1].op.type == "Max":
        lengths_value = constant_value(lengths)
        if lengths_value is not None and np.size(lengths_value):
            return max(0, int(np.max(lengths_value)))
    return None


def linspace(start, stop, num, name=None, axis=0):
    """`num` evenly spaced values from scalar start to stop (both included). Integer
    start/stop give float64 values, as TF 2's tf.compat.v1.linspace does."""
    if axis != 0:
        raise ValueError("graphrt's linspace supports scalar start and stop only (axis=0)")
    g = graph_of([v for v in (start, stop, num) if is_tensor_like(v)])
    with g.as_default(), g.name_scope(name or "LinSpace") as scope:
        start = convert_to_tensor(start, name="start")
        stop = convert_to_tensor(stop, name="stop", dtype=start.dtype.base_dtype) if not is_tensor_like(stop) \
            else stop
        if start.dtype.base_dtype.is_integer:
            start, stop = math_ops.cast(start, dtypes.float64), math_ops.cast(stop, dtypes.float64)
        return apply_op("LinSpace", [start, stop, num], name=scope).outputs[0]


lin_space = linspace


def matrix_diag(diagonal, name=None):
    return apply_op("MatrixDiag", [diagonal], name=name or "MatrixDiag").outputs[0]


def matrix_diag_part(input, name=None):  # noqa: A002
    return apply_op("MatrixDiagPart", [input], name=name or "MatrixDiagPart").outputs[0]


def matrix_set_diag(input, diagonal, name=None):  # noqa: A002
    return apply_op("MatrixSetDiag", [input, diagonal], name=name or "MatrixSetDiag").outputs[0]


def eye(num_rows, num_columns=None, batch_shape=None, dtype=dtypes.float32, name=None):
    """An identity matrix (or a batch of them), [*batch_shape, num_rows, num_columns]."""
    g = get_default_graph()
    with g.name_scope(name or "eye"):
        is_square = num_columns is None
        batch_shape = [] if batch_shape is None else batch_shape
        num_columns = num_rows if num_columns is None else num_columns
        dynamic = any(is_tensor_like(v) for v in (num_rows, num_columns, batch_shape))
        if dynamic:
            num_rows = convert_to_tensor(num_rows, dtype=dtypes.int32)
            num_columns = convert_to_tensor(num_columns, dtype=dtypes.int32)
            batch = convert_to_tensor(batch_shape, dtype=dtypes.int32)
            diag_size = math_ops.minimum(num_rows, num_columns)
            diag_shape = array_ops.concat([batch, array_ops.reshape(diag_size, [1])], 0)
            if not is_square:
                shape = array_ops.concat([batch, array_ops.stack([num_rows, num_columns])], 0)
        else:
            for v in (num_rows, num_columns):
                if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
                    raise TypeError(f"Arguments `num_rows` and `num_columns` must be positive integer values. "
                                    f"Received: num_rows={num_rows}, num_columns={num_columns}")
            is_square = num_rows == num_columns
            diag_shape = list(batch_shape) + [int(min(num_rows, num_columns))]
            if not is_square:
                shape = list(batch_shape) + [int(num_rows), int(num_columns)]
        diag_ones = array_ops.ones(diag_shape, dtype=dtype)
        if is_square:
            return matrix_diag(diag_ones)
        return matrix_set_diag(array_ops.zeros(shape, dtype=dtype), diag_ones)


def _tensordot_axes(a, axes):
    a_shape = a.shape
    if isinstance(axes, (int, np.integer)):
        if axes < 0:
            raise ValueError("'axes' must be at least 0.")
        if a_shape.ndims is not None:
            if axes > a_shape.ndims:
                raise ValueError(f"'axes' must not be larger than the number of dimensions of tensor {a}.")
            return list(range(a_shape.ndims - axes, a_shape.ndims)), list(range(axes))
        rank = array_ops.rank(a)
        return (math_ops.range(rank - axes, rank, dtype=dtypes.int32),
                math_ops.range(axes, dtype=dtypes.int32))
    if isinstance(axes, (list, tuple)):
        if len(axes) != 2:
            raise ValueError("'axes' must be an integer or have length 2.")
        a_axes, b_axes = axes
        if isinstance(a_axes, (int, np.integer)) and isinstance(b_axes, (int, np.integer)):
            a_axes, b_axes = [a_axes], [b_axes]
        a_axes, b_axes = [int(x) for x in a_axes], [int(x) for x in b_axes]
        if len(a_axes) != len(b_axes):
            raise ValueError(f"Different number of contraction axes 'a' and 'b', {len(a_axes)} != {len(b_axes)}.")
        return a_axes, b_axes
    axes = convert_to_tensor(axes, name="axes", dtype=dtypes.int32)
    return axes[0], axes[1]


def _tensordot_reshape(a, axes, flipped=False):
    shape = a.shape
    if shape.ndims is None or not isinstance(axes, list):
        return _tensordot_reshape_dynamic(a, axes, flipped)
    rank = shape.ndims
    axes = [i if i >= 0 else i + rank for i in axes]
    free = [i for i in range(rank) if i not in axes]
    dims = shape.as_list()
    free_dims = [dims[i] for i in free]
    axes_dims = [dims[i] for i in axes]
    perm = axes + free if flipped else free + axes
    if shape.is_fully_defined():
        prod_free = int(np.prod(free_dims, dtype=np.int64))
        prod_axes = int(np.prod(axes_dims, dtype=np.int64))
        new_shape = [prod_axes, prod_free] if flipped else [prod_free, prod_axes]
        if perm != list(range(rank)):
            a = array_ops.transpose(a, np.array(perm, dtype=np.int32))
        if a.shape.as_list() != new_shape:
            a = array_ops.reshape(a, new_shape)
        return a, free_dims, free_dims
    shape_a = array_ops.shape(a)
    free_t = constant(np.array(free, dtype=np.int32), name="free")
    axes_t = constant(np.array(axes, dtype=np.int32), name="axes")
    free_dims_t = array_ops.gather(shape_a, free_t)
    axes_dims_t = array_ops.gather(shape_a, axes_t)
    prod_free = math_ops.reduce_prod(free_dims_t)
    prod_axes = math_ops.reduce_prod(axes_dims_t)
    new_shape = array_ops.stack([prod_axes, prod_free] if flipped else [prod_free, prod_axes])
    reshaped = array_ops.reshape(array_ops.transpose(a, np.array(perm, dtype=np.int32)), new_shape)
    return reshaped, free_dims_t, free_dims


def _tensordot_reshape_dynamic(a, axes, flipped):
    """The reshape for an operand of unknown rank or axes given as a tensor: every index computed
    in the graph as TF computes it, and no static free dimensions."""
    shape_a = array_ops.shape(a)
    rank_a = array_ops.rank(a)
    axes = convert_to_tensor(axes, dtype=dtypes.int32, name="axes")
    axes = math_ops.where(axes >= 0, axes, axes + rank_a)
    free = apply_op("ListDiff", [math_ops.range(rank_a), axes], out_idx=dtypes.int32).outputs[0]
    free_dims = array_ops.gather(shape_a, free)
    axes_dims = array_ops.gather(shape_a, axes)
    prod_free = math_ops.reduce_prod(free_dims)
    prod_axes = math_ops.reduce_prod(axes_dims)
    if flipped:
        perm = array_ops.concat([axes, free], 0)
        new_shape = array_ops.stack([prod_axes, prod_free])
    else:
        perm = array_ops.concat([free, axes], 0)
        new_shape = array_ops.stack([prod_free, prod_axes])
    return array_ops.reshape(array_ops.transpose(a, perm), new_shape), free_dims, None


def tensordot(a, b, axes, name=None):
    """Sum over `axes` of a and b (a matmul of the reshaped operands, as TF builds it)."""
    g = graph_of([v for v in (a, b) if is_tensor_like(v)])
    with g.as_default(), g.name_scope(name or "Tensordot") as scope:
        a = convert_to_tensor(a, name="a")
        b = convert_to_tensor(b, name="b", dtype=a.dtype.base_dtype) if not is_tensor_like(b) else \
            convert_to_tensor(b, name="b")
        a_axes, b_axes = _tensordot_axes(a, axes)
        a_reshape, a_free, a_free_static = _tensordot_reshape(a, a_axes)
        b_reshape, b_free, b_free_static = _tensordot_reshape(b, b_axes, True)
        ab = math_ops.matmul(a_reshape, b_reshape)
        if isinstance(a_free, list) and isinstance(b_free, list):
            if ab.shape.is_fully_defined() and ab.shape.as_list() == a_free + b_free:
                return ab
            return array_ops.reshape(ab, a_free + b_free, name=scope)
        a_free_t = a_free if is_tensor_like(a_free) else constant(np.array(a_free, dtype=np.int32))
        b_free_t = b_free if is_tensor_like(b_free) else constant(np.array(b_free, dtype=np.int32))
        product = array_ops.reshape(ab, array_ops.concat([a_free_t, b_free_t], 0), name=scope)
        if a_free_static is not None and b_free_static is not None:
            product.set_shape(a_free_static + b_free_static)
        return product


def einsum(equation, *inputs, **kwargs):
    """Einstein summation (numpy's semantics; an implicit output is the sorted
    subscripts that appear once). One Einsum op with a gradient."""
    name = kwargs.pop("name", None)
    kwargs.pop("optimize", None)
    if kwargs:
        raise TypeError(f"Invalid keyword arguments for this function: {', '.join(sorted(kwargs))}")
    if not inputs:
        raise ValueError("einsum needs at least one input")
    ins, out = _parse_equation(equation, len(inputs))
    normalized = ",".join(ins) + "->" + out
    g = graph_of([v for v in inputs if is_tensor_like(v)])
    with g.as_default(), g.name_scope(name or "einsum"):
        tensors = [convert_to_tensor(x, name=f"input_{i}") for i, x in enumerate(inputs)]
        return apply_op("Einsum", [tensors], name="Einsum", equation=normalized).outputs[0]


def _segment(op_type, default):
    def fn(data, segment_ids, name=None):
        return apply_op(op_type, [data, segment_ids], name=name or default).outputs[0]
    fn.__name__ = default
    return fn


segment_sum = _segment("SegmentSum", "SegmentSum")
segment_mean = _segment("SegmentMean", "SegmentMean")
segment_max = _segment("SegmentMax", "SegmentMax")
segment_min = _segment("SegmentMin", "SegmentMin")


def unsorted_segment_max(data, segment_ids, num_segments, name=None):
    return apply_op("UnsortedSegmentMax", [data, segment_ids, num_segments],
                    name=name or "UnsortedSegmentMax").outputs[0]


def unsorted_segment_min(data, segment_ids, num_segments, name=None):
    return apply_op("UnsortedSegmentMin", [data, segment_ids, num_segments],
                    name=name or "UnsortedSegmentMin").outputs[0]


def unique(x, out_idx=dtypes.int32, name=None):
    """(y, idx): the distinct values of 1-D x in order of first appearance, and x's index into y."""
    op = apply_op("Unique", [x], name=name or "Unique", out_idx=dtypes.as_dtype(out_idx))
    return op.outputs[0], op.outputs[1]


def _sort_or_argsort(values, axis, direction, return_argsort, name):
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError(f"{direction} should be one of ASCENDING, DESCENDING")
    g = get_default_graph()
    with g.name_scope(name or ("argsort" if return_argsort else "sort")):
        axis_t = convert_to_tensor(axis, name="axis")
        axis_static = constant_value(axis_t)
        if axis_t.shape.ndims not in (None, 0) or axis_static is None:
            raise ValueError(f"Argument `axis` must be a constant scalar. Received: axis={_tensor_str(axis_t)}.")
        axis = int(axis_static)
        values = convert_to_tensor(values, name="values")
        if direction == "DESCENDING":
            return _descending_sort(values, axis, return_argsort)
        # TF's _ascending_sort: a descending sort of an order-reversing map that cannot overflow
        dtype = values.dtype.base_dtype
        if dtype.is_unsigned:
            offset = np.array(dtype.max, dtype=dtype.np)
            out = _descending_sort(offset - values, axis, return_argsort)
            return out if return_argsort else offset - out
        if dtype.is_integer:
            out = _descending_sort(-values - 1, axis, return_argsort)
            return out if return_argsort else -out - 1
        out = _descending_sort(-values, axis, return_argsort)
        return out if return_argsort else -out


def _descending_sort(values, axis, return_argsort):
    rank = values.shape.ndims
    if rank is None:
        raise ValueError("graphrt's sort needs values of known rank")
    if not -rank <= axis < rank:
        raise ValueError(f"axis {axis} is out of range for a tensor of rank {rank}")
    axis %= rank
    k = values.shape[axis]
    if k is None:
        k = array_ops.shape(values)[axis]
    transposition = None
    top_k_input = values
    if axis != rank - 1:
        perm = list(range(rank))
        perm[axis], perm[-1] = perm[-1], perm[axis]
        transposition = np.array(perm, dtype=np.int32)
        top_k_input = array_ops.transpose(values, transposition)
    vals, indices = nn_ops.top_k(top_k_input, k)
    out = indices if return_argsort else vals
    if transposition is not None:
        out = array_ops.transpose(out, transposition)
    return out


def sort(values, axis=-1, direction="ASCENDING", name=None):
    """values sorted along `axis` (stable: equal values keep their order)."""
    return _sort_or_argsort(values, axis, direction, False, name)


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """Indices that sort `values` along `axis` (int32; ties in index order)."""
    return _sort_or_argsort(values, axis, direction, True, name)


def identity_n(input, name=None):  # noqa: A002
    """Identity of each tensor of a list, as one op."""
    g = graph_of([v for v in input if is_tensor_like(v)])
    with g.as_default(), g.name_scope(name or "IdentityN") as scope:
        tensors = [convert_to_tensor(x) for x in input]
        op = g.create_op("IdentityN", tensors, {"T": [t.dtype.base_dtype for t in tensors]}, name=scope)
        return op.outputs


# -- asserts (TF's check_ops) -------------------------------------------------------------------

def assert_op(condition, data, summarize=None, name=None):
    """`tf.Assert` over data of mixed types (strings and tensors of any dtypes)."""
    g = get_default_graph()
    with g.name_scope(name or "Assert"):
        tensors = [convert_to_tensor(d) for d in data]
        condition = convert_to_tensor(condition)
        attrs = {"summarize": summarize or 3, "T": [t.dtype.base_dtype for t in tensors]}
        return g.create_op("Assert", [condition] + tensors, attrs, name="Assert")


def _maybe_constant_value_string(t):
    if not isinstance(t, Tensor):
        return str(t)
    value = constant_value(t)
    if value is not None:
        return str(value)
    return str(t)


def _assert_static(condition, data):
    if not condition:
        raise errors.InvalidArgumentError(None, None, "\n".join(_maybe_constant_value_string(x) for x in data))


def _binary_assert(sym, opname, op_func, static_func, x, y, data, summarize, message, name):
    g = get_default_graph()
    with g.name_scope(name or opname):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype=x.dtype.base_dtype) if not is_tensor_like(y) else \
            convert_to_tensor(y, name="y")
        if data is None:
            data = [f"Condition x {sym} y did not hold element-wise:", f"x ({x.name}) = ", x, f"y ({y.name}) = ", y]
        if message is not None:
            data = [message] + list(data)
        condition = math_ops.reduce_all(op_func(x, y))
        x_static, y_static = constant_value(x), constant_value(y)
        if x_static is not None and y_static is not None:
            _assert_static(bool(np.all(static_func(x_static, y_static))), data)
        return assert_op(condition, data, summarize=summarize)


def assert_equal(x, y, data=None, summarize=None, message=None, name=None):
    return _binary_assert("==", "assert_equal", math_ops.equal, np.equal, x, y, data, summarize, message, name)


def assert_none_equal(x, y, data=None, summarize=None, message=None, name=None):
    return _binary_assert("!=", "assert_none_equal", math_ops.not_equal, np.not_equal, x, y, data, summarize,
                          message, name)


def assert_less(x, y, data=None, summarize=None, message=None, name=None):
    return _binary_assert("<", "assert_less", math_ops.less, np.less, x, y, data, summarize, message, name)


def assert_less_equal(x, y, data=None, summarize=None, message=None, name=None):
    return _binary_assert("<=", "assert_less_equal", math_ops.less_equal, np.less_equal, x, y, data, summarize,
                          message, name)


def assert_greater(x, y, data=None, summarize=None, message=None, name=None):
    return _binary_assert(">", "assert_greater", math_ops.greater, np.greater, x, y, data, summarize, message,
                          name)


def assert_greater_equal(x, y, data=None, summarize=None, message=None, name=None):
    return _binary_assert(">=", "assert_greater_equal", math_ops.greater_equal, np.greater_equal, x, y, data,
                          summarize, message, name)


def _message_prefix(message):
    return f"{message}.  " if message else ""


def _tensor_str(t):
    return f'Tensor("{t.name}", shape={t.shape}, dtype={t.dtype.base_dtype.name})'


def _sign_assert(opname, sym, zero_first, fn):
    def check(x, data=None, summarize=None, message=None, name=None):
        message = _message_prefix(message)
        g = get_default_graph()
        with g.name_scope(name or opname):
            x = convert_to_tensor(x, name="x")
            if data is None:
                data = [message, f"Condition x {sym} 0 did not hold element-wise:", f"x ({x.name}) = ", x]
            zero = convert_to_tensor(0, dtype=x.dtype.base_dtype)
            return fn(zero, x, data=data, summarize=summarize) if zero_first else \
                fn(x, zero, data=data, summarize=summarize)
    check.__name__ = opname
    return check


assert_positive = _sign_assert("assert_positive", ">", True, assert_less)
assert_non_negative = _sign_assert("assert_non_negative", ">=", True, assert_less_equal)
assert_negative = _sign_assert("assert_negative", "<", False, assert_less)
assert_non_positive = _sign_assert("assert_non_positive", "<=", False, assert_less_equal)


def _assert_rank_condition(x, rank, static_condition, dynamic_condition, data, summarize):
    if rank.dtype.base_dtype != dtypes.int32:
        raise TypeError(f"  {rank.name} must be of type {dtypes.int32!r}")
    rank_static = constant_value(rank)
    if rank_static is not None:
        if np.ndim(rank_static) != 0:
            raise ValueError("Rank must be a scalar.")
        x_rank_static = x.shape.ndims
        if x_rank_static is not None:
            if not static_condition(x_rank_static, int(rank_static)):
                raise ValueError("Static rank condition failed", x_rank_static, int(rank_static))
            return control_ops.no_op(name="static_checks_determined_all_ok")
    condition = dynamic_condition(array_ops.rank(x), rank)
    return assert_op(condition, data, summarize=summarize)


def _rank_assert(opname, static_condition, dynamic_condition, phrase):
    def check(x, rank, data=None, summarize=None, message=None, name=None):
        g = get_default_graph()
        with g.name_scope(name or opname):
            x = convert_to_tensor(x, name="x")
            rank = convert_to_tensor(rank, name="rank")
            message = _message_prefix(message)
            if data is None:
                data = [message, f"Tensor {x.name} must have {phrase}", rank, "Received shape: ",
                        array_ops.shape(x)]
            try:
                return _assert_rank_condition(x, rank, static_condition, dynamic_condition, data, summarize)
            except ValueError as e:
                if e.args[0] == "Static rank condition failed":
                    raise ValueError(f"{message}Tensor {x.name} must have {phrase} {e.args[2]}.  Received rank "
                                     f"{e.args[1]}, shape {x.shape}") from None
                raise
    check.__name__ = opname
    return check


assert_rank = _rank_assert("assert_rank", lambda a, r: a == r, math_ops.equal, "rank")
assert_rank_at_least = _rank_assert("assert_rank_at_least", lambda a, r: a >= r, math_ops.greater_equal,
                                    "rank at least")


def assert_type(tensor, tf_type, message=None, name=None):
    message = message or ""
    g = get_default_graph()
    with g.name_scope(name or "assert_type"):
        tensor = convert_to_tensor(tensor, name="tensor")
        if tensor.dtype.base_dtype != dtypes.as_dtype(tf_type).base_dtype:
            raise TypeError(f"{message}  {tensor.name} must be of type {dtypes.as_dtype(tf_type)!r}")
        return control_ops.no_op("statically_determined_correct_type")


# -- py_func -------------------------------------------------------------------------------------

lookup_py_func = py_func_registry.lookup


def py_func(func, inp, Tout, stateful=True, name=None):  # noqa: N803 - TF's argument name
    """An op that calls the Python function `func` on numpy arrays when it runs.

    `Tout` is a dtype or a list of dtypes; the function must return values of
    exactly those dtypes (a float64 array for a tf.float32 output is an error,
    as in TF). The op is not differentiable (use gradient_override_map) and runs
    only in this process, on the CPU.
    """
    if not callable(func):
        raise TypeError(f"Expected func to be callable, got func of type {type(func)}")
    g = graph_of([v for v in inp if is_tensor_like(v)]) if inp else get_default_graph()
    token = py_func_registry.register(func, g)
    is_list = isinstance(Tout, (list, tuple))
    tout = [dtypes.as_dtype(t).base_dtype for t in (Tout if is_list else [Tout])]
    op_type = "PyFunc" if stateful else "PyFuncStateless"
    with g.as_default(), g.name_scope(name or op_type) as scope:
        tensors = [convert_to_tensor(x) for x in inp]
        op = g.create_op(op_type, tensors, {"token": token, "Tin": [t.dtype.base_dtype for t in tensors],
                                            "Tout": tout}, name=scope)
    result = op.outputs
    if not tout:
        return op if not is_list else []
    return result if is_list else result[0]



# -- statistics, monotonicity, counting: compositions TF1 builds in Python -------------------

def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    """The population variance over `axis` (tf.math.reduce_variance)."""
    with get_default_graph().name_scope(name or "reduce_variance"):
        means = math_ops.reduce_mean(input_tensor, axis=axis, keepdims=True)
        if means.dtype.base_dtype.is_integer:
            raise TypeError(f"Input must be either real or complex. Received integer type "
                            f"{means.dtype.base_dtype.name}.")
        squared_deviations = math_ops.square(input_tensor - means)
        return math_ops.reduce_mean(squared_deviations, axis=axis, keepdims=keepdims)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    """The population standard deviation over `axis` (tf.math.reduce_std)."""
    with get_default_graph().name_scope(name or "reduce_std"):
        return math_ops.sqrt(reduce_variance(input_tensor, axis=axis, keepdims=keepdims))


def reduce_euclidean_norm(input_tensor, axis=None, keepdims=False, name=None):
    """sqrt(sum(x ** 2)) over `axis`, for floating-point input (TF's EuclideanNorm, composed)."""
    with get_default_graph().name_scope(name or "reduce_euclidean_norm"):
        x = convert_to_tensor(input_tensor, name="input_tensor")
        if not x.dtype.base_dtype.is_floating:
            raise TypeError(f"graphrt's reduce_euclidean_norm takes floating-point input, got "
                            f"{x.dtype.base_dtype.name}")
        return math_ops.sqrt(math_ops.reduce_sum(math_ops.square(x), axis=axis, keepdims=keepdims))


def _monotonic(x, compare, name):
    with get_default_graph().name_scope(name):
        x = convert_to_tensor(x, name="x")
        if not (x.dtype.base_dtype.is_integer or x.dtype.base_dtype.is_floating):
            raise TypeError(f"Expected x to be numeric, instead found: {x.dtype.base_dtype.name}")
        flat = array_ops.reshape(x, [-1])
        return math_ops.reduce_all(compare(flat[1:], flat[:-1]))


def is_non_decreasing(x, name=None):
    """True when each element of the flattened x is >= the one before (trivially for < 2 elements)."""
    return _monotonic(x, math_ops.greater_equal, name or "is_non_decreasing")


def is_strictly_increasing(x, name=None):
    """True when each element of the flattened x is > the one before (trivially for < 2 elements)."""
    return _monotonic(x, math_ops.greater, name or "is_strictly_increasing")


def polyval(coeffs, x, name=None):
    """coeffs[0] * x**(n-1) + ... + coeffs[n-1], by Horner's rule (numpy.polyval)."""
    if not isinstance(coeffs, list):
        raise ValueError(f"Argument coeffs must be list type. Received type {type(coeffs)}.")
    with get_default_graph().name_scope(name or "polyval"):
        x = convert_to_tensor(x, name="x")
        if not coeffs:
            return array_ops.zeros_like(x)
        coeffs = [convert_to_tensor(c, name=f"coeff_{i}") for i, c in enumerate(coeffs)]
        p = coeffs[0]
        for c in coeffs[1:]:
            p = c + p * x
        return p


def accumulate_n(inputs, shape=None, tensor_dtype=None, name=None):
    """The sum of `inputs` (TF1's accumulate_n; the same values as add_n)."""
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise ValueError("inputs must be a non-empty list of Tensors")
    inputs = [convert_to_tensor(t) for t in inputs]
    if tensor_dtype is not None and any(t.dtype.base_dtype != dtypes.as_dtype(tensor_dtype) for t in inputs):
        raise TypeError(f"tensor_dtype is {dtypes.as_dtype(tensor_dtype).name}, but the inputs are "
                        f"{sorted({t.dtype.base_dtype.name for t in inputs})}")
    if shape is not None:
        for t in inputs:
            t.shape.assert_is_compatible_with(shape)
    return math_ops.add_n(inputs, name=name or "AccumulateN")


def cumulative_logsumexp(x, axis=0, exclusive=False, reverse=False, name=None):
    """log(cumsum(exp(x))) along `axis`, computed against the axis maximum so exp cannot overflow."""
    with get_default_graph().name_scope(name or "CumulativeLogsumexp"):
        x = convert_to_tensor(x, name="x")
        if not x.dtype.base_dtype.is_floating:
            raise TypeError(f"cumulative_logsumexp takes floating-point input, got {x.dtype.base_dtype.name}")
        top = array_ops.stop_gradient(math_ops.reduce_max(x, axis=axis, keepdims=True))
        finite_top = math_ops.where(is_finite(top), top, array_ops.zeros_like(top))
        total = math_ops.cumsum(math_ops.exp(x - finite_top), axis=axis, exclusive=exclusive, reverse=reverse)
        return math_ops.log(total) + finite_top


def _segment_counts(segment_ids, num_segments, data):
    ones = array_ops.ones_like(segment_ids, dtype=data.dtype.base_dtype)
    counts = array_ops.unsorted_segment_sum(ones, segment_ids, num_segments)
    # One count per segment, broadcast against the data's trailing dimensions.
    rank_data, rank_ids = data.shape.ndims, segment_ids.shape.ndims
    if rank_data is None or rank_ids is None:
        raise ValueError("unsorted_segment_mean/sqrt_n need data and segment_ids of known rank")
    return array_ops.reshape(counts, array_ops.concat(
        [array_ops.shape(counts), np.ones(rank_data - rank_ids, dtype=np.int32)], 0))


def unsorted_segment_mean(data, segment_ids, num_segments, name=None):
    """The mean of each segment's rows (0 for an empty segment)."""
    with get_default_graph().name_scope(name or "UnsortedSegmentMean"):
        data, segment_ids = convert_to_tensor(data, name="data"), convert_to_tensor(segment_ids, name="segment_ids")
        counts = math_ops.maximum(_segment_counts(segment_ids, num_segments, data), 1)
        return array_ops.unsorted_segment_sum(data, segment_ids, num_segments) / counts


def unsorted_segment_sqrt_n(data, segment_ids, num_segments, name=None):
    """Each segment's sum divided by the square root of its row count (0 for an empty segment)."""
    with get_default_graph().name_scope(name or "UnsortedSegmentSqrtN"):
        data, segment_ids = convert_to_tensor(data, name="data"), convert_to_tensor(segment_ids, name="segment_ids")
        counts = math_ops.maximum(_segment_counts(segment_ids, num_segments, data), 1)
        return array_ops.unsorted_segment_sum(data, segment_ids, num_segments) / math_ops.sqrt(counts)


def bincount(arr, weights=None, minlength=None, maxlength=None, dtype=dtypes.int32, name=None):
    """How often each value 0..max(arr) occurs in `arr` (weighted by `weights`); values at or past
    `maxlength` are skipped, and the output is at least `minlength` long."""
    with get_default_graph().name_scope(name or "bincount"):
        arr = convert_to_tensor(arr, name="arr")
        if not arr.dtype.base_dtype.is_integer:
            arr = math_ops.cast(arr, dtypes.int32)
        if arr.dtype.base_dtype != dtypes.int32:
            arr = math_ops.cast(arr, dtypes.int32)
        flat = array_ops.reshape(arr, [-1])
        nonempty = math_ops.cast(array_ops.size(flat) > 0, dtypes.int32)
        size = nonempty * (math_ops.reduce_max(array_ops.concat([flat, [-1]], 0)) + 1)
        if minlength is not None:
            size = math_ops.maximum(convert_to_tensor(minlength, dtype=dtypes.int32, name="minlength"), size)
        if maxlength is not None:
            size = math_ops.minimum(convert_to_tensor(maxlength, dtype=dtypes.int32, name="maxlength"), size)
        if weights is not None:
            values = array_ops.reshape(convert_to_tensor(weights, name="weights"), [-1])
        else:
            values = array_ops.ones_like(flat, dtype=dtype)
        # Values outside [0, size) go to an extra segment that is dropped (as TF skips them).
        inside = math_ops.logical_and(flat >= 0, flat < size)
        ids = math_ops.where(inside, flat, array_ops.fill(array_ops.shape(flat), size))
        counts = array_ops.unsorted_segment_sum(values, ids, size + 1)
        return counts[:size]


def confusion_matrix(labels, predictions, num_classes=None, dtype=dtypes.int32, name=None, weights=None):
    """counts[i, j]: how many examples with label i were predicted j (weighted by `weights`)."""
    with get_default_graph().name_scope(name or "confusion_matrix"):
        labels = math_ops.cast(convert_to_tensor(labels, name="labels"), dtypes.int64)
        predictions = math_ops.cast(convert_to_tensor(predictions, name="predictions"), dtypes.int64)
        zero = np.int64(0)
        checks = [assert_greater_equal(labels, zero, message="`labels` contains negative values"),
                  assert_greater_equal(predictions, zero, message="`predictions` contains negative values")]
        if num_classes is None:
            num_classes = math_ops.maximum(math_ops.reduce_max(predictions), math_ops.reduce_max(labels)) + 1
        else:
            num_classes = math_ops.cast(convert_to_tensor(num_classes, name="num_classes"), dtypes.int64)
            checks += [assert_less(labels, num_classes, message="`labels` out of bound"),
                       assert_less(predictions, num_classes, message="`predictions` out of bound")]
        labels = control_ops.with_dependencies(checks, labels)
        predictions = control_ops.with_dependencies(checks, predictions)
        if weights is not None:
            weights = convert_to_tensor(weights, name="weights")
            predictions.shape.assert_is_compatible_with(weights.shape)
            values = math_ops.cast(weights, dtype)
        else:
            values = array_ops.ones_like(predictions, dtype=dtype)
        indices = array_ops.stack([labels, predictions], axis=1)
        return scatter_nd(indices, values, array_ops.stack([num_classes, num_classes]))


class _EagerLikeValue(np.ndarray):
    """What tf.py_function hands its Python function: an array that also answers .numpy(), as
    TF's eager tensors do (graphrt has no eager mode, so TF ops cannot run on it)."""

    def numpy(self):
        return np.asarray(self)


def _eager_like(value):
    arr = np.asarray(value)
    return arr.view(_EagerLikeValue) if arr.dtype != object else arr


def py_function(func, inp, Tout, name=None):  # noqa: N803 - TF's argument name
    """tf.py_function: func gets its inputs as arrays that have .numpy(); its results become the
    op's outputs. graphrt has no eager mode: TF ops called inside func are not supported."""
    def call(*args):
        return func(*[_eager_like(a) for a in args])
    call.__name__ = getattr(func, "__name__", "py_function")
    return py_func(call, inp, Tout, stateful=True, name=name or "EagerPyFunc")


def numpy_function(func, inp, Tout, stateful=True, name=None):  # noqa: N803 - TF's argument name
    """tf.numpy_function: func gets numpy arrays and returns numpy arrays (tf.py_func's semantics)."""
    return py_func(func, inp, Tout, stateful=stateful, name=name or "PyFunc")
