"""Rendezvous keys: `src_device;src_incarnation;dst_device;edge_name;frame_id:iter_id`.

A key names one tensor crossing one edge between two devices in one
(frame, iteration) of one step, e.g.::

    /job:localhost/replica:0/task:0/device:CPU:0;00000000deadbeef;/job:localhost/replica:0/task:0/device:CPU:1;edge_5_a;0:0

Both device names are kept in full (the receiver alone would be enough for
correctness, the sender makes hangs debuggable); the incarnation tells a
restarted worker's tensors apart from its predecessor's. `;` cannot occur
in a valid device name and is rejected in edge names, so splitting on it is
unambiguous.

Every key is canonical: devices in full `/job:../replica:../task:../device:TYPE:i`
form, the incarnation as 16 lower-case hex digits, frame and iteration in
decimal. Parsing accepts upper-case hex, shorter incarnations and legacy
device spellings (`/cpu:0`), and prints the canonical form, so the sender's
and the receiver's key for the same edge are always the same string.
"""
import functools
import operator
import re

from ..errors import InvalidArgumentError
from ..framework.device_spec import DeviceSpec, parse_full_name
from ..framework.rendezvous_key import key_prefix

__all__ = ["ParsedKey", "create_key", "parse_key"]

_U64_MAX = (1 << 64) - 1
_I64_MIN = -(1 << 63)
_I64_MAX = (1 << 63) - 1

_FIELDS = "src_device;src_incarnation;dst_device;edge_name;frame_id:iter_id"
_HEX_RE = re.compile(r"[0-9a-fA-F]+")
_FRAME_ITER_RE = re.compile(r"([0-9]+):(-?[0-9]+)")


class _FieldError(Exception):
    """One bad field; the caller words it for a parse or a create."""

    def __init__(self, field, problem):
        super().__init__(problem)
        self.field = field
        self.problem = problem


# -- field validation (shared by parse_key and the ParsedKey constructor) -----

@functools.lru_cache(maxsize=4096)
def _canonical_device(name):
    # Device names repeat on every key of a step; parsing them once keeps
    # parse_key and create_key cheap.
    return parse_full_name(name).to_string()


def _check_device(field, name):
    if not isinstance(name, str):
        raise _FieldError(field, f"{field} must be a string, got {type(name).__name__}")
    try:
        canonical = _canonical_device(name)
    except InvalidArgumentError as e:
        raise _FieldError(field, f"{field} '{name}' is not a full device name ({e.message})") from None
    if ";" in canonical:
        raise _FieldError(field, f"{field} '{name}' contains ';'")
    return canonical


def _check_incarnation(value):
    try:
        incarnation = operator.index(value)
    except TypeError:
        raise _FieldError("src_incarnation",
                          f"src_incarnation must be an integer, got {type(value).__name__}") from None
    if not 0 <= incarnation <= _U64_MAX:
        raise _FieldError("src_incarnation",
                          f"src_incarnation {incarnation} is out of range for an unsigned 64-bit integer")
    return incarnation


def _parse_incarnation(text):
    if not text:
        raise _FieldError("src_incarnation", "src_incarnation is empty")
    if not _HEX_RE.fullmatch(text):
        raise _FieldError("src_incarnation", f"src_incarnation '{text}' is not hexadecimal")
    if len(text) > 16:
        raise _FieldError("src_incarnation",
                          f"src_incarnation '{text}' has {len(text)} hex digits (at most 16)")
    return int(text, 16)


def _check_edge_name(name):
    if not isinstance(name, str):
        raise _FieldError("edge_name", f"edge_name must be a string, got {type(name).__name__}")
    if not name:
        raise _FieldError("edge_name", "edge_name is empty")
    if ";" in name:
        raise _FieldError("edge_name", f"edge_name '{name}' contains ';'")
    return name


def _check_frame_iter(frame_id, iter_id):
    try:
        frame_id, iter_id = operator.index(frame_id), operator.index(iter_id)
    except TypeError:
        raise _FieldError("frame_iter", f"frame_id and iter_id must be integers, got "
                          f"{type(frame_id).__name__} and {type(iter_id).__name__}") from None
    if not 0 <= frame_id <= _U64_MAX:
        raise _FieldError("frame_id", f"frame_id {frame_id} is out of range for an unsigned 64-bit integer")
    if not _I64_MIN <= iter_id <= _I64_MAX:
        raise _FieldError("iter_id", f"iter_id {iter_id} is out of range for a signed 64-bit integer")
    return frame_id, iter_id


def _parse_frame_iter(text):
    match = _FRAME_ITER_RE.fullmatch(text)
    if match is None:
        raise _FieldError("frame_iter", f"frame_iter '{text}' is not '<frame_id>:<iter_id>' "
                          "(unsigned decimal ':' signed decimal)")
    return _check_frame_iter(int(match.group(1)), int(match.group(2)))


# -- the key --------------------------------------------------------------------

class _Channel:
    """The frame-independent part of a key: one edge between two devices.

    Shared by every (frame, iteration) key of that edge so deriving a key for
    another loop iteration only formats the suffix.
    """

    __slots__ = ("src_device", "src_incarnation", "dst_device", "edge_name", "prefix")

    def __init__(self, src_device, src_incarnation, dst_device, edge_name):
        self.src_device = src_device
        self.src_incarnation = src_incarnation
        self.dst_device = dst_device
        self.edge_name = edge_name
        self.prefix = key_prefix(src_device, src_incarnation, dst_device, edge_name)


_set = object.__setattr__


class ParsedKey:
    """An immutable, validated rendezvous key.

    Fields: `src_device`, `src_incarnation` (unsigned 64-bit), `dst_device`,
    `edge_name`, `frame_id` (unsigned 64-bit), `iter_id` (signed 64-bit) and
    `full_key`, the canonical string, computed once. `str(key)` is the full
    key; equality and hashing go by it. Construct with `ParsedKey(...)`
    (validates every field), `parse_key(string)`, or derive the key for
    another loop iteration with `key.with_frame_iter(frame_id, iter_id)`.
    """

    # src_device and dst_device are copied from the channel: read on every send and receive, they are
    # slots rather than properties (a Python call each).
    __slots__ = ("_channel", "src_device", "dst_device", "frame_id", "iter_id", "full_key")

    def __init__(self, src_device, src_incarnation, dst_device, edge_name, frame_id=0, iter_id=0):
        try:
            channel = _Channel(_check_device("src_device", src_device),
                               _check_incarnation(src_incarnation),
                               _check_device("dst_device", dst_device),
                               _check_edge_name(edge_name))
            frame_id, iter_id = _check_frame_iter(frame_id, iter_id)
        except _FieldError as e:
            raise InvalidArgumentError(f"Cannot make a rendezvous key: {e.problem}") from None
        _init(self, channel, frame_id, iter_id)

    def with_frame_iter(self, frame_id, iter_id):
        """The key of the same edge in another (frame, iteration); cheap."""
        if type(frame_id) is not int or type(iter_id) is not int \
                or not 0 <= frame_id <= _U64_MAX or not _I64_MIN <= iter_id <= _I64_MAX:
            try:
                frame_id, iter_id = _check_frame_iter(frame_id, iter_id)
            except _FieldError as e:
                raise InvalidArgumentError(f"Cannot make a rendezvous key: {e.problem}") from None
        key = object.__new__(ParsedKey)
        _init(key, self._channel, frame_id, iter_id)
        return key

    # The channel's other fields read as the key's own.
    @property
    def src_incarnation(self):
        return self._channel.src_incarnation

    @property
    def edge_name(self):
        return self._channel.edge_name

    @property
    def frame_iter(self):
        return (self.frame_id, self.iter_id)

    @property
    def src(self):
        """The source device as a DeviceSpec (parsed on each access)."""
        return DeviceSpec.from_string(self._channel.src_device)

    @property
    def dst(self):
        """The destination device as a DeviceSpec (parsed on each access)."""
        return DeviceSpec.from_string(self._channel.dst_device)

    def __setattr__(self, name, value):
        raise AttributeError(f"ParsedKey is immutable (cannot set {name!r})")

    def __delattr__(self, name):
        raise AttributeError(f"ParsedKey is immutable (cannot delete {name!r})")

    def __eq__(self, other):
        if isinstance(other, ParsedKey):
            return self.full_key == other.full_key
        return NotImplemented

    def __hash__(self):
        return hash(self.full_key)

    def __reduce__(self):
        return (parse_key, (self.full_key,))

    def __str__(self):
        return self.full_key

    def __repr__(self):
        return f"ParsedKey({self.full_key!r})"


def _init(key, channel, frame_id, iter_id):
    _set(key, "_channel", channel)
    _set(key, "src_device", channel.src_device)
    _set(key, "dst_device", channel.dst_device)
    _set(key, "frame_id", frame_id)
    _set(key, "iter_id", iter_id)
    _set(key, "full_key", f"{channel.prefix}{frame_id}:{iter_id}")


def create_key(src_device, src_incarnation, dst_device, name, frame_iter=(0, 0)):
    """The canonical key string for one edge in one (frame, iteration).

    Validates like `ParsedKey(...)`; `parse_key(create_key(...)).full_key`
    is the same string.
    """
    frame_id, iter_id = frame_iter
    return ParsedKey(src_device, src_incarnation, dst_device, name, frame_id, iter_id).full_key


_CHANNELS = {}         # a valid key's text through its last ';' -> its _Channel
_MAX_CHANNELS = 4096


def parse_key(key):
    """Parses a key string into a ParsedKey (a ParsedKey is returned as is).

    A malformed key is an InvalidArgumentError naming the bad field and quoting the key.
    """
    if isinstance(key, ParsedKey):
        return key
    if not isinstance(key, str):
        raise InvalidArgumentError(
            f"Invalid rendezvous key: expected a string, got {type(key).__name__}: {key!r}")
    # Keys of one edge differ only after the last ';' (the frame and iteration): the edge's part is
    # parsed once (a worker parses every RecvTensor's key, and a loop's keys change every iteration).
    cut = key.rfind(";") + 1
    channel = _CHANNELS.get(key[:cut])
    if channel is None:
        parts = key.split(";")
        if len(parts) != 5:
            raise InvalidArgumentError(
                f"Invalid rendezvous key: expected 5 ';'-separated fields ({_FIELDS}), "
                f"got {len(parts)}: '{key}'", key=key)
    try:
        if channel is None:
            src, incarnation, dst, edge_name, _ = parts
            channel = _Channel(_check_device("src_device", src),
                               _parse_incarnation(incarnation),
                               _check_device("dst_device", dst),
                               _check_edge_name(edge_name))
            if len(_CHANNELS) >= _MAX_CHANNELS:
                _CHANNELS.clear()  # bounded, whatever keys peers send
            _CHANNELS[key[:cut]] = channel
        frame_id, iter_id = _parse_frame_iter(key[cut:])
    except _FieldError as e:
        raise InvalidArgumentError(f"Invalid rendezvous key: {e.problem}: '{key}'", key=key) from None
    parsed = object.__new__(ParsedKey)
    _init(parsed, channel, frame_id, iter_id)
    return parsed
