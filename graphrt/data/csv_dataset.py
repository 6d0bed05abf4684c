"""The run-time CsvDataset (TF's CSVDatasetV2): the records of CSV files, each
converted field by field to the types of the record defaults.

Records are parsed as TF's reader parses them: a record ends at a newline
("\\n" or "\\r\\n") outside quotes; with `use_quote_delim` a field starting with
'"' is quoted (it may hold delimiters and newlines, '""' stands for '"').
A bad record is an InvalidArgumentError with TF's message; the iteration can
go on after it with the next record (what ignore_errors does), as TF's can.
"""
import re

import numpy as np

from .. import errors
from ..data_flow.io_ops import decompress, read_bytes
from .datasets import DatasetBase
from .resumable_datasets import Failed

_TYPE_NAMES = {"float32": "float", "float64": "double"}
_INT = re.compile(rb"^\s*[+-]?\d+\s*$")
_INT_RANGE = {"int32": (-2 ** 31, 2 ** 31 - 1), "int64": (-2 ** 63, 2 ** 63 - 1)}


class _RecordError(Exception):
    """A bad record: the message of TF's InvalidArgumentError for it."""


class CsvDataset(DatasetBase):

    def __init__(self, node, filenames, compression, header, delim, use_quote_delim, na_value, select_cols,
                 defaults, exclude_cols, output_types):
        super().__init__(node)
        self.filenames = [f.decode() if isinstance(f, bytes) else str(f) for f in np.asarray(filenames).ravel()]
        self.compression = _text(compression)
        if self.compression not in ("", "GZIP", "ZLIB"):
            raise self.error(errors.InvalidArgumentError, f"Unsupported compression_type: {self.compression!r}")
        delim = _text(delim).encode()
        if len(delim) != 1:
            raise self.error(errors.InvalidArgumentError, "field_delim should be only 1 char")
        self.delim, self.quoted, self.header = delim, bool(use_quote_delim), bool(header)
        self.na_value = _text(na_value).encode()
        self.types = list(output_types)
        self.defaults = []
        for d in defaults:
            d = np.asarray(d)
            if d.size > 1:
                raise self.error(errors.InvalidArgumentError,
                                 "There should only be 1 default per field but field has "
                                 f"{d.size}")
            self.defaults.append(d.reshape(-1)[0] if d.size else None)
        self.select = [int(c) for c in np.asarray(select_cols).ravel()]
        if np.asarray(exclude_cols).size:
            raise self.error(errors.UnimplementedError, "CsvDataset: exclude_cols is not supported by graphrt")
        if self.select:
            if any(c < 0 for c in self.select):
                raise self.error(errors.InvalidArgumentError, "select_cols should be non-negative indices")
            if any(a >= b for a, b in zip(self.select, self.select[1:])):
                raise self.error(errors.InvalidArgumentError, "select_cols should be strictly increasing indices")
            if len(self.select) != len(self.types):
                raise self.error(errors.InvalidArgumentError, "select_cols should match output size")

    def iterate(self):
        for item in self.marked():
            if isinstance(item, Failed):
                raise item.error
            yield item

    def marked(self):
        """The records' elements, a bad record a Failed item; a file that cannot be read ends them."""
        for filename in self.filenames:
            data = decompress(read_bytes(filename, self.node), self.compression, filename, self.node)
            pos = 0
            if self.header:
                if not data:
                    raise self.error(errors.InvalidArgumentError, "Can't read header of file")
                end = data.find(b"\n")
                pos = len(data) if end < 0 else end + 1
            while pos < len(data):
                try:
                    element, pos = self._record(data, pos)
                except _RecordError as e:
                    error, pos = e.args
                    yield Failed(self.error(errors.InvalidArgumentError, error))
                    continue
                yield element

    # -- one record ------------------------------------------------------------------------------------
    def _record(self, data, pos):
        """(element, position after the record) of the record at `pos`, or _RecordError(message,
        position after the record)."""
        columns = len(self.types)
        out, col = [], 0
        try:
            while True:
                field, pos, last = self._field(data, pos)
                wanted = col in self.select if self.select else True
                if wanted:
                    if len(out) == columns:
                        raise _RecordError(f"Expect {columns} fields but have more in record", pos)
                    out.append(self._value(field, len(out), pos))
                col += 1
                if last:
                    break
                if self.select and len(out) == columns and col > self.select[-1]:
                    pos = _end_of_record(data, pos)  # the columns after the last selected one are not read
                    break
            if len(out) < columns:
                raise _RecordError(f"Expect {columns} fields but have {len(out)} in record", pos)
        except _RecordError as e:  # the rest of a bad record is skipped
            message, at = e.args
            raise _RecordError(message, _end_of_record(data, at)) from None
        return out, pos

    def _field(self, data, pos):
        """(field bytes, position after it and its delimiter, whether it ended the record)."""
        n, delim = len(data), self.delim
        if self.quoted and data[pos:pos + 1] == b'"':
            field, i = bytearray(), pos + 1
            while True:
                if i >= n:
                    raise _RecordError("Reached end of file without closing quoted field in record", n)
                c = data[i:i + 1]
                if c != b'"':
                    field += c
                    i += 1
                    continue
                after = data[i + 1:i + 2]
                if after == b'"':
                    field += b'"'
                    i += 2
                elif after == delim:
                    return bytes(field), i + 2, False
                elif after in (b"", b"\n"):
                    return bytes(field), i + 2, True
                elif after == b"\r" and data[i + 2:i + 3] in (b"\n", b""):
                    return bytes(field), i + 3, True
                else:  # a lone quote inside: TF drops it and reads on in the quoted field
                    i += 1
        i = pos
        while i < n:
            c = data[i:i + 1]
            if c == delim:
                return data[pos:i], i + 1, False
            if c == b"\n":
                return data[pos:i - 1] if data[i - 1:i] == b"\r" and i > pos else data[pos:i], i + 1, True
            if self.quoted and c == b'"':
                raise _RecordError("Unquoted fields cannot have quotes inside", i)
            i += 1
        return data[pos:n], n, True

    def _value(self, field, col, pos):
        dtype, default = self.types[col], self.defaults[col]
        if field == b"" or field == self.na_value:
            if default is None:
                raise _RecordError(f"Field {col} is required but missing in record!", pos)
            return np.array(default, dtype=object if dtype.name == "string" else dtype.np)
        name = dtype.name
        if name == "string":
            return np.array(field, dtype=object)
        if name in _INT_RANGE:
            lo, hi = _INT_RANGE[name]
            if _INT.match(field) and lo <= int(field) <= hi:
                return np.array(int(field), dtype=dtype.np)
        elif b"_" not in field:
            try:
                return np.array(float(field), dtype=dtype.np)
            except ValueError:
                pass
        raise _RecordError(f"Field {col} in record is not a valid {_TYPE_NAMES.get(name, name)}: "
                           f"{field.decode(errors='replace')}", pos)


def _ended(data, pos):
    """Whether `pos` is just after a record's end."""
    return pos >= len(data) or data[pos - 1:pos] == b"\n"


def _end_of_record(data, pos):
    """The position after the end of the record holding `pos` (quotes not considered)."""
    if _ended(data, pos):
        return pos
    end = data.find(b"\n", pos)
    return len(data) if end < 0 else end + 1


def _text(value):
    value = value.item() if isinstance(value, np.ndarray) else value
    return value.decode() if isinstance(value, bytes) else str(value)
