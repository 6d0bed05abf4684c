"""Declarations of the tf.data ops behind ignore_errors, take_while, unique,
cardinality, assert_cardinality, dense_to_sparse_batch and CsvDataset, with
TF's names, inputs and attrs (so a graph of them reads as TF's), and
DeserializeSparse with a variant input: how a SparseTensor element leaves an
iterator or enters a dataset function (TF's SparseTensorSpec decoding)."""
from ..framework import dtypes
from ..framework.registry import REQUIRED, not_differentiable, register_op
from ..framework.tensor_shape import TensorShape
from ..ops import shape_fns
from .ops import _dataset_op, _struct

_STRUCT = {"output_types": REQUIRED, "output_shapes": REQUIRED}

_dataset_op("IgnoreErrorsDataset", ["input_dataset: variant"], dict(_STRUCT, log_warning=False))
_dataset_op("TakeWhileDataset", ["input_dataset: variant", "other_arguments: Targuments"],
            _struct(predicate=REQUIRED, Targuments=[]))
_dataset_op("UniqueDataset", ["input_dataset: variant"])
_dataset_op("AssertCardinalityDataset", ["input_dataset: variant", "cardinality: int64"], dict(_STRUCT))
_dataset_op("DenseToSparseBatchDataset", ["input_dataset: variant", "batch_size: int64", "row_shape: int64"],
            dict(_STRUCT))
# TF's CSVDatasetV2 is stateful (it reads files); its output_types are the defaults' types.
_dataset_op("CSVDatasetV2", ["filenames: string", "compression_type: string", "buffer_size: int64", "header: bool",
                             "field_delim: string", "use_quote_delim: bool", "na_value: string",
                             "select_cols: int64", "record_defaults: output_types", "exclude_cols: int64"],
            dict(_STRUCT), stateful=True)

register_op("DatasetCardinality", ["input_dataset: variant"], ["cardinality: int64"],
            attrs={"cardinality_options": ""}, shape_fn=shape_fns.scalar)


def _deserialize_shapes(ctx):
    return [TensorShape([None, None]), TensorShape([None]), TensorShape([None])]


register_op("DeserializeSparse", ["serialized_sparse: Tserialized"],
            ["sparse_indices: int64", "sparse_values: dtype", "sparse_shape: int64"],
            attrs={"dtype": REQUIRED, "Tserialized": dtypes.string}, shape_fn=_deserialize_shapes)

for _name in ("IgnoreErrorsDataset", "TakeWhileDataset", "UniqueDataset", "AssertCardinalityDataset",
              "DenseToSparseBatchDataset", "CSVDatasetV2", "DatasetCardinality", "DeserializeSparse"):
    not_differentiable(_name)
