"""The wire format: round trips, zero-copy decoding, and validation of every field."""
import json

import numpy as np
import pytest

from graphrt import errors
from graphrt.distributed import wire


def roundtrip(values, msg_type="RunGraph", fields=None, **kw):
    fields = {"graph_handle": "h", "step_id": 1} if fields is None else fields
    frames = wire.encode(msg_type, 7, fields, values)
    frames = [bytes(f) if not isinstance(f, bytes) else f for f in frames]
    return wire.decode(frames, **kw)


@pytest.mark.parametrize("dtype", sorted(set(wire.ALLOWED_DTYPES) - {"string"}))
def test_every_allowed_dtype_round_trips(dtype):
    value = (np.arange(12) % 2).astype(dtype).reshape(3, 4)
    got, = roundtrip([value]).values
    assert got.dtype == value.dtype and got.shape == (3, 4)
    np.testing.assert_array_equal(got, value)


def test_scalars_empty_noncontiguous_and_strings():
    values = [np.float32(2.5), np.zeros((0, 3), np.int64), np.arange(20.0).reshape(4, 5)[:, ::2],
              np.array([b"ab", b"", "c\u00e9".encode()], dtype=object).reshape(3, 1), np.array(b"x", dtype=object)]
    got = roundtrip(values).values
    assert type(got[0]) is np.float32 and got[0] == np.float32(2.5)
    assert got[1].shape == (0, 3) and got[1].dtype == np.int64
    np.testing.assert_array_equal(got[2], values[2])
    assert got[3].shape == (3, 1) and list(got[3].ravel()) == [b"ab", b"", "c\u00e9".encode()]
    assert got[4].shape == () and got[4][()] == b"x"


def test_dead_and_host_values():
    values = [wire.DEAD, None, ("value", 3), [1, 2.5, "x"], {"a": (b"\x00\xff",)}, True]
    assert roundtrip(values).values == values


def test_tensors_are_sent_and_received_without_copies():
    big = np.arange(1 << 16, dtype=np.float64)
    frames = wire.encode("RunGraph", 1, {"graph_handle": "h", "step_id": 1}, [big])
    assert np.shares_memory(np.frombuffer(frames[1], np.uint8), big)
    buf = bytearray(frames[1])
    got, = wire.decode([frames[0], memoryview(buf)]).values
    assert np.shares_memory(got, np.frombuffer(buf, np.uint8))
    assert not got.flags.writeable


@pytest.mark.parametrize("key", ["/job:w/replica:0/task:0/device:CPU:0;56aa789f95807323;"
                                 "/job:w/replica:0/task:1/device:CPU:0;x:0;0:0", 'we"ird\\k\u00e9\n'])
def test_the_hot_messages_have_the_general_encoding(key):
    """RecvTensor requests and one-tensor replies are formatted directly: the bytes must be what the
    general encoder writes, so a peer cannot tell them apart."""
    fast = wire.encode("RecvTensor", 12, {"step_id": 345, "key": key})
    header = {"v": wire.PROTOCOL_VERSION, "type": "RecvTensor", "id": 12, "step_id": 345, "key": key}
    assert fast == [json.dumps(header, separators=(",", ":")).encode()]
    assert wire.decode(fast).fields == {"step_id": 345, "key": key}
    for value in (np.float32(1.5), np.arange(6, dtype=np.int64).reshape(2, 3), np.array([b"a"], dtype=object)):
        fast = wire.encode_reply(3, None, None, [value])
        general = wire.encode(wire.REPLY, 3, {"error": None}, [value])
        assert json.loads(fast[0]) == json.loads(general[0]) and bytes(fast[1]) == bytes(general[1])


def test_header_fields_and_errors_travel():
    err = errors.mark_derived(errors.AbortedError("Step 3", node="n", device="/job:w/replica:0/task:0/device:CPU:0"))
    frames = wire.encode_reply(9, err, {"recv_keys": ["k"]})
    msg = wire.decode(frames, expect={wire.REPLY})
    assert (msg.type, msg.id, msg.fields["recv_keys"]) == (wire.REPLY, 9, ["k"])
    got = msg.error
    assert type(got) is errors.AbortedError and got.message == "Step 3" and errors.is_derived(got)
    assert (got.node, got.device) == ("n", "/job:w/replica:0/task:0/device:CPU:0")


def header(**fields):
    base = {"v": wire.PROTOCOL_VERSION, "type": "RecvTensor", "id": 1, "step_id": 1, "key": "k"}
    base.update(fields)
    return json.dumps({k: v for k, v in base.items() if v is not ...}).encode()


@pytest.mark.parametrize("frames, problem", [
    ([b""], "Empty header"),
    ([b"\x00\x01"], "not a JSON object"),
    ([b"{nope"], "not valid JSON"),
    ([b"[1]"], "not a JSON object"),
    ([b"{" * 100000], "JSON"),
    ([header(v=2)], "Unsupported protocol version 2"),
    ([header(v=...)], "protocol version"),
    ([header(type="Exec")], "Unknown message type"),
    ([header(id=-1)], "'id'"),
    ([header(id=True)], "'id'"),
    ([header(step_id="1")], "RecvTensor.step_id"),
    ([header(step_id=...)], "missing required field 'step_id'"),
    ([header(extra=1)], "unknown field 'extra'"),
    ([header(), b"x"], "describes 0 tensors but 1 payload"),
    ([header(tensors=[{"dtype": "object", "shape": []}]), b""], "dtype 'object' is not allowed"),
    ([header(tensors=[{"dtype": "float32", "shape": [3]}]), b"\0" * 8], "needs 12 bytes, the frame has 8"),
    ([header(tensors=[{"dtype": "float32", "shape": [-1]}]), b""], "bad dimension"),
    ([header(tensors=[{"dtype": "float32", "shape": [1] * 40}]), b""], "at most 32"),
    ([header(tensors=[{"dtype": "float32", "shape": [1 << 40, 1 << 40]}]), b""], "needs"),
    ([header(tensors=[{"dtype": "bool", "shape": [2]}]), b"\x01\x07"], "bool tensor"),
    ([header(tensors=[{"dtype": "string", "shape": [2]}]), b"\x05" + b"\0" * 15 + b"abc"], "do not add up"),
    ([header(tensors=[{"dead": True}]), b"x"], "dead value"),
    ([header(tensors=[{"py": {"code": "os.system"}}]), b""], "Unknown host value tag"),
    ([header(tensors=[{"py": {"bytes": "!!"}}]), b""], "base64"),
    ([header(tensors=[{"dtype": "float32", "shape": [1], "pickle": 1}]), b"\0" * 4], "unknown field 'pickle'"),
])
def test_malformed_messages_are_wire_errors(frames, problem):
    with pytest.raises(wire.WireError) as raised:
        wire.decode(frames)
    assert problem in raised.value.message
    assert isinstance(raised.value, errors.InvalidArgumentError)


def test_size_limit_counts_every_frame():
    frames = wire.encode("RunGraph", 1, {"graph_handle": "h", "step_id": 1}, [np.zeros(1000, np.float32)])
    wire.decode(frames, max_message_bytes=4200)
    with pytest.raises(wire.WireError, match="exceeds the maximum message size of 4000 bytes"):
        wire.decode(frames, max_message_bytes=4000)


def test_unsupported_values_cannot_be_sent():
    with pytest.raises(wire.WireError, match="Cannot send a value of type object"):
        wire.encode_value(object())
    with pytest.raises(wire.WireError, match="dtype"):
        wire.encode_value(np.zeros(2, dtype="datetime64[s]"))
