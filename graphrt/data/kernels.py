"""CPU kernels of the tf.data ops (host_only: they hand host objects around,
so, as in TF, accelerators get no copy of them): dataset ops make run-time datasets
(datasets.py); iterator ops keep an `IteratorResource` in their device's
resource manager, so every executor of a session (the initializer's, the
get_next's) reaches the same iterator, and nothing leaves the device but
the elements get_next outputs.
"""
import threading

import numpy as np

from .. import errors
from ..framework.registry import STEP, register_kernel
from . import datasets, experimental_datasets


def _lazy_function(ctx, attr):
    """A callable running the function in attr `attr` on the kernel's device,
    instantiated on first call (a kernel may be built and never run)."""
    from ..runtime.functions import instantiate  # (the runtime builds kernels: it is loaded by then)
    fdef, device = ctx.attr(attr), ctx.device
    lock, holder = threading.Lock(), []

    def call(args):
        if not holder:
            with lock:
                if not holder:
                    holder.append(instantiate(fdef, device))
        return holder[0](args)
    return call


def _dataset_kernel(op_type, make):
    """Registers `make(ctx) -> fn(*inputs) -> DatasetBase` for `op_type` on CPU."""
    register_kernel(op_type, ("CPU",), inexpensive=True, host_only=True)(make)


_dataset_kernel("TensorDataset", lambda ctx: lambda *c: datasets.TensorDataset(ctx.name, c))
_dataset_kernel("TensorSliceDataset", lambda ctx: lambda *c: datasets.TensorSliceDataset(ctx.name, c))
_dataset_kernel("RangeDataset", lambda ctx: lambda start, stop, step: datasets.RangeDataset(
    ctx.name, start, stop, step, ctx.attr("output_types")[0].np))
_dataset_kernel("TextLineDataset", lambda ctx: lambda filenames, compression, _buffer: datasets.TextLineDataset(
    ctx.name, filenames, compression.item() if isinstance(compression, np.ndarray) else compression))
_dataset_kernel("TFRecordDataset", lambda ctx: lambda filenames, compression, _buffer: datasets.TFRecordDataset(
    ctx.name, filenames, compression.item() if isinstance(compression, np.ndarray) else compression))
_dataset_kernel("FixedLengthRecordDatasetV2", lambda ctx: lambda files, header, record, footer, _buffer, compression:
                datasets.FixedLengthRecordDataset(ctx.name, files, int(header), int(record), int(footer),
                                                  compression.item() if isinstance(compression, np.ndarray)
                                                  else compression))
_dataset_kernel("ZipDataset", lambda ctx: lambda *inputs: datasets.ZipDataset(ctx.name, inputs))
_dataset_kernel("ConcatenateDataset", lambda ctx: lambda a, b: datasets.ConcatenateDataset(ctx.name, a, b))
_dataset_kernel("BatchDatasetV2", lambda ctx: lambda ds, size, drop: datasets.BatchDataset(
    ctx.name, ds, int(size), bool(drop)))
_dataset_kernel("RepeatDataset", lambda ctx: lambda ds, count: datasets.RepeatDataset(ctx.name, ds, int(count)))
_dataset_kernel("TakeDataset", lambda ctx: lambda ds, count: datasets.TakeDataset(ctx.name, ds, int(count)))
_dataset_kernel("SkipDataset", lambda ctx: lambda ds, count: datasets.SkipDataset(ctx.name, ds, int(count)))
_dataset_kernel("PrefetchDataset", lambda ctx: lambda ds, size: datasets.PrefetchDataset(ctx.name, ds, int(size)))
_dataset_kernel("CacheDataset", lambda ctx: lambda ds, filename: datasets.CacheDataset(
    ctx.name, ds, filename.item() if isinstance(filename, np.ndarray) else filename))
_dataset_kernel("ShuffleDataset", lambda ctx: lambda ds, size, seed, seed2: datasets.ShuffleDataset(
    ctx.name, ds, int(size), int(seed), int(seed2), ctx.attr("reshuffle_each_iteration")))

_dataset_kernel("UnbatchDataset", lambda ctx: lambda ds: datasets.UnbatchDataset(ctx.name, ds))


@register_kernel("PaddedBatchDatasetV2", ("CPU",), inexpensive=True, host_only=True)
def _padded_batch(ctx):
    n = ctx.attr("N")

    def make(ds, size, *rest):
        shapes, values, drop = rest[:n], rest[n:2 * n], rest[2 * n]
        return datasets.PaddedBatchDataset(ctx.name, ds, int(size), shapes, values, bool(drop))
    return make


def _function_dataset(op_type, cls, attr):
    @register_kernel(op_type, ("CPU",), inexpensive=True, host_only=True)
    def factory(ctx):
        fn = _lazy_function(ctx, attr)
        n_args = len(ctx.attr("Targuments"))

        def make(ds, *rest):
            return cls(ctx.name, ds, fn, rest[:n_args])
        return make
    return factory


_function_dataset("MapDataset", datasets.MapDataset, "f")
_function_dataset("ParallelMapDatasetV2", datasets.MapDataset, "f")  # calls run one at a time, in order
_function_dataset("FilterDataset", datasets.FilterDataset, "predicate")
_function_dataset("FlatMapDataset", datasets.FlatMapDataset, "f")


@register_kernel("InterleaveDataset", ("CPU",), inexpensive=True, host_only=True)
def _interleave(ctx):
    fn = _lazy_function(ctx, "f")
    n_args = len(ctx.attr("Targuments"))

    def make(ds, *rest):
        captured, (cycle_length, block_length) = rest[:n_args], rest[n_args:]
        return datasets.InterleaveDataset(ctx.name, ds, fn, captured, int(cycle_length), int(block_length))
    return make


@register_kernel("GeneratorDataset", ("CPU",), inexpensive=True, host_only=True)
def _generator(ctx):
    fns = [_lazy_function(ctx, a) for a in ("init_func", "next_func", "finalize_func")]
    counts = [len(ctx.attr(a)) for a in ("Tinit_func_args", "Tnext_func_args", "Tfinalize_func_args")]

    def make(*args):
        a, b = counts[0], counts[0] + counts[1]
        return datasets.GeneratorDataset(ctx.name, *fns, args[:a], args[a:b], args[b:b + counts[2]])
    return make


@register_kernel("ReduceDataset", ("CPU",), kind=STEP, host_only=True)
def _reduce(ctx):
    """The state after `f(state, element)` over every element of the dataset."""
    from ..runtime.functions import calls_from
    fn = _lazy_function(ctx, "f")
    n_state, single = len(ctx.attr("Tstate")), len(ctx.output_dtypes) == 1

    def run(step, ds, *rest):
        state, captured = list(rest[:n_state]), list(rest[n_state:])
        with calls_from(step):
            for element in ds.iterate():
                state = list(fn(state + list(element) + captured))
        return state[0] if single else tuple(state)
    return run


_dataset_kernel("ShardDataset", lambda ctx: lambda ds, n, index: experimental_datasets.ShardDataset(
    ctx.name, ds, int(n), int(index)))
_dataset_kernel("DirectedInterleaveDataset", lambda ctx: lambda selector, *inputs:
                experimental_datasets.DirectedInterleaveDataset(ctx.name, selector, inputs,
                                                                ctx.attr("stop_on_empty_dataset")))
_dataset_kernel("RandomDataset", lambda ctx: lambda seed, seed2: experimental_datasets.RandomDataset(
    ctx.name, int(seed), int(seed2)))


_dataset_kernel("WindowDataset", lambda ctx: lambda ds, size, shift, stride, drop: experimental_datasets.WindowDataset(
    ctx.name, ds, int(size), int(shift), int(stride), bool(drop)))


@register_kernel("GroupByWindowDataset", ("CPU",), inexpensive=True, host_only=True)
def _group_by_window(ctx):
    fns = [_lazy_function(ctx, a) for a in ("key_func", "reduce_func", "window_size_func")]
    counts = [len(ctx.attr(a)) for a in ("Tkey_func_other_arguments", "Treduce_func_other_arguments",
                                         "Twindow_size_func_other_arguments")]

    def make(ds, *args):
        a, b = counts[0], counts[0] + counts[1]
        return experimental_datasets.GroupByWindowDataset(ctx.name, ds, *fns, args[:a], args[a:b], args[b:])
    return make


@register_kernel("ScanDataset", ("CPU",), inexpensive=True, host_only=True)
def _scan(ctx):
    fn = _lazy_function(ctx, "f")
    n_state = len(ctx.attr("Tstate"))

    def make(ds, *rest):
        return experimental_datasets.ScanDataset(ctx.name, ds, fn, rest[:n_state], rest[n_state:])
    return make


@register_kernel("DatasetToSingleElement", ("CPU",), kind=STEP, host_only=True)
def _single_element(ctx):
    from ..runtime.functions import calls_from
    node, single = ctx.name, len(ctx.output_dtypes) == 1

    def run(step, ds):
        with calls_from(step):
            element = experimental_datasets.single_element(ds, node)
        return element[0] if single else tuple(element)
    return run


# -- iterators ---------------------------------------------------------------------------------

class IteratorResource:
    """One iterator's state on its device: the generator of the dataset it was
    last initialized with. get_next calls are serialized by its lock."""

    def __init__(self, name, device, output_types, output_shapes):
        self.name = name
        self.device = device
        self.output_types = list(output_types)
        self.output_shapes = list(output_shapes)
        self.lock = threading.Lock()
        self.elements = None    # the generator, once initialized
        self.one_shot_made = False

    def make_iterator(self, dataset):
        generator = dataset.iterate()
        with self.lock:
            old, self.elements = self.elements, generator
        if old is not None:
            old.close()  # runs a generator dataset's finalize function

    def get_next(self, node):
        with self.lock:
            if self.elements is None:
                raise errors.FailedPreconditionError(
                    "GetNext() failed because the iterator has not been initialized. Ensure that you have run "
                    "the initializer operation for this iterator before getting the next element.", node=node)
            try:
                element = next(self.elements)
            except StopIteration:
                raise errors.OutOfRangeError("End of sequence", node=node) from None
        self._check(element, node)
        return element

    def _check(self, element, node):
        if len(element) != len(self.output_types):
            raise errors.InvalidArgumentError(f"Iterator {self.name} produced {len(element)} components, "
                                              f"expected {len(self.output_types)}", node=node)
        for i, (value, dtype, shape) in enumerate(zip(element, self.output_types, self.output_shapes)):
            got = np.shape(value)
            if shape.ndims is not None and (len(got) != shape.ndims or any(
                    d is not None and d != g for d, g in zip(shape.as_list(), got))):
                raise errors.InvalidArgumentError(
                    f"Iterator {self.name}: component {i} has shape {list(got)}, incompatible with the expected "
                    f"shape {shape}", node=node)

    def string_handle(self, container):
        return f"{self.device.name}|{container}|{self.name}".encode()

    def __repr__(self):
        state = "uninitialized" if self.elements is None else "initialized"
        return f"<IteratorResource {self.name} on {self.device.name}: {state}>"


def _resource(ctx, name):
    device = ctx.device
    return device.resources.lookup_or_create(
        ctx.attr("container"), name,
        lambda: IteratorResource(name, device, ctx.attr("output_types"), ctx.attr("output_shapes")))


@register_kernel("IteratorV2", ("CPU",), inexpensive=True, host_only=True)
def _iterator(ctx):
    name = ctx.attr("shared_name") or ctx.name
    return lambda: _resource(ctx, name)


@register_kernel("OneShotIterator", ("CPU",), kind=STEP, inexpensive=True, host_only=True)
def _one_shot_iterator(ctx):
    from ..runtime.functions import calls_from
    name = ctx.attr("shared_name") or ctx.name
    factory = _lazy_function(ctx, "dataset_factory")
    make_lock = threading.Lock()

    def run(step):
        resource = _resource(ctx, name)
        with make_lock:  # the dataset is made once per resource (per session), on the first run
            if not resource.one_shot_made:
                with calls_from(step):
                    dataset = factory([])[0]
                resource.make_iterator(dataset)
                resource.one_shot_made = True
        return resource
    return run


@register_kernel("MakeIterator", ("CPU",), host_only=True)
def _make_iterator(ctx):
    def run(dataset, resource):
        resource.make_iterator(dataset)
    return run


@register_kernel("IteratorGetNext", ("CPU",), kind=STEP, host_only=True)
def _get_next(ctx):
    from ..runtime.functions import calls_from
    node = ctx.name
    single = len(ctx.output_dtypes) == 1

    def run(step, resource):
        with calls_from(step):  # the dataset's functions stop if this step is aborted
            element = resource.get_next(node)
        return element[0] if single else tuple(element)
    return run


@register_kernel("IteratorToStringHandle", ("CPU",), inexpensive=True, host_only=True)
def _to_string_handle(ctx):
    return lambda resource: np.array(resource.string_handle(""), dtype=object)


@register_kernel("IteratorFromStringHandleV2", ("CPU",), inexpensive=True, host_only=True)
def _from_string_handle(ctx):
    device, node = ctx.device, ctx.name
    want = list(ctx.attr("output_types"))

    def run(handle):
        text = handle.item() if isinstance(handle, np.ndarray) else handle
        text = text.decode() if isinstance(text, bytes) else str(text)
        parts = text.split("|")
        if len(parts) != 3:
            raise errors.InvalidArgumentError(f"Malformed iterator string handle {text!r}", node=node)
        where, container, name = parts
        if where != device.name:
            raise errors.InvalidArgumentError(f"The iterator of handle {text!r} lives on {where}, not on "
                                              f"{device.name} where {node} runs", node=node, device=device.name)
        resource = device.resources.lookup(container, name)
        if not isinstance(resource, IteratorResource):
            raise errors.NotFoundError(f"No iterator {name!r} on {device.name} (handle {text!r})", node=node)
        if want and [t.base_dtype for t in want] != [t.base_dtype for t in resource.output_types]:
            raise errors.InvalidArgumentError(
                f"The iterator of handle {text!r} produces {[t.name for t in resource.output_types]}, expected "
                f"{[t.name for t in want]}", node=node)
        return resource
    return run
