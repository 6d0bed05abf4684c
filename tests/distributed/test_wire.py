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


KEYS = ["/job:w/replica:0/task:0/device:CPU:0;56aa789f95807323;/job:w/replica:0/task:1/device:CPU:0;x:0;0:0",
        'we"ird\\k\u00e9\n']


@pytest.mark.parametrize("key", KEYS)
def test_a_recv_tensor_request_has_its_binary_header_and_decodes_as_its_json_would(key):
    fast = wire.encode("RecvTensor", 12, {"step_id": 345, "key": key})
    assert fast == [bytes([wire.BINARY_RECV_TENSOR, wire.PROTOCOL_VERSION]) + bytes(6) + (12).to_bytes(8, "little")
                    + (345).to_bytes(8, "little") + key.encode()]
    as_json = json.dumps({"v": wire.PROTOCOL_VERSION, "type": "RecvTensor", "id": 12, "step_id": 345,
                          "key": key}).encode()
    got, expected = wire.decode(fast, expect=wire.MESSAGE_TYPES), wire.decode([as_json])
    assert (got.type, got.id, got.fields, got.values) == (expected.type, expected.id, expected.fields, [])
    assert wire.best_effort_id(fast) == 12


VALUES = [np.float32(1.5), np.int64(-3), np.bool_(True), np.complex128(1 - 2j), np.array(2.0),
          np.arange(6, dtype=np.int64).reshape(2, 3), np.array([[True], [False]]), np.zeros((0, 3), np.float16),
          np.arange(20.0).reshape(4, 5)[:, ::2], np.arange(2 ** 16, dtype=np.uint16)]


@pytest.mark.parametrize("value", VALUES, ids=lambda v: f"{type(v).__name__}-{v.dtype}-{np.shape(v)}")
def test_a_tensor_reply_has_its_binary_header_and_decodes_as_its_json_would(value):
    fast = wire.encode_reply(3, None, None, [value])
    arr = np.asarray(value)
    dims = b"".join(d.to_bytes(8, "little") for d in arr.shape)
    assert bytes(fast[0]) == bytes([wire.BINARY_TENSOR_REPLY, wire.PROTOCOL_VERSION,
                                    wire.BINARY_DTYPES.index(arr.dtype.name), int(isinstance(value, np.generic)),
                                    arr.ndim, 0, 0, 0]) + (3).to_bytes(8, "little") + dims
    general = wire.encode(wire.REPLY, 3, {"error": None}, [value])
    assert bytes(general[0])[:1] == b"{"
    got = wire.decode([bytes(f) for f in fast], expect={wire.REPLY})
    expected = wire.decode([bytes(f) for f in general])
    assert (got.type, got.id, got.fields, got.error) == (expected.type, expected.id, expected.fields, None)
    (a,), (b,) = got.values, expected.values
    assert type(a) is type(b) is type(value) and a.dtype == b.dtype and np.shape(a) == np.shape(b)
    np.testing.assert_array_equal(a, value)


def test_an_empty_success_reply_has_its_binary_header_and_decodes_as_its_json_would():
    fast = wire.encode_reply(21)
    assert fast == [binary_empty(request_id=21)]
    got = wire.decode(fast, expect={wire.REPLY})
    expected = wire.decode(wire.encode(wire.REPLY, 21, {"error": None}))
    assert (got.type, got.id, got.fields, got.values, got.error) == \
        (expected.type, expected.id, expected.fields, [], None) == (wire.REPLY, 21, {"error": None}, [], None)
    assert wire.best_effort_id(fast) == 21
    # With fields or an error it is JSON.
    assert bytes(wire.encode_reply(21, None, {"result": {"a": 1}})[0])[:1] == b"{"
    assert wire.decode(wire.encode_reply(21, wire.WireError("bad"))).error.message == "bad"


@pytest.mark.parametrize("value, expected", [(np.array([b"a", b"bc"], dtype=object), [b"a", b"bc"]),
                                             (np.str_("x"), b"x"), (wire.DEAD, wire.DEAD), (None, None),
                                             (np.arange(3, dtype=">i4"), [0, 1, 2])])
def test_values_without_a_binary_code_go_as_json(value, expected):
    frames = wire.encode_reply(3, None, None, [value])
    assert bytes(frames[0])[:1] == b"{"
    got, = wire.decode([bytes(f) for f in frames]).values
    assert (list(got) if isinstance(got, np.ndarray) and got.ndim else got) == expected


def test_what_the_binary_headers_cannot_hold_goes_as_json_and_is_refused_in_its_words():
    assert wire.encode("RecvTensor", 1, {"step_id": 1, "key": "a\ud800b"})[0][:1] == b"{"  # a lone surrogate
    assert wire.encode_reply(1, None, None, [np.float32(1)])[0][:1] == bytes([wire.BINARY_TENSOR_REPLY])
    too_big = wire.encode("RecvTensor", 1, {"step_id": 2 ** 63, "key": "k"})
    with pytest.raises(wire.WireError, match="RecvTensor.step_id must be an integer"):
        wire.decode(too_big)
    with pytest.raises(wire.WireError, match="'id' must be an integer"):
        wire.decode(wire.encode_reply(2 ** 63, None, None, [np.float32(1)]))


def binary_request(version=wire.PROTOCOL_VERSION, request_id=1, step_id=1, key=b"k", padding=bytes(6)):
    return bytes([wire.BINARY_RECV_TENSOR, version]) + padding + request_id.to_bytes(8, "little") \
        + step_id.to_bytes(8, "little") + key


def binary_empty(version=wire.PROTOCOL_VERSION, request_id=1, padding=bytes(6)):
    return bytes([wire.BINARY_EMPTY_REPLY, version]) + padding + request_id.to_bytes(8, "little")


def binary_reply(code=1, flags=0, dims=(3,), ndim=None, version=wire.PROTOCOL_VERSION, request_id=1,
                 padding=bytes(3)):
    return bytes([wire.BINARY_TENSOR_REPLY, version, code, flags, len(dims) if ndim is None else ndim]) + padding \
        + request_id.to_bytes(8, "little") + b"".join(d.to_bytes(8, "little") for d in dims)


MALFORMED_BINARY = [
    ([b"\x09" + b"\0" * 20], "not a JSON object nor a binary header (its first byte is 9)"),
    ([binary_empty()[:15]], "Reply: a binary header of 15 bytes (at least 16)"),
    ([binary_empty() + b"\0"], "an empty reply's binary header is 16 bytes with no payload frames (got 17 bytes"),
    ([binary_empty(), b""], "(got 16 bytes and 1 frames)"),
    ([binary_empty(padding=b"\0\0\0\0\0\1")], "Reply: a binary header's padding bytes must be zero"),
    ([binary_request(padding=b"\1" + bytes(5))], "RecvTensor: a binary header's padding bytes must be zero"),
    ([binary_reply(padding=b"\0\0\7"), b"\0" * 12], "Reply: a binary header's padding bytes must be zero"),
    ([binary_empty(version=0)], "Unsupported protocol version 0"),
    ([binary_empty(request_id=2 ** 64 - 1)], "Reply: 'id' must be an integer in [0, 2**63)"),
    ([binary_request()[:23]], "RecvTensor: a binary header of 23 bytes (at least 24)"),
    ([binary_request(version=1)], "Unsupported protocol version 1 (this process speaks 2)"),
    ([binary_request(request_id=2 ** 63)], "'id' and 'step_id' must be integers in [0, 2**63)"),
    ([binary_request(step_id=2 ** 64 - 1)], "'id' and 'step_id' must be integers in [0, 2**63)"),
    ([binary_request(), b"x"], "describes 0 tensors but 1 payload frames follow"),
    ([binary_request(key=b"k\xc3")], "RecvTensor.key is not valid UTF-8"),
    ([binary_request(key=b"k" * 70000)], "RecvTensor.key must be a string of at most 65536 characters"),
    ([binary_request(key=b"k" * (1 << 20))], "RecvTensor.key must be a string of at most 65536 characters"),
    ([binary_reply()[:15], b""], "Reply: a binary header of 15 bytes (at least 16)"),
    ([binary_reply(request_id=2 ** 63), b"\0" * 12], "Reply: 'id' must be an integer in [0, 2**63)"),
    ([binary_reply(dims=(1,) * 33), b"\0" * 4], "for 33 dimensions"),
    ([binary_reply(dims=(3,), ndim=2), b"\0" * 12], "a binary tensor header of 24 bytes for 2 dimensions"),
    ([binary_reply(code=len(wire.BINARY_DTYPES)), b"\0" * 12], f"unknown dtype code {len(wire.BINARY_DTYPES)}"),
    ([binary_reply(flags=2), b"\0" * 12], "unknown flags 0x2"),
    ([binary_reply()], "describes 1 tensors but 0 payload frames follow"),
    ([binary_reply(), b"\0" * 12, b""], "describes 1 tensors but 2 payload frames follow"),
    ([binary_reply(), b"\0" * 8], "float32[3] needs 12 bytes, the frame has 8"),
    ([binary_reply(dims=(2 ** 64 - 1,)), b""], "bad dimension"),
    ([binary_reply(dims=(0, 2 ** 62)), b""], "larger than the maximum message size"),
    ([binary_reply(flags=1), b"\0" * 12], "'scalar' must be a boolean and only set for shape []"),
    ([binary_reply(code=wire.BINARY_DTYPES.index("bool"), dims=(2,)), b"\x01\x07"], "bool tensor holds bytes"),
]


def test_binary_messages_meet_the_expected_types_and_the_size_limit():
    with pytest.raises(wire.WireError, match=r"Unexpected message type RecvTensor \(expected \['Reply'\]\)"):
        wire.decode([binary_request()], expect={wire.REPLY})
    with pytest.raises(wire.WireError, match=r"Unexpected message type Reply"):
        wire.decode([binary_reply(), b"\0" * 12], expect=wire.MESSAGE_TYPES)
    frames = wire.encode_reply(1, None, None, [np.zeros(1000, np.float32)])
    wire.decode(frames, max_message_bytes=4100)
    with pytest.raises(wire.WireError, match="exceeds the maximum message size of 4000 bytes"):
        wire.decode(frames, max_message_bytes=4000)


def test_best_effort_ids_of_malformed_messages():
    assert wire.best_effort_id([binary_reply(request_id=77)[:16]]) == 77
    assert wire.best_effort_id([binary_request(request_id=2 ** 63)]) == 0
    assert wire.best_effort_id([b'{"id": 5, "v": 9}']) == 5
    assert wire.best_effort_id([b'{"id": -5}']) == wire.best_effort_id([b"\x01\x01"]) == wire.best_effort_id([b""]) == 0


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


def run_graph(**fields):
    base = {"v": wire.PROTOCOL_VERSION, "type": "RunGraph", "id": 1, "graph_handle": "g", "step_id": 1}
    base.update(fields)
    if base["type"] != "RunGraph":
        del base["graph_handle"], base["step_id"]
    return json.dumps({k: v for k, v in base.items() if v is not ...}).encode()


MALFORMED_JSON = [
    ([b""], "Empty header"),
    ([b"\x00\x01"], "not a JSON object"),
    ([b"{nope"], "not valid JSON"),
    ([b"[1]"], "not a JSON object"),
    ([b"{" * 100000], "JSON"),
    ([header(v=1)], "Unsupported protocol version 1 (this process speaks 2)"),
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
    ([run_graph(recv_keys="k")], "RunGraph.recv_keys must be a list of strings"),
    ([run_graph(send_keys=["k", 3])], "RunGraph.send_keys must be a list of strings"),
    ([run_graph(send_keys=["k", "x" * 65537])], "RunGraph.send_keys must be a list of strings"),
    ([run_graph(send_keys=["k"] * 65537)], "RunGraph.send_keys must be a list of strings"),
    ([run_graph(cleanup_step_ids=[1, -2])], "RunGraph.cleanup_step_ids must be a list of at most 4096 integers"),
    ([run_graph(cleanup_step_ids=[True])], "RunGraph.cleanup_step_ids must be a list of at most 4096 integers"),
    ([run_graph(cleanup_step_ids=[2 ** 63])], "RunGraph.cleanup_step_ids must be a list of at most 4096 integers"),
    ([run_graph(cleanup_step_ids=[1] * 4097)], "RunGraph.cleanup_step_ids must be a list of at most 4096 integers"),
    ([run_graph(cleanup_step_ids=7)], "RunGraph.cleanup_step_ids must be a list of at most 4096 integers"),
    ([run_graph(recv_tensors=[[1, "k"], [0, "k"]])], "RunGraph.recv_tensors must be a list of at most 65536 [request id"),
    ([run_graph(recv_tensors=[[1, "k", 2]])], "RunGraph.recv_tensors must be a list of at most 65536 [request id"),
    ([run_graph(recv_tensors=[[1, 2]])], "RunGraph.recv_tensors must be a list of at most 65536 [request id"),
    ([run_graph(recv_tensors=[[1, "x" * 65537]])], "RunGraph.recv_tensors must be a list of at most 65536 [request"),
    ([run_graph(recv_tensors=[[1, "k"]] * 65537)], "RunGraph.recv_tensors must be a list of at most 65536 [request"),
    # An optional field present must not stand in for a missing required one.
    ([run_graph(more_step_ids=[1], type="CleanupStep")], "CleanupStep: missing required field 'step_id'"),
    ([run_graph(step_id=..., timeout_ms=5)], "RunGraph: missing required field 'step_id'"),
]


@pytest.mark.parametrize("frames, problem", MALFORMED_JSON + MALFORMED_BINARY)
def test_malformed_messages_are_wire_errors(frames, problem):
    with pytest.raises(wire.WireError) as raised:
        wire.decode(frames)
    assert problem in raised.value.message
    assert isinstance(raised.value, errors.InvalidArgumentError)


@pytest.mark.parametrize("frames, problem", [(f, p) for f, p in MALFORMED_BINARY
                                              if len(f) == 1 and f[0][:1] == bytes([wire.BINARY_RECV_TENSOR])])
def test_the_workers_recv_tensor_reader_checks_what_decode_checks(frames, problem):
    with pytest.raises(wire.WireError) as raised:
        wire.read_recv_tensor(memoryview(frames[0]))
    assert problem in raised.value.message
    request = binary_request(request_id=5, step_id=9, key=b"k\xc3\xa9")
    assert wire.read_recv_tensor(memoryview(request)) == (5, 9, "k\u00e9")
    with pytest.raises(wire.WireError, match=f"Message of {len(request)} bytes exceeds the maximum message size"):
        wire.read_recv_tensor(memoryview(request), limit=len(request) - 1)


@pytest.mark.parametrize("request_bytes", [
    binary_request(), binary_request(key=b""), binary_request(key=b"k" * 65536), binary_request(key=b"k" * 65537),
    binary_request(key="\u00e9".encode() * 65536), binary_request(key="\u00e9".encode() * 65537),
    binary_request(key="\U0001f600".encode() * 3), binary_request(key=b"\xff"),
    binary_request(request_id=2 ** 63 - 1, step_id=2 ** 63 - 1), binary_request(step_id=2 ** 63),
    binary_request(version=3), binary_request(padding=bytes(5) + b"\1")] + [f[0] for f, _ in MALFORMED_BINARY
                                                                          if len(f) == 1 and f[0][:1] == b"\1"])
def test_the_recv_tensor_readers_fast_path_reads_and_refuses_as_the_full_checks_do(request_bytes):
    assert_readers_agree(wire.read_recv_tensor, wire._read_recv_tensor_checked, request_bytes)


def assert_readers_agree(fast, checked, request_bytes):
    """A request reader's fast path returns what its full checks return, or raises their error, at three limits."""
    def read(reader, limit):
        try:
            return reader(memoryview(request_bytes), limit)
        except wire.WireError as e:
            return type(e), e.message
    for limit in (wire.DEFAULT_MAX_MESSAGE_BYTES, len(request_bytes), len(request_bytes) - 1):
        assert read(fast, limit) == read(checked, limit)


def test_a_well_formed_recv_tensor_request_is_read_without_the_full_checks(monkeypatch):
    checked = []
    monkeypatch.setattr(wire, "_read_recv_tensor_checked", lambda *args: checked.append(args))
    assert wire.read_recv_tensor(memoryview(binary_request(request_id=3, step_id=4, key=b"k;1"))) == (3, 4, "k;1")
    assert checked == []
    wire.read_recv_tensor(memoryview(binary_request(version=3)))
    assert len(checked) == 1


@pytest.mark.parametrize("frames, problem", MALFORMED_JSON + MALFORMED_BINARY)
def test_a_clients_reply_reader_refuses_what_decode_refuses_in_the_same_words(frames, problem):
    with pytest.raises(wire.WireError) as general:
        wire.decode(frames, expect={wire.REPLY})
    with pytest.raises(wire.WireError) as direct:
        wire.decode_reply(frames)
    assert direct.value.message == general.value.message


@pytest.mark.parametrize("values", [[np.arange(6, dtype=np.float32).reshape(2, 3)], [np.float64(2.5)],
                                    [np.array([True, False])], [np.zeros((0, 3), np.int64)], [],
                                    [np.array([b"a", b"bc"], dtype=object)]])
def test_a_clients_reply_reader_reads_what_decode_reads(values):
    frames = [bytes(f) for f in wire.encode_reply(7, None, None, values)]
    general, direct = wire.decode(frames, expect={wire.REPLY}), wire.decode_reply(frames)
    assert (direct.type, direct.id, direct.fields, direct.nbytes) == (general.type, general.id, general.fields,
                                                                      general.nbytes)
    for got, want in zip(direct.values, general.values):
        assert type(got) is type(want) and np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_array_equal(got, want)
    with pytest.raises(wire.WireError, match="exceeds the maximum message size"):
        wire.decode_reply(frames, max_message_bytes=direct.nbytes - 1)


@pytest.mark.parametrize("dtype", wire.BINARY_DTYPES)
@pytest.mark.parametrize("shape", [(), (1,), (3, 4), (2, 1, 5), (0, 3)])
def test_a_tensor_reply_reads_the_same_through_the_fast_path_and_the_full_checks(dtype, shape):
    value = (np.arange(int(np.prod(shape))) % 2).astype(dtype).reshape(shape)
    header, payload = (bytes(f) for f in wire.binary_tensor_reply(5, value))
    # Offset 0 is aligned; offset 1 is how a small frame may sit in zmq's receive buffer.
    for offset in (0, 1):
        store = bytearray(offset + len(payload))
        store[offset:] = payload
        frame = memoryview(store)[offset:]
        head = memoryview(header)
        fast = wire._read_tensor_reply(head, (head, frame), 1 << 20, 0)
        checked = wire._read_tensor_reply_checked(head, (head, frame), 1 << 20, 0)
        (got,), (want,) = fast.values, checked.values
        assert (fast.type, fast.id, fast.fields, fast.nbytes) == (checked.type, checked.id, checked.fields, 0)
        assert type(got) is type(want) and got.dtype == want.dtype == value.dtype and got.shape == shape
        np.testing.assert_array_equal(got, value)
        assert got.flags.aligned and not got.flags.writeable
        # An aligned frame is viewed, not copied; an unaligned one is copied.
        aligned = offset % value.dtype.alignment == 0
        assert np.shares_memory(got, np.frombuffer(store, np.uint8)) == (aligned and got.size > 0)


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


JSON_HEADERS = [{"v": 2, "type": "RunGraph", "id": 5, "graph_handle": "g", "step_id": 2 ** 62, "timeout_ms": 59500,
                 "recv_tensors": [[7, "/job:w/replica:0/task:1/device:CPU:0;1;/job:w/replica:0/task:0/device:CPU:0;x;0:0"]]},
                {"s": "\u00e9\n\"\\\ud800", "f": 1.5, "nan": float("nan"), "inf": float("-inf"), "n": None, "b": False,
                 "nested": {"l": [[], {}, [1, [2]]]}, "big": 2 ** 70}, {}, {"k": []}]


@pytest.mark.parametrize("header", JSON_HEADERS)
@pytest.mark.parametrize("accelerated", [True, False])
def test_headers_are_written_as_json_dumps_writes_them(header, accelerated, monkeypatch):
    if not accelerated:
        monkeypatch.setattr(json.encoder, "c_make_encoder", None)
    to_json = wire._make_to_json()
    assert to_json(header) == json.dumps(header, separators=(",", ":"))
    with pytest.raises(TypeError, match="not JSON serializable"):
        to_json({"x": object()})


def test_an_empty_reply_is_read_without_the_general_decoder(monkeypatch):
    frames = wire.encode_reply(41)
    assert len(frames) == 1 and frames[0][0] == wire.BINARY_EMPTY_REPLY
    general = wire.decode(frames, expect={wire.REPLY})
    monkeypatch.setattr(wire, "_decode", lambda *args: pytest.fail("the general decoder was used"))
    direct = wire.decode_reply(frames)
    assert (direct.type, direct.id, direct.fields, direct.values, direct.nbytes) == \
        (general.type, general.id, general.fields, general.values, general.nbytes)
    assert direct.error is None
