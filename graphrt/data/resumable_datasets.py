"""Run-time datasets behind ignore_errors, take_while, unique, assert_cardinality
and dense_to_sparse_batch, and the run-time sides of `cardinality` and of
resuming after an element's error.

Resuming: in TF an iterator that returned an error can be asked again and goes
on with the next element (a failing map call loses only its element); that is
what IgnoreErrorsDataset relies on. A Python generator ends when it raises, so
`marked(dataset)` iterates a dataset with each error it survives yielded as a
`Failed` item in the element's place: datasets known here (map, filter, batch,
take, zip, ..., CsvDataset) pass such items on as TF's iterators do; any other
dataset's first error ends its elements there.
"""
import numpy as np

from .. import errors, logging
from . import datasets, experimental_datasets
from .datasets import DatasetBase

INFINITE = -1
UNKNOWN = -2


class Failed:
    """An element's error that the iteration survives (see `marked`)."""

    __slots__ = ("error",)

    def __init__(self, error):
        self.error = error


def _survivable(error):
    """TF ends a sequence on OutOfRange and stops on Cancelled; other errors may be skipped."""
    return isinstance(error, errors.OpError) and not isinstance(error, (errors.OutOfRangeError,
                                                                       errors.CancelledError))


def marked(dataset):
    """The elements of `dataset`, each error it survives a `Failed` item in its place."""
    rule = getattr(dataset, "marked", None) or (lambda: _MARKED.get(type(dataset), _once)(dataset))
    return rule()


def _once(dataset):
    """A dataset that cannot resume: its first error is its last item."""
    try:
        yield from dataset.iterate()
    except errors.OpError as e:
        if not _survivable(e):
            raise
        yield Failed(e)


def _guard(fn, args):
    """fn(args), or Failed(error) for an error that may be skipped."""
    try:
        return fn(args)
    except errors.OpError as e:
        if not _survivable(e):
            raise
        return Failed(e)


def _marked_map(ds):
    for item in marked(ds.input):
        yield item if isinstance(item, Failed) else _guard(ds.fn, item + ds.captured)


def _marked_filter(ds):
    for item in marked(ds.input):
        if isinstance(item, Failed):
            yield item
            continue
        keep = _guard(ds.predicate, item + ds.captured)
        if isinstance(keep, Failed):
            yield keep
        elif np.asarray(keep[0]):
            yield item


def _marked_scan(ds):
    state, n = ds.initial_state, len(ds.initial_state)
    for item in marked(ds.input):
        out = item if isinstance(item, Failed) else _guard(ds.fn, state + list(item) + ds.captured)
        if isinstance(out, Failed):
            yield out  # the state stays as it was, as TF's scan leaves it
            continue
        out = list(out)
        state = out[:n]
        yield out[n:]


def _marked_batch(ds, make):
    """Batches of the input's elements; an error drops the batch begun so far (TF's batch).
    After a map, TF fuses the two (map_and_batch_fusion): an error there drops the whole batch
    it falls in, the rest of that batch's elements read and made all the same."""
    fused = type(ds) is datasets.BatchDataset and isinstance(ds.input, datasets.MapDataset)
    items = marked(ds.input)
    ended = False
    while not ended:
        batch, failure, taken = [], None, 0
        while taken < ds.batch_size:
            item = next(items, None)
            if item is None:
                ended = True
                break
            taken += 1
            if isinstance(item, Failed):
                failure = failure or item
                if not fused:
                    break
            else:
                batch.append(item)
        if failure is not None:
            yield failure
        elif batch and (len(batch) == ds.batch_size or not ds.drop_remainder):
            yield make(batch)


def _marked_take(ds):
    if ds.count == 0:
        return
    taken = 0
    for item in marked(ds.input):
        yield item
        if not isinstance(item, Failed):  # TF counts only elements
            taken += 1
            if taken == ds.count:
                return


def _marked_skip(ds):
    """An error while skipping ends the sequence (TF's skip gives up its input then)."""
    if ds.count < 0:
        return
    skipped = 0
    for item in marked(ds.input):
        if skipped < ds.count:
            if isinstance(item, Failed):
                yield item
                return
            skipped += 1
        else:
            yield item


def _marked_repeat(ds):
    epoch = 0
    while ds.count < 0 or epoch < ds.count:
        produced = False
        for item in marked(ds.input):
            produced = produced or not isinstance(item, Failed)
            yield item
        if not produced:
            return
        epoch += 1


def _marked_concatenate(ds):
    for d in ds.inputs:
        yield from marked(d)


def _marked_zip(ds):
    """Each input gives its next item; an error of any of them loses the others' elements (TF's zip)."""
    its = [marked(d) for d in ds.inputs]
    while True:
        items = []
        for it in its:
            item = next(it, None)
            if item is None:
                return
            items.append(item)
        failure = next((item for item in items if isinstance(item, Failed)), None)
        yield failure if failure is not None else [v for item in items for v in item]


_MARKED = {
    datasets.MapDataset: _marked_map,
    datasets.FilterDataset: _marked_filter,
    datasets.BatchDataset: lambda ds: _marked_batch(ds, ds._stack),
    datasets.PaddedBatchDataset: lambda ds: _marked_batch(
        ds, lambda batch: [ds._pad(k, [np.asarray(e[k]) for e in batch]) for k in range(len(batch[0]))]),
    datasets.TakeDataset: _marked_take,
    datasets.SkipDataset: _marked_skip,
    datasets.RepeatDataset: _marked_repeat,
    datasets.ConcatenateDataset: _marked_concatenate,
    datasets.ZipDataset: _marked_zip,
    # prefetching overlaps work, it does not change the sequence: resumed in line
    datasets.PrefetchDataset: lambda ds: marked(ds.input),
    experimental_datasets.ScanDataset: _marked_scan,
}


# -- the datasets ----------------------------------------------------------------------------------

class IgnoreErrorsDataset(DatasetBase):
    """The input's elements, skipping those whose making raised an error (TF's
    IgnoreErrorsDataset; `log_warning` logs each skipped error)."""

    def __init__(self, node, input_dataset, log_warning):
        super().__init__(node)
        self.input, self.log_warning = input_dataset, bool(log_warning)

    def iterate(self):
        for item in marked(self.input):
            if isinstance(item, Failed):
                if self.log_warning:
                    logging.warning("Error raised with error message %s", item.error.message)
                continue
            yield item

    def marked(self):
        return self.iterate()


class TakeWhileDataset(DatasetBase):
    """The input's elements while `predicate` holds; the first that fails it ends the dataset."""

    def __init__(self, node, input_dataset, predicate, captured):
        super().__init__(node)
        self.input, self.predicate, self.captured = input_dataset, predicate, list(captured)

    def _keep(self, element):
        keep = np.asarray(self.predicate(element + self.captured)[0])
        if keep.shape != () or keep.dtype != np.bool_:
            raise self.error(errors.InvalidArgumentError, "`predicate` must returns a scalar bool tensor.")
        return bool(keep)

    def iterate(self):
        for element in self.input.iterate():
            if not self._keep(element):
                return
            yield element

    def marked(self):
        for item in marked(self.input):
            if not isinstance(item, Failed):
                item = _guard(lambda e: self._keep(e) and e, item)
                if item is False:
                    return
            yield item


class UniqueDataset(DatasetBase):
    """The input's elements, each the first time it appears (compared by value and shape)."""

    def __init__(self, node, input_dataset, output_types):
        super().__init__(node)
        if len(output_types) != 1:
            raise self.error(errors.InvalidArgumentError,
                             "UniqueDataset only supports inputs with a single component.")
        dtype = output_types[0]
        if dtype.name not in ("int32", "int64", "string"):
            raise self.error(errors.InvalidArgumentError,
                             "UniqueDataset only supports inputs with a single `tf.int32`, `tf.int64`, or "
                             "`tf.string` component.")
        self.input = input_dataset

    def iterate(self):
        seen = set()
        for element in self.input.iterate():
            value = np.asarray(element[0])
            key = (value.shape, tuple(value.ravel().tolist()))
            if key not in seen:
                seen.add(key)
                yield element


def _count_words(n):
    if n == INFINITE:
        return "an infinite number of elements"
    return f"{n} element{'' if n == 1 else 's'}"


class AssertCardinalityDataset(DatasetBase):
    """The input's elements, failing (FailedPrecondition, as TF) as soon as there are more than
    `expected`, or at the end when there were fewer."""

    def __init__(self, node, input_dataset, expected):
        super().__init__(node)
        self.input, self.expected = input_dataset, int(expected)

    def iterate(self):
        n = 0
        for element in self.input.iterate():
            n += 1
            if self.expected != INFINITE and n > self.expected:
                raise self.error(errors.FailedPreconditionError,
                                 f"Input dataset was expected to contain {_count_words(self.expected)} but "
                                 f"contained at least {_count_words(n)}.")
            yield element
        if n != self.expected:
            raise self.error(errors.FailedPreconditionError,
                             f"Input dataset was expected to contain {_count_words(self.expected)} but contained "
                             f"only {_count_words(n)}.")

    def cardinality(self):
        return self.expected


class SparseValue:
    """A SparseTensor element as it flows between datasets (TF's variant of its three tensors)."""

    __slots__ = ("indices", "values", "dense_shape")

    def __init__(self, indices, values, dense_shape):
        self.indices, self.values, self.dense_shape = indices, values, dense_shape

    def __repr__(self):
        return f"<SparseValue shape={self.dense_shape.tolist()} nnz={len(self.values)}>"


def _dims(shape):
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


class DenseToSparseBatchDataset(DatasetBase):
    """Batches of `batch_size` elements of varying shape as one SparseTensor each, whose dense
    shape is [batch, *row_shape] (a -1 dimension: the batch's largest). Every entry of an
    element is one value of the batch, zero or not, as in TF."""

    def __init__(self, node, input_dataset, batch_size, row_shape):
        super().__init__(node)
        if batch_size <= 0:
            raise self.error(errors.InvalidArgumentError, "Batch size must be greater than zero.")
        self.input, self.batch_size = input_dataset, int(batch_size)
        self.row_shape = [int(d) for d in np.asarray(row_shape).ravel()]

    def iterate(self):
        elements = self.input.iterate()
        while True:
            batch = []
            for element in elements:
                batch.append(self._checked(np.asarray(element[0])))
                if len(batch) == self.batch_size:
                    break
            if not batch:
                return
            yield [self._sparse(batch)]
            if len(batch) < self.batch_size:
                return

    def _checked(self, value):
        row = self.row_shape
        if value.ndim != len(row):
            raise self.error(errors.InvalidArgumentError,
                             f"Input element had shape ({_dims(value.shape)}) that is incompatible with the row "
                             f"shape ({_dims(row)}).")
        if any(want != -1 and got > want for got, want in zip(value.shape, row)):
            raise self.error(errors.DataLossError,
                             f"Input element had shape ({_dims(value.shape)}) that is larger than the row "
                             f"shape ({_dims(row)}).")
        return value

    def _sparse(self, batch):
        dims = [want if want != -1 else max(v.shape[d] for v in batch) for d, want in enumerate(self.row_shape)]
        indices, values = [], []
        for i, v in enumerate(batch):
            index = np.indices(v.shape).reshape(v.ndim, -1).T if v.size else np.zeros((0, v.ndim), np.int64)
            indices.append(np.concatenate([np.full((v.size, 1), i, np.int64), index.astype(np.int64)], axis=1))
            values.append(v.ravel())
        dtype = batch[0].dtype
        return SparseValue(np.concatenate(indices).reshape(-1, len(dims) + 1),
                           np.concatenate(values).astype(dtype, copy=False) if values else np.zeros(0, dtype),
                           np.array([len(batch)] + dims, np.int64))


# -- cardinality -----------------------------------------------------------------------------------

def _batched(ds, n):
    if n in (INFINITE, UNKNOWN):
        return n
    return n // ds.batch_size + (1 if n % ds.batch_size and not ds.drop_remainder else 0)


def _take(ds, n):
    if n == UNKNOWN or ds.count < 0:
        return n
    return ds.count if n == INFINITE else min(n, ds.count)


def _skip(ds, n):
    if n in (INFINITE, UNKNOWN):
        return n
    return 0 if ds.count < 0 else max(0, n - ds.count)


def _repeat(ds, n):
    if ds.count < 0:
        return 0 if n == 0 else INFINITE
    if ds.count == 0:
        return 0
    return n if n in (INFINITE, UNKNOWN) else n * ds.count


def _zip(ds):
    result = INFINITE
    for d in ds.inputs:
        n = cardinality(d)
        if n == UNKNOWN:
            return UNKNOWN
        if n != INFINITE and (result == INFINITE or n < result):
            result = n
    return result


def _concatenate(ds):
    a, b = (cardinality(d) for d in ds.inputs)
    if INFINITE in (a, b):
        return INFINITE
    return UNKNOWN if UNKNOWN in (a, b) else a + b


def _shard(ds, n):
    if n in (INFINITE, UNKNOWN):
        return n
    return n // ds.num_shards + (1 if ds.index < n % ds.num_shards else 0)


def _window(ds, n):
    if n in (INFINITE, UNKNOWN):
        return n
    if ds.drop_remainder:
        rest = n - ((ds.size - 1) * ds.stride + 1)
        return 0 if rest < 0 else rest // ds.shift + 1
    return n // ds.shift + (1 if n % ds.shift else 0)


# Cardinalities from the input's (`n`), by dataset class, as TF's datasets compute them. TF1's map
# does not preserve cardinality: it is unknown, as are filter's, flat_map's and the readers'.
_FROM_INPUT = {
    datasets.BatchDataset: _batched,
    datasets.PaddedBatchDataset: _batched,
    datasets.TakeDataset: _take,
    datasets.SkipDataset: _skip,
    datasets.RepeatDataset: _repeat,
    datasets.ShuffleDataset: lambda ds, n: n,
    datasets.PrefetchDataset: lambda ds, n: n,
    datasets.CacheDataset: lambda ds, n: n,
    experimental_datasets.ShardDataset: _shard,
    experimental_datasets.WindowDataset: _window,
    experimental_datasets.ScanDataset: lambda ds, n: n,
}
_OWN = {
    datasets.TensorDataset: lambda ds: 1,
    datasets.TensorSliceDataset: lambda ds: ds.components[0].shape[0] if ds.components else 0,
    datasets.RangeDataset: lambda ds: len(range(ds.start, ds.stop, ds.step)),
    datasets.ZipDataset: _zip,
    datasets.ConcatenateDataset: _concatenate,
    experimental_datasets.RandomDataset: lambda ds: INFINITE,
    experimental_datasets.ListDataset: lambda ds: len(ds.elements),
}


def cardinality(dataset):
    """The number of elements of a run-time dataset; INFINITE (-1) or UNKNOWN (-2) where TF says so."""
    own = getattr(dataset, "cardinality", None)
    if own is not None:
        return own()
    if type(dataset) in _OWN:
        return _OWN[type(dataset)](dataset)
    rule = _FROM_INPUT.get(type(dataset))
    return UNKNOWN if rule is None else rule(dataset, cardinality(dataset.input))
