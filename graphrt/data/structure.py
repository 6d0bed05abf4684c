"""The element structure of a dataset: nested tuples, namedtuples and dicts
of components, each with a dtype and a static shape.

tf.data's nesting rules differ from `tf.nest`'s in one place: a *list* is
one component (converted to a tensor), never a structure; tuples and dicts
are structures. Dicts flatten in sorted key order.
"""
from ..framework import dtypes as dtypes_lib
from ..framework.graph import Tensor
from ..framework.tensor_shape import TensorShape, as_shape
from ..ops import nest


class Spec:
    """One component: its dtype and static shape (TF's TensorSpec)."""

    __slots__ = ("dtype", "shape")

    def __init__(self, dtype, shape):
        self.dtype = dtypes_lib.as_dtype(dtype).base_dtype
        self.shape = as_shape(shape)

    def __eq__(self, other):
        return isinstance(other, Spec) and self.dtype == other.dtype and _key(self.shape) == _key(other.shape)

    def __hash__(self):
        return hash((self.dtype.name, _key(self.shape)))

    def __repr__(self):
        return f"TensorSpec(shape={self.shape}, dtype=tf.{self.dtype.name})"


class DatasetSpec(Spec):
    """A component that is itself a dataset (a window of `Dataset.window`, a group of
    `group_by_window`): a scalar `variant` whose elements have `element_specs`."""

    __slots__ = ("element_specs",)

    def __init__(self, element_specs):
        super().__init__(dtypes_lib.variant, [])
        self.element_specs = element_specs

    def __eq__(self, other):
        return isinstance(other, DatasetSpec) and flatten(self.element_specs) == flatten(other.element_specs)

    def __hash__(self):
        return hash(tuple(flatten(self.element_specs)))

    def __repr__(self):
        return f"DatasetSpec({self.element_specs!r}, TensorShape([]))"


def _key(shape):
    return None if shape.ndims is None else tuple(shape.as_list())


def is_structure(value):
    return isinstance(value, (tuple, dict))


class HasElementSpec:
    """TF1's element properties, for datasets and iterators (both hold `_specs`)."""

    @property
    def output_types(self):
        return types(self._specs)

    @property
    def output_shapes(self):
        return shapes(self._specs)

    @property
    def output_classes(self):
        return classes(self._specs)

    @property
    def element_spec(self):
        return self._specs


def flatten(structure):
    return nest.flatten(structure, is_structure)


def pack_as(structure, flat):
    return nest.pack_sequence_as(structure, flat, is_structure)


def map_structure(fn, *structures):
    flats = [flatten(s) for s in structures]
    for s, f in zip(structures[1:], flats[1:]):
        assert_same_structure(structures[0], s)
    return pack_as(structures[0], [fn(*xs) for xs in zip(*flats)])


def assert_same_structure(a, b):
    if is_structure(a) != is_structure(b):
        raise ValueError(f"The two structures don't have the same nested structure: {a!r} vs {b!r}")
    if not is_structure(a):
        return
    if isinstance(a, dict) != isinstance(b, dict):
        raise TypeError(f"The two structures don't have the same sequence type: {type(a).__name__} vs "
                        f"{type(b).__name__}")
    if isinstance(a, dict) and sorted(a) != sorted(b):
        raise ValueError(f"The two dictionaries don't have the same set of keys: {sorted(a)} vs {sorted(b)}")
    ca, cb = nest.children(a), nest.children(b)
    if len(ca) != len(cb):
        raise ValueError(f"The two structures don't have the same number of elements: {len(ca)} vs {len(cb)}")
    for x, y in zip(ca, cb):
        assert_same_structure(x, y)


def specs_of(tensors):
    """The Spec structure of a structure of tensors."""
    return map_structure(lambda t: Spec(t.dtype, t.shape), tensors)


def types(specs):
    return map_structure(lambda s: s.dtype, specs)


def shapes(specs):
    return map_structure(lambda s: s.shape, specs)


def classes(specs):
    return map_structure(lambda s: Tensor, specs)


def flat_types(specs):
    return [s.dtype for s in flatten(specs)]


def flat_shapes(specs):
    return [s.shape for s in flatten(specs)]


def from_types_and_shapes(output_types, output_shapes=None):
    """The Spec structure of (types, shapes) structures; shapes default to unknown."""
    if output_shapes is None:
        output_shapes = map_structure(lambda _: TensorShape(None), output_types)
    else:
        output_shapes = _shapes_like(output_types, output_shapes)
    return map_structure(lambda t, s: Spec(t, s), output_types, output_shapes)


def _shapes_like(types_structure, shapes_structure):
    """`shapes_structure` with each shape as a TensorShape (a shape written as a list
    or tuple of dims is one shape, not a structure)."""
    if not is_structure(types_structure):
        return as_shape(shapes_structure)
    if isinstance(types_structure, dict):
        if not isinstance(shapes_structure, dict) or sorted(shapes_structure) != sorted(types_structure):
            raise ValueError(f"output_shapes {shapes_structure!r} do not match the structure of output_types "
                             f"{types_structure!r}")
        return type(types_structure)((k, _shapes_like(types_structure[k], shapes_structure[k]))
                                     for k in types_structure)
    if not isinstance(shapes_structure, (tuple, list)) or len(shapes_structure) != len(types_structure):
        raise ValueError(f"output_shapes {shapes_structure!r} do not match the structure of output_types "
                         f"{types_structure!r}")
    packed = [_shapes_like(t, s) for t, s in zip(types_structure, shapes_structure)]
    return type(types_structure)(*packed) if hasattr(types_structure, "_fields") else tuple(packed)


def is_compatible(a, b):
    """True if Spec structures `a` and `b` have the same structure and types and compatible shapes."""
    try:
        assert_same_structure(a, b)
    except (ValueError, TypeError):
        return False
    return all(x.dtype == y.dtype and x.shape.is_compatible_with(y.shape) for x, y in zip(flatten(a), flatten(b)))


def most_specific_compatible(a, b):
    """The Spec structure both `a` and `b` conform to (shapes relaxed where they differ)."""
    def relax(x, y):
        if isinstance(x, DatasetSpec) and isinstance(y, DatasetSpec):
            return DatasetSpec(most_specific_compatible(x.element_specs, y.element_specs))
        if x.dtype != y.dtype:
            raise TypeError(f"Incompatible dtypes {x.dtype.name} and {y.dtype.name}")
        return Spec(x.dtype, _common_shape(x.shape, y.shape))
    return map_structure(relax, a, b)


def _common_shape(a, b):
    if a.ndims is None or b.ndims is None or a.ndims != b.ndims:
        return TensorShape(None)
    return TensorShape([x if x == y else None for x, y in zip(a.as_list(), b.as_list())])


def as_datasets(specs, values):
    """`values` (a structure like `specs`) with each DatasetSpec component's variant tensor
    wrapped as a Dataset, so a function or a get_next hands the user datasets, as TF does."""
    from .dataset_ops import Dataset  # (dataset_ops builds on this module)
    return map_structure(lambda s, v: Dataset(v, s.element_specs) if isinstance(s, DatasetSpec) else v,
                         specs, values)
