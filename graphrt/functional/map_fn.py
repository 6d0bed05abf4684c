"""`tf.map_fn`, as TF1's map_fn.py builds it: each leaf of `elems` unstacked into
a TensorArray, a while_loop calling `fn` on element i of every leaf (packed as
`elems` is) and writing each leaf of its result into a TensorArray, the
arrays stacked after the loop.

    tf.map_fn(lambda x: x * x, tf.constant([1., 2., 3.]))            # [1., 4., 9.]
    tf.map_fn(lambda xy: xy[0] * xy[1], (a, b), dtype=tf.float32)    # another structure out

The result is structured as `elems`, or as `dtype` when given (a dtype or a
nested structure of dtypes, for fns that return another structure or type).
"""
from ..framework import dtypes
from ..framework.tensor_shape import TensorShape
from ..ops import nest
from ..ops.control_flow_ops import while_loop
from ..tensor_array import TensorArray
from .functional_ops import (assert_fn_structure, caching_device_scope, check_fn, convert_elems, elems_graph,
                             length)


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False, infer_shape=True,
           name=None):
    """`fn` applied to each element of `elems` unstacked on dimension 0, the results
    stacked. With `infer_shape`, every result of `fn` must have the same shape."""
    check_fn(fn, "map_fn")
    if parallel_iterations is None:
        parallel_iterations = 10  # TF's default in graph mode
    elems_flat = nest.flatten(elems)
    g = elems_graph(elems_flat)
    with g.as_default(), g.name_scope(name or "map"), caching_device_scope():
        tensors, n_static = convert_elems(elems, elems_flat, "map_fn")
        if dtype is None:
            output_structure = elems
            result_dtypes = [t.dtype.base_dtype for t in tensors]
        else:
            output_structure = dtype
            result_dtypes = [_as_dtype(d) for d in nest.flatten(dtype)]
        n = length(tensors, n_static)
        elems_ta = [TensorArray(dtype=t.dtype, size=n, dynamic_size=False, infer_shape=True).unstack(t)
                    for t in tensors]
        # The results' element shapes are learnt from fn's first (traced) call, as TF does.
        results_ta = [TensorArray(dtype=d, size=n, dynamic_size=False, infer_shape=infer_shape)
                      for d in result_dtypes]

        def compute(i, tas):
            value = fn(nest.pack_sequence_as(elems, [ta.read(i) for ta in elems_ta]))
            assert_fn_structure(output_structure, value, "map_fn",
                                "dtype" if dtype is not None else "elems (pass dtype= for another structure)")
            return i + 1, [ta.write(i, v) for ta, v in zip(tas, nest.flatten(value))]

        _, r_a = while_loop(lambda i, _: i < n, compute, (0, results_ta), parallel_iterations=parallel_iterations,
                            back_prop=back_prop, swap_memory=swap_memory, maximum_iterations=n)
        results_flat = [r.stack() for r in r_a]
        for r in results_flat:
            r.set_shape(TensorShape([n_static]).concatenate(r.shape[1:]))
        return nest.pack_sequence_as(output_structure, results_flat)


def _as_dtype(d):
    try:
        return dtypes.as_dtype(d).base_dtype
    except (TypeError, ValueError, KeyError):
        raise TypeError(f"map_fn: dtype must be a dtype or a nested structure of dtypes, got {d!r}.") from None
