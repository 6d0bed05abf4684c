"""More of `tf.data.experimental` (TF1's names): ignore_errors, take_while, unique,
enumerate_dataset, cardinality and assert_cardinality, dense_to_sparse_batch.
The transformations are for `Dataset.apply`; each adds TF's op."""
from ..framework import dtypes
from ..framework.op_builder import convert_to_tensor
from ..framework.tensor_shape import TensorShape, as_shape
from . import structure
from .dataset_ops import Dataset, _create, _int64
from .structure import Spec, SparseSpec

INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2


def ignore_errors(log_warning=False):
    """Drops the elements whose making raised an error (a failing map call, a malformed CSV
    record) and goes on with the next, as TF does; `log_warning` logs each error dropped."""
    def apply(dataset):
        return dataset._unary("IgnoreErrorsDataset", [], None, log_warning=bool(log_warning))
    return apply


def take_while(predicate):
    """The elements while `predicate(element)` (a scalar tf.bool) holds: the first that fails it
    ends the dataset."""
    def apply(dataset):
        fn = dataset._function(predicate, "take_while()")
        out = fn.output_specs
        if not isinstance(out, Spec) or out.dtype != dtypes.bool or out.shape.ndims not in (0, None):
            raise ValueError(f"Invalid `predicate`. `predicate` must return a `tf.bool` scalar tensor but its "
                             f"return type is{_tf_repr(out)}.")
        return dataset._unary("TakeWhileDataset", fn.captured, None, predicate=fn.fdef, Targuments=fn.captured_types)
    return apply


def unique():
    """Each element the first time it appears; elements must be tf.int32, tf.int64 or tf.string
    (one component: the op checks it when the dataset is made)."""
    def apply(dataset):
        for ty in structure.flatten(dataset.output_types):
            if ty not in (dtypes.int32, dtypes.int64, dtypes.string):
                raise TypeError(f"`tf.data.Dataset.unique` does not support type <dtype: '{ty.name}'> -- only "
                                f"`tf.int32`, `tf.int64`, and `tf.string` are supported.")
        return dataset._unary("UniqueDataset", [], None)
    return apply


def enumerate_dataset(start=0):
    """(index, element) pairs, the index an int64 counting from `start`."""
    return lambda dataset: dataset.enumerate(start)


def cardinality(dataset):
    """An int64 scalar tensor: the number of elements of `dataset`, INFINITE_CARDINALITY (-1) or
    UNKNOWN_CARDINALITY (-2) where TF cannot tell (after a filter or a TF1 map, for one)."""
    if not isinstance(dataset, Dataset):
        raise TypeError(f"Invalid `dataset`. Expected a `tf.data.Dataset` object but got {type(dataset).__name__}.")
    return _create("DatasetCardinality", [dataset._variant_tensor], {}, None).outputs[0]


def assert_cardinality(expected_cardinality):
    """The elements, with the check that there are `expected_cardinality` of them: running past
    that many, or ending short of it, fails with FailedPreconditionError; `cardinality()` of the
    result is `expected_cardinality`."""
    def apply(dataset):
        with dataset._graph.as_default():
            expected = _int64(expected_cardinality, "expected_cardinality")
        return dataset._unary("AssertCardinalityDataset", [expected], None)
    return apply


def dense_to_sparse_batch(batch_size, row_shape):
    """Batches of `batch_size` elements of varying shape as SparseTensors of dense shape
    [batch, *row_shape] (a None dimension: the batch's largest). Elements must have one
    component, of rank len(row_shape) and no larger than row_shape."""
    def apply(dataset):
        out_type = dataset.output_types
        if not isinstance(out_type, dtypes.DType):
            raise TypeError(f"`dense_to_sparse_batch` requires an input dataset whose elements have a single "
                            f"component, but the given dataset has the following component types: "
                            f"{_types_repr(out_type)}.")
        shape = TensorShape([None]).concatenate(as_shape(row_shape))
        specs = SparseSpec(out_type, shape)
        g = dataset._graph
        with g.as_default(), g.name_scope("DenseToSparseBatchDataset") as scope:
            size = _int64(batch_size, "batch_size")
            dims = [-1 if d is None else d for d in as_shape(row_shape).as_list()]
            row = convert_to_tensor(dims, dtype=dtypes.int64)
            op = g.create_op("DenseToSparseBatchDataset", [dataset._variant_tensor, size, row],
                             dataset._struct_attrs(specs), name=scope)  # the op takes the scope's name, as TF's
        return Dataset(op.outputs[0], specs)
    return apply


def _tf_repr(specs):
    """TF's repr of a TensorSpec structure (its messages show it)."""
    return repr(structure.map_structure(lambda s: _TFSpec(s), specs)) if structure.is_structure(specs) \
        else repr(_TFSpec(specs))


class _TFSpec:
    def __init__(self, spec):
        self.spec = spec

    def __repr__(self):
        dims = self.spec.shape.as_list() if self.spec.shape.ndims is not None else None
        shape = "<unknown>" if dims is None else "(" + ", ".join(str(d) for d in dims) + ("," if len(dims) == 1
                                                                                          else "") + ")"
        return f"TensorSpec(shape={shape}, dtype=tf.{self.spec.dtype.name}, name=None)"


def _types_repr(types):
    return "(" + ", ".join(f"tf.{t.name}" for t in structure.flatten(types)) + ")" if isinstance(types, tuple) \
        else repr(types)
