"""Readers: `tf.WholeFileReader`, `tf.TextLineReader`, `tf.FixedLengthRecordReader`,
`tf.IdentityReader` (TF1's ReaderBase).

A reader is a resource (like a queue) that turns the file names it
dequeues from a queue of work into records:

    filenames = tf.train.string_input_producer(["a.txt", "b.txt"])
    key, value = tf.TextLineReader().read(filenames)   # b"a.txt:1", b"first line"

WholeFileReader gives one record per file (key: the file name, value: its
contents); TextLineReader one per line (key `<file>:<line number>`, value
the line without its newline), optionally skipping header lines.
FixedLengthRecordReader cuts each file (after an optional GZIP/ZLIB
decompression) into records of `record_bytes` between a header and a footer,
`hop_bytes` apart when given (key `<file>:<record index>`; a last record too
short for `record_bytes` is dropped, as TF's reader drops it); CIFAR-10's
binary files are read this way. IdentityReader's record is the work item
itself (key and value both the dequeued string).

`read` takes the next record, dequeuing a new file name when the current
file is used up; the dequeue waits asynchronously like any queue dequeue,
so an empty work queue holds no thread and ends with the step (deadline,
cancellation) or with OutOfRangeError once the queue is closed and empty.
"""
import collections
import threading

import numpy as np

from .. import errors
from ..framework.graph import get_default_graph
from ..framework.registry import ASYNC, REQUIRED, not_differentiable, register_kernel, register_op
from ..framework.tensor_shape import TensorShape
from .io_ops import decompress, read_bytes

_SCALAR = TensorShape([])
_READER_ATTRS = {"container": "", "shared_name": ""}
register_op("WholeFileReaderV2", [], ["reader_handle: resource"], attrs=_READER_ATTRS,
            shape_fn=lambda ctx: _SCALAR, is_stateful=True)
register_op("TextLineReaderV2", [], ["reader_handle: resource"], attrs=dict(_READER_ATTRS, skip_header_lines=0),
            shape_fn=lambda ctx: _SCALAR, is_stateful=True)
register_op("FixedLengthRecordReaderV2", [], ["reader_handle: resource"],
            attrs=dict(_READER_ATTRS, header_bytes=0, record_bytes=REQUIRED, footer_bytes=0, hop_bytes=0, encoding=""),
            shape_fn=lambda ctx: _SCALAR, is_stateful=True)
register_op("IdentityReaderV2", [], ["reader_handle: resource"], attrs=_READER_ATTRS,
            shape_fn=lambda ctx: _SCALAR, is_stateful=True)
register_op("ReaderReadV2", ["reader_handle: resource", "queue_handle: resource"], ["key: string", "value: string"],
            shape_fn=lambda ctx: [_SCALAR, _SCALAR], is_stateful=True)
register_op("ReaderReadUpToV2", ["reader_handle: resource", "queue_handle: resource", "num_records: int64"],
            ["keys: string", "values: string"], shape_fn=lambda ctx: [TensorShape([None])] * 2, is_stateful=True)
register_op("ReaderNumRecordsProducedV2", ["reader_handle: resource"], ["records_produced: int64"],
            shape_fn=lambda ctx: _SCALAR, is_stateful=True)
register_op("ReaderNumWorkUnitsCompletedV2", ["reader_handle: resource"], ["units_completed: int64"],
            shape_fn=lambda ctx: _SCALAR, is_stateful=True)
register_op("ReaderResetV2", ["reader_handle: resource"], [], is_stateful=True)
for _name in ("WholeFileReaderV2", "TextLineReaderV2", "FixedLengthRecordReaderV2", "IdentityReaderV2", "ReaderReadV2", "ReaderReadUpToV2",
              "ReaderNumRecordsProducedV2", "ReaderNumWorkUnitsCompletedV2", "ReaderResetV2"):
    not_differentiable(_name)


class ReaderState:
    """The work unit (file) being read, the records it has left, and the counters.

    As TF's ReaderBase: `read` and `read_up_to` stop at the end of a work unit
    that gave them records (so `read_up_to` never mixes two files), and a
    unit is finished when a read finds it has nothing left. A reader whose
    unit is one record (`one_record_units`: whole files, identity) finishes
    it with that record.
    """

    def __init__(self, name, records_of, one_record_units=False):
        self.name = name
        self._records_of = records_of  # (file name, node) -> list of (key, value)
        self._one_record_units = one_record_units
        self._lock = threading.Lock()
        self._records = collections.deque()
        self._work = None  # the work unit being read
        self.records_produced = 0
        self.work_units_completed = 0

    def __repr__(self):
        return (f"<Reader '{self.name}': {self._work or 'no work'}, {len(self._records)} records left, "
                f"{self.records_produced} produced>")

    def reset(self):
        with self._lock:
            self._records.clear()
            self._work = None
            self.records_produced = 0
            self.work_units_completed = 0

    def read(self, queue, n, up_to, done, node, step):
        """Calls `done(err, keys, values)` with `n` records (with `up_to`, fewer when a work unit ends)."""
        keys, values = [], []

        def finish(err=None):
            if err is None:
                with self._lock:
                    self.records_produced += len(keys)
                done(None, keys, values)
            else:
                done(err, None, None)

        def take():
            with self._lock:
                while True:
                    if len(keys) == n:
                        break
                    if self._work is None:
                        break
                    wanted = n - len(keys)
                    while len(keys) < n and self._records:
                        k, v = self._records.popleft()
                        keys.append(k)
                        values.append(v)
                    # the unit is over when a read found less than it wanted, or gave a one-record unit's record
                    if not self._records and (len(keys) < n or self._one_record_units) and wanted:
                        self._work = None
                        self.work_units_completed += 1
                        if keys:
                            break
                need_work = self._work is None and len(keys) < n and not keys
            if need_work:
                queue.dequeue(1, False, got_work, node, step, batch=False)
            else:
                finish()

        def got_work(err, element):
            if err is not None:
                finish(err)
                return
            try:
                filename = _filename(element[0])
                records = self._records_of(filename, node)
            except errors.OpError as e:
                finish(e)
                return
            with self._lock:
                self._records = collections.deque(records)
                self._work = filename
            take()

        take()


def _filename(value):
    v = np.asarray(value).item()
    return v.decode() if isinstance(v, bytes) else str(v)


def _whole_file_records(filename, node):
    return [(filename.encode(), read_bytes(filename, node))]


def _text_line_records(skip):
    def records(filename, node):
        lines = read_bytes(filename, node).split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()  # the newline ending the last line starts no new one
        out = []
        for i, line in enumerate(lines):
            if i < skip:
                continue
            if line.endswith(b"\r"):
                line = line[:-1]
            out.append((f"{filename}:{i + 1}".encode(), line))
        return out
    return records


def _fixed_length_records(ctx):
    header, record = int(ctx.attr("header_bytes")), int(ctx.attr("record_bytes"))
    footer, hop, encoding = int(ctx.attr("footer_bytes")), int(ctx.attr("hop_bytes")), ctx.attr("encoding")
    if record <= 0 or header < 0 or footer < 0 or hop < 0:
        raise errors.InvalidArgumentError(f"FixedLengthRecordReader {ctx.name}: record_bytes must be positive and "
                                          f"header_bytes, footer_bytes, hop_bytes non-negative (got {record}, "
                                          f"{header}, {footer}, {hop})", node=ctx.name)
    if encoding not in ("", "GZIP", "ZLIB"):
        raise errors.InvalidArgumentError(f"Unsupported encoding {encoding!r} of FixedLengthRecordReader "
                                          f"{ctx.name}: '', 'GZIP' or 'ZLIB'", node=ctx.name)
    step = hop or record

    def records(filename, node):
        data = decompress(read_bytes(filename, node), encoding, filename, node)
        body = data[header:max(header, len(data) - footer)]
        return [(f"{filename}:{i}".encode(), body[start:start + record])
                for i, start in enumerate(range(0, len(body) - record + 1, step))]
    return records


def _identity_records(work, node):
    return [(work.encode(), work.encode())]


def _reader_factory(records_for, one_record_units=False):
    def factory(ctx):
        shared = ctx.attr("shared_name")
        container = ctx.attr("container") if shared else "_graphrt_readers"
        key = shared or ctx.name
        records_of = records_for(ctx)
        resources = ctx.device.resources
        return lambda: resources.lookup_or_create(container, key,
                                                  lambda: ReaderState(key, records_of, one_record_units))
    return factory


register_kernel("WholeFileReaderV2", "CPU", inexpensive=True, host_only=True)(
    _reader_factory(lambda ctx: _whole_file_records, one_record_units=True))
register_kernel("TextLineReaderV2", "CPU", inexpensive=True, host_only=True)(
    _reader_factory(lambda ctx: _text_line_records(int(ctx.attr("skip_header_lines")))))
register_kernel("FixedLengthRecordReaderV2", "CPU", inexpensive=True, host_only=True)(
    _reader_factory(_fixed_length_records))
register_kernel("IdentityReaderV2", "CPU", inexpensive=True, host_only=True)(
    _reader_factory(lambda ctx: _identity_records, one_record_units=True))


def _as_output(keys, values):
    return np.array(keys, dtype=object).reshape(-1), np.array(values, dtype=object).reshape(-1)


@register_kernel("ReaderReadV2", "CPU", kind=ASYNC, host_only=True)
def _read(ctx):
    node = ctx.name

    def read(step, args, done):
        reader, queue = args

        def finish(err, keys, values):
            if err is not None:
                done(err)
            else:
                done(None, (np.array(keys[0], dtype=object), np.array(values[0], dtype=object)))
        reader.read(queue, 1, False, finish, node, step)
    return read


@register_kernel("ReaderReadUpToV2", "CPU", kind=ASYNC, host_only=True, host_memory=("num_records",))
def _read_up_to(ctx):
    node = ctx.name

    def read_up_to(step, args, done):
        reader, queue, n = args[0], args[1], int(args[2])
        if n <= 0:
            raise errors.InvalidArgumentError(f"num_records must be positive, got {n}", node=node)

        def finish(err, keys, values):
            done(err) if err is not None else done(None, _as_output(keys, values))
        reader.read(queue, n, True, finish, node, step)
    return read_up_to


register_kernel("ReaderNumRecordsProducedV2", "CPU", host_only=True)(
    lambda ctx: lambda reader: np.array(reader.records_produced, dtype=np.int64))
register_kernel("ReaderNumWorkUnitsCompletedV2", "CPU", host_only=True)(
    lambda ctx: lambda reader: np.array(reader.work_units_completed, dtype=np.int64))
register_kernel("ReaderResetV2", "CPU", host_only=True)(lambda ctx: lambda reader: reader.reset())


# -- Python API --------------------------------------------------------------------------------

class ReaderBase:
    """A reader of records from the files named by a queue (TF1's `tf.ReaderBase`)."""

    def __init__(self, reader_ref):
        self._reader_ref = reader_ref

    @property
    def reader_ref(self):
        return self._reader_ref

    @property
    def supports_serialize(self):
        return False

    def __repr__(self):
        return f"<{type(self).__name__} '{self._reader_ref.op.name}'>"

    def _op(self, op_type, inputs, name, n_out):
        g = self._reader_ref.graph
        with g.as_default(), g.colocate_with(self._reader_ref.op), g.name_scope(name) as scope:
            op = g.create_op(op_type, [self._reader_ref] + list(inputs), {}, name=scope)
        return op.outputs if n_out != 1 else op.outputs[0]

    def read(self, queue, name=None):
        """The next (key, value) record; dequeues a file name from `queue` when it needs one."""
        return tuple(self._op("ReaderReadV2", [_queue_ref(queue)], name or "ReaderReadV2", 2))

    def read_up_to(self, queue, num_records, name=None):
        """Up to `num_records` (keys, values); fewer only when the queue of work is exhausted."""
        from ..framework.op_builder import convert_to_tensor
        from ..framework import dtypes
        g = self._reader_ref.graph
        with g.as_default(), g.name_scope(name or "ReaderReadUpToV2") as scope:
            n = convert_to_tensor(num_records, dtype=dtypes.int64, name="num_records")
            return tuple(self._op("ReaderReadUpToV2", [_queue_ref(queue), n], scope, 2))

    def num_records_produced(self, name=None):
        return self._op("ReaderNumRecordsProducedV2", [], name or "ReaderNumRecordsProducedV2", 1)

    def num_work_units_completed(self, name=None):
        return self._op("ReaderNumWorkUnitsCompletedV2", [], name or "ReaderNumWorkUnitsCompletedV2", 1)

    def reset(self, name=None):
        """Forgets buffered records and zeroes the counters."""
        g = self._reader_ref.graph
        with g.as_default(), g.colocate_with(self._reader_ref.op), g.name_scope(name or "ReaderResetV2") as scope:
            return g.create_op("ReaderResetV2", [self._reader_ref], {}, name=scope)


def _queue_ref(queue):
    return getattr(queue, "queue_ref", queue)


def _make_reader(op_type, name, attrs):
    g = get_default_graph()
    with g.name_scope(name) as scope:
        return g.create_op(op_type, [], attrs, name=scope).outputs[0]


class WholeFileReader(ReaderBase):
    """Each file is one record: key the file name, value its whole contents."""

    def __init__(self, name=None):
        super().__init__(_make_reader("WholeFileReaderV2", name or "WholeFileReaderV2", {}))


class TextLineReader(ReaderBase):
    """Each line is one record: key `<file>:<line number>`, value the line (no newline)."""

    def __init__(self, skip_header_lines=None, name=None):
        super().__init__(_make_reader("TextLineReaderV2", name or "TextLineReaderV2",
                                      {"skip_header_lines": int(skip_header_lines or 0)}))


class FixedLengthRecordReader(ReaderBase):
    """Records of `record_bytes` bytes between a header and a footer of each file, `hop_bytes`
    apart when given; `encoding` "GZIP" or "ZLIB" for compressed files."""

    def __init__(self, record_bytes, header_bytes=None, footer_bytes=None, hop_bytes=None, name=None, encoding=None):
        super().__init__(_make_reader("FixedLengthRecordReaderV2", name or "FixedLengthRecordReaderV2", {
            "record_bytes": int(record_bytes), "header_bytes": int(header_bytes or 0),
            "footer_bytes": int(footer_bytes or 0), "hop_bytes": int(hop_bytes or 0), "encoding": encoding or ""}))


class IdentityReader(ReaderBase):
    """Each work item is one record: key and value the dequeued string itself."""

    def __init__(self, name=None):
        super().__init__(_make_reader("IdentityReaderV2", name or "IdentityReaderV2", {}))
