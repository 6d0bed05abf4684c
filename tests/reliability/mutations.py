"""Structured fuzzing: valid messages of every type, mutated field by field.

Random bytes mostly die at the JSON parser; these mutations keep a message
well-formed JSON and change one thing a decoder or handler trusts: a field's
type or value, a tensor spec's dtype, shape or flags, a payload's length or
bytes, the number of frames, a host value's tags and nesting. A message with
a binary header (RecvTensor, a tensor or an empty Reply) gets one of its fixed fields
set to an edge value instead, its key's bytes mangled, or its frames changed.
"""
import copy
import json
import random

import numpy as np

from graphrt.distributed import wire
from graphrt.framework.graph_def import GraphDef, NodeDef
from graphrt import dtypes

BIG = [2 ** 62, 2 ** 63 - 1, 2 ** 61, 2 ** 40, 2 ** 33]   # products numpy cannot represent
HUGE = [2 ** 62, 2 ** 63 - 1, 2 ** 31, 2 ** 40, 10 ** 30, -1, 0, 1, 3]
JUNK = [None, True, False, -1, 0, 1, 2 ** 63, 2 ** 64, -2 ** 63, 1.5, float("nan"), "", "x" * 300, [], {}, [1, "a"],
        {"a": 1}, "float32", "string", "Reply", "../../etc/passwd", "\u0000\uffff"]
DTYPES = sorted(wire.ALLOWED_DTYPES) + ["object", "float128", "V8", "<f4", "S3", "U3", "", None, 7]


def valid_messages(device, incarnation):
    """One or more valid requests of every type, and valid replies (what a client decodes)."""
    key = f"{device};{incarnation:016x};{device};edge_1_a;0:0"
    graph = GraphDef([NodeDef("c", "Const", [], device, {"dtype": dtypes.float32,
                                                         "value": np.ones(3, np.float32)}),
                      NodeDef("i", "Identity", ["c"], device, {"T": dtypes.float32})]).to_dict()
    values = [np.arange(6, dtype=np.float32).reshape(2, 3), np.array([b"ab", b"", b"xyz"], dtype=object),
              np.array([True, False]), np.float64(2.5), wire.DEAD, None, ("t", 1, [2.5, b"\x00"], {"k": None}),
              np.zeros((0, 4), np.int64), np.array(b"s", dtype=object)]
    requests = [
        wire.encode("ListDevices", 1),
        wire.encode("GetStatus", 2),
        wire.encode("RegisterGraph", 3, {"graph_def": graph, "debug_info": {"c": "here"}, "session": "s"}),
        wire.encode("DeregisterGraph", 4, {"graph_handle": "0000000000000001"}),
        wire.encode("RunGraph", 5, {"graph_handle": "0000000000000001", "step_id": 9, "send_keys": [key] * 3,
                                    "recv_keys": [key], "timeout_ms": 200, "trace": True}, values[:3]),
        wire.encode("RecvTensor", 6, {"step_id": 5, "key": key}),
        wire.encode("CleanupStep", 7, {"step_id": 3}),
        wire.encode("AbortStep", 8, {"step_id": 3, "error": {"code": 10, "message": "x", "derived": True,
                                                              "node": "n", "device": device, "key": key}}),
    ]
    replies = [
        wire.encode_reply(1, None, {"result": {"a": [1, 2]}, "recv_keys": [key]}, values),
        wire.encode_reply(2, wire.WireError("bad"), {}),
        wire.encode_reply(3, None, None, [np.arange(1000, dtype=np.float32)]),
        wire.encode_reply(4, None, None, [np.float64(2.5)]),
        wire.encode_reply(5, None, None, [np.array([[True], [False]])]),
        wire.encode_reply(6, None, None, [np.zeros((0, 4), np.int16)]),
        wire.encode_reply(7),
    ]
    return [[bytes(f) for f in m] for m in requests], [[bytes(f) for f in m] for m in replies]


def mutate(rng, frames):
    frames = list(frames)
    if frames[0][:1] != b"{":
        return mutate_binary(rng, frames)
    header = json.loads(frames[0])
    kind = rng.randrange(10)
    if kind == 0:    # a field's value replaced by junk of any type
        name = rng.choice(list(header) + ["extra", "error", "result", "tensors"])
        header[name] = copy.deepcopy(rng.choice(JUNK))
    elif kind == 1:  # a field dropped
        if header:
            header.pop(rng.choice(list(header)))
    elif kind in (2, 3, 4) and isinstance(header.get("tensors"), list) and header["tensors"]:  # a spec changed
        specs = header["tensors"]
        i = rng.randrange(len(specs))
        if not isinstance(specs[i], dict):
            specs[i] = {}
        spec = specs[i]
        what = rng.randrange(7)
        if what == 0:
            spec["dtype"] = rng.choice(DTYPES)
        elif what == 1:
            spec["shape"] = [rng.choice(HUGE) for _ in range(rng.randrange(0, 5))]
        elif what == 2:  # zero-size but huge, with the empty frame a zero-size tensor has
            spec["shape"] = [rng.choice(BIG) for _ in range(rng.randrange(1, 4))]
            spec["shape"].insert(rng.randrange(len(spec["shape"]) + 1), 0)
            spec.pop("py", None), spec.pop("dead", None)
            spec["dtype"] = rng.choice(DTYPES[:15])
            if i + 1 < len(frames):
                frames[i + 1] = b""
        elif what == 3:
            spec[rng.choice(["scalar", "dead", "py", "b64", "x"])] = copy.deepcopy(rng.choice(JUNK))
        elif what == 4:
            spec["py"] = _junk_host_value(rng, 0)
        elif what == 5:
            spec.clear()
            shape = [rng.choice(BIG + HUGE) for _ in range(rng.randrange(4))] + [0] * rng.randrange(2)
            rng.shuffle(shape)
            spec["py"] = {"array": {"dtype": rng.choice(DTYPES), "shape": shape,
                                    "b64": rng.choice(["", "", "AAAA", "!!", "AAAAAAAA"])}}
            if i + 1 < len(frames):
                frames[i + 1] = b""
        else:
            specs.insert(rng.randrange(len(specs) + 1), copy.deepcopy(spec))
    elif kind == 5 and len(frames) > 1:  # a payload truncated, extended or bit-flipped
        i = rng.randrange(1, len(frames))
        data = bytearray(frames[i])
        how = rng.randrange(3)
        if how == 0:
            data = data[:rng.randrange(len(data) + 1)]
        elif how == 1:
            data += rng.randbytes(rng.randrange(1, 17))
        elif data:
            for _ in range(rng.randrange(1, 4)):
                data[rng.randrange(len(data))] = rng.randrange(256)
        frames[i] = bytes(data)
    elif kind == 6:  # frames dropped or added
        if len(frames) > 1 and rng.random() < 0.5:
            frames.pop(rng.randrange(1, len(frames)))
        else:
            frames.append(rng.randbytes(rng.randrange(0, 40)))
    elif kind == 7:  # the type swapped (a request's fields under another type's name)
        header["type"] = rng.choice(sorted(wire.SCHEMAS) + ["Nope"])
    elif kind == 8:  # a key or error mangled
        for name in ("key", "send_keys", "recv_keys", "graph_handle", "error", "graph_def"):
            if name in header:
                header[name] = _mangle(rng, header[name])
                break
    else:            # the id or version
        header[rng.choice(["id", "v"])] = rng.choice(JUNK + [2, 99, 2 ** 62])
    return [json.dumps(header).encode()] + frames[1:]


# (offset, size) of the fixed fields after the kind byte: version, the padding and the id, then step_id
# (RecvTensor) or dtype code, flags and ndim (a tensor Reply, whose dims follow from offset 16).
_BINARY_FIELDS = {wire.BINARY_RECV_TENSOR: [(1, 1), (2, 6), (8, 8), (16, 8)],
                  wire.BINARY_TENSOR_REPLY: [(1, 1), (2, 1), (3, 1), (4, 1), (5, 3), (8, 8)],
                  wire.BINARY_EMPTY_REPLY: [(1, 1), (2, 6), (8, 8)]}
_EDGES = [0, 1, 2, 3, 13, 14, 32, 33, 255, 2 ** 31, 2 ** 62, 2 ** 63 - 1, 2 ** 63, 2 ** 64 - 1]


def mutate_binary(rng, frames):
    """One change to a message with a binary header (see the module doc)."""
    header = bytearray(frames[0])
    if not header:  # an earlier mutation emptied it
        return [rng.randbytes(rng.randrange(1, 30))] + frames[1:]
    kind = rng.randrange(5)
    fields = _BINARY_FIELDS.get(header[0])
    if kind == 0 and fields:  # a fixed field set to an edge value
        offset, size = rng.choice(fields)
        if offset + size <= len(header):
            header[offset:offset + size] = (rng.choice(_EDGES) % (1 << (8 * size))).to_bytes(size, "little")
    elif kind == 1 and header[0] == wire.BINARY_TENSOR_REPLY and len(header) > 16:  # a dim changed
        at = 16 + 8 * rng.randrange((len(header) - 16) // 8 or 1)
        header[at:at + 8] = rng.choice(_EDGES).to_bytes(8, "little")
    elif kind == 2:  # the header truncated, extended or its tail mangled (a key's UTF-8)
        how = rng.randrange(3)
        if how == 0:
            header = header[:rng.randrange(len(header))]
        elif how == 1:
            header += rng.randbytes(rng.randrange(1, 17))
        else:
            header[rng.randrange(len(header) // 2, len(header))] = rng.choice([0x80, 0xC3, 0xFF, 0x00])
    elif kind == 3 and len(frames) > 1:  # the payload truncated or extended
        data = bytes(frames[1])
        frames[1] = data[:rng.randrange(len(data) + 1)] if rng.random() < 0.5 else data + rng.randbytes(4)
    else:  # frames dropped or added, or the kind byte changed
        if rng.random() < 0.3:
            header[0] = rng.choice([0, 4, 0x7A, 0xFF, wire.BINARY_RECV_TENSOR, wire.BINARY_TENSOR_REPLY, wire.BINARY_EMPTY_REPLY])
        elif len(frames) > 1 and rng.random() < 0.5:
            frames.pop(rng.randrange(1, len(frames)))
        else:
            frames.append(rng.randbytes(rng.randrange(0, 40)))
    return [bytes(header)] + frames[1:]


def _junk_host_value(rng, depth):
    if depth > 3 or rng.random() < 0.3:
        return copy.deepcopy(rng.choice(JUNK))
    tag = rng.choice(["list", "tuple", "dict", "bytes", "array", "set", "code"])
    if tag == "dict":
        return {"dict": [[_junk_host_value(rng, depth + 1), _junk_host_value(rng, depth + 1)]
                         for _ in range(rng.randrange(3))]}
    if tag in ("list", "tuple", "set"):
        return {tag: [_junk_host_value(rng, depth + 1) for _ in range(rng.randrange(3))]}
    if tag == "array":
        return {"array": {"dtype": rng.choice(DTYPES), "shape": [rng.choice(HUGE)], "b64": "AAAAAA=="}}
    return {tag: copy.deepcopy(rng.choice(JUNK))}


def _mangle(rng, value):
    if isinstance(value, str):
        cut = rng.randrange(len(value) + 1)
        return value[:cut] + rng.choice([";", "", "\x00", ";;;;", "0:0", "zz"]) + value[cut + 1:]
    if isinstance(value, list):
        return [_mangle(rng, v) for v in value] if value else [1]
    if isinstance(value, dict):
        out = dict(value)
        if out:
            k = rng.choice(list(out))
            out[k] = copy.deepcopy(rng.choice(JUNK))
        return out
    return rng.choice(JUNK)


def fuzzed(seed, n, templates):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        frames = rng.choice(templates)
        for _ in range(rng.choice((1, 1, 1, 2, 3))):
            frames = mutate(rng, frames)
        out.append(frames)
    return out
