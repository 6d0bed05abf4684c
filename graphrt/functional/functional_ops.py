"""`tf.foldl`, `tf.foldr` and `tf.scan`, as TF1's functional_ops.py builds them,
and what they share with `map_fn` (checking `fn` and `elems`).

    elems = tf.constant([1., 2., 3.])
    tf.foldl(lambda a, x: a + x, elems)              # 6.
    tf.scan(lambda a, x: a + x, elems)               # [1., 3., 6.]
    tf.scan(lambda a, x: a + x, elems, reverse=True) # [6., 5., 3.]

The loop counter runs to `n`, the elements' first dimension: a Python int
when it is known statically (the results get it in their static shape), else
`tf.shape(elems[0])[0]`; `maximum_iterations=n` bounds the loop as TF does
(its gradient loop then needs no counter of its own).
"""
import contextlib

from ..framework.graph import graph_of
from ..framework.op_builder import convert_to_tensor
from ..framework.tensor_shape import TensorShape
from ..ops import array_ops, nest
from ..ops import variable_scope as vs
from ..ops.control_flow_ops import while_loop
from ..tensor_array import TensorArray


def check_fn(fn, api):
    if not callable(fn):
        raise TypeError(f"{api}: fn must be callable, got {fn!r} of type {type(fn).__name__}.")


def elems_graph(elems_flat):
    return graph_of([e for e in elems_flat if hasattr(e, "graph") or hasattr(e, "_as_graph_element")])


def convert_elems(elems, elems_flat, api):
    """The leaves of `elems` as tensors, each at least 1-D, and the static size of
    their first dimension (None if unknown). ValueError when that size differs
    between them statically: TF fails such programs only when they run."""
    if not elems_flat:
        raise ValueError(f"{api}: elems must be a Tensor or (possibly nested) sequence of Tensors. Got {elems!r}, "
                         "which does not contain any Tensors.")
    tensors = [convert_to_tensor(e, name="elem") for e in elems_flat]
    for t in tensors:
        if t.shape.ndims == 0:
            raise ValueError(f"{api}: elements in elems must be 1+ dimensional Tensors, not scalars; "
                             f"{t.name} is a scalar.")
    n_static = tensors[0].shape[0] if tensors[0].shape.ndims else None
    known = [(t, t.shape[0]) for t in tensors if t.shape.ndims and t.shape[0] is not None]
    for t, size in known[1:]:
        if size != known[0][1]:
            raise ValueError(f"{api}: all elems must have the same size along their first dimension (the one "
                             f"{api} iterates over), but {known[0][0].name} has {known[0][1]} and {t.name} has "
                             f"{size}.")
    return tensors, n_static


def length(tensors, n_static):
    """The number of iterations: a Python int when known, else a tensor."""
    return n_static if n_static is not None else array_ops.shape(tensors[0])[0]


@contextlib.contextmanager
def caching_device_scope():
    """As TF: a variable `fn` makes with get_variable is read once where the loop
    runs, not fetched from its device on every iteration."""
    varscope = vs.get_variable_scope()
    if varscope.caching_device is not None:
        yield
        return
    varscope.set_caching_device(lambda op: op.device)
    try:
        yield
    finally:
        varscope.set_caching_device(None)


def assert_fn_structure(expected, got, api, what):
    try:
        nest.assert_same_structure(expected, got)
    except ValueError as e:
        raise ValueError(f"{api}: fn must return the same nested structure as {what}.\n{e}") from None


def _unstacked(tensors, n):
    return [TensorArray(dtype=t.dtype, size=n, dynamic_size=False, infer_shape=True,
                        element_shape=t.shape[1:]).unstack(t) for t in tensors]


def _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name, api, reverse):
    check_fn(fn, api)
    elems_flat = nest.flatten(elems)
    g = elems_graph(elems_flat)
    with g.as_default(), g.name_scope(name or api), caching_device_scope():
        tensors, n_static = convert_elems(elems, elems_flat, api)
        n = length(tensors, n_static)
        elems_ta = _unstacked(tensors, n)

        def read(i):
            return nest.pack_sequence_as(elems, [ta.read(i) for ta in elems_ta])

        # Without an initializer the first element read (the last for foldr) starts the fold.
        if initializer is None:
            i = n - 1 if reverse else 1
            a = read(i if reverse else 0)
        else:
            i = n if reverse else 0
            a = initializer

        if reverse:
            def compute(i, a):
                i -= 1
                return [i, fn(a, read(i))]
            cond = lambda i, a: i > 0  # noqa: E731
        else:
            def compute(i, a):
                return [i + 1, fn(a, read(i))]
            cond = lambda i, a: i < n  # noqa: E731
        _, r_a = while_loop(cond, compute, [i, a], parallel_iterations=parallel_iterations, back_prop=back_prop,
                            swap_memory=swap_memory, maximum_iterations=n)
        return r_a


def foldl(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, name=None):
    """`fn(a, x)` folded over the elements of `elems` (unstacked on their first
    dimension) from the first: `fn(fn(fn(init, x0), x1), x2)`. Without an
    initializer, the first element is the initial accumulator. `elems` and the
    accumulator may be nested structures of tensors."""
    return _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name, "foldl", False)


def foldr(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, name=None):
    """`foldl` from the last element: `fn(fn(fn(init, x2), x1), x0)`."""
    return _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name, "foldr", True)


def scan(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, infer_shape=True,
         reverse=False, name=None):
    """Every accumulator of a fold, stacked: result[i] = fn(result[i-1], elems[i])
    (result[i+1] with `reverse`). Without an initializer, result[0] = elems[0] and
    fn returns the structure of `elems`; with one, fn returns the initializer's."""
    check_fn(fn, "scan")
    output_structure = elems if initializer is None else initializer
    elems_flat = nest.flatten(elems)
    g = elems_graph(elems_flat)
    with g.as_default(), g.name_scope(name or "scan"), caching_device_scope():
        tensors, n_static = convert_elems(elems, elems_flat, "scan")
        n = length(tensors, n_static)
        elems_ta = _unstacked(tensors, n)

        if initializer is None:
            a_flat = [ta.read(n - 1 if reverse else 0) for ta in elems_ta]
            i = 1
        else:
            a_flat = [convert_to_tensor(init) for init in nest.flatten(initializer)]
            i = 0

        accs_ta = [TensorArray(dtype=a.dtype, size=n, element_shape=a.shape if infer_shape else None,
                               dynamic_size=False, infer_shape=infer_shape) for a in a_flat]
        if initializer is None:
            accs_ta = [ta.write(n - 1 if reverse else 0, a) for ta, a in zip(accs_ta, a_flat)]

        def compute(i, a_flat, tas):
            packed_elems = nest.pack_sequence_as(elems, [ta.read(i) for ta in elems_ta])
            a_out = fn(nest.pack_sequence_as(output_structure, a_flat), packed_elems)
            assert_fn_structure(output_structure, a_out, "scan",
                                "elems (no initializer)" if initializer is None else "initializer")
            flat_a_out = nest.flatten(a_out)
            tas = [ta.write(i, value) for ta, value in zip(tas, flat_a_out)]
            return (i - 1 if reverse else i + 1, flat_a_out, tas)

        if reverse:
            initial_i = n - 1 - i
            cond = lambda i, _1, _2: i >= 0  # noqa: E731
        else:
            initial_i = i
            cond = lambda i, _1, _2: i < n  # noqa: E731
        _, _, r_a = while_loop(cond, compute, (initial_i, a_flat, accs_ta), parallel_iterations=parallel_iterations,
                               back_prop=back_prop, swap_memory=swap_memory, maximum_iterations=n)
        results_flat = [r.stack() for r in r_a]
        for r in results_flat:
            r.set_shape(TensorShape([n_static]).concatenate(r.shape[1:]))
        return nest.pack_sequence_as(output_structure, results_flat)
