"""`tf.data.experimental`: the names TF1 programs use from it. The fused
transformations give the same elements as the plain ones they fuse."""
import numpy as np

from ..framework import dtypes
from ..framework.graph import Tensor
from ..framework.op_builder import convert_to_tensor
from ..framework.tensor_shape import TensorShape
from ..framework.graph import get_default_graph
from ..ops import array_ops, extra_ops, math_ops
from ..ops.random_ops import get_seed
from . import structure
from .dataset_ops import AUTOTUNE, Dataset, _create, _seed_tensors  # noqa: F401 - AUTOTUNE is exported
from .structure import Spec
from .structured_function import StructuredFunction
from .csv_readers import CsvDataset, make_csv_dataset  # noqa: F401 - exported
from .experimental_transforms import (INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, assert_cardinality,  # noqa: F401
                                cardinality, dense_to_sparse_batch, enumerate_dataset, ignore_errors, take_while,
                                unique)


def shuffle_and_repeat(buffer_size, count=None, seed=None):
    """For `Dataset.apply`: shuffle(buffer_size, seed) then repeat(count)."""
    return lambda dataset: dataset.shuffle(buffer_size, seed).repeat(count)


def map_and_batch(map_func, batch_size, num_parallel_batches=None, drop_remainder=False,
                  num_parallel_calls=None):
    """For `Dataset.apply`: map(map_func) then batch(batch_size, drop_remainder)."""
    return lambda dataset: dataset.map(map_func).batch(batch_size, drop_remainder)


def unbatch():
    """For `Dataset.apply`: Dataset.unbatch()."""
    return lambda dataset: dataset.unbatch()


def scan(initial_state, scan_func):
    """For `Dataset.apply`: Dataset.scan(initial_state, scan_func)."""
    return lambda dataset: dataset.scan(initial_state, scan_func)


def parallel_interleave(map_func, cycle_length, block_length=1, sloppy=False, buffer_output_elements=None,
                        prefetch_input_elements=None):
    """For `Dataset.apply`: the elements `interleave` gives. graphrt makes them on one thread, in
    the deterministic order (what TF gives when `sloppy` is False; `sloppy` only allows TF another
    order), and the buffering arguments are accepted."""
    return lambda dataset: dataset.interleave(map_func, cycle_length, block_length)


def get_single_element(dataset):
    """The one element of `dataset`, as tensors; running it fails with InvalidArgumentError
    when the dataset is empty or has more than one element."""
    if not isinstance(dataset, Dataset):
        raise TypeError(f"Invalid `dataset`. Expected a `tf.data.Dataset` object but got {type(dataset).__name__}.")
    specs = dataset._specs
    op = _create("DatasetToSingleElement", [dataset._variant_tensor], dataset._struct_attrs(), None)
    return structure.pack_as(specs, op.outputs)


def Counter(start=0, step=1, dtype=dtypes.int64):  # noqa: N802 - TF's name
    """start, start + step, ... without end (TF builds it as a scan over a repeated zero)."""
    dtype = dtypes.as_dtype(dtype)
    start = convert_to_tensor(start, dtype=dtype, name="start")
    step = convert_to_tensor(step, dtype=dtype, name="step")
    zeros = Dataset.from_tensors(np.int64(0)).repeat(None)
    return zeros.scan(start, lambda state, _: (state + step, state))


def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=False):
    """Element `k` of the next input chosen by each `k` of `choice_dataset` (scalar int64s). An
    exhausted input is skipped (or, with `stop_on_empty_dataset`, ends the whole)."""
    if not datasets:
        raise ValueError("Invalid `datasets`. `datasets` should not be empty.")
    if not isinstance(choice_dataset, Dataset) or choice_dataset._specs != Spec(dtypes.int64, []):
        specs = choice_dataset._specs if isinstance(choice_dataset, Dataset) else choice_dataset
        raise TypeError(f"Invalid `choice_dataset`. Elements of `choice_dataset` must be scalar `tf.int64` "
                        f"tensors but are {specs!r}.")
    return _directed_interleave(choice_dataset, datasets, stop_on_empty_dataset)


def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False):
    """Elements of `datasets` taken at random, input `k` with probability `weights[k]` (uniform
    without weights; weights are normalized). An exhausted input is skipped. The draws come from
    a seeded RandomDataset, so the order is repeatable but differs from TensorFlow's."""
    if not datasets:
        raise ValueError("Invalid `datasets`. `datasets` should not be empty.")
    if isinstance(weights, Dataset):
        raise NotImplementedError("sample_from_datasets: graphrt takes `weights` as a list or tensor, not as a "
                                  "dataset of weights")
    n = len(datasets)
    g = datasets[0]._graph
    with g.as_default(), g.name_scope("sample_from_datasets"):
        w = np.full(n, 1.0 / n) if weights is None else weights
        w = math_ops.cast(convert_to_tensor(w) if not isinstance(w, Tensor) else w, dtypes.float64)
        if w.shape.ndims is not None and w.shape.as_list() != [n]:
            raise ValueError(f"Invalid `weights`. The shape of `weights` should be compatible with `[len(datasets)]` "
                             f"but is {w.shape}.")
        # the first n - 1 cumulative fractions: an index is how many of them a uniform draw passes
        bounds = (math_ops.cumsum(w) / math_ops.reduce_sum(w))[:-1]
        seed, seed2 = get_seed(seed)
        randoms = Dataset(_create("RandomDataset", _seed_tensors(seed, seed2),
                                  {"output_types": [dtypes.int64], "output_shapes": [TensorShape([])]}, None).outputs[0],
                          Spec(dtypes.int64, []))

    def choose(value):
        u = math_ops.cast(value % (1 << 53), dtypes.float64) / float(1 << 53)
        return math_ops.reduce_sum(math_ops.cast(math_ops.greater_equal(u, bounds), dtypes.int64))
    return _directed_interleave(randoms.map(choose), datasets, stop_on_empty_dataset)


def group_by_window(key_func, reduce_func, window_size=None, window_size_func=None):
    """For `Dataset.apply`: elements grouped by `key_func` (a scalar int64 per element); each
    group of `window_size` (or `window_size_func(key)`) elements becomes the elements of
    `reduce_func(key, group_dataset)`. Groups left at the end are reduced in key order."""
    if (window_size is None) == (window_size_func is None):
        raise ValueError("Either the `window_size` argument or the `window_size_func` argument must be "
                         "specified.")
    if window_size is not None:
        size = window_size
        window_size_func = lambda _: convert_to_tensor(size, dtype=dtypes.int64)  # noqa: E731

    def apply(dataset):
        g = dataset._graph
        scalar = Spec(dtypes.int64, [])
        key_fn = StructuredFunction(key_func, dataset._specs, "group_by_window() key_func", g)
        size_fn = StructuredFunction(window_size_func, scalar, "group_by_window() window_size_func", g)
        for fn, what in ((key_fn, "key_func"), (size_fn, "window_size_func")):
            if fn.output_specs != scalar:
                raise ValueError(f"`{what}` must return a single tf.int64 scalar tensor, got {fn.output_specs!r}.")
        reduce_fn = StructuredFunction(reduce_func, (scalar, structure.DatasetSpec(dataset._specs)),
                                       "group_by_window() reduce_func", g, want_dataset=True)
        captured = key_fn.captured + reduce_fn.captured + size_fn.captured
        attrs = {"key_func": key_fn.fdef, "reduce_func": reduce_fn.fdef, "window_size_func": size_fn.fdef,
                 "Tkey_func_other_arguments": key_fn.captured_types,
                 "Treduce_func_other_arguments": reduce_fn.captured_types,
                 "Twindow_size_func_other_arguments": size_fn.captured_types}
        return dataset._unary("GroupByWindowDataset", captured, None, reduce_fn.output_specs, **attrs)
    return apply


def bucket_by_sequence_length(element_length_func, bucket_boundaries, bucket_batch_sizes, padded_shapes=None,
                              padding_values=None, pad_to_bucket_boundary=False, no_padding=False,
                              drop_remainder=False):
    """For `Dataset.apply`: elements bucketed by `element_length_func(element)` against
    `bucket_boundaries` (bucket i holds lengths in [boundary i-1, boundary i)), each bucket
    padded-batched by its size in `bucket_batch_sizes` (as TF builds it on group_by_window)."""
    if len(bucket_batch_sizes) != len(bucket_boundaries) + 1:
        raise ValueError(f"len(bucket_batch_sizes) must equal len(bucket_boundaries) + 1 but "
                         f"len(bucket_batch_sizes)={len(bucket_batch_sizes)} and "
                         f"len(bucket_boundaries)={len(bucket_boundaries)}")
    batch_sizes = convert_to_tensor(np.asarray(bucket_batch_sizes, np.int64), name="batch_sizes")
    lows = [int(np.iinfo(np.int32).min)] + [int(b) for b in bucket_boundaries]
    highs = [int(b) for b in bucket_boundaries] + [int(np.iinfo(np.int32).max)]

    def bucket_of(*element):
        length = element_length_func(*element)
        inside = math_ops.logical_and(math_ops.less_equal(lows, length), math_ops.less(length, highs))
        return math_ops.reduce_min(math_ops.where(inside))

    def batch_size_of(bucket):
        return array_ops.gather(batch_sizes, bucket)

    def batch(bucket, group):
        size = batch_size_of(bucket)
        if no_padding:
            return group.batch(size, drop_remainder=drop_remainder)
        filler = None
        if pad_to_bucket_boundary:
            check = extra_ops.assert_less(bucket, convert_to_tensor(len(bucket_batch_sizes) - 1, dtypes.int64),
                                          message="When pad_to_bucket_boundary=True, elements must have length "
                                                  "< max(bucket_boundaries).")
            with get_default_graph().control_dependencies([check]):
                boundaries = convert_to_tensor(np.asarray(bucket_boundaries, np.int64))
                filler = array_ops.gather(boundaries, bucket) - 1
        shapes = structure.map_structure(
            lambda s: [filler if d is None else d for d in s.as_list()],
            structure._shapes_like(group._specs, padded_shapes) if padded_shapes is not None
            else structure.shapes(group._specs))
        return group.padded_batch(size, shapes, padding_values, drop_remainder=drop_remainder)

    return group_by_window(bucket_of, batch, window_size_func=batch_size_of)


def _directed_interleave(selector, datasets, stop_on_empty):
    first = datasets[0]._specs
    for d in datasets[1:]:
        try:
            structure.assert_same_structure(first, d._specs)
            compatible = all(a.dtype == b.dtype for a, b in zip(structure.flatten(first), structure.flatten(d._specs)))
        except (TypeError, ValueError):
            compatible = False
        if not compatible:
            listing = "\n".join(f"Dataset {i} element_spec={x._specs!r}." for i, x in enumerate(datasets))
            raise TypeError(f"Invalid `datasets`. `datasets` must have compatible element specs.\n {listing}")
    specs = first
    for d in datasets[1:]:
        specs = structure.most_specific_compatible(specs, d._specs)
    attrs = {"N": len(datasets), "stop_on_empty_dataset": bool(stop_on_empty),
             "output_types": structure.flat_types(specs), "output_shapes": structure.flat_shapes(specs)}
    op = _create("DirectedInterleaveDataset", [selector._variant_tensor] + [d._variant_tensor for d in datasets],
                 attrs, None)
    return Dataset(op.outputs[0], specs)


__all__ = ["AUTOTUNE", "Counter", "CsvDataset", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "assert_cardinality",
           "bucket_by_sequence_length", "cardinality", "choose_from_datasets", "dense_to_sparse_batch",
           "enumerate_dataset", "get_single_element", "group_by_window", "ignore_errors", "make_csv_dataset",
           "map_and_batch", "parallel_interleave", "sample_from_datasets", "scan", "shuffle_and_repeat",
           "take_while", "unbatch", "unique"]
