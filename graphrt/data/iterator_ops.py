"""`tf.data.Iterator` (TF1): a handle to iterator state on a device, with
`get_next()`, an `initializer` for initializable iterators, and the
one-shot, from_structure and from_string_handle constructors."""
from ..framework import dtypes
from ..framework.function import FuncGraph, unique_function_name
from ..framework.graph import Operation
from ..framework.graph_def import GraphDef, import_graph_def
from ..framework.op_builder import convert_to_tensor
from . import structure
from .dataset_ops import Dataset, _create


class Iterator(structure.HasElementSpec):
    """Elements of a dataset, one `get_next()` run at a time."""

    def __init__(self, iterator_resource, initializer, specs):
        self._iterator_resource = iterator_resource
        self._initializer = initializer
        self._specs = specs
        # TF1's Iterator makes its string handle up front (string_handle() returns it)
        with iterator_resource.graph.as_default():
            self._string_handle = _create("IteratorToStringHandle", [iterator_resource], {},
                                          "IteratorToStringHandle").outputs[0]

    # -- constructors ------------------------------------------------------------------------
    @staticmethod
    def from_structure(output_types, output_shapes=None, shared_name=None, output_classes=None):
        """An iterator not bound to a dataset: `make_initializer(dataset)` binds it."""
        specs = structure.from_types_and_shapes(output_types, output_shapes, output_classes)
        return Iterator(_iterator_v2(specs, shared_name), None, specs)

    @staticmethod
    def from_string_handle(string_handle, output_types, output_shapes=None, output_classes=None):
        """The iterator whose `string_handle()` value `string_handle` is fed with."""
        specs = structure.from_types_and_shapes(output_types, output_shapes, output_classes)
        handle = convert_to_tensor(string_handle, dtype=dtypes.string)
        op = _create("IteratorFromStringHandleV2", [handle], {"output_types": structure.flat_types(specs),
                                                              "output_shapes": structure.flat_shapes(specs)})
        return Iterator(op.outputs[0], None, specs)

    # -- use -------------------------------------------------------------------------------------
    @property
    def initializer(self):
        if self._initializer is None:
            raise ValueError("The iterator does not have an initializer. This means it was likely created "
                             "using `tf.data.Dataset.make_one_shot_iterator()`. For an initializable iterator, "
                             "use `tf.data.Dataset.make_initializable_iterator()` instead.")
        return self._initializer

    def make_initializer(self, dataset, name=None):
        """An op that (re)starts this iterator on `dataset`, whose structure must match."""
        return _make_iterator(self._iterator_resource, self._specs, dataset, name or "make_initializer")

    def get_next(self, name=None):
        """The next element (a structure of tensors); running it past the end raises OutOfRangeError."""
        op = _create("IteratorGetNext", [self._iterator_resource],
                     {"output_types": structure.flat_types(self._specs),
                      "output_shapes": structure.flat_shapes(self._specs)}, name or "IteratorGetNext")
        return structure.as_datasets(self._specs, structure.pack_as(self._specs, op.outputs))

    def string_handle(self, name=None):
        """A string naming this iterator, to feed an iterator made by from_string_handle."""
        if name is None:
            return self._string_handle
        op = _create("IteratorToStringHandle", [self._iterator_resource], {}, name)
        return op.outputs[0]

    def __repr__(self):
        return f"<Iterator {self._iterator_resource.op.name} element_spec={self._specs!r}>"


def _iterator_v2(specs, shared_name):
    return _create("IteratorV2", [], {"shared_name": shared_name or "", "container": "",
                                      "output_types": structure.flat_types(specs),
                                      "output_shapes": structure.flat_shapes(specs)}, "IteratorV2").outputs[0]


def _make_iterator(resource, specs, dataset, name):
    """The MakeIterator op pointing `resource` at `dataset`, whose structure must match `specs`."""
    if not isinstance(dataset, Dataset):
        raise TypeError(f"`dataset` must be a `tf.data.Dataset`, got {type(dataset).__name__}")
    try:
        structure.assert_same_structure(specs, dataset._specs)
    except (TypeError, ValueError) as e:
        raise TypeError(f"Expected output types {structure.types(specs)!r} but got dataset with output types "
                        f"{dataset.output_types!r}.") from e
    if structure.flat_types(specs) != structure.flat_types(dataset._specs):
        raise TypeError(f"Expected output types {structure.types(specs)!r} but got dataset with output types "
                        f"{dataset.output_types!r}.")
    if not structure.is_compatible(dataset._specs, specs):
        raise TypeError(f"Expected output shapes compatible with {structure.shapes(specs)!r} but got dataset "
                        f"with output shapes {dataset.output_shapes!r}.")
    with resource.graph.colocate_with(resource):
        return _create("MakeIterator", [dataset._variant_tensor, resource], {}, name)


def make_initializable_iterator(dataset, shared_name=None):
    # The iterator is placed with the dataset, as TF does: a run that only fetches
    # get_next (without the dataset ops) still finds the iterator on that device.
    with dataset._graph.colocate_with(dataset._variant_tensor):
        specs = structure.from_types_and_shapes(dataset.output_types, dataset.output_shapes,
                                                dataset.output_classes)
        resource = _iterator_v2(specs, shared_name)
        initializer = _make_iterator(resource, specs, dataset, "MakeIterator")
        return Iterator(resource, initializer, specs)


def make_one_shot_iterator(dataset):
    """An iterator that makes `dataset` on its first run (TF copies the ops that
    build the dataset into a function, its `dataset_factory`). The dataset may not
    depend on placeholders or variables: their values would be fixed at that time."""
    outer = dataset._graph
    factory = FuncGraph(unique_function_name("make_dataset"), outer)
    graph_def = GraphDef([op.node_def for op in _ancestors(dataset._variant_tensor.op)])
    with factory.as_default():
        variant, = import_graph_def(graph_def, return_elements=[dataset._variant_tensor.name], name="")
    fdef = factory.to_function_def([variant])
    with outer.colocate_with(dataset._variant_tensor):
        op = _create("OneShotIterator", [], {"dataset_factory": fdef, "container": "", "shared_name": "",
                                             "output_types": structure.flat_types(dataset._specs),
                                             "output_shapes": structure.flat_shapes(dataset._specs)},
                     "OneShotIterator")
    return Iterator(op.outputs[0], None, dataset._specs)


_NOT_BY_VALUE = ("Placeholder", "PlaceholderWithDefault", "VariableV2")


def _ancestors(op):
    """`op` and every op it depends on, in graph order; ValueError at a placeholder or variable."""
    seen, stack = {op}, [op]
    while stack:
        current = stack.pop()
        if current.type in _NOT_BY_VALUE:
            kind = "a placeholder" if "Placeholder" in current.type else "a stateful node"
            raise ValueError(f"Cannot capture {kind} (name:{current.name}, type:{current.type}) by value.")
        for dep in [t.op for t in current.inputs] + list(current.control_inputs):
            if isinstance(dep, Operation) and dep not in seen:
                seen.add(dep)
                stack.append(dep)
    return sorted(seen, key=lambda o: o._id)
