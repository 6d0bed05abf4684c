"""`Dataset.from_generator`: a GeneratorDataset whose functions call back
into Python (py_func), as TF builds it. Each iteration of the dataset calls
`generator(*args)` afresh; its elements are converted to `output_types`
and checked against `output_shapes`."""
import itertools
import threading

import numpy as np

from ..framework import dtypes
from ..framework.function import FuncGraph, unique_function_name
from ..framework.graph import get_default_graph
from ..framework.op_builder import convert_to_tensor
from ..ops.extra_kernels import _convert_result
from ..ops.extra_ops import py_func
from . import structure
from .dataset_ops import Dataset, _create


class _GeneratorState:
    """The generators of the iterations in flight, by id (what the py_funcs share)."""

    def __init__(self, generator):
        self.generator = generator
        self.ids = itertools.count()
        self.lock = threading.Lock()
        self.running = {}

    def start(self, *args):
        with self.lock:
            gid = next(self.ids)
        self.running[gid] = iter(self.generator(*[_as_python(a) for a in args]))
        return np.array(gid, dtype=np.int64)

    def next(self, gid):
        it = self.running.get(int(gid))
        if it is None:
            raise StopIteration
        return next(it)  # StopIteration ends the dataset (py_func maps it to OutOfRange)

    def finish(self, gid):
        self.running.pop(int(gid), None)
        return np.array(0, dtype=np.int64)


def _as_python(arg):
    """Generator arguments as TF gives them: numpy values (bytes for strings)."""
    return arg.item() if isinstance(arg, np.ndarray) and arg.dtype == object and arg.ndim == 0 else arg


def _function(name, input_types, body):
    graph = FuncGraph(unique_function_name(name), get_default_graph())
    with graph.as_default():
        args = [graph.add_input(t, None) for t in input_types]
        outputs = body(*args)
    return graph.to_function_def(outputs)


def from_generator(generator, output_types, output_shapes=None, args=None, name=None):
    if not callable(generator):
        raise TypeError("`generator` must be a Python callable.")
    specs = structure.from_types_and_shapes(output_types, output_shapes)
    flat_specs = structure.flatten(specs)
    state = _GeneratorState(generator)
    g = get_default_graph()
    with g.name_scope("from_generator"):
        arg_tensors = [convert_to_tensor(a, name=f"arg_{i}") for i, a in enumerate(args or ())]

    def next_values(gid):
        values = state.next(gid)
        if isinstance(values, list) and isinstance(specs, tuple) and len(values) == len(specs):
            values = tuple(values)
        try:
            structure.assert_same_structure(specs, values)
        except (TypeError, ValueError) as e:
            raise TypeError(f"`generator` yielded an element that did not match the expected structure. The "
                            f"expected structure was {output_types}, but the yielded element was {values!r}.") \
                from e
        out = []
        for spec, value in zip(flat_specs, structure.flatten(values)):
            try:
                arr = _convert_result(value) if spec.dtype == dtypes.string else np.asarray(value, spec.dtype.np)
            except (TypeError, ValueError) as e:
                raise TypeError(f"`generator` yielded an element that could not be converted to the expected "
                                f"type. The expected type was {spec.dtype.name}, but the yielded element was "
                                f"{value!r}.") from e
            if arr.dtype.kind != spec.dtype.np.kind:
                raise TypeError(f"`generator` yielded an element that could not be converted to the expected "
                                f"type. The expected type was {spec.dtype.name}, but the yielded element was "
                                f"{value!r}.")
            if not spec.shape.is_compatible_with(arr.shape):
                raise ValueError(f"`generator` yielded an element of shape {arr.shape} where an element of shape "
                                 f"{tuple(spec.shape.as_list())} was expected.")
            out.append(arr)
        return out

    flat_types = [s.dtype for s in flat_specs]
    init = _function("from_generator_init", [t.dtype.base_dtype for t in arg_tensors],
                     lambda *a: [py_func(state.start, list(a), dtypes.int64, stateful=True)])

    def next_body(gid):
        values = py_func(next_values, [gid], flat_types, stateful=True)
        for v, s in zip(values, flat_specs):
            v.set_shape(s.shape)
        return values
    next_fn = _function("from_generator_next", [dtypes.int64], next_body)
    finalize = _function("from_generator_finalize", [dtypes.int64],
                         lambda gid: [py_func(state.finish, [gid], dtypes.int64, stateful=True)])
    attrs = {"init_func": init, "next_func": next_fn, "finalize_func": finalize,
             "Tinit_func_args": [t.dtype.base_dtype for t in arg_tensors], "Tnext_func_args": [],
             "Tfinalize_func_args": [], "output_types": structure.flat_types(specs),
             "output_shapes": structure.flat_shapes(specs)}
    op = _create("GeneratorDataset", arg_tensors, attrs, name)
    return Dataset(op.outputs[0], specs)
