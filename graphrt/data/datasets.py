"""Datasets at run time: what a dataset op's `variant` output holds.

A dataset is a description (its inputs, arguments and functions); each
`iterate()` makes a fresh Python generator over its elements, so one
dataset can be iterated many times (repeat, re-initialized iterators).
An element is a list of arrays, one per flattened component. The end of
the sequence is the generator's end. Functions (map, filter, flat_map,
generators) are FunctionInstances run inline on the iterating thread.
"""
import gzip
import os
import queue
import threading
import zlib

import numpy as np

from .. import errors
from ..data_flow.io_ops import decompress, read_bytes
from ..records import tfrecord


class DatasetBase:
    """Base of the run-time datasets: `node` is the op that made it (for messages)."""

    def __init__(self, node):
        self.node = node

    def iterate(self):
        raise NotImplementedError

    def error(self, cls, message):
        return cls(message, node=self.node)

    def __repr__(self):
        return f"<{type(self).__name__} from {self.node}>"


class TensorDataset(DatasetBase):
    def __init__(self, node, components):
        super().__init__(node)
        self.components = list(components)

    def iterate(self):
        yield list(self.components)


class TensorSliceDataset(DatasetBase):
    def __init__(self, node, components):
        super().__init__(node)
        self.components = [np.asarray(c) if not isinstance(c, np.ndarray) else c for c in components]
        sizes = {c.shape[0] if c.ndim else None for c in self.components}
        if None in sizes:
            raise self.error(errors.InvalidArgumentError, "All components must be at least 1-dimensional")
        if len(sizes) > 1:
            dims = ", ".join(str(c.shape[0]) for c in self.components)
            raise self.error(errors.InvalidArgumentError,
                             f"All components must have the same size in the 0th dimension (got {dims})")

    def iterate(self):
        n = self.components[0].shape[0] if self.components else 0
        for i in range(n):
            yield [c[i, ...] for c in self.components]  # 0-d arrays (c[i] of an object array is a bare object)


class RangeDataset(DatasetBase):
    def __init__(self, node, start, stop, step, dtype):
        super().__init__(node)
        if step == 0:
            raise self.error(errors.InvalidArgumentError, "step must be a non-zero integer.")
        self.start, self.stop, self.step, self.dtype = int(start), int(stop), int(step), dtype

    def iterate(self):
        for i in range(self.start, self.stop, self.step):
            yield [np.array(i, dtype=self.dtype)]


class TextLineDataset(DatasetBase):
    """Lines of text files, without their line endings ('\\n' or '\\r\\n'), file after file."""

    def __init__(self, node, filenames, compression_type):
        super().__init__(node)
        self.filenames = [f.decode() if isinstance(f, bytes) else str(f) for f in np.asarray(filenames).ravel()]
        self.compression = compression_type.decode() if isinstance(compression_type, bytes) else \
            str(compression_type)
        if self.compression not in ("", "GZIP", "ZLIB"):
            raise self.error(errors.InvalidArgumentError, f"Unsupported compression_type: {self.compression!r}")

    def _read(self, filename):
        try:
            with open(filename, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            raise self.error(errors.NotFoundError, f"{filename}; No such file or directory") from None
        except OSError as e:
            raise self.error(errors.UnknownError, f"{filename}: {e}") from None
        try:
            if self.compression == "GZIP":
                data = gzip.decompress(data)
            elif self.compression == "ZLIB":
                data = zlib.decompress(data)
        except (OSError, zlib.error) as e:
            raise self.error(errors.DataLossError, f"{filename}: {e}") from None
        return data

    def iterate(self):
        for filename in self.filenames:
            data = self._read(filename)
            lines = data.split(b"\n")
            if lines and lines[-1] == b"":
                lines.pop()  # a final newline ends the last line; it does not start an empty one
            for line in lines:
                yield [np.array(line[:-1] if line.endswith(b"\r") else line, dtype=object)]


class FixedLengthRecordDataset(DatasetBase):
    """Records of `record` bytes between each file's header and footer, file after file. The
    body must be whole records: an uncompressed file's length is checked before its first
    record (InvalidArgumentError), a compressed one's after its last (DataLossError), as TF's."""

    def __init__(self, node, filenames, header, record, footer, compression_type):
        super().__init__(node)
        for value, what in ((record, "record_bytes"), (header, "header_bytes"), (footer, "footer_bytes")):
            if value < (1 if what == "record_bytes" else 0):
                raise self.error(errors.InvalidArgumentError,
                                 f"`{what}` must be {'> 0' if what == 'record_bytes' else '>= 0'}")
        self.filenames = [f.decode() if isinstance(f, bytes) else str(f) for f in np.asarray(filenames).ravel()]
        self.header, self.record, self.footer = header, record, footer
        self.compression = compression_type.decode() if isinstance(compression_type, bytes) else \
            str(compression_type)
        if self.compression not in ("", "GZIP", "ZLIB"):
            raise self.error(errors.InvalidArgumentError, f"Unsupported compression_type: {self.compression!r}")

    def iterate(self):
        for filename in self.filenames:
            data = read_bytes(filename, self.node)
            data = decompress(data, self.compression, filename, self.node)
            body = len(data) - self.header - self.footer
            whole = body >= 0 and body % self.record == 0
            message = (f"Excluding the header ({self.header} bytes) and footer ({self.footer} bytes), input file "
                       f"\"{filename}\" has body length {max(body, 0)} bytes, which is not an exact multiple of the "
                       f"record length ({self.record} bytes).")
            if not whole and not self.compression:
                raise self.error(errors.InvalidArgumentError, message)
            for start in range(self.header, self.header + max(body, 0) - self.record + 1, self.record):
                yield [np.array(data[start:start + self.record], dtype=object)]
            if not whole:
                raise self.error(errors.DataLossError, message)


class TFRecordDataset(DatasetBase):
    """The records of TFRecord files (graphrt/records/tfrecord.py), file after file."""

    def __init__(self, node, filenames, compression_type):
        super().__init__(node)
        self.filenames = [f.decode() if isinstance(f, bytes) else str(f) for f in np.asarray(filenames).ravel()]
        try:
            self.compression = tfrecord.compression_of(compression_type)
        except errors.OpError as e:
            raise self.error(type(e), e.message) from None

    def iterate(self):
        for filename in self.filenames:
            try:
                for _, record in tfrecord.records_of(tfrecord.read_file(filename, self.compression), filename):
                    yield [np.array(record, dtype=object)]
            except errors.OpError as e:
                raise self.error(type(e), e.message) from None


class GeneratorDataset(DatasetBase):
    """Elements from functions: `init(args) -> state`, `next(state, args) -> element`
    until it raises OutOfRange, then `finalize(state, args)` (how from_generator runs)."""

    def __init__(self, node, init_fn, next_fn, finalize_fn, init_args, next_args, finalize_args):
        super().__init__(node)
        self.fns = init_fn, next_fn, finalize_fn
        self.args = list(init_args), list(next_args), list(finalize_args)

    def iterate(self):
        init_fn, next_fn, finalize_fn = self.fns
        init_args, next_args, finalize_args = self.args
        state = init_fn(init_args)
        try:
            while True:
                try:
                    element = next_fn(list(state) + next_args)
                except errors.OutOfRangeError:
                    return
                yield element
        finally:
            finalize_fn(list(state) + finalize_args)


class ZipDataset(DatasetBase):
    def __init__(self, node, inputs):
        super().__init__(node)
        self.inputs = list(inputs)

    def iterate(self):
        its = [d.iterate() for d in self.inputs]
        while True:
            element = []
            for it in its:
                try:
                    element.extend(next(it))
                except StopIteration:
                    return
            yield element


class ConcatenateDataset(DatasetBase):
    def __init__(self, node, first, second):
        super().__init__(node)
        self.inputs = first, second

    def iterate(self):
        for d in self.inputs:
            yield from d.iterate()


class MapDataset(DatasetBase):
    def __init__(self, node, input_dataset, fn, captured):
        super().__init__(node)
        self.input, self.fn, self.captured = input_dataset, fn, list(captured)

    def iterate(self):
        fn, captured = self.fn, self.captured
        for element in self.input.iterate():
            yield fn(element + captured)


class UnbatchDataset(DatasetBase):
    """The slices of each element along its first dimension, which all components share."""

    def __init__(self, node, input_dataset):
        super().__init__(node)
        self.input = input_dataset

    def iterate(self):
        for element in self.input.iterate():
            values = [np.asarray(v) for v in element]
            n = values[0].shape[0]
            if any(v.shape[0] != n for v in values):
                raise self.error(errors.InvalidArgumentError,
                                 "Input element must have the same batch size in each component. Component 0 had "
                                 f"size {n} but another component had size "
                                 f"{next(v.shape[0] for v in values if v.shape[0] != n)}.")
            for i in range(n):
                yield [v[i] for v in values]


class FilterDataset(DatasetBase):
    def __init__(self, node, input_dataset, predicate, captured):
        super().__init__(node)
        self.input, self.predicate, self.captured = input_dataset, predicate, list(captured)

    def iterate(self):
        for element in self.input.iterate():
            keep = np.asarray(self.predicate(element + self.captured)[0])
            if keep.shape != () or keep.dtype != np.bool_:
                raise self.error(errors.InvalidArgumentError,
                                 "Filter predicate `predicate` must return a scalar bool.")
            if keep:
                yield element


class FlatMapDataset(DatasetBase):
    def __init__(self, node, input_dataset, fn, captured):
        super().__init__(node)
        self.input, self.fn, self.captured = input_dataset, fn, list(captured)

    def iterate(self):
        for element in self.input.iterate():
            dataset = self.fn(element + self.captured)[0]
            if not isinstance(dataset, DatasetBase):
                raise self.error(errors.InvalidArgumentError, "`flat_map` function must return a dataset.")
            yield from dataset.iterate()


class InterleaveDataset(DatasetBase):
    """TF's interleave: up to `cycle_length` datasets made by `fn` from input
    elements are open at once; `block_length` elements are taken from each in
    turn; an exhausted one is replaced by the next input element's dataset
    when the cycle comes back to its slot."""

    def __init__(self, node, input_dataset, fn, captured, cycle_length, block_length):
        super().__init__(node)
        if cycle_length <= 0 or block_length <= 0:
            raise self.error(errors.InvalidArgumentError,
                             f"cycle_length ({cycle_length}) and block_length ({block_length}) must be positive")
        self.input, self.fn, self.captured = input_dataset, fn, list(captured)
        self.cycle_length, self.block_length = int(cycle_length), int(block_length)

    def _open(self, element):
        dataset = self.fn(element + self.captured)[0]
        if not isinstance(dataset, DatasetBase):
            raise self.error(errors.InvalidArgumentError, "`interleave` function must return a dataset.")
        return dataset.iterate()

    def iterate(self):
        inputs = self.input.iterate()
        slots = [None] * self.cycle_length
        index = block = num_open = 0
        end_of_input = False
        while not end_of_input or num_open:
            current = slots[index]
            if current is not None:
                try:
                    element = next(current)
                except StopIteration:
                    slots[index] = None
                    num_open -= 1
                    index, block = (index + 1) % self.cycle_length, 0
                    continue
                block += 1
                if block == self.block_length:
                    index, block = (index + 1) % self.cycle_length, 0
                yield element
            elif not end_of_input:
                try:
                    slots[index] = self._open(next(inputs))
                    num_open += 1
                except StopIteration:
                    end_of_input = True
            else:
                index, block = (index + 1) % self.cycle_length, 0


def _take_batch(it, batch_size):
    batch = []
    for element in it:
        batch.append(element)
        if len(batch) == batch_size:
            break
    return batch


class BatchDataset(DatasetBase):
    def __init__(self, node, input_dataset, batch_size, drop_remainder):
        super().__init__(node)
        if batch_size <= 0:
            raise self.error(errors.InvalidArgumentError, "Batch size must be greater than zero.")
        self.input, self.batch_size, self.drop_remainder = input_dataset, int(batch_size), bool(drop_remainder)

    def iterate(self):
        it = self.input.iterate()
        while True:
            batch = _take_batch(it, self.batch_size)
            if not batch or (self.drop_remainder and len(batch) < self.batch_size):
                return
            yield self._stack(batch)

    def _stack(self, batch):
        out = []
        for k in range(len(batch[0])):
            values = [np.asarray(e[k]) for e in batch]
            first = values[0].shape
            for i, v in enumerate(values):
                if v.shape != first:
                    raise self.error(errors.InvalidArgumentError,
                                     f"Cannot batch tensors with different shapes in component {k}. First "
                                     f"element had shape {_dims(first)} and element {i} had shape "
                                     f"{_dims(v.shape)}.")
            out.append(np.stack(values))
        return out


class PaddedBatchDataset(DatasetBase):
    def __init__(self, node, input_dataset, batch_size, padded_shapes, padding_values, drop_remainder):
        super().__init__(node)
        if batch_size <= 0:
            raise self.error(errors.InvalidArgumentError, "Batch size must be greater than zero.")
        self.input, self.batch_size, self.drop_remainder = input_dataset, int(batch_size), bool(drop_remainder)
        self.padded_shapes = [[int(d) for d in np.asarray(s).ravel()] for s in padded_shapes]
        self.padding_values = list(padding_values)

    def iterate(self):
        it = self.input.iterate()
        while True:
            batch = _take_batch(it, self.batch_size)
            if not batch or (self.drop_remainder and len(batch) < self.batch_size):
                return
            yield [self._pad(k, [np.asarray(e[k]) for e in batch]) for k in range(len(batch[0]))]

    def _pad(self, k, values):
        want = self.padded_shapes[k]
        for v in values:
            if v.ndim != len(want):
                raise self.error(errors.InvalidArgumentError,
                                 f"All elements in a batch must have the same rank as the padded shape for "
                                 f"component {k}: expected rank {len(want)} but got element with rank {v.ndim}")
        shape = [max((v.shape[d] for v in values), default=0) if n < 0 else n for d, n in enumerate(want)]
        pad = np.asarray(self.padding_values[k])
        out = np.empty([len(values)] + shape, dtype=values[0].dtype)
        out[...] = pad
        for i, v in enumerate(values):
            if any(a > b for a, b in zip(v.shape, shape)):
                raise self.error(errors.DataLossError,  # TF's status for it
                                 f"Attempted to pad to a smaller size than the input element (component {k}: "
                                 f"element shape {_dims(v.shape)}, padded shape {_dims(shape)}).")
            out[(i,) + tuple(slice(0, d) for d in v.shape) + (Ellipsis,)] = v  # (a view even for 0-d strings)
        return out


class ShuffleDataset(DatasetBase):
    """TF's shuffle buffer: fill `buffer_size` elements, then repeatedly emit a
    random one and put the next input element in its place. Each iteration
    draws its order from (seed, seed2, iteration number) when reshuffling."""

    def __init__(self, node, input_dataset, buffer_size, seed, seed2, reshuffle):
        super().__init__(node)
        if buffer_size <= 0:
            raise self.error(errors.InvalidArgumentError, "buffer_size must be greater than zero.")
        self.input, self.buffer_size, self.reshuffle = input_dataset, int(buffer_size), bool(reshuffle)
        if seed == 0 and seed2 == 0:
            seed, seed2 = np.random.SeedSequence().generate_state(2)  # no seed: a different order per run
        self.seeds = (int(seed), int(seed2))
        self.iterations = 0

    def iterate(self):
        epoch = self.iterations if self.reshuffle else 0
        self.iterations += 1
        rng = np.random.RandomState(np.random.SeedSequence([*self.seeds, epoch]).generate_state(1))
        buffer = []
        for element in self.input.iterate():
            buffer.append(element)
            if len(buffer) == self.buffer_size:
                i = rng.randint(len(buffer))
                buffer[i], buffer[-1] = buffer[-1], buffer[i]
                yield buffer.pop()
        while buffer:
            i = rng.randint(len(buffer))
            buffer[i], buffer[-1] = buffer[-1], buffer[i]
            yield buffer.pop()


class RepeatDataset(DatasetBase):
    def __init__(self, node, input_dataset, count):
        super().__init__(node)
        self.input, self.count = input_dataset, int(count)

    def iterate(self):
        epoch = 0
        while self.count < 0 or epoch < self.count:
            produced = False
            for element in self.input.iterate():
                produced = True
                yield element
            if not produced:
                return  # an empty input repeated forever is still empty
            epoch += 1


class TakeDataset(DatasetBase):
    def __init__(self, node, input_dataset, count):
        super().__init__(node)
        self.input, self.count = input_dataset, int(count)

    def iterate(self):
        if self.count == 0:
            return
        for n, element in enumerate(self.input.iterate(), 1):
            yield element
            if n == self.count:
                return


class SkipDataset(DatasetBase):
    def __init__(self, node, input_dataset, count):
        super().__init__(node)
        self.input, self.count = input_dataset, int(count)

    def iterate(self):
        if self.count < 0:
            return
        for n, element in enumerate(self.input.iterate()):
            if n >= self.count:
                yield element


class PrefetchDataset(DatasetBase):
    """Its input's elements, made ahead by a background thread into a buffer of
    `buffer_size` (AUTOTUNE: 2), so the input's work overlaps the consumer's.
    The order is the input's; an error reaches the consumer in its place. The
    thread stops when the iteration ends, or is abandoned (re-initialized
    iterator, closed session): it waits on a full buffer at most POLL_S at a time."""

    POLL_S = 0.1

    def __init__(self, node, input_dataset, buffer_size):
        super().__init__(node)
        if buffer_size < -1:
            raise self.error(errors.InvalidArgumentError, f"buffer_size must be >= -1, got {buffer_size}")
        self.input = input_dataset
        self.buffer_size = 2 if buffer_size == -1 else int(buffer_size)

    def iterate(self):
        if self.buffer_size == 0:
            yield from self.input.iterate()
            return
        buffer = queue.Queue(self.buffer_size)
        stop = threading.Event()
        thread = threading.Thread(target=self._produce, args=(buffer, stop), daemon=True,
                                  name=f"graphrt-prefetch-{self.node}")
        thread.start()
        try:
            while True:
                try:
                    kind, value = buffer.get(timeout=self.POLL_S)
                except queue.Empty:
                    if not thread.is_alive() and buffer.empty():
                        raise self.error(errors.InternalError, "the prefetch thread ended without an end "
                                                               "of sequence") from None
                    continue
                if kind == "element":
                    yield value
                elif kind == "error":
                    raise value
                else:
                    return
        finally:
            stop.set()

    def _produce(self, buffer, stop):
        def put(item):
            while not stop.is_set():
                try:
                    buffer.put(item, timeout=self.POLL_S)
                    return True
                except queue.Full:
                    continue
            return False
        elements = self.input.iterate()
        try:
            for element in elements:
                if not put(("element", element)):
                    return
            put(("end", None))
        except Exception as e:  # noqa: BLE001 - handed to the consumer, raised there
            put(("error", e))
        finally:
            elements.close()


class CacheDataset(DatasetBase):
    """The first iteration that runs to the end records the elements; later
    iterations replay them without running the input again. In memory, or,
    with a filename, in `<filename>.graphrt-cache.npz` (numpy arrays, no
    pickles), which later runs (other sessions, other programs) read instead."""

    SUFFIX = ".graphrt-cache.npz"

    def __init__(self, node, input_dataset, filename):
        super().__init__(node)
        filename = filename.decode() if isinstance(filename, bytes) else str(filename)
        self.input = input_dataset
        self.path = filename + self.SUFFIX if filename else None
        self.cached = None

    def iterate(self):
        if self.cached is None and self.path is not None and os.path.exists(self.path):
            self.cached = self._load()
        if self.cached is not None:
            yield from self.cached
            return
        recorded = []
        for element in self.input.iterate():
            recorded.append(element)
            yield element
        if self.path is not None:
            self._save(recorded)
        self.cached = recorded

    def _save(self, elements):
        arrays = {}
        for i, element in enumerate(elements):
            for k, value in enumerate(element):
                value = np.asarray(value)
                if value.dtype == object:  # strings: their bytes end to end, and their lengths
                    items = [bytes(v) for v in value.ravel()]
                    arrays[f"e{i}_c{k}_s"] = np.frombuffer(b"".join(items), dtype=np.uint8)
                    arrays[f"e{i}_c{k}_n"] = np.array([len(v) for v in items], np.int64).reshape(value.shape)
                else:
                    arrays[f"e{i}_c{k}"] = value
        tmp = f"{self.path}.tmp-{os.getpid()}-{threading.get_ident()}.npz"
        try:
            np.savez(tmp, count=np.array(len(elements)), **arrays)
            os.replace(tmp, self.path)
        except OSError as e:
            raise self.error(errors.UnknownError, f"Could not write the cache {self.path}: {e}") from None

    def _load(self):
        try:
            with np.load(self.path, allow_pickle=False) as z:
                keys = {}
                for key in z.files:
                    if key == "count" or key.endswith("_s"):
                        continue
                    i, k = key.split("_")[:2]
                    value = z[key]
                    if key.endswith("_n"):
                        data, ends = z[key[:-1] + "s"].tobytes(), np.cumsum(value.ravel())
                        items = [data[e - n:e] for e, n in zip(ends, value.ravel())]
                        value = np.empty(value.shape, dtype=object)
                        value.ravel()[:] = items if items else []
                    keys[(int(i[1:]), int(k[1:]))] = value
                count = int(z["count"])
        except (OSError, ValueError, KeyError) as e:
            raise self.error(errors.DataLossError, f"Could not read the cache {self.path}: {e}") from None
        width = 1 + max((k for _, k in keys), default=-1)
        return [[keys[(i, k)] for k in range(width)] for i in range(count)]


def _dims(shape):
    return "[" + ",".join(str(int(d)) for d in shape) + "]"
