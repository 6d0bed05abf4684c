"""The wire format of the worker service: framing, validation, tensors.

A message is one ZeroMQ multipart message (after the ROUTER's routing
envelope)::

    frame 0      header: a JSON object (UTF-8)
    frame 1..n   payload: one frame per entry of header["tensors"]

Every header has:

    "v"        protocol version (PROTOCOL_VERSION; anything else is refused)
    "type"     the message type, one of MESSAGE_TYPES or "Reply"
    "id"       request id, 0 <= id < 2**63; a reply carries its request's
               id; a request with id 0 is one-way (no reply on success)
    "tensors"  one spec per payload frame, see below (may be omitted: [])

and the fields its type declares in SCHEMAS (unknown fields are refused).
A reply adds "error": null, or {"code", "message", "derived", "node",
"device", "key"} with the TF status code, and the reply fields.

Tensor specs (the frame holds the raw bytes, C order, little-endian)::

    {"dtype": "float32", "shape": [2, 3]}     numeric/bool tensor; the frame
                                              is exactly prod(shape)*itemsize
    {"dtype": "string", "shape": [n...]}      prod(shape) uint64 lengths,
                                              then the concatenated bytes
    {"dead": true}                            a dead value (wire.DEAD); empty frame
    {"py": <tagged JSON>}                     a small host value that is not a
                                              tensor (None, bool, int, float,
                                              str, bytes, list, tuple, dict);
                                              empty frame
    optional "scalar": true                   decode to a numpy scalar

The data plane has fixed binary headers instead (frame 0 then starts with
its kind byte, never '{'), because every cross-process edge of every step
sends them and JSON costs several times more to read and write: on this
runtime's machines a JSON RecvTensor header took 18 us to decode right
after a wait and the binary one 5. Each starts with 8 bytes (u8 kind, u8
version, then the kind's small fields, zero-padded) and the u64 request id;
every integer is little-endian and every u64 sits at a multiple of 8::

    RecvTensor   kind = 1, 6 zero bytes, id, u64 step_id, then the key,
                 UTF-8, to the end of the frame; no payload
    tensor Reply kind = 2, u8 dtype code (BINARY_DTYPES), u8 flags (1:
                 scalar), u8 ndim, 3 zero bytes, id, ndim x u64 dims; one
                 payload frame, as a tensor spec's
    empty Reply  kind = 3, 6 zero bytes, id; no payload (a success with
                 nothing to return: a task's RunGraph that only sends)
    RecvTensor, asked by a process of the same machine that can read the
                 sender's shared memory (shared_payload.py): kind = 4, u16
                 n, 4 zero bytes, id, u64 step_id, n x u64 sequence
                 numbers of the records it has copied out since its last
                 request, then the key; no payload
    shared Reply kind = 5, then as a tensor Reply's first 16 bytes (flags
                 0), u64 seq, u64 offset, u32 fd, 4 zero bytes, 16-byte
                 token, ndim x u64 dims; no payload: the tensor lies at
                 `offset` of the arena the sender holds open as `fd`.
                 Only ever sent in answer to kind 4

(A 1-D tensor's header of 21 bytes, in the first layout tried, made 64 MiB
pulls 20-30% slower on this runtime's machines, for a reason not found;
none of eleven other lengths tried, 24 to 77 bytes, did, nor does this
layout's 24.)

They decode to the same Message as their JSON forms and pass the same
checks (a binary tensor reply is an error-free Reply of one numeric or bool
tensor; strings, dead values, errors, fields and host values stay JSON).

Decoding never unpickles and never trusts a field: the version, type and
every field are checked against the schema, dtypes come from an allow-list,
shapes are bounded, `shape x itemsize` must equal the frame's length, and
the whole message must fit `max_message_bytes`. A violation is a WireError
(an InvalidArgumentError) that the worker turns into an error reply.

Tensors are sent zero-copy (numpy buffers go to `send_multipart(copy=False)`)
and received zero-copy (`np.frombuffer` on the received frame's buffer; the
array is read-only and keeps the frame alive). A shared reply's tensor is
copied out of the sender's arena: the array is the receiver's own.
"""
import base64
import json
import struct
from math import prod

import numpy as np

from .. import errors
from .wire_validation import (ALLOWED_DTYPES, DTYPES as _DTYPES, MAX_NDIMS, STRING, WireError,  # noqa: F401
                              as_wire_error, check_tensor_spec, guard_decode, short)

PROTOCOL_VERSION = 2  # 2: the binary data-plane headers (1 spoke JSON only)
MAX_FRAMES = 1 + 65536
MAX_PY_DEPTH = 32
DEFAULT_MAX_MESSAGE_BYTES = 1 << 30
REPLY = "Reply"


class _Dead:
    """The value of a dead tensor on the wire (an untaken Switch branch)."""

    __slots__ = ()

    def __repr__(self):
        return "DEAD"

    def __reduce__(self):
        return "DEAD"


DEAD = _Dead()


# -- dtypes ----------------------------------------------------------------------------

_NAME_OF = {np.dtype(name): name for name in _DTYPES}
_NAME_OF[np.dtype(np.bool_)] = "bool"

# -- the binary data-plane headers (see the module doc) -------------------------------------

BINARY_RECV_TENSOR = 1
BINARY_TENSOR_REPLY = 2
BINARY_EMPTY_REPLY = 3
BINARY_RECV_TENSOR_SHARED = 4
BINARY_SHARED_TENSOR_REPLY = 5
# A code is an index here: the list only ever grows at its end.
BINARY_DTYPES = ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
                 "uint32", "uint64", "complex64", "complex128", "bool")
_CODE_OF = {np.dtype(name): code for code, name in enumerate(BINARY_DTYPES)}
_ZEROS = bytes(6)
_RECV_TENSOR = struct.Struct("<BB6sQQ")
# One struct per rank: the fixed part, then the dims.
_TENSOR_REPLY = [struct.Struct(f"<BBBBB3sQ{n}Q") for n in range(MAX_NDIMS + 1)]
_TENSOR_REPLY_FIXED = _TENSOR_REPLY[0].size
_EMPTY_REPLY = struct.Struct("<BB6sQ")
_RECV_TENSOR_SHARED = struct.Struct("<BBH4sQQ")
_SHARED_REPLY = [struct.Struct(f"<BBBBB3sQQQI4s16s{n}Q") for n in range(MAX_NDIMS + 1)]
_SHARED_REPLY_FIXED = _SHARED_REPLY[0].size
_ZEROS4 = bytes(4)
MAX_RELEASED = 4096  # sequence numbers one shared RecvTensor request may carry
_ZEROS3 = bytes(3)
# The codes _read_tensor_reply's fast path reads without _numeric_array's conversions and checks (None:
# bool, whose bytes must be checked, and every dtype on a big-endian host).
_FAST_DTYPES = tuple(None if name == "bool" or not np.little_endian else _DTYPES[name] for name in BINARY_DTYPES)


# -- schemas ------------------------------------------------------------------------------

# field -> (kind, required). Kinds: int (non-negative, < 2**63), bool, str, keys (list of str),
# ints (a list of ints), pulls (a list of [request id, key] pairs), dict (a JSON object), error (an
# error object), any (a JSON value checked by the handler).
#
# RunGraph's `recv_tensors` are RecvTensor requests riding on it: each pair is answered exactly as a
# RecvTensor(step_id, key) with that request id would be, by its own Reply. A master whose process
# pulls tensors from a task at the start of a step sends them with that task's RunGraph, so they
# cost the task no message of their own. With `shared_released` (even empty) they ask as a kind-4
# RecvTensor does: large tensors in shared memory, and these records copied out (shared_payload.py).
_COMMON = {"v": ("int", True), "type": ("str", True), "id": ("int", True), "tensors": ("list", False)}
SCHEMAS = {
    "ListDevices": {},
    "GetStatus": {},
    "RegisterGraph": {"graph_def": ("dict", True), "debug_info": ("strmap", False), "session": ("str", False)},
    "DeregisterGraph": {"graph_handle": ("str", True)},
    "RunGraph": {"graph_handle": ("str", True), "step_id": ("int", True), "send_keys": ("keys", False),
                 "recv_keys": ("keys", False), "timeout_ms": ("int", False), "trace": ("bool", False),
                 "cleanup_step_ids": ("ints", False), "recv_tensors": ("pulls", False),
                 "shared_released": ("ints", False)},
    "RecvTensor": {"step_id": ("int", True), "key": ("str", True)},
    "CleanupStep": {"step_id": ("int", True), "more_step_ids": ("ints", False)},
    "AbortStep": {"step_id": ("int", True), "error": ("error", False)},
    REPLY: {"error": ("error", False), "result": ("dict", False), "recv_keys": ("keys", False)},
}
MESSAGE_TYPES = frozenset(SCHEMAS) - {REPLY}
_MAX_STR = 1 << 16          # a single string field (keys, handles, messages)
_RECV_TENSOR_FAST_MAX = _RECV_TENSOR.size + _MAX_STR  # a key of this many bytes has at most _MAX_STR characters
_MAX_KEYS = 1 << 16         # entries of a key list
_MAX_INTS = 1 << 12         # entries of an int list (step ids cleaned up together)
_U63 = 1 << 63


class Message:
    """A decoded message: type, id, header fields and payload values."""

    __slots__ = ("type", "id", "fields", "values", "nbytes")

    def __init__(self, type, id, fields, values, nbytes=0):  # noqa: A002 - the wire's names
        self.type = type
        self.id = id
        self.fields = fields
        self.values = values  # tensors view the received frames; nothing else holds them
        self.nbytes = nbytes  # the message's size on the wire

    def get(self, name, default=None):
        return self.fields.get(name, default)

    @property
    def error(self):
        """The reply's error as an OpError, or None."""
        spec = self.fields.get("error")
        return None if spec is None else error_from_wire(spec)

    def __repr__(self):
        return f"<Message {self.type} id={self.id} {sorted(self.fields)} {len(self.values)} values>"


# -- encoding ------------------------------------------------------------------------------

def encode(msg_type, request_id=0, fields=None, values=()):
    """The frames of one message: [header bytes, *payload buffers] (buffers zero-copy)."""
    if msg_type == "RecvTensor" and not values and len(fields) == 2:
        # On every cross-process edge of every step: the binary header. Values it cannot hold go as
        # JSON, for the receiver to refuse with the JSON path's own words.
        step_id, key = fields.get("step_id"), fields.get("key")
        if type(step_id) is int and type(key) is str and 0 <= step_id < _U63 and 0 <= request_id < _U63:
            try:
                return [_RECV_TENSOR.pack(BINARY_RECV_TENSOR, PROTOCOL_VERSION, _ZEROS, request_id, step_id)
                        + key.encode()]
            except UnicodeEncodeError:  # a lone surrogate: JSON escapes it
                pass
    specs, frames = [], []
    for value in values:
        spec, frame = encode_value(value)
        specs.append(spec)
        frames.append(frame)
    header = {"v": PROTOCOL_VERSION, "type": msg_type, "id": request_id}
    if fields:
        header.update(fields)
    if specs:
        header["tensors"] = specs
    return [to_json(header).encode()] + frames


def encode_recv_tensor_shared(request_id, step_id, key, released=()):
    """A RecvTensor from an asker that reads the sender's shared memory (kind 4), carrying the sequence
    numbers it has copied out since its last request (at most MAX_RELEASED); None where the binary
    header cannot hold the request (`encode` then makes the JSON one, which asks for no shared memory)."""
    if type(step_id) is not int or type(key) is not str or not 0 <= step_id < _U63 \
            or not 0 <= request_id < _U63 or len(released) > MAX_RELEASED:
        return None
    try:
        text = key.encode()
    except UnicodeEncodeError:
        return None
    return [_RECV_TENSOR_SHARED.pack(BINARY_RECV_TENSOR_SHARED, PROTOCOL_VERSION, len(released), _ZEROS4,
                                     request_id, step_id)
            + (struct.pack(f"<{len(released)}Q", *released) if released else b"") + text]


def shareable(arr):
    """Whether a shared reply can name `arr`'s dtype (numeric, little-endian; bool's bytes would need
    checking on the way in, as the socket path checks them)."""
    code = _CODE_OF.get(arr.dtype)
    return code is not None and _FAST_DTYPES[code] is not None


def shared_tensor_reply(request_id, arr, fd, token, offset, seq):
    """The answer to a kind-4 RecvTensor whose tensor the sender copied into its arena `fd` at `offset`;
    None for a dtype without a fast binary code (the caller answers over the socket)."""
    code = _CODE_OF.get(arr.dtype)
    if code is None or _FAST_DTYPES[code] is None or not _LITTLE or not 0 <= request_id < _U63:
        return None
    return [_SHARED_REPLY[arr.ndim].pack(BINARY_SHARED_TENSOR_REPLY, PROTOCOL_VERSION, code, 0, arr.ndim, _ZEROS3,
                                         request_id, seq, offset, fd, _ZEROS4, token, *arr.shape)]


def encode_reply(request_id, error=None, fields=None, values=()):
    """A reply; `error` is an exception (OpError or other) or None."""
    if error is None and not fields and len(values) <= 1 and 0 <= request_id < _U63:
        # The RecvTensor answer, on every cross-process edge, and a RunGraph's with nothing to return:
        # the binary headers.
        if not values:
            return [_EMPTY_REPLY.pack(BINARY_EMPTY_REPLY, PROTOCOL_VERSION, _ZEROS, request_id)]
        value = values[0]
        if type(value) is np.ndarray:
            frames = binary_tensor_reply(request_id, value)
        elif isinstance(value, np.generic):
            frames = binary_tensor_reply(request_id, np.asarray(value), 1)
        else:
            frames = None
        if frames is not None:
            return frames
    out = dict(fields or {})
    out["error"] = None if error is None else error_to_wire(error)
    return encode(REPLY, request_id, out, values)


def binary_tensor_reply(request_id, arr, scalar=0):
    """`encode_reply(request_id, values=[arr])` for a host ndarray, or None where that needs JSON (a dtype
    without a binary code: strings, big-endian; or a request id out of range): the RecvTensor answer,
    [header, payload], built without encode_reply's general checks. `scalar` marks a numpy scalar's
    0-d array (it decodes back to a scalar)."""
    code = _CODE_OF.get(arr.dtype)
    if code is None or not _LITTLE or not 0 <= request_id < _U63:  # the codes name little-endian bytes
        return None
    if not arr.flags.c_contiguous:
        arr = np.ascontiguousarray(arr)
    header = _TENSOR_REPLY[arr.ndim].pack(BINARY_TENSOR_REPLY, PROTOCOL_VERSION, code, scalar, arr.ndim, _ZEROS3,
                                          request_id, *arr.shape)
    # A memoryview of the array: its bytes in C order for every dtype with a code (bool and 0-d
    # too), read as bytes by ZeroMQ and by `bytes()` alike (a 0-d integer array itself would be
    # taken by `bytes()` as a count), and it keeps `arr` alive while ZeroMQ sends. A flat byte view
    # as _encode_array makes costs two new arrays: 0.7 us against 0.2, several times that cold.
    return [header, memoryview(arr) if arr.size else _EMPTY]


_EMPTY = b""


def _make_to_json():
    """`json.dumps(obj, separators=(",", ":"), check_circular=False)` for the headers this module
    builds (never circular). JSONEncoder.encode runs two Python frames and builds a C encoder on
    every call; the C encoder is made once here where CPython has it (1.6 against 2.8 us a RunGraph
    header, on the master's path before its send)."""
    encoder = json.JSONEncoder(separators=(",", ":"), check_circular=False)
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return encoder.encode
    c_encode = make(None, encoder.default, json.encoder.encode_basestring_ascii, None, ":", ",",
                    False, False, True)  # markers, default, encoder, indent, separators, sort_keys, skipkeys, allow_nan

    def to_json(obj):
        return "".join(c_encode(obj, 0))
    return to_json


to_json = _make_to_json()


def encode_value(value):
    """(spec, frame) for one value; numpy buffers are not copied."""
    if type(value) is np.ndarray:
        return _encode_array(value, False)
    if value is DEAD:
        return {"dead": True}, _EMPTY
    if value is None:
        return {"py": None}, _EMPTY
    if isinstance(value, np.generic):
        return _encode_array(np.asarray(value), True)
    return {"py": _encode_py(value, 0)}, _EMPTY


def _encode_array(arr, scalar):
    name = _NAME_OF.get(arr.dtype)
    if name is None:
        if arr.dtype.kind in "OSU":
            return _encode_strings(arr, scalar)
        if arr.dtype.kind in "fiubc" and arr.dtype.byteorder == ">":
            arr = arr.astype(arr.dtype.newbyteorder("<"))
            name = _NAME_OF.get(arr.dtype)
        if name is None:
            raise WireError(f"Cannot send a tensor of dtype {arr.dtype}: not one of {sorted(ALLOWED_DTYPES)}")
    if not arr.flags.c_contiguous:
        arr = np.ascontiguousarray(arr)
    spec = {"dtype": name, "shape": list(arr.shape)}
    if scalar:
        spec["scalar"] = True
    if arr.size == 0:
        return spec, _EMPTY
    # A flat byte view: zmq takes any contiguous buffer; this one also works for bool and
    # 0-d arrays and keeps `arr` (and whatever owns its memory) alive while zmq sends it.
    return spec, arr.reshape(-1).view(np.uint8)


def _encode_strings(arr, scalar):
    items = [s if isinstance(s, bytes) else str(s).encode() for s in arr.ravel()]
    lengths = np.array([len(s) for s in items], dtype="<u8")
    spec = {"dtype": STRING, "shape": list(arr.shape)}
    if scalar:
        spec["scalar"] = True
    return spec, lengths.tobytes() + b"".join(items)


def _encode_py(value, depth):
    if depth > MAX_PY_DEPTH:
        raise WireError(f"A host value nests deeper than {MAX_PY_DEPTH} levels")
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value
    if isinstance(value, bytes):
        return {"bytes": base64.b64encode(value).decode()}
    if isinstance(value, list):
        return {"list": [_encode_py(v, depth + 1) for v in value]}
    if isinstance(value, tuple):
        return {"tuple": [_encode_py(v, depth + 1) for v in value]}
    if isinstance(value, dict):
        return {"dict": [[_encode_py(k, depth + 1), _encode_py(v, depth + 1)] for k, v in value.items()]}
    if isinstance(value, (np.ndarray, np.generic)):
        return {"array": encode_small_array(np.asarray(value))}
    raise WireError(f"Cannot send a value of type {type(value).__name__}: only tensors and plain host values "
                    f"(None, bool, int, float, str, bytes, list, tuple, dict)")


def encode_small_array(arr):
    spec, frame = _encode_array(np.asarray(arr), False)
    spec["b64"] = base64.b64encode(bytes(frame)).decode()
    return spec


# -- decoding ------------------------------------------------------------------------------

def decode(frames, max_message_bytes=DEFAULT_MAX_MESSAGE_BYTES, expect=None):
    """Decodes and validates one message (frames as received, without envelope).

    `expect` restricts the message types accepted (e.g. only replies on a
    client). Raises WireError on anything malformed, whatever the bytes.
    """
    n = len(frames)
    if n == 0:
        raise WireError("Empty message")
    if n > MAX_FRAMES:
        raise WireError(f"Message has {n} frames (at most {MAX_FRAMES})")
    # A request's header alone (RunGraph, CleanupStep) is the common message: no comprehension for it.
    buffers = [_buffer(frames[0])] if n == 1 else [_buffer(f) for f in frames]
    total = 0
    for b in buffers:
        total += b.nbytes
    if total > max_message_bytes:
        raise WireError(f"Message of {total} bytes exceeds the maximum message size of {max_message_bytes} bytes")
    head = buffers[0]
    if head.nbytes and head[0] != 0x7B:  # not '{': a binary header, or nothing this process reads
        return _decode_binary(buffers, max_message_bytes, expect, total)
    header = _parse_header(head)
    msg_type, request_id = _check_common(header, expect)
    schema = SCHEMAS[msg_type]
    fields = {}
    for name, value in header.items():
        kind = schema.get(name)
        if kind is None:
            if name in _COMMON:
                continue
            raise WireError(f"{msg_type}: unknown field '{_short(name)}'")
        kind = kind[0]
        # The kinds on every RecvTensor and RunGraph, checked here as _check_field would: a call less each.
        if kind == "int" and type(value) is int and 0 <= value < _U63 or \
                kind == "str" and type(value) is str and len(value) <= _MAX_STR:
            fields[name] = value
        else:
            fields[name] = _check_field(msg_type, name, kind, value)
    # Each by name: counting the fields would let an optional one stand in for a missing required one.
    for name in _REQUIRED[msg_type]:
        if name not in fields:
            raise WireError(f"{msg_type}: missing required field '{name}'")
    specs = header.get("tensors", _NO_SPECS)
    if type(specs) is not list:
        raise WireError(f"{msg_type}: 'tensors' must be a list")
    if len(specs) != n - 1:
        raise WireError(f"{msg_type}: header describes {len(specs)} tensors but {n - 1} payload frames follow")
    values = [decode_value(spec, buffers[i + 1], i, max_message_bytes) for i, spec in enumerate(specs)] \
        if specs else []
    return Message(msg_type, request_id, fields, values, total)


_decode = decode
decode = guard_decode(_decode)
_REPLY_ONLY = frozenset({REPLY})


def decode_reply(frames, max_message_bytes=DEFAULT_MAX_MESSAGE_BYTES, shared=None):
    """`decode(frames, max_message_bytes, expect={REPLY})`. The binary tensor reply, every RecvTensor's
    answer, goes straight to its reader: a client reads it right after a wake-up, when each step of
    the general path runs cold (so the guard is written out here rather than wrapped around it, and
    a received frame's buffer is read without _buffer: a call less each). `shared` is the
    shared_payload.PayloadReader of the peer the frames came from, if this process asked it for
    shared memory: a shared reply is read through it (and refused from any other peer)."""
    try:
        if len(frames) == 1:
            # The empty reply, every RunGraph's that returns nothing (the master waits for it last).
            head = getattr(frames[0], "buffer", None) or _buffer(frames[0])
            if head.nbytes == _EMPTY_REPLY.size and head[0] == BINARY_EMPTY_REPLY \
                    and _EMPTY_REPLY.size <= max_message_bytes:
                _, version, zeros, request_id = _EMPTY_REPLY.unpack_from(head)
                if version == PROTOCOL_VERSION and zeros == _ZEROS and request_id < _U63:
                    return Message(REPLY, request_id, {"error": None}, [], _EMPTY_REPLY.size)
            if head.nbytes >= _SHARED_REPLY_FIXED and head[0] == BINARY_SHARED_TENSOR_REPLY and shared is not None:
                return _read_shared_reply(head, shared, max_message_bytes)
        elif len(frames) == 2:
            head, payload = frames
            head = getattr(head, "buffer", None) or _buffer(head)
            if head.nbytes >= _TENSOR_REPLY_FIXED and head[0] == BINARY_TENSOR_REPLY:
                payload = getattr(payload, "buffer", None) or _buffer(payload)
                total = head.nbytes + payload.nbytes
                if total > max_message_bytes:
                    raise WireError(f"Message of {total} bytes exceeds the maximum message size of "
                                    f"{max_message_bytes} bytes")
                return _read_tensor_reply(head, (head, payload), max_message_bytes, total)
        return _decode(frames, max_message_bytes, _REPLY_ONLY)
    except errors.OpError:  # a WireError, or the shared reader's own error (it names the peer)
        raise
    except Exception as e:  # noqa: BLE001 - as guard_decode
        raise as_wire_error(e) from None


_NO_SPECS = []
_REQUIRED = {t: tuple(name for name, (_, required) in schema.items() if required) for t, schema in SCHEMAS.items()}


def _buffer(frame):
    buf = getattr(frame, "buffer", None)  # zmq.Frame
    if buf is not None:
        return buf
    if isinstance(frame, memoryview):
        return frame if frame.format == "B" and frame.ndim == 1 else frame.cast("B")
    return memoryview(frame)


def _decode_binary(buffers, limit, expect, total):
    head = buffers[0]
    kind = head[0]
    layout = _BINARY_LAYOUTS.get(kind)
    if layout is None:
        raise WireError(f"The header frame is not a JSON object nor a binary header (its first byte is {kind})")
    msg_type, fixed, read = layout
    if head.nbytes < fixed:
        raise WireError(f"{msg_type}: a binary header of {head.nbytes} bytes (at least {fixed})")
    if expect is not None and msg_type not in expect:
        raise WireError(f"Unexpected message type {msg_type} (expected {sorted(expect)})")
    return read(head, buffers, limit, total)


def _read_recv_tensor(head, buffers, limit, total):
    request_id, step_id, key = read_recv_tensor(head, limit)
    if len(buffers) != 1:
        raise WireError(f"RecvTensor: header describes 0 tensors but {len(buffers) - 1} payload frames follow")
    return Message("RecvTensor", request_id, {"step_id": step_id, "key": key}, [], total)


def read_recv_tensor(head, limit=DEFAULT_MAX_MESSAGE_BYTES):
    """(request id, step id, key) of a binary RecvTensor header, the message's only frame (a
    buffer whose first byte is BINARY_RECV_TENSOR), checked as `decode` checks it: the worker
    reads the request on every cross-process edge with this alone, without a Message."""
    # The well-formed common case in one unpack and one comparison per field (it runs right after
    # the serving thread wakes, when every call is several times its cost in a loop); anything
    # else takes the full checks, for their errors.
    size = head.nbytes
    if _RECV_TENSOR.size < size <= _RECV_TENSOR_FAST_MAX and size <= limit:
        _, version, zeros, request_id, step_id = _RECV_TENSOR.unpack_from(head)
        if version == PROTOCOL_VERSION and zeros == _ZEROS and request_id < _U63 and step_id < _U63:
            try:
                return request_id, step_id, str(head[_RECV_TENSOR.size:], "utf-8")
            except UnicodeDecodeError:
                pass
    return _read_recv_tensor_checked(head, limit)


@guard_decode
def _read_recv_tensor_checked(head, limit):
    _check_request_size(head, _RECV_TENSOR.size, limit)
    _, version, zeros, request_id, step_id = _RECV_TENSOR.unpack_from(head)
    _check_request_ids(version, zeros, request_id, step_id)
    return request_id, step_id, _checked_key(head, _RECV_TENSOR.size)


def _check_request_size(head, fixed, limit):
    if head.nbytes > limit:
        raise WireError(f"Message of {head.nbytes} bytes exceeds the maximum message size of {limit} bytes")
    if head.nbytes < fixed:
        raise WireError(f"RecvTensor: a binary header of {head.nbytes} bytes (at least {fixed})")


def _check_request_ids(version, zeros, request_id, step_id):
    _check_version(version)
    _check_zeros(zeros, "RecvTensor")
    if request_id >= _U63 or step_id >= _U63:
        raise WireError("RecvTensor: 'id' and 'step_id' must be integers in [0, 2**63)")


def _checked_key(head, start):
    """A binary RecvTensor's key: the frame's bytes from `start` on, as UTF-8 of at most _MAX_STR characters."""
    if head.nbytes - start > 4 * _MAX_STR:  # more characters than allowed, whatever they are
        raise WireError(f"RecvTensor.key must be a string of at most {_MAX_STR} characters")
    try:
        key = str(head[start:], "utf-8")
    except UnicodeDecodeError:
        raise WireError("RecvTensor.key is not valid UTF-8") from None
    if len(key) > _MAX_STR:
        raise WireError(f"RecvTensor.key must be a string of at most {_MAX_STR} characters")
    return key


def _read_tensor_reply(head, buffers, limit, total):
    # The well-formed common case in as few steps as possible (every cross-process edge reads one,
    # right after a wake-up, when each step runs cold): a non-empty tensor whose frame holds exactly
    # its bytes, aligned. A frame that holds count * itemsize bytes bounds every dimension, so the
    # dimension checks below are implied. Anything else takes the full checks, for their errors.
    ndim = head[4]
    if ndim <= MAX_NDIMS and len(buffers) == 2:
        layout = _TENSOR_REPLY[ndim]
        if head.nbytes == layout.size:
            fields = layout.unpack_from(head)
            dtype = _FAST_DTYPES[fields[2]] if fields[2] < len(_FAST_DTYPES) else None
            scalar = fields[3]
            if dtype is not None and fields[1] == PROTOCOL_VERSION and fields[5] == _ZEROS3 \
                    and fields[6] < _U63 and (scalar == 0 or (scalar == 1 and not ndim)):
                shape = fields[7:]
                buf = buffers[1]
                nbytes = prod(shape) * dtype.itemsize
                if nbytes and nbytes == buf.nbytes and nbytes <= limit:
                    arr = np.ndarray(shape, dtype, buf.toreadonly())  # read-only: the frame's memory
                    if arr.flags.aligned:
                        return Message(REPLY, fields[6], {"error": None}, [arr[()] if scalar else arr], total)
    return _read_tensor_reply_checked(head, buffers, limit, total)


def _read_tensor_reply_checked(head, buffers, limit, total):
    _, version, code, flags, ndim, zeros, request_id = _TENSOR_REPLY[0].unpack_from(head)
    _check_reply_id(version, zeros, request_id)
    if ndim > MAX_NDIMS or head.nbytes != _TENSOR_REPLY[ndim].size:
        raise WireError(f"Reply: a binary tensor header of {head.nbytes} bytes for {ndim} dimensions "
                        f"(at most {MAX_NDIMS}, 8 bytes each after {_TENSOR_REPLY_FIXED})")
    if code >= len(BINARY_DTYPES):
        raise WireError(f"Reply: unknown dtype code {code} (known: 0-{len(BINARY_DTYPES) - 1})")
    if flags > 1:
        raise WireError(f"Reply: unknown flags {flags:#x} in a binary tensor header")
    if len(buffers) != 2:
        raise WireError(f"Reply: header describes 1 tensors but {len(buffers) - 1} payload frames follow")
    # The JSON spec's checks (wire_validation.check_tensor_spec) for what a binary header can hold: its
    # fields are integers already, so no dict is built (this runs on every cross-process edge, cold).
    name = BINARY_DTYPES[code]
    dtype = _DTYPES[name]
    shape = _TENSOR_REPLY[ndim].unpack_from(head)[7:]
    count = nominal = 1
    for d in shape:
        if d >= _U63:
            raise WireError(f"tensor 0: shape {short(repr(list(shape)))} has a bad dimension")
        count *= d
        if d:
            nominal *= d
    buf = buffers[1]
    if count * dtype.itemsize != buf.nbytes:
        raise WireError(f"tensor 0: {name}{list(shape)} needs {count * dtype.itemsize} bytes, the frame has "
                        f"{buf.nbytes}")
    if nominal * dtype.itemsize > limit:
        raise WireError(f"tensor 0: shape {short(repr(list(shape)))} of {name} is larger than the maximum "
                        f"message size of {limit} bytes")
    if flags and ndim:
        raise WireError("tensor 0: 'scalar' must be a boolean and only set for shape []")
    arr = _numeric_array(name, dtype, shape, count, buf, 0)
    return Message(REPLY, request_id, {"error": None}, [arr[()] if flags else arr], total)


def _read_shared_reply(head, shared, limit):
    ndim = head[4]
    if ndim > MAX_NDIMS or head.nbytes != _SHARED_REPLY[ndim].size:
        raise WireError(f"Reply: a shared tensor header of {head.nbytes} bytes for {ndim} dimensions "
                        f"(at most {MAX_NDIMS}, 8 bytes each after {_SHARED_REPLY_FIXED})")
    _, version, code, flags, _, zeros, request_id, seq, offset, fd, zeros4, token, *shape = \
        _SHARED_REPLY[ndim].unpack_from(head)
    _check_reply_id(version, zeros + zeros4, request_id)
    dtype = _FAST_DTYPES[code] if code < len(_FAST_DTYPES) else None
    if dtype is None:
        raise WireError(f"Reply: dtype code {code} cannot come through shared memory")
    if flags:
        raise WireError(f"Reply: unknown flags {flags:#x} in a shared tensor header")
    nbytes = dtype.itemsize
    for d in shape:
        if d >= _U63:
            raise WireError(f"tensor 0: shape {short(repr(list(shape)))} has a bad dimension")
        nbytes *= d
    if nbytes > limit:
        raise WireError(f"tensor 0: shape {short(repr(list(shape)))} of {dtype.name} is larger than the maximum "
                        f"message size of {limit} bytes")
    value = shared.read(fd, token, offset, seq, dtype, tuple(shape), nbytes)
    return Message(REPLY, request_id, {"error": None}, [value], head.nbytes + nbytes)


def _read_shared_reply_unasked(head, buffers, limit, total):
    raise WireError("Reply: a tensor in shared memory from a peer this process did not ask for one")


def _read_recv_tensor_shared_message(head, buffers, limit, total):
    request_id, step_id, key, _ = read_recv_tensor_shared(head, limit)
    if len(buffers) != 1:
        raise WireError(f"RecvTensor: header describes 0 tensors but {len(buffers) - 1} payload frames follow")
    return Message("RecvTensor", request_id, {"step_id": step_id, "key": key}, [], total)


def read_recv_tensor_shared(head, limit=DEFAULT_MAX_MESSAGE_BYTES):
    """(request id, step id, key, released sequence numbers) of a kind-4 RecvTensor header, checked as
    read_recv_tensor checks kind 1 (and as it does, the well-formed common case first)."""
    size = head.nbytes
    fixed = _RECV_TENSOR_SHARED.size
    if fixed < size <= limit:
        _, version, count, zeros, request_id, step_id = _RECV_TENSOR_SHARED.unpack_from(head)
        start = fixed + 8 * count
        if version == PROTOCOL_VERSION and zeros == _ZEROS4 and request_id < _U63 and step_id < _U63 \
                and count <= MAX_RELEASED and start < size <= start + _MAX_STR:
            try:
                return (request_id, step_id, str(head[start:], "utf-8"),
                        struct.unpack_from(f"<{count}Q", head, fixed) if count else ())
            except UnicodeDecodeError:
                pass
    return _read_recv_tensor_shared_checked(head, limit)


@guard_decode
def _read_recv_tensor_shared_checked(head, limit):
    fixed = _RECV_TENSOR_SHARED.size
    _check_request_size(head, fixed, limit)
    _, version, count, zeros, request_id, step_id = _RECV_TENSOR_SHARED.unpack_from(head)
    _check_request_ids(version, zeros, request_id, step_id)
    if count > MAX_RELEASED or fixed + 8 * count > head.nbytes:
        raise WireError(f"RecvTensor: {count} released records in a header of {head.nbytes} bytes "
                        f"(at most {MAX_RELEASED})")
    released = struct.unpack_from(f"<{count}Q", head, fixed) if count else ()
    return request_id, step_id, _checked_key(head, fixed + 8 * count), released


def _read_empty_reply(head, buffers, limit, total):
    _, version, zeros, request_id = _EMPTY_REPLY.unpack_from(head)
    _check_reply_id(version, zeros, request_id)
    if head.nbytes != _EMPTY_REPLY.size or len(buffers) != 1:
        raise WireError(f"Reply: an empty reply's binary header is {_EMPTY_REPLY.size} bytes with no payload "
                        f"frames (got {head.nbytes} bytes and {len(buffers) - 1} frames)")
    return Message(REPLY, request_id, {"error": None}, [], total)


def _check_reply_id(version, zeros, request_id):
    _check_version(version)
    _check_zeros(zeros, REPLY)
    if request_id >= _U63:
        raise WireError("Reply: 'id' must be an integer in [0, 2**63)")


def _check_zeros(zeros, msg_type):
    if zeros.count(0) != len(zeros):
        raise WireError(f"{msg_type}: a binary header's padding bytes must be zero")


# kind byte -> (message type, fixed header bytes, reader)
_BINARY_LAYOUTS = {BINARY_RECV_TENSOR: ("RecvTensor", _RECV_TENSOR.size, _read_recv_tensor),
                   BINARY_TENSOR_REPLY: (REPLY, _TENSOR_REPLY_FIXED, _read_tensor_reply),
                   BINARY_EMPTY_REPLY: (REPLY, _EMPTY_REPLY.size, _read_empty_reply),
                   BINARY_RECV_TENSOR_SHARED: ("RecvTensor", _RECV_TENSOR_SHARED.size, _read_recv_tensor_shared_message),
                   BINARY_SHARED_TENSOR_REPLY: (REPLY, _SHARED_REPLY_FIXED, _read_shared_reply_unasked)}


def best_effort_id(frames):
    """The request id a message that failed to decode seems to carry, or 0: an error reply then still
    reaches the call that waits for it. Only a hint; nothing else is read from the message."""
    try:
        buf = _buffer(frames[0])
        if buf.nbytes >= 16 and buf[0] in _BINARY_LAYOUTS:
            request_id = int.from_bytes(buf[8:16], "little")
        else:
            request_id = json.loads(bytes(buf)).get("id")
        return request_id if type(request_id) is int and 0 <= request_id < _U63 else 0
    except Exception:  # noqa: BLE001 - it is malformed; this is only a hint
        return 0


_scan_json = json.JSONDecoder().scan_once


def _parse_header(buf):
    if buf.nbytes == 0:
        raise WireError("Empty header frame")
    if buf[0] != 0x7B:  # '{'
        raise WireError("The header frame is not a JSON object")
    try:
        text = str(buf, "utf-8")
        header, end = _scan_json(text, 0)
    except StopIteration:
        raise WireError("The header frame is not valid JSON") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise WireError(f"The header frame is not valid JSON: {_short(str(e))}") from None
    except RecursionError:
        raise WireError("The header frame nests too deeply") from None
    if end != len(text) and text[end:].strip():
        raise WireError("The header frame has data after its JSON object")
    if not isinstance(header, dict):
        raise WireError("The header frame is not a JSON object")
    return header


def _check_common(header, expect):
    version = header.get("v")
    if type(version) is not int:
        raise WireError("Missing or non-integer protocol version 'v'")
    if version != PROTOCOL_VERSION:
        _check_version(version)
    msg_type = header.get("type")
    if type(msg_type) is not str or msg_type not in SCHEMAS:
        raise WireError(f"Unknown message type {_short(repr(msg_type))}; known: {sorted(SCHEMAS)}")
    if expect is not None and msg_type not in expect:
        raise WireError(f"Unexpected message type {msg_type} (expected {sorted(expect)})")
    request_id = header.get("id")
    if type(request_id) is not int or not 0 <= request_id < _U63:
        raise WireError(f"{msg_type}: 'id' must be an integer in [0, 2**63)")
    return msg_type, request_id


def _check_version(version):
    if version != PROTOCOL_VERSION:
        raise WireError(f"Unsupported protocol version {version} (this process speaks {PROTOCOL_VERSION})")


def _check_field(msg_type, name, kind, value):
    if kind == "int":
        if type(value) is not int or not 0 <= value < _U63:
            raise WireError(f"{msg_type}.{name} must be an integer in [0, 2**63)")
    elif kind == "bool":
        if type(value) is not bool:
            raise WireError(f"{msg_type}.{name} must be a boolean")
    elif kind == "str":
        if type(value) is not str or len(value) > _MAX_STR:
            raise WireError(f"{msg_type}.{name} must be a string of at most {_MAX_STR} characters")
    # The lists are checked in plain loops, not any() over a generator: a RunGraph carries two or
    # three of them, decoded right after the task's serving thread wakes.
    elif kind == "keys":
        if type(value) is not list or len(value) > _MAX_KEYS:
            raise WireError(f"{msg_type}.{name} must be a list of strings")
        for k in value:
            if type(k) is not str or len(k) > _MAX_STR:
                raise WireError(f"{msg_type}.{name} must be a list of strings")
    elif kind == "ints":
        if type(value) is not list or len(value) > _MAX_INTS:
            raise WireError(f"{msg_type}.{name} must be a list of at most {_MAX_INTS} integers in [0, 2**63)")
        for i in value:
            if type(i) is not int or not 0 <= i < _U63:
                raise WireError(f"{msg_type}.{name} must be a list of at most {_MAX_INTS} integers in [0, 2**63)")
    elif kind == "pulls":
        if type(value) is not list or len(value) > _MAX_KEYS:
            raise WireError(f"{msg_type}.{name} must be a list of at most {_MAX_KEYS} [request id, key] pairs")
        for p in value:
            if type(p) is not list or len(p) != 2 or type(p[0]) is not int or not 0 < p[0] < _U63 \
                    or type(p[1]) is not str or len(p[1]) > _MAX_STR:
                raise WireError(f"{msg_type}.{name} must be a list of at most {_MAX_KEYS} [request id, key] pairs")
    elif kind == "dict":
        if type(value) is not dict:
            raise WireError(f"{msg_type}.{name} must be a JSON object")
    elif kind == "strmap":
        if type(value) is not dict or any(type(v) is not str for v in value.values()):
            raise WireError(f"{msg_type}.{name} must be an object of strings")
    elif kind == "error":
        if value is not None:
            _check_error(f"{msg_type}.{name}", value)
    else:  # pragma: no cover - schema typo
        raise AssertionError(kind)
    return value


def _check_error(where, value):
    if type(value) is not dict:
        raise WireError(f"{where} must be an error object or null")
    code = value.get("code")
    if type(code) is not int or not 0 < code < 64:
        raise WireError(f"{where}.code must be a status code")
    if type(value.get("message")) is not str:
        raise WireError(f"{where}.message must be a string")
    for name in value:
        if name not in ("code", "message", "derived", "node", "device", "key"):
            raise WireError(f"{where}: unknown field '{_short(name)}'")
    for name in ("node", "device", "key"):
        if value.get(name) is not None and type(value[name]) is not str:
            raise WireError(f"{where}.{name} must be a string or null")
    if "derived" in value and type(value["derived"]) is not bool:
        raise WireError(f"{where}.derived must be a boolean")


def decode_value(spec, buf, index=0, limit=DEFAULT_MAX_MESSAGE_BYTES):
    """One payload value from its spec and frame buffer (zero-copy for tensors).

    The spec is checked (wire_validation) before numpy sees any of it.
    """
    if type(spec) is not dict:
        raise WireError(f"tensor {index}: spec must be a JSON object")
    if "py" in spec:
        if len(spec) != 1 or buf.nbytes:
            raise WireError(f"tensor {index}: a host value has no other fields and an empty frame")
        return _decode_py(spec["py"], 0)
    if "dead" in spec:
        if spec != {"dead": True} or buf.nbytes:
            raise WireError(f"tensor {index}: a dead value is {{\"dead\": true}} with an empty frame")
        return DEAD
    name, shape, count, scalar = check_tensor_spec(spec, buf.nbytes, limit, index)
    if name == STRING:
        arr = _decode_strings(buf, shape, count, index)
    else:
        arr = _numeric_array(name, _DTYPES[name], shape, count, buf, index)
    return arr[()] if scalar else arr


def _numeric_array(name, dtype, shape, count, buf, index):
    """The read-only array a checked numeric spec describes, viewing the frame (zero-copy)."""
    if count == 0:
        arr = np.empty(shape, dtype=dtype.newbyteorder("="))
        arr.flags.writeable = False
        return arr
    arr = np.frombuffer(buf, dtype=dtype)
    if not arr.flags.aligned:  # small frames may sit unaligned in zmq's receive buffer
        arr = arr.copy()
    if dtype.byteorder == ">" or (dtype.byteorder == "<" and not _LITTLE):  # pragma: no cover
        arr = arr.astype(dtype.newbyteorder("="))
    arr = arr.reshape(shape)
    arr.flags.writeable = False  # the frame's memory: values are immutable in the runtime
    if name == "bool" and arr.view(np.uint8).max(initial=0) > 1:
        raise WireError(f"tensor {index}: bool tensor holds bytes other than 0 and 1")
    return arr


_LITTLE = np.little_endian


def _decode_strings(buf, shape, count, index):
    head = count * 8  # check_tensor_spec made sure the frame holds the length table
    lengths = np.frombuffer(buf[:head], dtype="<u8") if count else np.zeros(0, "<u8")
    if int(lengths.sum(dtype=np.uint64)) != buf.nbytes - head or (count and int(lengths.max()) > buf.nbytes):
        raise WireError(f"tensor {index}: string lengths do not add up to the frame's {buf.nbytes - head} bytes")
    data = bytes(buf[head:])
    out = np.empty(count, dtype=object)
    pos = 0
    for i, n in enumerate(lengths.tolist()):
        out[i] = data[pos:pos + n]
        pos += n
    out = out.reshape(shape)
    out.flags.writeable = False
    return out


def _decode_py(value, depth):
    if depth > MAX_PY_DEPTH:
        raise WireError(f"A host value nests deeper than {MAX_PY_DEPTH} levels")
    if value is None or type(value) in (bool, int, float, str):
        return value
    if type(value) is not dict or len(value) != 1:
        raise WireError("A host value must be a scalar or a one-key tagged object")
    (tag, inner), = value.items()
    if tag in ("list", "tuple"):
        if type(inner) is not list:
            raise WireError(f"A tagged {tag} must hold a list")
        items = [_decode_py(v, depth + 1) for v in inner]
        return items if tag == "list" else tuple(items)
    if tag == "dict":
        if type(inner) is not list or any(type(p) is not list or len(p) != 2 for p in inner):
            raise WireError("A tagged dict must hold [key, value] pairs")
        out = {}
        for k, v in inner:
            k = _decode_py(k, depth + 1)
            try:
                out[k] = _decode_py(v, depth + 1)
            except TypeError:
                raise WireError("A dict key must be hashable") from None
        return out
    if tag == "bytes":
        if type(inner) is not str:
            raise WireError("Tagged bytes must be base64 text")
        try:
            return base64.b64decode(inner, validate=True)
        except ValueError:
            raise WireError("Tagged bytes are not valid base64") from None
    if tag == "array":
        return decode_small_array(inner)
    raise WireError(f"Unknown host value tag {_short(repr(tag))}")


@guard_decode
def decode_small_array(spec):
    if type(spec) is not dict or type(spec.get("b64")) is not str:
        raise WireError("A small array must be an object with base64 data")
    try:
        raw = base64.b64decode(spec["b64"], validate=True)
    except ValueError:
        raise WireError("A small array's data is not valid base64") from None
    rest = {k: v for k, v in spec.items() if k != "b64"}
    return decode_value(rest, memoryview(raw))


# -- errors ------------------------------------------------------------------------------

def error_to_wire(error):
    if isinstance(error, errors.OpError):
        out = {"code": int(error.error_code), "message": error.message}
        if errors.is_derived(error):
            out["derived"] = True
        for name in ("node", "device", "key"):
            value = getattr(error, name, None)
            if value is not None:
                out[name] = str(value)
        return out
    return {"code": errors.INTERNAL, "message": f"{type(error).__name__}: {error}"}


def error_from_wire(spec, prefix=""):
    cls = errors.error_class(spec["code"])
    message = spec["message"]
    err = cls(f"{prefix}{message}", node=spec.get("node"), device=spec.get("device"), key=spec.get("key"))
    if spec.get("derived"):
        errors.mark_derived(err)
    return err


_short = short
