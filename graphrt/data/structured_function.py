"""Wrapping a user's Python function as a graph function over dataset
elements (TF's StructuredFunctionWrapper).

The function receives an element the way TF passes it: a tuple element is
spread over the arguments (`lambda x, y: ...`), anything else (a dict, a
namedtuple, one tensor) is one argument. It may return a structure of
tensors or values (a list is read as a tuple), or a Dataset (flat_map).
Tensors of enclosing graphs it uses are captured: their values are passed
to the function when the dataset is made.
"""
from ..framework.function import FuncGraph, unique_function_name
from ..framework.graph import Tensor
from ..framework.op_builder import convert_to_tensor
from . import structure


class StructuredFunction:
    """`fdef` (the FunctionDef), `captured` (outer tensors to pass after the
    element) and `output_specs` (the result's Spec structure)."""

    def __init__(self, func, input_specs, transformation, outer_graph, want_dataset=False):
        name = getattr(func, "__name__", "fn")
        graph = FuncGraph(unique_function_name(f"{transformation}_{name}"), outer_graph)
        from .dataset_ops import Dataset  # dataset_ops builds on this module
        with graph.as_default():
            args = [graph.add_input(t, shape) for t, shape in zip(structure.flat_types(input_specs),
                                                                 structure.flat_shapes(input_specs))]
            nested = structure.as_datasets(input_specs, structure.pack_as(input_specs, args))
            ret = func(*nested) if type(nested) is tuple else func(nested)
            if want_dataset:
                if not isinstance(ret, Dataset):
                    raise TypeError(f"The function passed to {transformation} must return a `tf.data.Dataset` "
                                    f"object, got {type(ret).__name__}.")
                self.output_specs = ret._specs
                outputs = [ret._variant_tensor]
            else:
                if isinstance(ret, list):
                    ret = tuple(ret)
                if ret is None or isinstance(ret, tuple) and not ret:  # no components: TF's op rejects its empty output_types
                    raise ValueError(f"Attr 'output_types' of the op of {transformation} passed list of length 0 "
                                     f"less than minimum 1.")
                try:
                    ret = structure.map_structure(
                        lambda v: v if isinstance(v, Tensor) else convert_to_tensor(v), ret)
                except (TypeError, ValueError) as e:
                    raise TypeError(f"Unsupported return value from function passed to {transformation}: "
                                    f"{ret!r}.") from e
                self.output_specs = structure.specs_of(ret)
                outputs = structure.flatten(ret)
        self.fdef = graph.to_function_def(outputs)
        self.captured = [outer for outer, _ in graph.captures]
        self.graph = graph

    @property
    def captured_types(self):
        return [t.dtype.base_dtype for t in self.captured]
