"""TensorFlow's V2 checkpoint files (a "tensor bundle"), read and written.

    <prefix>.index                  an SSTable: "" -> BundleHeaderProto, name -> BundleEntryProto
    <prefix>.data-00000-of-00001    the tensors' bytes, back to back

A tensor saved in slices (a partitioned variable) has an entry under its
name with no bytes, only its dtype, full shape and the list of slices, and
one entry per slice under the slice's key (tensor_slice.py).

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
from . import sstable, tensor_slice
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


class Slices:
    """A tensor written in slices (the parts of a partitioned variable): its full shape and its parts,
    each (TensorSlice, value) or (TensorSlice, value, shard)."""

    def __init__(self, full_shape, parts):
        self.full_shape = [int(d) for d in full_shape]
        self.parts = [tuple(p) for p in parts]

    def __repr__(self):
        return f"<Slices of {self.full_shape}: {', '.join(str(p[0]) for p in self.parts)}>"


def _encode(value):
    """(dtype, bytes, crc32c) of one array as a bundle stores it."""
    arr = np.asarray(value, dtype=object) if isinstance(value, (bytes, str)) else np.asarray(value)
    if arr.dtype.kind in "USO":
        raw, crc = _string_bytes(arr)
        return dtypes_lib.string, arr.shape, raw, crc
    raw = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<")).tobytes()
    return dtypes_lib.as_dtype(arr.dtype), arr.shape, raw, crc32c.crc32c(raw)


def write_bundle(prefix, tensors, shard_of=None, num_shards=1):
    """Writes `tensors` ({name: ndarray or Slices}) as a V2 checkpoint at `prefix`; returns the data bytes.

    `shard_of` ({name: shard index}) splits the data over `num_shards` files
    `<prefix>.data-0000k-of-0000N` (TF's sharded save: one shard per device),
    each holding its tensors in name order (a slice may name its own shard).
    Every file is written to a temporary and renamed, the data first, so a
    crash leaves no half index.
    """
    directory = os.path.dirname(os.path.abspath(prefix))
    shard_of = shard_of or {}
    entries, chunks, offsets = [], [[] for _ in range(num_shards)], [0] * num_shards

    def add(key, label, value, shard):
        if not 0 <= shard < num_shards:
            raise ValueError(f"tensor {label} is assigned to shard {shard} of {num_shards}")
        dtype, shape, raw, crc = _encode(value)
        entry = BundleEntryProto(dtype=tensor_util.dtype_to_enum(dtype), shape=tensor_util.shape_to_proto(shape),
                                 shard_id=shard, offset=offsets[shard], size=len(raw), crc32c=crc32c.mask(crc))
        entries.append((key, entry.SerializeToString()))
        chunks[shard].append(raw)
        offsets[shard] += len(raw)
        return dtype, shape

    for name in sorted(tensors):
        value = tensors[name]
        if not isinstance(value, Slices):
            add(name.encode(), name, value, shard_of.get(name, 0))
            continue
        full = BundleEntryProto(shape=tensor_util.shape_to_proto(value.full_shape))
        dtypes_seen, listed = set(), []
        for tslice, part, *shard in value.parts:
            tslice.check_within(value.full_shape, name)
            label = f"{name} (slice {tslice})"
            shard = shard[0] if shard else shard_of.get(name, 0)
            dtype, shape = add(tensor_slice.slice_key(name, tslice), label, part, shard)
            if list(shape) != tslice.shape(value.full_shape):
                raise ValueError(f"{label} has shape {list(shape)}; the slice is "
                                 f"{tslice.shape(value.full_shape)} of {value.full_shape}")
            dtypes_seen.add(dtype)
            listed.append((shard, tslice))
        if len(dtypes_seen) != 1:
            raise ValueError(f"the slices of tensor {name} have dtypes {sorted(d.name for d in dtypes_seen)}")
        full.dtype = tensor_util.dtype_to_enum(dtypes_seen.pop())
        # as TF's merge of per-device files leaves it: the entry in the first file holding a slice,
        # its slices listed file by file
        listed.sort(key=lambda item: item[0])
        full.shard_id = listed[0][0]
        full.slices.extend(tslice.to_proto() for _, tslice in listed)
        entries.append((name.encode(), full.SerializeToString()))
    header = BundleHeaderProto(num_shards=num_shards, endianness=0)
    header.version.producer = _VERSION
    index = sstable.write_table([(b"", header.SerializeToString())] + sorted(entries))
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
        self.entries, self._slice_entries = {}, {}  # full name -> entry; slice key -> entry
        try:
            header = BundleHeaderProto.FromString(table.get(b"", b""))
            for key, value in table.items():
                if tensor_slice.is_slice_key(key):
                    self._slice_entries[key] = BundleEntryProto.FromString(value)
                elif key:
                    self.entries[key.decode()] = BundleEntryProto.FromString(value)
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
        """The tensor `name` as a numpy array (put together from its slices if it was saved in slices);
        checks sizes and checksums."""
        entry = self._entry(name)
        if not entry.slices:
            return self._read_entry(name, entry)
        shape = [d.size for d in entry.shape.dim]
        return self._gather(name, entry, shape, tensor_slice.TensorSlice.full(len(shape)))

    def read_slice(self, name, tslice, full_shape=None):
        """The part `tslice` of tensor `name`, from its whole value or from the slices it was saved in.

        `full_shape` is the shape the caller expects the whole tensor to have
        (a shape_and_slice names it): another shape is an InvalidArgumentError.
        """
        entry = self._entry(name)
        shape = [d.size for d in entry.shape.dim]
        if full_shape is not None and list(full_shape) != shape:
            raise errors.InvalidArgumentError(f"Tensor {name} in checkpoint {self.prefix} has shape {shape}; "
                                              f"the slice {tslice} asked for expects {list(full_shape)}")
        tslice.check_within(shape, f"tensor {name}")
        if not entry.slices:
            return self._read_entry(name, entry)[tslice.index(shape)]
        return self._gather(name, entry, shape, tslice)

    def slices(self, name):
        """The TensorSlices tensor `name` was saved in ([] for a whole tensor)."""
        return [tensor_slice.TensorSlice.from_proto(p) for p in self._entry(name).slices]

    def _gather(self, name, entry, full_shape, want):
        """The region `want` of a tensor saved in slices: each stored slice's overlap, copied in."""
        dtype = self._dtype_of(name, entry)
        out_shape = want.shape(full_shape)
        out = np.empty(out_shape, dtype=object if dtype == dtypes_lib.string else dtype.np)
        covered = np.zeros(out_shape, dtype=bool)
        wanted = want.bounds(full_shape)
        for proto in entry.slices:
            stored = tensor_slice.TensorSlice.from_proto(proto)
            label = f"{name} (slice {stored})"
            try:
                stored.check_within(full_shape, f"tensor {name}")
            except errors.InvalidArgumentError as e:
                raise errors.DataLossError(f"Checkpoint {self.prefix}: {e.message}") from None
            meet = want.intersect(stored, full_shape)
            if meet is None:
                continue
            slice_entry = self._slice_entries.get(tensor_slice.slice_key(name, stored))
            if slice_entry is None:
                raise errors.DataLossError(f"Checkpoint {self.prefix} lists slice {stored} of tensor {name} but "
                                           f"has no values for it")
            values = self._read_entry(label, slice_entry)
            if list(values.shape) != stored.shape(full_shape):
                raise errors.DataLossError(f"Tensor {label} in checkpoint {self.prefix} has shape "
                                           f"{list(values.shape)}; the slice is {stored.shape(full_shape)}")
            own = stored.bounds(full_shape)
            src = tuple(slice(lo - s0, hi - s0) for (lo, hi), (s0, _) in zip(meet, own))
            dst = tuple(slice(lo - w0, hi - w0) for (lo, hi), (w0, _) in zip(meet, wanted))
            if covered[dst].any():
                raise errors.DataLossError(f"Slices of tensor {name} in checkpoint {self.prefix} overlap "
                                           f"(at slice {stored})")
            out[dst] = values[src]
            covered[dst] = True
        if not covered.all():
            raise errors.NotFoundError(f"The slices of tensor {name} saved in checkpoint {self.prefix} do not "
                                       f"cover its slice {want}")
        return out

    def _dtype_of(self, label, entry):
        try:
            return tensor_util.enum_to_dtype(entry.dtype)
        except TypeError as e:
            raise errors.InvalidArgumentError(f"Tensor {label} in checkpoint {self.prefix}: {e}") from None

    def _read_entry(self, name, entry):
        dtype = self._dtype_of(name, entry)
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
        sliced = sum(1 for e in self.entries.values() if e.slices)
        return f"<BundleReader {self.prefix}: {len(self.entries)} tensors ({sliced} in slices)>"
