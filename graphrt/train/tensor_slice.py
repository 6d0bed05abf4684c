"""Slices of a tensor in a checkpoint, as TensorFlow names and stores them.

A partitioned variable is saved part by part under its full name. Each part
carries a `shape_and_slice` string, the full shape and then one extent per
dimension ("start,length", or "-" for all of it):

    "10 4 4,3:0,4"      rows 4..6 of a 10x4 tensor

The V2 bundle keeps one entry under the full name (dtype, full shape, the
list of slices) and the values of each slice under a key that encodes the
name and the extents with TF's OrderedCode, so that the keys of one tensor's
slices sort by their starts.
"""
from .. import errors
from .checkpoint_protos import TensorSliceProto

FULL = -1  # the length of an extent that covers the whole dimension ("-")


class TensorSlice:
    """One extent per dimension: `starts[d]` and `lengths[d]` (FULL for the whole dimension)."""

    __slots__ = ("starts", "lengths")

    def __init__(self, starts, lengths):
        self.starts, self.lengths = tuple(int(s) for s in starts), tuple(int(n) for n in lengths)

    @classmethod
    def full(cls, rank):
        return cls([0] * rank, [FULL] * rank)

    @classmethod
    def parse(cls, spec, what="slice"):
        """"0,4:-" -> TensorSlice; InvalidArgumentError naming `what` when it is malformed."""
        starts, lengths = [], []
        for extent in spec.split(":") if spec else []:
            if extent == "-":
                starts.append(0)
                lengths.append(FULL)
                continue
            try:
                start, length = (int(x) for x in extent.split(","))
            except ValueError:
                raise errors.InvalidArgumentError(f"Malformed slice {spec!r} of {what}: each extent is "
                                                  f"'start,length' or '-'") from None
            if start < 0 or length <= 0:
                raise errors.InvalidArgumentError(f"Malformed slice {spec!r} of {what}: expected a non-negative "
                                                  f"start and a positive length, got {start},{length}")
            starts.append(start)
            lengths.append(length)
        return cls(starts, lengths)

    @classmethod
    def from_proto(cls, proto):
        has = [e.WhichOneof("has_length") is not None for e in proto.extent]
        return cls([e.start for e in proto.extent], [e.length if h else FULL for e, h in zip(proto.extent, has)])

    def to_proto(self):
        proto = TensorSliceProto()
        for start, length in zip(self.starts, self.lengths):
            extent = proto.extent.add()
            if not (start == 0 and length == FULL):  # a whole dimension is an empty extent
                extent.start = start
                extent.length = length
        return proto

    @property
    def rank(self):
        return len(self.starts)

    def bounds(self, full_shape):
        """[(start, end)] of each dimension within `full_shape`."""
        return [(s, dim if n == FULL else s + n) for s, n, dim in zip(self.starts, self.lengths, full_shape)]

    def shape(self, full_shape):
        return [end - start for start, end in self.bounds(full_shape)]

    def index(self, full_shape):
        """The numpy index of this slice within an array of `full_shape`."""
        return tuple(slice(start, end) for start, end in self.bounds(full_shape))

    def check_within(self, full_shape, what):
        if self.rank != len(full_shape):
            raise errors.InvalidArgumentError(f"Slice {self} of {what} has {self.rank} dimensions; the tensor has "
                                              f"shape {list(full_shape)}")
        for start, end, dim in ((s, e, d) for (s, e), d in zip(self.bounds(full_shape), full_shape)):
            if end > dim:
                raise errors.InvalidArgumentError(f"Slice {self} of {what} reaches {end} in a dimension of {dim} "
                                                  f"(shape {list(full_shape)})")

    def intersect(self, other, full_shape):
        """The bounds [(start, end)] both slices cover, or None when they do not meet."""
        out = []
        for (a0, a1), (b0, b1) in zip(self.bounds(full_shape), other.bounds(full_shape)):
            lo, hi = max(a0, b0), min(a1, b1)
            if lo >= hi:
                return None
            out.append((lo, hi))
        return out

    def is_full(self):
        return all(s == 0 and n == FULL for s, n in zip(self.starts, self.lengths))

    def __eq__(self, other):
        return isinstance(other, TensorSlice) and (self.starts, self.lengths) == (other.starts, other.lengths)

    def __hash__(self):
        return hash((self.starts, self.lengths))

    def __str__(self):
        return ":".join("-" if n == FULL else f"{s},{n}" for s, n in zip(self.starts, self.lengths))

    def __repr__(self):
        return f"TensorSlice({str(self)!r})"


def parse_shape_and_slice(text, what):
    """"10 4 4,3:0,4" -> ([10, 4], TensorSlice); ("", None) means the whole tensor, shape unstated."""
    text = text.strip()
    if not text:
        return None, None
    *dims, spec = text.split(" ")
    try:
        full_shape = [int(d) for d in dims]
    except ValueError:
        raise errors.InvalidArgumentError(f"Malformed shape_and_slice {text!r} of {what}: the shape must be "
                                          f"integers") from None
    if not full_shape or any(d < 0 for d in full_shape):
        raise errors.InvalidArgumentError(f"Malformed shape_and_slice {text!r} of {what}: expected "
                                          f"'<dims> <slice>'")
    tslice = TensorSlice.parse(spec, what)
    tslice.check_within(full_shape, what)
    return full_shape, tslice


def shape_and_slice(full_shape, tslice):
    return " ".join(str(d) for d in full_shape) + " " + str(tslice)


# -- the key of a slice's values (TF's EncodeTensorNameSlice over OrderedCode) ------------

def _num_increasing(n):
    body = n.to_bytes((n.bit_length() + 7) // 8, "big") if n else b""
    return bytes([len(body)]) + body


def _string_increasing(s):
    return s.replace(b"\xff", b"\xff\x00").replace(b"\x00", b"\x00\xff") + b"\x00\x01"


# The first bytes of a signed number's code, by its length in bytes: a run of 1 bits gives the length.
_HEADER = [b"", b"\x80", b"\xc0", b"\xe0", b"\xf0", b"\xf8", b"\xfc", b"\xfe", b"\xff", b"\xff\x80", b"\xff\xc0"]


def _signed_num_increasing(v):
    x = ~v if v < 0 else v
    length = -(-(x.bit_length() + 1) // 7)  # 7 bits a byte: the header's run of 1s takes one per byte
    body = bytearray((v & ((1 << (8 * length)) - 1)).to_bytes(length, "big"))
    for i, h in enumerate(_HEADER[length]):
        body[i] ^= h
    return bytes(body)


def slice_key(name, tslice):
    """The bundle key of `name`'s slice `tslice`."""
    out = [_num_increasing(0), _string_increasing(name.encode()), _num_increasing(tslice.rank)]
    for start, length in zip(tslice.starts, tslice.lengths):
        out.append(_signed_num_increasing(start))
        out.append(_signed_num_increasing(length))
    return b"".join(out)


def is_slice_key(key):
    """Slice keys begin with the code of 0; a tensor's name never does."""
    return key[:1] == b"\x00"
