"""Shape functions shared by several ops. Each takes a ShapeContext and
returns the output shape(s); a ValueError becomes a graph-build error that
names the op and its input shapes."""
from ..framework.tensor_shape import Dimension, TensorShape, unknown_shape


def unknown(ctx):
    return [TensorShape(None)] * len(ctx.op.outputs)


def unchanged(ctx):
    return ctx.shape(0)


def scalar(ctx):
    return TensorShape([])


def broadcast_shapes(a, b):
    """Static numpy-style broadcast of two partial shapes."""
    if a.ndims is None or b.ndims is None:
        return TensorShape(None)
    da, db = a.as_list(), b.as_list()
    n = max(len(da), len(db))
    da = [1] * (n - len(da)) + da
    db = [1] * (n - len(db)) + db
    out = []
    for x, y in zip(da, db):
        if x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif x is None:
            out.append(y)
        elif y is None:
            out.append(x)
        elif x == y:
            out.append(x)
        else:
            raise ValueError(f"Dimensions must be equal, but are {x} and {y}")
    return TensorShape(out)


def dims_with_rank(ctx, i, rank):
    """Input `i`'s dimensions (ints or None) as a list of `rank`, raising TF's error for another rank."""
    s = ctx.shape(i)
    if s.ndims is not None and s.ndims != rank:
        raise ValueError(f"Shape must be rank {rank} but is rank {s.ndims}")
    return s.as_list() if s.ndims is not None else [None] * rank


def merge_dims(a, b):
    """Two dimension sizes (int or None) that must be equal: the known one, or TF's error."""
    if a is not None and b is not None and a != b:
        raise ValueError(f"Dimensions must be equal, but are {a} and {b}")
    return a if a is not None else b


def compatible(x, y):
    """Two dimension sizes (int or None) that may be equal."""
    return x is None or y is None or x == y


def broadcast(ctx):
    return broadcast_shapes(ctx.shape(0), ctx.shape(1))


def matmul(ctx):
    a, b = ctx.shape(0), ctx.shape(1)
    ta, tb = ctx.attr("transpose_a"), ctx.attr("transpose_b")
    a = a.with_rank(2) if a.ndims is not None else unknown_shape(2)
    b = b.with_rank(2) if b.ndims is not None else unknown_shape(2)
    m, ka = (a[1], a[0]) if ta else (a[0], a[1])
    kb, n = (b[1], b[0]) if tb else (b[0], b[1])
    if not compatible(ka, kb):
        raise ValueError(f"Dimensions must be equal, but are {ka} and {kb}")
    return TensorShape([m, n])


def batch_matmul(ctx):
    a, b = ctx.shape(0), ctx.shape(1)
    if a.ndims is None or b.ndims is None:
        return TensorShape(None)
    if a.ndims < 2 or b.ndims < 2:
        raise ValueError("BatchMatMul inputs must have rank >= 2")
    ta, tb = ctx.attr("adj_x"), ctx.attr("adj_y")
    m, ka = (a[-1], a[-2]) if ta else (a[-2], a[-1])
    kb, n = (b[-1], b[-2]) if tb else (b[-2], b[-1])
    if not compatible(ka, kb):
        raise ValueError(f"Dimensions must be equal, but are {ka} and {kb}")
    batch = broadcast_shapes(a[:-2], b[:-2])
    return batch.concatenate([m, n])


def reduction(ctx):
    """Sum/Mean/Max/...: input 0 reduced over the axes in input 1."""
    shape = ctx.shape(0)
    keep = ctx.attr("keep_dims")
    axes = ctx.constant(1)
    if shape.ndims is None:
        return TensorShape(None)
    if axes is None:
        return unknown_shape(shape.ndims) if keep else TensorShape(None)
    rank = shape.ndims
    axes = [int(a) for a in (axes.ravel() if hasattr(axes, "ravel") else [axes])]
    norm = set()
    for a in axes:
        if not -rank <= a < rank:  # a scalar has no dimension to reduce, as in TF
            raise ValueError(f"Invalid reduction dimension {a} for input with {rank} dimensions")
        norm.add(a % rank)
    dims = shape.as_list()
    if keep:
        return TensorShape([1 if i in norm else d for i, d in enumerate(dims)])
    return TensorShape([d for i, d in enumerate(dims) if i not in norm])


def arg_reduction(ctx):
    shape = ctx.shape(0)
    axis = ctx.constant(1)
    if shape.ndims is None:
        return TensorShape(None)
    if shape.ndims <= 1:  # a scalar whatever the axis, as in TF: a bad one fails at run time
        return TensorShape([])
    if axis is None:
        return unknown_shape(shape.ndims - 1)
    a = int(axis)
    if not -shape.ndims <= a < shape.ndims:
        raise ValueError(f"Expected dimension in the range [{-shape.ndims}, {shape.ndims}), but got {a}")
    a %= shape.ndims
    return TensorShape([d for i, d in enumerate(shape.as_list()) if i != a])


def merge_all_inputs(ctx):
    """Every input has the same shape (AddN); merge what is known."""
    out = TensorShape(None)
    for i in range(ctx.num_inputs):
        try:
            out = out.merge_with(ctx.shape(i))
        except ValueError:
            raise ValueError(f"Shapes must be equal rank, but are {out.short()} and {ctx.shape(i).short()}") from None
    return out


def dim(value):
    return Dimension(value)
