"""TFRecord files (`tf.python_io`): each record is its length (uint64 LE),
the masked CRC-32C of those 8 bytes, the data, and the masked CRC-32C of
the data. A compressed file (GZIP or ZLIB) is the whole framed stream
compressed, as TF writes it. Damage is a DataLossError naming the file and
the offset of the record, with TF's wording."""
import os
import struct
import zlib

from .. import errors
from ..util import crc32c


class TFRecordCompressionType:
    """The compression of a TFRecord file."""
    NONE = 0
    ZLIB = 1
    GZIP = 2


# zlib's window bits: 31 adds a gzip header and trailer, 15 a zlib one.
_WBITS = {"ZLIB": 15, "GZIP": 31}


class TFRecordOptions:
    """Options for TFRecord files: only the compression changes what graphrt writes
    (the zlib tuning knobs are accepted, compression_level and window_bits used)."""

    compression_type_map = {TFRecordCompressionType.ZLIB: "ZLIB", TFRecordCompressionType.GZIP: "GZIP",
                            TFRecordCompressionType.NONE: ""}

    def __init__(self, compression_type=None, flush_mode=None, input_buffer_size=None, output_buffer_size=None,
                 window_bits=None, compression_level=None, compression_method=None, mem_level=None,
                 compression_strategy=None):
        self.get_compression_type_string(compression_type)
        self.compression_type = compression_type
        self.flush_mode = flush_mode
        self.input_buffer_size = input_buffer_size
        self.output_buffer_size = output_buffer_size
        self.window_bits = window_bits
        self.compression_level = compression_level
        self.compression_method = compression_method
        self.mem_level = mem_level
        self.compression_strategy = compression_strategy

    @classmethod
    def get_compression_type_string(cls, options):
        """'', 'ZLIB' or 'GZIP' from a TFRecordOptions, a TFRecordCompressionType value or a string."""
        if not options:
            return ""
        if isinstance(options, TFRecordOptions):
            return cls.get_compression_type_string(options.compression_type)
        if options in cls.compression_type_map:
            return cls.compression_type_map[options]
        if options in cls.compression_type_map.values():
            return options
        raise ValueError(f'Not a valid compression_type: "{options}"')


def compression_of(value):
    """The compression type string of an op's `compression_type` input or attr."""
    value = value.decode() if isinstance(value, bytes) else str(value)
    if value not in ("", "ZLIB", "GZIP"):
        raise errors.InvalidArgumentError(f"Unsupported compression_type: {value}")
    return value


def frame(record):
    """One record as it is stored."""
    header = struct.pack("<Q", len(record))
    return b"".join((header, struct.pack("<I", crc32c.masked_crc32c(header)), record,
                     struct.pack("<I", crc32c.masked_crc32c(record))))


def records_of(data, path):
    """(offset, record) for the records of the uncompressed contents `data` of the file `path`,
    checksums verified."""
    pos, end = 0, len(data)
    while pos < end:
        if pos + 12 > end:
            raise errors.DataLossError(f"truncated record at {pos} in {path}: read less bytes than requested")
        header = data[pos:pos + 8]
        (length,) = struct.unpack_from("<Q", data, pos)
        if crc32c.unmask(struct.unpack_from("<I", data, pos + 8)[0]) != crc32c.crc32c(header):
            raise errors.DataLossError(f"corrupted record at {pos} in {path} (Is this even a TFRecord file?)")
        stop = pos + 12 + length
        if stop + 4 > end:
            raise errors.DataLossError(f"truncated record at {pos} in {path}: read less bytes than requested")
        record = data[pos + 12:stop]
        if crc32c.unmask(struct.unpack_from("<I", data, stop)[0]) != crc32c.crc32c(record):
            raise errors.DataLossError(f"corrupted record at {pos} in {path}")
        yield pos, record
        pos = stop + 4


def read_file(path, compression=""):
    """The uncompressed contents of a TFRecord file, with TF's errors for a missing or damaged file."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise errors.NotFoundError(f"{path}; No such file or directory") from None
    except IsADirectoryError:
        raise errors.FailedPreconditionError(f"{path}; Is a directory") from None
    if compression:
        try:
            # a stream without its end (a writer that flushed but is still open) yields what it holds
            data = zlib.decompressobj(_WBITS[compression]).decompress(data)
        except zlib.error as e:
            raise errors.DataLossError(f"{path}: {e}") from None
    return data


def tf_record_iterator(path, options=None):
    """The records of the TFRecord file `path`, in order (`tf.python_io.tf_record_iterator`)."""
    compression = TFRecordOptions.get_compression_type_string(options)
    path = os.fspath(path)
    return (record for _, record in records_of(read_file(path, compression), path))


class TFRecordWriter:
    """Writes records to a TFRecord file (`tf.python_io.TFRecordWriter`, `tf.io.TFRecordWriter`)."""

    def __init__(self, path, options=None):
        if not isinstance(options, TFRecordOptions):
            options = TFRecordOptions(compression_type=options)
        compression = TFRecordOptions.get_compression_type_string(options)
        self._path = os.fspath(path)
        try:
            self._file = open(self._path, "wb")
        except FileNotFoundError:
            raise errors.NotFoundError(f"{self._path}; No such file or directory") from None
        self._compressor = None
        if compression:
            level = -1 if options.compression_level is None else options.compression_level
            wbits = _WBITS[compression]
            if options.window_bits is not None:
                wbits = options.window_bits + (16 if compression == "GZIP" else 0)
            self._compressor = zlib.compressobj(level, zlib.DEFLATED, wbits)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def write(self, record):
        """Appends one record (bytes; a str is written as UTF-8)."""
        if self._file is None:
            raise errors.FailedPreconditionError("Writer is closed.")
        data = frame(record.encode() if isinstance(record, str) else bytes(record))
        self._file.write(self._compressor.compress(data) if self._compressor else data)

    def flush(self):
        if self._file is None:
            raise errors.FailedPreconditionError("Writer is closed.")
        if self._compressor:
            self._file.write(self._compressor.flush(zlib.Z_SYNC_FLUSH))
        self._file.flush()

    def close(self):
        if self._file is None:
            return
        if self._compressor:
            self._file.write(self._compressor.flush())
        self._file.close()
        self._file = None
