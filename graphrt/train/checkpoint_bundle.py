"""TensorFlow's V2 checkpoint files (a "tensor bundle"), read and written.

    <prefix>.index                  an SSTable: "" -> BundleHeaderProto, name -> BundleEntryProto
    <prefix>.data-00000-of-00001    the tensors' bytes, back to back

A numeric tensor is its raw little-endian bytes; a string tensor is the
varint64 lengths, a masked crc32c of the lengths (as uint64s), then the
bytes. Each entry keeps the masked crc32c of what was written, checked on
every read, so a damaged file is a DataLossError naming the file and the
tensor, never a silently wrong value. The layout is TF's BundleWriter's
(tensors in key order, no alignment padding), so the same tensors give the
same bytes as TensorFlow.
"""
import os
import struct
import tempfile

import numpy as np

from .. import errors
from ..framework import dtypes as dtypes_lib
from ..framework import tensor_util
from ..util import crc32c
from . import sstable
from .checkpoint_protos import BundleEntryProto, BundleHeaderProto

_VERSION = 1  # TF's kTensorBundleVersion


def index_path(prefix):
    return prefix + ".index"


def data_path(prefix, shard=0, num_shards=1):
    return f"{prefix}.data-{shard:05d}-of-{num_shards:05d}"


def _lengths_for_crc(lengths):
    # TF checksums each length as a uint32 (uint64 past 4 GiB, as older checkpoints had only uint32)
    return b"".join(struct.pack("<I", n) if n <= 0xFFFFFFFF else struct.pack("<Q", n) for n in lengths)


def _string_bytes(arr):
    items = [v if isinstance(v, bytes) else str(v).encode() for v in arr.ravel()]
    lengths = b"".join(sstable._varint(len(s)) for s in items)
    packed = _lengths_for_crc([len(s) for s in items])
    length_check = struct.pack("<I", crc32c.mask(crc32c.crc32c(packed)))
    body = b"".join(items)
    return lengths + length_check + body, crc32c.crc32c(packed + length_check + body)


def write_bundle(prefix, tensors, shard_of=None, num_shards=1):
    """Writes `tensors` ({name: ndarray}) as a V2 checkpoint at `prefix`; returns the data bytes.

    `shard_of` ({name: shard index}) splits the data over `num_shards` files
    `<prefix>.data-0000k-of-0000N` (TF's sharded save: one shard per device),
    each holding its tensors in key order. Every file is written to a
    temporary and renamed, the data first, so a crash leaves no half index.
    """
    directory = os.path.dirname(os.path.abspath(prefix))
    shard_of = shard_of or {}
    entries, chunks, offsets = [], [[] for _ in range(num_shards)], [0] * num_shards
    for name in sorted(tensors):
        value = tensors[name]
        shard = shard_of.get(name, 0)
        if not 0 <= shard < num_shards:
            raise ValueError(f"tensor {name} is assigned to shard {shard} of {num_shards}")
        arr = np.asarray(value, dtype=object) if isinstance(value, (bytes, str)) else np.asarray(value)
        if arr.dtype.kind in "USO":
            dtype = dtypes_lib.string
            raw, crc = _string_bytes(arr)
        else:
            dtype = dtypes_lib.as_dtype(arr.dtype)
            raw = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<")).tobytes()
            crc = crc32c.crc32c(raw)
        entry = BundleEntryProto(dtype=tensor_util.dtype_to_enum(dtype), shape=tensor_util.shape_to_proto(arr.shape),
                                 shard_id=shard, offset=offsets[shard], size=len(raw), crc32c=crc32c.mask(crc))
        entries.append((name.encode(), entry.SerializeToString()))
        chunks[shard].append(raw)
        offsets[shard] += len(raw)
    header = BundleHeaderProto(num_shards=num_shards, endianness=0)
    header.version.producer = _VERSION
    index = sstable.write_table([(b"", header.SerializeToString())] + entries)
    for shard in range(num_shards):
        _atomic_write(directory, data_path(prefix, shard, num_shards), chunks[shard])
    _atomic_write(directory, index_path(prefix), [index])
    return sum(offsets)


def _atomic_write(directory, path, chunks):
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=os.path.basename(path) + ".tempstate")
    try:
        with os.fdopen(fd, "wb") as f:
            for c in chunks:
                f.write(c)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


class BundleReader:
    """Reads a V2 checkpoint: `entries` (name -> BundleEntryProto) and `read(name)`."""

    def __init__(self, prefix):
        self.prefix = prefix
        path = index_path(prefix)
        if not os.path.exists(path):
            raise errors.NotFoundError(f"Unsuccessful TensorSliceReader constructor: Failed to find any "
                                       f"matching files for {prefix}")
        table = sstable.read_table(path)
        try:
            header = BundleHeaderProto.FromString(table.get(b"", b""))
            self.entries = {k.decode(): BundleEntryProto.FromString(v) for k, v in table.items() if k}
        except Exception as e:  # protobuf's DecodeError, or a key that is not UTF-8
            raise errors.DataLossError(f"Checkpoint index {path} has a malformed entry: {e}") from None
        if header.endianness != 0:
            raise errors.UnimplementedError(f"Checkpoint {prefix} is big-endian; only little-endian is supported")
        if header.version.producer > _VERSION and _VERSION in header.version.bad_consumers:
            raise errors.InvalidArgumentError(f"Checkpoint {prefix} is too new for this reader")
        self.num_shards = max(1, header.num_shards)
        self._files = {}

    def dtype(self, name):
        return tensor_util.enum_to_dtype(self._entry(name).dtype)

    def shape(self, name):
        return [d.size for d in self._entry(name).shape.dim]

    def _entry(self, name):
        try:
            return self.entries[name]
        except KeyError:
            raise errors.NotFoundError(f"Key {name} not found in checkpoint {self.prefix}") from None

    def _data(self, shard):
        if shard not in self._files:
            path = data_path(self.prefix, shard, self.num_shards)
            if not os.path.exists(path):
                raise errors.DataLossError(f"Checkpoint data file {path} is missing")
            with open(path, "rb") as f:
                self._files[shard] = (path, f.read())
        return self._files[shard]

    def read(self, name):
        """The tensor `name` as a numpy array; checks its size and checksum."""
        entry = self._entry(name)
        if entry.slices:
            raise errors.UnimplementedError(f"Tensor {name} in checkpoint {self.prefix} is saved in slices "
                                            f"(a partitioned variable); graphrt reads whole tensors only")
        try:
            dtype = tensor_util.enum_to_dtype(entry.dtype)
        except TypeError as e:
            raise errors.InvalidArgumentError(f"Tensor {name} in checkpoint {self.prefix}: {e}") from None
        path, data = self._data(entry.shard_id)
        shape = [d.size for d in entry.shape.dim]
        if any(d < 0 for d in shape):
            raise errors.DataLossError(f"Tensor {name} in {index_path(self.prefix)} has a bad shape {shape}")
        end = entry.offset + entry.size
        if entry.offset < 0 or end > len(data):
            raise errors.DataLossError(f"Tensor {name} in checkpoint {self.prefix}: bytes {entry.offset}..{end} "
                                       f"are past the end of {path} ({len(data)} bytes)")
        raw = data[entry.offset:end]
        n = int(np.prod(shape, dtype=np.int64))
        if dtype == dtypes_lib.string:
            arr, crc = self._strings(name, raw, n)
        else:
            if len(raw) != n * dtype.np.itemsize:
                raise errors.DataLossError(f"Tensor {name} in checkpoint {self.prefix} has {len(raw)} bytes; "
                                           f"shape {shape} of {dtype.name} needs {n * dtype.np.itemsize}")
            crc = crc32c.crc32c(raw)
            arr = np.frombuffer(raw, dtype=dtype.np.newbyteorder("<")).astype(dtype.np)
        if crc != crc32c.unmask(entry.crc32c):
            raise errors.DataLossError(f"Checksum does not match for tensor {name} in {path}: stored "
                                       f"{crc32c.unmask(entry.crc32c)} vs. calculated on the restored bytes {crc}")
        return arr.reshape(shape)

    def _strings(self, name, raw, n):
        try:
            lengths, pos = [], 0
            for _ in range(n):
                length, pos = sstable._read_varint(raw, pos, len(raw), "string lengths")
                lengths.append(length)
            packed = _lengths_for_crc(lengths)
            (check,) = struct.unpack("<I", raw[pos:pos + 4])
            pos += 4
        except (ValueError, struct.error) as e:
            raise errors.DataLossError(f"String tensor {name} in checkpoint {self.prefix} is corrupt: {e}") from None
        if crc32c.unmask(check) != crc32c.crc32c(packed):
            raise errors.DataLossError(f"The length checksum of string tensor {name} in checkpoint "
                                       f"{self.prefix} does not match")
        if pos + sum(lengths) != len(raw):
            raise errors.DataLossError(f"String tensor {name} in checkpoint {self.prefix} has the wrong size")
        out = np.empty(n, dtype=object)
        for i, length in enumerate(lengths):
            out[i] = bytes(raw[pos:pos + length])
            pos += length
        return out, crc32c.crc32c(packed + bytes(raw[len(raw) - sum(lengths) - 4:]))

    def __repr__(self):
        return f"<BundleReader {self.prefix}: {len(self.entries)} tensors>"
