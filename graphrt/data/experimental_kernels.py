"""CPU kernels of the ops in experimental_ops.py (host_only, as the other tf.data kernels)."""
import numpy as np

from .. import errors
from ..framework.registry import register_kernel
from . import csv_dataset, resumable_datasets
from .kernels import _dataset_kernel, _lazy_function

_dataset_kernel("IgnoreErrorsDataset", lambda ctx: lambda ds: resumable_datasets.IgnoreErrorsDataset(
    ctx.name, ds, ctx.attr("log_warning")))
_dataset_kernel("UniqueDataset", lambda ctx: lambda ds: resumable_datasets.UniqueDataset(
    ctx.name, ds, ctx.attr("output_types")))
_dataset_kernel("AssertCardinalityDataset", lambda ctx: lambda ds, n: resumable_datasets.AssertCardinalityDataset(
    ctx.name, ds, int(n)))
_dataset_kernel("DenseToSparseBatchDataset", lambda ctx: lambda ds, size, row_shape:
                resumable_datasets.DenseToSparseBatchDataset(ctx.name, ds, int(size), row_shape))


@register_kernel("TakeWhileDataset", ("CPU",), inexpensive=True, host_only=True)
def _take_while(ctx):
    fn = _lazy_function(ctx, "predicate")
    return lambda ds, *captured: resumable_datasets.TakeWhileDataset(ctx.name, ds, fn, captured)


@register_kernel("CSVDatasetV2", ("CPU",), inexpensive=True, host_only=True)
def _csv(ctx):
    types = ctx.attr("output_types")

    def make(filenames, compression, _buffer_size, header, delim, use_quote_delim, na_value, select_cols, *rest):
        defaults, exclude_cols = rest[:-1], rest[-1]
        return csv_dataset.CsvDataset(ctx.name, filenames, compression, header, delim, use_quote_delim, na_value,
                                      select_cols, defaults, exclude_cols, types)
    return make


@register_kernel("DatasetCardinality", ("CPU",), inexpensive=True, host_only=True)
def _cardinality(ctx):
    return lambda ds: np.array(resumable_datasets.cardinality(ds), np.int64)


@register_kernel("DeserializeSparse", ("CPU",), inexpensive=True, host_only=True)
def _deserialize_sparse(ctx):
    node, dtype = ctx.name, ctx.attr("dtype")

    def run(value):
        value = value.item() if isinstance(value, np.ndarray) and value.dtype == object and value.ndim == 0 \
            else value
        if not isinstance(value, resumable_datasets.SparseValue):
            raise errors.UnimplementedError(f"DeserializeSparse: graphrt decodes only the SparseTensor elements of "
                                            f"datasets, got {type(value).__name__}", node=node)
        if value.values.dtype != np.dtype(dtype.np):
            raise errors.InvalidArgumentError(f"Requested SparseTensor of type {dtype.name} but SparseTensor has "
                                              f"type {value.values.dtype}", node=node)
        return value.indices, value.values, value.dense_shape
    return run
