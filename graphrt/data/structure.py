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
        return type(other) is type(self) and self.dtype == other.dtype and _key(self.shape) == _key(other.shape)

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


class SparseSpec(Spec):
    """A SparseTensor component (TF's SparseTensorSpec): `shape` is its dense shape, `dtype` its
    values'. Dataset ops carry it as one variant (`flat_types`), as TF carries its serialized
    tensors; iterators and dataset functions hand the user a SparseTensor (`as_datasets`)."""

    __slots__ = ()

    def __repr__(self):
        return f"SparseTensorSpec({self.shape!r}, tf.{self.dtype.name})"


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
    from ..sparse.sparse_tensor import SparseTensor  # (sparse/ is above framework, below nothing of data/)
    return map_structure(lambda s: SparseTensor if isinstance(s, SparseSpec) else Tensor, specs)


def flat_types(specs):
    """The dtypes of the flat components as the dataset ops carry them (a SparseSpec: a variant)."""
    return [dtypes_lib.variant if isinstance(s, SparseSpec) else s.dtype for s in flatten(specs)]


def flat_shapes(specs):
    return [TensorShape(None) if isinstance(s, SparseSpec) else s.shape for s in flatten(specs)]


def from_types_and_shapes(output_types, output_shapes=None, output_classes=None):
    """The Spec structure of (types, shapes, classes) structures; shapes default to unknown, classes
    to Tensor (a SparseTensor class makes a SparseSpec)."""
    if output_shapes is None:
        output_shapes = map_structure(lambda _: TensorShape(None), output_types)
    else:
        output_shapes = _shapes_like(output_types, output_shapes)
    if output_classes is None:
        return map_structure(lambda t, s: Spec(t, s), output_types, output_shapes)
    return map_structure(lambda t, s, c: SparseSpec(t, s) if getattr(c, "__name__", "") == "SparseTensor"
                         else Spec(t, s), output_types, output_shapes, output_classes)


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
        if x.dtype != y.dtype or isinstance(x, SparseSpec) != isinstance(y, SparseSpec):
            raise TypeError(f"Incompatible types {x!r} and {y!r}")
        return type(x)(x.dtype, _common_shape(x.shape, y.shape))
    return map_structure(relax, a, b)


def _common_shape(a, b):
    if a.ndims is None or b.ndims is None or a.ndims != b.ndims:
        return TensorShape(None)
    return TensorShape([x if x == y else None for x, y in zip(a.as_list(), b.as_list())])


def as_datasets(specs, values):
    """`values` (a structure like `specs`) with each DatasetSpec component's variant tensor
    wrapped as a Dataset, and each SparseSpec component's decoded as a SparseTensor, so a
    function or a get_next hands the user datasets and sparse tensors, as TF does."""
    from .dataset_ops import Dataset  # (dataset_ops builds on this module)

    def wrap(spec, value):
        if isinstance(spec, DatasetSpec):
            return Dataset(value, spec.element_specs)
        if isinstance(spec, SparseSpec):
            return _sparse_tensor(spec, value)
        return value
    return map_structure(wrap, specs, values)


def _sparse_tensor(spec, variant):
    """The SparseTensor a sparse component's variant holds (TF's DeserializeSparse), with the
    static shapes of `spec`."""
    from ..sparse.sparse_tensor import SparseTensor
    g = variant.graph
    with g.as_default():
        op = g.create_op("DeserializeSparse", [variant], {"dtype": spec.dtype, "Tserialized": dtypes_lib.variant},
                         name="DeserializeSparse")
        indices, values, dense_shape = op.outputs
        rank = spec.shape.ndims
        indices.set_shape([None, rank])
        dims = spec.shape.as_list() if rank is not None else []
        if rank is not None and any(d is not None for d in dims):  # TF writes in the known dimensions
            from ..ops import array_ops
            from ..framework.op_builder import convert_to_tensor
            if spec.shape.is_fully_defined():
                dense_shape = convert_to_tensor(dims, dtype=dtypes_lib.int64)
            else:
                pieces = array_ops.unstack(dense_shape, num=rank)
                dense_shape = array_ops.stack([p if d is None else convert_to_tensor(d, dtype=dtypes_lib.int64)
                                               for p, d in zip(pieces, dims)])
        elif rank is not None:
            dense_shape.set_shape([rank])
        sparse = SparseTensor(indices, values, dense_shape)
        sparse.set_shape(spec.shape)
    return sparse
