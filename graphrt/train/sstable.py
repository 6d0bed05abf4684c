"""The immutable sorted table TensorFlow stores a checkpoint's `.index` in
(LevelDB's table format, as TF's core/lib/io/table*.cc).

    [data block]* [meta-index block] [index block] [footer: 48 bytes]

A block is a run of prefix-compressed entries (varint shared, varint
unshared, varint value length, key suffix, value) with a restart point every
16 entries, then the restart offsets (fixed32 each) and their count; each
block is followed by a type byte (0: uncompressed, all TF writes) and the
masked crc32c of block + type. The index block maps a separator key >= each
data block's last key to the block's (offset, size). The footer holds the
meta-index and index handles padded to 40 bytes, then the magic number.

`write_table` lays out the bytes as TF's TableBuilder does (same block size,
restart interval and separator keys), so a table of the same entries is the
same file. Anything malformed is a DataLossError naming the file.
"""
import struct

from .. import errors
from ..util import crc32c

MAGIC = 0xdb4775248b80fb57
FOOTER_SIZE = 48
BLOCK_SIZE = 262144  # TF's table::Options default
RESTART_INTERVAL = 16


def _varint(n):
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _read_varint(buf, pos, limit, what):
    result = shift = 0
    while True:
        if pos >= limit or shift > 63:
            raise ValueError(f"truncated varint in {what}")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


# -- writing ----------------------------------------------------------------------------

class _BlockBuilder:
    def __init__(self, restart_interval):
        self.interval = restart_interval
        self.reset()

    def reset(self):
        self.buf = bytearray()
        self.restarts = [0]
        self.counter = 0
        self.last_key = b""

    def add(self, key, value):
        shared = 0
        if self.counter < self.interval:
            limit = min(len(key), len(self.last_key))
            while shared < limit and key[shared] == self.last_key[shared]:
                shared += 1
        else:
            self.restarts.append(len(self.buf))
            self.counter = 0
        self.buf += _varint(shared) + _varint(len(key) - shared) + _varint(len(value))
        self.buf += key[shared:] + value
        self.last_key = key
        self.counter += 1

    def size_estimate(self):
        return len(self.buf) + 4 * len(self.restarts) + 4

    def empty(self):
        return not self.buf

    def finish(self):
        return bytes(self.buf) + b"".join(struct.pack("<I", r) for r in self.restarts) + \
            struct.pack("<I", len(self.restarts))


def _shortest_separator(start, limit):
    """A short key k with start <= k < limit (TF's BytewiseComparator::FindShortestSeparator)."""
    n = min(len(start), len(limit))
    i = 0
    while i < n and start[i] == limit[i]:
        i += 1
    if i < n:
        b = start[i]
        if b < 0xFF and b + 1 < limit[i]:
            return start[:i] + bytes([b + 1])
    return start


def _short_successor(key):
    for i, b in enumerate(key):
        if b != 0xFF:
            return key[:i] + bytes([b + 1])
    return key


def write_table(entries):
    """Sorted (key, value) byte pairs -> the table's bytes."""
    out = bytearray()
    data = _BlockBuilder(RESTART_INTERVAL)
    index = _BlockBuilder(1)
    pending = None  # handle of the last flushed data block, waiting for the next key
    last_key = None

    def write_block(contents):
        handle = (len(out), len(contents))
        trailer = b"\x00"
        out.extend(contents + trailer + struct.pack("<I", crc32c.masked_crc32c(contents + trailer)))
        return handle

    def encode_handle(handle):
        return _varint(handle[0]) + _varint(handle[1])

    for key, value in entries:
        if last_key is not None and key <= last_key:
            raise ValueError(f"table keys must be strictly increasing: {key!r} after {last_key!r}")
        if pending is not None:
            index.add(_shortest_separator(last_key, key), encode_handle(pending))
            pending = None
        data.add(key, value)
        last_key = key
        if data.size_estimate() >= BLOCK_SIZE:
            pending = write_block(data.finish())
            data.reset()
    if not data.empty():
        pending = write_block(data.finish())
    if pending is not None:
        index.add(_short_successor(last_key), encode_handle(pending))
    meta = _BlockBuilder(RESTART_INTERVAL)
    meta_handle = write_block(meta.finish())
    index_handle = write_block(index.finish())
    footer = encode_handle(meta_handle) + encode_handle(index_handle)
    footer += b"\x00" * (FOOTER_SIZE - 8 - len(footer)) + struct.pack("<Q", MAGIC)
    out.extend(footer)
    return bytes(out)


# -- reading ----------------------------------------------------------------------------

class Table:
    """A table read whole into memory: `items()` in key order, `get(key)`."""

    def __init__(self, data, name):
        self.name = name
        self._data = memoryview(data)
        try:
            self._entries = self._read()
        except (ValueError, IndexError, struct.error) as e:
            raise errors.DataLossError(f"Checkpoint index {name} is corrupt: {e}") from None

    def _read(self):
        data = self._data
        if len(data) < FOOTER_SIZE:
            raise ValueError(f"the file is {len(data)} bytes, shorter than a table footer")
        footer = data[len(data) - FOOTER_SIZE:]
        if struct.unpack("<Q", footer[40:48])[0] != MAGIC:
            raise ValueError("not a table (bad magic number)")
        _meta_off, pos = _read_varint(footer, 0, 40, "footer")
        _meta_size, pos = _read_varint(footer, pos, 40, "footer")
        index_off, pos = _read_varint(footer, pos, 40, "footer")
        index_size, pos = _read_varint(footer, pos, 40, "footer")
        entries = []
        for _, handle in self._block_entries(index_off, index_size, "index block"):
            off, p = _read_varint(handle, 0, len(handle), "block handle")
            size, _ = _read_varint(handle, p, len(handle), "block handle")
            entries.extend(self._block_entries(off, size, f"data block at offset {off}"))
        keys = [k for k, _ in entries]
        if any(a >= b for a, b in zip(keys, keys[1:])):
            raise ValueError("keys are out of order")
        return dict(entries)

    def _block_entries(self, offset, size, what):
        data = self._data
        end = offset + size
        if offset < 0 or end + 5 > len(data) - FOOTER_SIZE:
            raise ValueError(f"{what} extends past the end of the file")
        contents = data[offset:end]
        kind = data[end]
        stored = struct.unpack("<I", data[end + 1:end + 5])[0]
        if crc32c.unmask(stored) != crc32c.crc32c(data[offset:end + 1]):
            raise ValueError(f"checksum mismatch in {what}")
        if kind != 0:
            raise ValueError(f"{what} uses compression type {kind}; only uncompressed tables are supported")
        if size < 4:
            raise ValueError(f"{what} is too short")
        num_restarts = struct.unpack("<I", contents[size - 4:])[0]
        limit = size - 4 - 4 * num_restarts
        if limit < 0:
            raise ValueError(f"{what} has a bad restart count")
        out, pos, key = [], 0, b""
        while pos < limit:
            shared, pos = _read_varint(contents, pos, limit, what)
            unshared, pos = _read_varint(contents, pos, limit, what)
            vlen, pos = _read_varint(contents, pos, limit, what)
            if shared > len(key) or pos + unshared + vlen > limit:
                raise ValueError(f"bad entry in {what}")
            key = key[:shared] + bytes(contents[pos:pos + unshared])
            pos += unshared
            out.append((key, bytes(contents[pos:pos + vlen])))
            pos += vlen
        return out

    def items(self):
        return sorted(self._entries.items())

    def get(self, key, default=None):
        return self._entries.get(key, default)

    def __contains__(self, key):
        return key in self._entries

    def __len__(self):
        return len(self._entries)

    def __repr__(self):
        return f"<Table {self.name}: {len(self._entries)} entries>"


def read_table(path):
    with open(path, "rb") as f:
        return Table(f.read(), path)
