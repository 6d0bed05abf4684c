"""`tf.data.Dataset` (TF1's DatasetV1): each method adds the dataset op of
the new dataset to the graph and returns a Dataset holding that op's
variant tensor and the structure of its elements (`output_types`,
`output_shapes`, `output_classes`)."""
import os

import numpy as np

from ..framework import dtypes
from ..framework.graph import Tensor, get_default_graph, graph_of
from ..framework.op_builder import convert_to_tensor
from ..framework.tensor_shape import TensorShape
from ..ops import math_ops
from ..ops.random_ops import get_seed
from . import structure
from .structure import Spec
from .structured_function import StructuredFunction

AUTOTUNE = -1


def _create(op_type, inputs, attrs, name=None):
    """Adds one dataset op (in the graph of its inputs, or the default graph) and returns it."""
    g = graph_of(inputs) if inputs else get_default_graph()
    with g.as_default(), g.name_scope(name or op_type) as scope:
        return g.create_op(op_type, list(inputs), attrs, name=scope)


def _seed_tensors(seed, seed2):
    """TF's seed and seed2 tensors of a dataset (tf.data's random_seed.get_seed): 0 and 0
    when no seed is set; otherwise seed2 becomes 2**31 - 1 when both are 0."""
    if seed is None:
        return [_int64(0, "seed"), _int64(0, "seed2")]
    seed = _int64(seed, "seed")
    g = get_default_graph()
    with g.name_scope("seed2") as scope:
        seed2 = _int64(seed2, None)
        both_zero = math_ops.logical_and(math_ops.equal(seed, 0), math_ops.equal(seed2, 0))
        seed2 = math_ops.where_v2(both_zero, convert_to_tensor(2 ** 31 - 1, dtype=dtypes.int64), seed2,
                                  name=scope)
    return [seed, seed2]


def _int64(value, name):
    return convert_to_tensor(value, dtype=dtypes.int64, name=name)


def _normalize(element):
    """The element with every component a Tensor (a list or array is one component),
    made in TF's "normalize_element" name scope."""
    flat = structure.flatten(element)
    g = graph_of([v for v in flat if isinstance(v, Tensor)])
    with g.as_default(), g.name_scope("normalize_element"):
        tensors = [v if isinstance(v, Tensor) else convert_to_tensor(v, name=f"component_{i}")
                   for i, v in enumerate(flat)]
    return structure.pack_as(element, tensors)


class Dataset(structure.HasElementSpec):
    """A dataset in the graph: `_variant_tensor` and the Spec structure `_specs`."""

    def __init__(self, variant_tensor, specs):
        self._variant_tensor = variant_tensor
        self._specs = specs

    def _as_variant_tensor(self):
        return self._variant_tensor

    @property
    def _graph(self):
        return self._variant_tensor.graph

    # -- structure -----------------------------------------------------------------------

    def _struct_attrs(self, specs=None):
        specs = self._specs if specs is None else specs
        return {"output_types": structure.flat_types(specs), "output_shapes": structure.flat_shapes(specs)}

    def _unary(self, op_type, inputs, name=None, specs=None, **attrs):
        specs = self._specs if specs is None else specs
        attrs.update(self._struct_attrs(specs))
        op = _create(op_type, [self._variant_tensor] + list(inputs), attrs, name)
        return Dataset(op.outputs[0], specs)

    def __iter__(self):
        raise RuntimeError("`tf.data.Dataset` only supports Python-style iteration in eager mode or within "
                           "tf.function; in a graph use make_one_shot_iterator() or "
                           "make_initializable_iterator().")

    def __repr__(self):
        return f"<Dataset element_spec={self._specs!r}>"

    # -- sources -------------------------------------------------------------------------
    @staticmethod
    def from_tensors(tensors, name=None):
        """A dataset of one element, `tensors`."""
        element = _normalize(tensors)
        flat = structure.flatten(element)
        specs = structure.specs_of(element)
        op = _create("TensorDataset", flat, {"Toutput_types": [t.dtype.base_dtype for t in flat],
                                             "output_shapes": [t.shape for t in flat]}, name)
        return Dataset(op.outputs[0], specs)

    @staticmethod
    def from_tensor_slices(tensors, name=None):
        """The slices of `tensors` along their first dimension, which all components share."""
        element = _normalize(tensors)
        flat = structure.flatten(element)
        first = TensorShape(None)
        for t in flat:
            if t.shape.ndims == 0:
                raise ValueError(f"Unbatching a tensor is only supported for rank >= 1, got {t.name} of shape "
                                 f"{t.shape}")
            dim = TensorShape([t.shape[0]]) if t.shape.ndims is not None else TensorShape([None])
            if not first.is_compatible_with(dim):
                raise ValueError(f"Dimensions {first[0]} and {dim[0]} are not compatible")
            first = first.merge_with(dim)
        specs = structure.map_structure(lambda t: Spec(t.dtype, t.shape[1:]), element)
        op = _create("TensorSliceDataset", flat, {"Toutput_types": [t.dtype.base_dtype for t in flat],
                                                  "output_shapes": structure.flat_shapes(specs)}, name)
        return Dataset(op.outputs[0], specs)

    @staticmethod
    def range(*args, output_type=dtypes.int64, name=None):
        """range(stop), range(start, stop) or range(start, stop, step), as Python's."""
        if not 1 <= len(args) <= 3:
            raise ValueError(f"Invalid arguments to range: {args!r}")
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) == 3
                                                                     else 1)
        g = graph_of([a for a in (start, stop, step) if isinstance(a, Tensor)])
        with g.as_default():
            inputs = [_int64(start, "start"), _int64(stop, "stop"), _int64(step, "step")]
        output_type = dtypes.as_dtype(output_type)
        specs = Spec(output_type, [])
        op = _create("RangeDataset", inputs, {"output_types": [output_type], "output_shapes": [TensorShape([])]},
                     name)
        return Dataset(op.outputs[0], specs)

    @staticmethod
    def zip(datasets, name=None):
        """Elements of `datasets` (a structure of datasets) side by side, until the shortest ends."""
        flat = structure.flatten(datasets)
        for d in flat:
            if not isinstance(d, Dataset):
                raise TypeError(f"Invalid `datasets`. `datasets` is expected to be a (nested) structure of "
                                f"`tf.data.Dataset` objects, got {type(d).__name__}.")
        specs = structure.map_structure(lambda d: d._specs, datasets)
        attrs = {"N": len(flat), "output_types": structure.flat_types(specs),
                 "output_shapes": structure.flat_shapes(specs)}
        op = _create("ZipDataset", [d._variant_tensor for d in flat], attrs, name)
        return Dataset(op.outputs[0], specs)

    @staticmethod
    def from_generator(generator, output_types, output_shapes=None, args=None, name=None):
        from .generator import from_generator
        return from_generator(generator, output_types, output_shapes, args, name)

    # -- transformations -------------------------------------------------------------------
    def concatenate(self, dataset, name=None):
        try:
            specs = structure.most_specific_compatible(self._specs, dataset._specs)
        except (TypeError, ValueError) as e:
            raise TypeError(f"Incompatible dataset elements:\n  {self._specs!r} vs.\n  {dataset._specs!r}") from e
        return self._unary("ConcatenateDataset", [dataset._variant_tensor], name, specs)

    def _function(self, func, transformation, want_dataset=False):
        return StructuredFunction(func, self._specs, transformation, self._graph, want_dataset)

    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None):
        """Applies `map_func` to each element. `num_parallel_calls` is accepted; the calls
        run one after another, in order (so `deterministic` always holds)."""
        fn = self._function(map_func, "Dataset.map()")
        attrs = {"f": fn.fdef, "Targuments": fn.captured_types}
        if num_parallel_calls is None:
            return self._unary("MapDataset", fn.captured, name, fn.output_specs, **attrs)
        g = self._graph
        with g.as_default():
            calls = _int64(num_parallel_calls, "num_parallel_calls")
        return self._unary("ParallelMapDatasetV2", fn.captured + [calls], name, fn.output_specs, **attrs)

    def filter(self, predicate, name=None):
        fn = self._function(predicate, "Dataset.filter()")
        out = fn.output_specs
        if not isinstance(out, Spec) or out.dtype != dtypes.bool or out.shape.ndims not in (0, None):
            raise ValueError(f"Invalid `predicate`. `predicate` must return a `tf.bool` scalar tensor, but its "
                             f"return type is {out!r}.")
        return self._unary("FilterDataset", fn.captured, name, predicate=fn.fdef, Targuments=fn.captured_types)

    def flat_map(self, map_func, name=None):
        fn = self._function(map_func, "Dataset.flat_map()", want_dataset=True)
        return self._unary("FlatMapDataset", fn.captured, name, fn.output_specs, f=fn.fdef,
                           Targuments=fn.captured_types)

    def interleave(self, map_func, cycle_length=None, block_length=None, num_parallel_calls=None,
                   deterministic=None, name=None):
        """Elements of the datasets `map_func` makes from this one's elements, taken
        `block_length` at a time from `cycle_length` of them in turn (deterministic;
        `num_parallel_calls` is accepted). cycle_length defaults to the CPU count, as TF's."""
        fn = self._function(map_func, "Dataset.interleave()", want_dataset=True)
        g = self._graph
        with g.as_default():
            if cycle_length is None or cycle_length == AUTOTUNE:
                cycle_length = os.cpu_count() or 1
            cycle = _int64(cycle_length, "cycle_length")
            block = _int64(1 if block_length is None else block_length, "block_length")
        return self._unary("InterleaveDataset", fn.captured + [cycle, block], name, fn.output_specs, f=fn.fdef,
                           Targuments=fn.captured_types)

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None, deterministic=None, name=None):
        with self._graph.as_default():
            size = _int64(batch_size, "batch_size")
            drop = convert_to_tensor(drop_remainder, dtype=dtypes.bool, name="drop_remainder")
        specs = structure.map_structure(lambda s: Spec(s.dtype, _batched(s.shape, size, drop)), self._specs)
        return self._unary("BatchDatasetV2", [size, drop], name, specs, parallel_copy=False)

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None, drop_remainder=False, name=None):
        """Batches whose components are padded to `padded_shapes` (None or -1: the batch's longest;
        a dimension may be a scalar tensor, or a component's whole shape a 1-D tensor)."""
        specs = self._specs
        if padded_shapes is None:
            padded_shapes = structure.map_structure(lambda s: s.shape, specs)
            for s in structure.flatten(specs):
                if s.shape.ndims is None:
                    raise ValueError("You must provide `padded_shapes` argument because component has unknown "
                                     "rank.")
        wants = structure.flatten(_padded_like(specs, padded_shapes))
        if padding_values is None:
            padding_values = structure.map_structure(lambda s: _default_padding(s.dtype), specs)
        else:
            padding_values = _broadcast_padding(specs, padding_values)
        g = self._graph
        with g.as_default():  # TF's order and names: batch_size, the shapes, padding_value, drop_remainder
            size = _int64(batch_size, "batch_size")
            shape_tensors, value_tensors, out_specs = [], [], []
            statics = []
            for s, want in zip(structure.flatten(specs), wants):
                static, tensor = _padded_shape(want)
                if s.shape.ndims is not None and static.ndims is not None and s.shape.ndims != static.ndims:
                    raise ValueError(f"The padded shape {static} is not compatible with the shape {s.shape} of the "
                                     f"corresponding input component.")
                if not _shape_fits(s.shape, static):
                    raise ValueError(f"The padded shape {static} is not compatible with the shape {s.shape} of the "
                                     f"corresponding input component.")
                shape_tensors.append(tensor)
                statics.append(static)
            for s, pad in zip(structure.flatten(specs), structure.flatten(padding_values)):
                value_tensors.append(convert_to_tensor(pad, dtype=s.dtype, name="padding_value"))
            drop = convert_to_tensor(drop_remainder, dtype=dtypes.bool, name="drop_remainder")
            for s, static in zip(structure.flatten(specs), statics):
                out_specs.append(Spec(s.dtype, _batched(static, size, drop)))
        out = structure.pack_as(specs, out_specs)
        attrs = {"Toutput_types": structure.flat_types(out), "output_shapes": structure.flat_shapes(out),
                 "N": len(shape_tensors), "parallel_copy": False}
        op = _create("PaddedBatchDatasetV2", [self._variant_tensor, size] + shape_tensors + value_tensors + [drop],
                     attrs, name)
        return Dataset(op.outputs[0], out)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=None, name=None):
        seed, seed2 = get_seed(seed)
        g = self._graph
        with g.as_default():
            inputs = [_int64(buffer_size, "buffer_size")] + _seed_tensors(seed, seed2)
        reshuffle = True if reshuffle_each_iteration is None else bool(reshuffle_each_iteration)
        return self._unary("ShuffleDataset", inputs, name, reshuffle_each_iteration=reshuffle)

    def _counted(self, op_type, count, default, name):
        g = self._graph
        with g.as_default():
            count = _int64(default if count is None else count, "count")
        return self._unary(op_type, [count], name)

    def repeat(self, count=None, name=None):
        return self._counted("RepeatDataset", count, -1, name)

    def take(self, count, name=None):
        return self._counted("TakeDataset", count, -1, name)

    def skip(self, count, name=None):
        return self._counted("SkipDataset", count, -1, name)

    def prefetch(self, buffer_size, name=None):
        g = self._graph
        with g.as_default():
            size = _int64(buffer_size, "buffer_size")
        return self._unary("PrefetchDataset", [size], name)

    def cache(self, filename="", name=None):
        g = self._graph
        with g.as_default():
            fname = convert_to_tensor(filename, dtype=dtypes.string, name="filename")
        return self._unary("CacheDataset", [fname], name)

    def unbatch(self, name=None):
        """The slices of each element along its first dimension (the inverse of batch)."""
        shapes = [s.shape for s in structure.flatten(self._specs)]
        if any(shape.ndims == 0 for shape in shapes):
            raise ValueError("Cannot unbatch an input with scalar components.")
        first = TensorShape([None])
        for shape in shapes:
            if shape.ndims is not None:
                if not first.is_compatible_with(shape[:1]):
                    raise ValueError(f"`unbatch()` is only supported for datasets of elements whose components "
                                     f"have a matching leading dimension. Encountered both {first[0]} and "
                                     f"{shape[0]}.")
                first = first.merge_with(shape[:1])
        specs = structure.map_structure(
            lambda s: Spec(s.dtype, s.shape[1:] if s.shape.ndims is not None else TensorShape(None)), self._specs)
        return self._unary("UnbatchDataset", [], name, specs)

    def enumerate(self, start=0, name=None):
        """(index, element) pairs, the index counting from `start` (TF zips a range with this dataset)."""
        return Dataset.zip((Dataset.range(start, np.iinfo(np.int64).max), self))

    def reduce(self, initial_state, reduce_func, name=None):
        """A structure of tensors: `reduce_func(state, element)` folded over the dataset from
        `initial_state`. Where the function changes a state's shape, the state's static shape
        is relaxed and the function traced again, as TF does."""
        state, state_specs, fn = self._fold(initial_state, reduce_func, "reduce()", "reduce_func", lambda out: out)
        flat_state = structure.flatten(state)
        op = _create("ReduceDataset", [self._variant_tensor] + flat_state + fn.captured,
                     {"f": fn.fdef, "Tstate": [t.dtype.base_dtype for t in flat_state],
                      "Targuments": fn.captured_types, "output_types": structure.flat_types(state_specs),
                      "output_shapes": structure.flat_shapes(state_specs)}, name)
        return structure.pack_as(state_specs, op.outputs)

    def scan(self, initial_state, scan_func, name=None):
        """The outputs of `scan_func(state, element) -> (new_state, output)` carried over the
        elements from `initial_state` (a state whose shape the function changes is relaxed)."""
        def new_state(out):
            if not isinstance(out, tuple) or len(out) != 2:
                raise TypeError(f"The scan function must return a pair comprising the new state and the output "
                                f"value, got {out!r}.")
            return out[0]
        state, state_specs, fn = self._fold(initial_state, scan_func, "scan()", "scan_func", new_state)
        flat_state = structure.flatten(state)
        out_specs = fn.output_specs[1]
        attrs = {"f": fn.fdef, "Tstate": [t.dtype.base_dtype for t in flat_state], "Targuments": fn.captured_types}
        return self._unary("ScanDataset", flat_state + fn.captured, name, out_specs, **attrs)

    def _fold(self, initial_state, func, transformation, what, state_of):
        """(state tensors, state Specs, traced function) of a function carrying a state over the
        elements; the state's shapes are relaxed until the function keeps them, as TF does."""
        with self._graph.as_default(), self._graph.name_scope("initial_state"):
            state = _normalize(initial_state)
        state_specs = structure.specs_of(state)
        while True:
            fn = StructuredFunction(func, (state_specs, self._specs), transformation, self._graph)
            out_state = state_of(fn.output_specs)
            try:
                structure.assert_same_structure(state_specs, out_state)
            except (TypeError, ValueError) as e:
                raise TypeError(f"The element structure of the output of `{what}` must match the element "
                                f"structure of `initial_state`: {out_state!r} vs. {state_specs!r}.") from e
            for s, o in zip(structure.flatten(state_specs), structure.flatten(out_state)):
                if s.dtype != o.dtype:
                    raise TypeError(f"The element types for the new state must match the initial state. Expected "
                                    f"{structure.types(state_specs)}; got {structure.types(out_state)}.")
            relaxed = structure.most_specific_compatible(state_specs, out_state)
            if structure.flatten(relaxed) == structure.flatten(state_specs):
                return state, state_specs, fn
            state_specs = relaxed

    def window(self, size, shift=None, stride=1, drop_remainder=False, name=None):
        """Windows of `size` elements (`stride` apart), one starting every `shift` (default `size`)
        elements. Each element is a structure like this dataset's with a dataset in place of each
        component: `ds.window(3).flat_map(lambda w: w.batch(3))`."""
        g = self._graph
        with g.as_default():
            inputs = [_int64(size, "size"), _int64(size if shift is None else shift, "shift"),
                      _int64(stride, "stride"),
                      convert_to_tensor(drop_remainder, dtype=dtypes.bool, name="drop_remainder")]
        specs = structure.map_structure(lambda s: structure.DatasetSpec(Spec(s.dtype, s.shape)), self._specs)
        return self._unary("WindowDataset", inputs, name, specs)

    def shard(self, num_shards, index, name=None):
        """Every `num_shards`-th element from element `index` on: worker `index` of
        `num_shards` reads its share of the input."""
        g = self._graph
        with g.as_default():
            inputs = [_int64(num_shards, "num_shards"), _int64(index, "index")]
        return self._unary("ShardDataset", inputs, name, require_non_empty=False)

    def apply(self, transformation_func):
        """`transformation_func(self)`, which must return a Dataset."""
        dataset = transformation_func(self)
        if not isinstance(dataset, Dataset):
            raise TypeError(f"`transformation_func` must return a `tf.data.Dataset` object, got "
                            f"{type(dataset).__name__}.")
        return dataset

    # -- iterators --------------------------------------------------------------------------
    def make_one_shot_iterator(self):
        from .iterator_ops import make_one_shot_iterator
        return make_one_shot_iterator(self)

    def make_initializable_iterator(self, shared_name=None):
        from .iterator_ops import make_initializable_iterator
        return make_initializable_iterator(self, shared_name)


def _batched(shape, size, drop):
    """The static shape of a batch of `shape` elements: the batch dimension is
    known only when the remainder is dropped and the batch size is constant."""
    from ..framework.constant_value import constant_value
    drop_value, size_value = constant_value(drop), constant_value(size)
    batch = int(size_value) if drop_value is not None and bool(drop_value) and size_value is not None else None
    return TensorShape([batch]).concatenate(shape)


def _padded_like(specs, padded_shapes):
    """`padded_shapes` in `specs`' structure, each component's shape one leaf: a list of dims
    (ints, None or -1, scalar tensors), a TensorShape, or a 1-D tensor."""
    if not structure.is_structure(specs):
        if isinstance(padded_shapes, (TensorShape, Tensor)):
            return padded_shapes
        if isinstance(padded_shapes, (list, tuple)):
            return list(padded_shapes)
        raise ValueError(f"padded_shapes {padded_shapes!r} do not match the structure of the dataset's elements "
                         f"{specs!r}")
    if isinstance(specs, dict):
        if not isinstance(padded_shapes, dict) or sorted(padded_shapes) != sorted(specs):
            raise ValueError(f"padded_shapes {padded_shapes!r} do not match the structure of the dataset's "
                             f"elements {specs!r}")
        return {k: _padded_like(specs[k], padded_shapes[k]) for k in specs}
    if not isinstance(padded_shapes, (list, tuple)) or len(padded_shapes) != len(specs):
        raise ValueError(f"padded_shapes {padded_shapes!r} do not match the structure of the dataset's elements "
                         f"{specs!r}")
    packed = [_padded_like(s, p) for s, p in zip(specs, padded_shapes)]
    return type(specs)(*packed) if hasattr(specs, "_fields") else tuple(packed)


def _padded_shape(want):
    """(static TensorShape, int64 shape tensor with -1 for "the longest") of one component's padded shape."""
    from ..framework.constant_value import constant_value
    from ..ops import array_ops
    if isinstance(want, Tensor):
        tensor = math_ops.cast(want, dtypes.int64)
        value = constant_value(tensor)
        if value is not None:
            return TensorShape([None if d == -1 else int(d) for d in value]), tensor
        return TensorShape([None] * want.shape[0] if want.shape.ndims == 1 and want.shape[0] is not None
                           else None), tensor
    dims = list(want.as_list()) if isinstance(want, TensorShape) else list(want)
    if not any(isinstance(d, Tensor) for d in dims):
        dims = [None if d is None or (isinstance(d, (int, np.integer)) and d == -1) else d for d in dims]
        static = TensorShape(dims)
        return static, convert_to_tensor(np.array([-1 if d is None else d for d in static.as_list()], np.int64))
    parts = [math_ops.cast(d, dtypes.int64) if isinstance(d, Tensor) else
             convert_to_tensor(np.int64(-1 if d is None else d)) for d in dims]
    static = TensorShape([None if isinstance(d, Tensor) or d is None or d == -1 else int(d) for d in dims])
    return static, array_ops.stack(parts)


def _shape_fits(shape, padded):
    if shape.ndims is None or padded.ndims is None:
        return True
    return all(p is None or s is None or s <= p for s, p in zip(shape.as_list(), padded.as_list()))


def _default_padding(dtype):
    return b"" if dtype == dtypes.string else np.zeros((), dtype=dtype.np)


def _broadcast_padding(specs, padding_values):
    """`padding_values` as a structure like `specs` (one scalar may stand for all components)."""
    if not structure.is_structure(padding_values) and structure.is_structure(specs):
        return structure.map_structure(lambda s: padding_values, specs)
    structure.assert_same_structure(specs, padding_values)
    return padding_values


class _FileRecordDataset(Dataset):
    """The records of one or more files, one file after another, as strings: the op `_OP` reads them."""
    _OP = None

    def __init__(self, filenames, compression_type=None, buffer_size=None, num_parallel_reads=None, name=None):
        g = get_default_graph()
        with g.name_scope(name or self._OP):
            files = convert_to_tensor(filenames, dtype=dtypes.string, name="filenames")
            if files.shape.ndims not in (None, 0, 1):
                raise TypeError(f"`filenames` must be a `tf.Tensor` of rank 0 or 1, got rank {files.shape.ndims}.")
            compression = convert_to_tensor(compression_type or "", dtype=dtypes.string, name="compression_type")
            size = _int64(256 * 1024 if buffer_size is None else buffer_size, "buffer_size")
        if num_parallel_reads not in (None, 1):
            raise ValueError(f"{self._OP}: graphrt reads the files one after another; num_parallel_reads "
                             f"(which interleaves them) is not supported")
        op = _create(self._OP, [files, compression, size], {}, name)
        super().__init__(op.outputs[0], Spec(dtypes.string, []))


class TextLineDataset(_FileRecordDataset):
    """The lines of one or more text files (`tf.data.TextLineDataset`)."""
    _OP = "TextLineDataset"


class TFRecordDataset(_FileRecordDataset):
    """The records of one or more TFRecord files (`tf.data.TFRecordDataset`)."""
    _OP = "TFRecordDataset"


class FixedLengthRecordDataset(Dataset):
    """Records of `record_bytes` bytes from binary files, between a header and a footer of each
    (`tf.data.FixedLengthRecordDataset`; CIFAR-10's binary files, for one)."""

    def __init__(self, filenames, record_bytes, header_bytes=None, footer_bytes=None, buffer_size=None,
                 compression_type=None, num_parallel_reads=None, name=None):
        g = get_default_graph()
        with g.name_scope(name or "FixedLengthRecordDataset"):
            files = convert_to_tensor(filenames, dtype=dtypes.string, name="filenames")
            if files.shape.ndims not in (None, 0, 1):
                raise TypeError(f"`filenames` must be a `tf.Tensor` of rank 0 or 1, got rank {files.shape.ndims}.")
            sizes = [_int64(0 if v is None else v, n) for v, n in
                     ((header_bytes, "header_bytes"), (record_bytes, "record_bytes"), (footer_bytes, "footer_bytes"),
                      (256 * 1024 if buffer_size is None else buffer_size, "buffer_size"))]
            compression = convert_to_tensor(compression_type or "", dtype=dtypes.string, name="compression_type")
        if num_parallel_reads not in (None, 1):
            raise ValueError("FixedLengthRecordDataset: graphrt reads the files one after another; "
                             "num_parallel_reads (which interleaves them) is not supported")
        op = _create("FixedLengthRecordDatasetV2", [files] + sizes + [compression], {}, name)
        super().__init__(op.outputs[0], Spec(dtypes.string, []))
