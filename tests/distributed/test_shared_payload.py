"""Large tensors between processes of one machine through shared memory (shared_payload.py): the
sender's arenas (a ring whose records are written again only once released), the asker's reader (it
checks what it maps), the wire's two kinds, and pulls and steps that take the path end to end, with
the values checked against numpy and the path's counters."""
import os
import struct

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import graphrt as tf
from graphrt import errors
from graphrt.distributed import shared_payload, wire
from graphrt.distributed.shared_payload import (_HEADER, _MIN_ARENA, SHARED_MAX_BYTES, SHARED_MIN_BYTES,
                                                PayloadArenas, PayloadReader)

from .test_wire import assert_readers_agree

pytestmark = pytest.mark.skipif(not shared_payload.enabled(), reason="memfd and /proc are Linux's")

MiB = 1 << 20


def tensor(nbytes, seed=0):
    return np.random.RandomState(seed).standard_normal(nbytes // 4).astype(np.float32)


@pytest.fixture
def arenas():
    a = PayloadArenas()
    yield a
    a.close()


@pytest.fixture
def reader():
    r = PayloadReader(os.getpid(), "/job:worker/replica:0/task:0")
    yield r
    r.close()


def read_back(reader, placed, value):
    fd, token, offset, seq = placed
    return reader.read(fd, token, offset, seq, value.dtype, value.shape, value.nbytes)


# -- the sender's arenas -------------------------------------------------------------------------

def test_a_placed_tensor_reads_back_equal_and_read_only(arenas, reader):
    value = tensor(MiB).reshape(256, -1)
    got = read_back(reader, arenas.place(b"asker", value), value)
    np.testing.assert_array_equal(got, value)
    assert got.dtype == value.dtype and got.shape == value.shape and not got.flags.writeable
    assert reader.reads == 1 and arenas.placed == 1


def test_a_non_contiguous_tensor_is_placed_in_c_order(arenas, reader):
    value = tensor(2 * MiB).reshape(512, 1024)[:, ::2]
    np.testing.assert_array_equal(read_back(reader, arenas.place(b"asker", value), value), value)


def test_sizes_outside_the_range_go_over_the_socket(arenas):
    assert arenas.place(b"asker", np.zeros(SHARED_MIN_BYTES - 4, np.uint8)) is None
    assert arenas.place(b"asker", np.zeros(SHARED_MAX_BYTES + 1, np.uint8)) is None
    assert arenas.place(b"asker", np.zeros(SHARED_MIN_BYTES, np.uint8)) is not None


def test_space_is_written_again_only_once_released(arenas, reader):
    value = tensor(MiB)
    placed = [arenas.place(b"asker", value) for _ in range(3)]  # a 4 MiB arena holds three
    assert [p[2] for p in placed] == [_HEADER, _HEADER + MiB, _HEADER + 2 * MiB]
    assert arenas.place(b"asker", value) is None and arenas.declined == 1  # full: nothing overwritten
    arenas.release(b"asker", [placed[1][3]])  # out of order: the ring frees from its oldest record
    assert arenas.place(b"asker", value) is None
    arenas.release(b"asker", [placed[0][3]])
    again = arenas.place(b"asker", value)
    assert again[2] == _HEADER and again[0] == placed[0][0]  # the two oldest are free, wrapped around
    np.testing.assert_array_equal(read_back(reader, placed[2], value), value)


def test_each_asker_has_its_own_arena_and_releases(arenas):
    value = tensor(MiB)
    a, b = arenas.place(b"a", value), arenas.place(b"b", value)
    assert a[0] != b[0] and a[1] != b[1]
    arenas.release(b"b", [a[3]])  # another asker's record: not freed
    assert [arenas.place(b"a", value)[2] for _ in range(2)] == [_HEADER + MiB, _HEADER + 2 * MiB]
    assert arenas.place(b"a", value) is None


def test_an_empty_arena_too_small_for_a_tensor_is_replaced_by_a_larger_one(arenas, reader):
    small = arenas.place(b"asker", tensor(MiB))
    arenas.release(b"asker", [small[3]])
    value = tensor(8 * MiB)
    big = arenas.place(b"asker", value)
    assert big is not None and big[1] != small[1] and os.fstat(big[0]).st_size >= 2 * value.nbytes
    np.testing.assert_array_equal(read_back(reader, big, value), value)


def test_a_busy_arena_is_not_replaced(arenas):
    assert arenas.place(b"asker", tensor(MiB)) is not None
    assert arenas.place(b"asker", tensor(8 * MiB)) is None


def test_closed_arenas_place_nothing(arenas):
    arenas.close()
    assert arenas.place(b"asker", tensor(MiB)) is None


# -- the asker's reader ------------------------------------------------------------------------

def test_released_records_are_taken_once_and_in_bounded_batches(arenas, reader):
    value = tensor(SHARED_MIN_BYTES)
    seqs = []
    for _ in range(5):
        placed = arenas.place(b"asker", value)
        read_back(reader, placed, value)
        seqs.append(placed[3])
    assert reader.take_released(3) == seqs[:3]
    assert reader.take_released(3) == seqs[3:]
    assert reader.take_released(3) == ()


def test_a_token_that_differs_fails_the_read_naming_the_peer_and_turns_the_path_off(arenas, reader):
    value = tensor(MiB)
    fd, token, offset, seq = arenas.place(b"asker", value)
    with pytest.raises(errors.InternalError) as raised:
        reader.read(fd, bytes(16), offset, seq, value.dtype, value.shape, value.nbytes)
    assert "/job:worker/replica:0/task:0" in raised.value.message and "token differs" in raised.value.message
    assert reader.broken and reader.take_released(10) == ()


@pytest.mark.parametrize("offset", [0, _HEADER + _MIN_ARENA])
def test_a_record_outside_the_arena_is_refused(arenas, reader, offset):
    value = tensor(MiB)
    fd, token, _, seq = arenas.place(b"asker", value)
    with pytest.raises(errors.InternalError, match="outside the arena"):
        reader.read(fd, token, offset, seq, value.dtype, value.shape, value.nbytes)


def test_an_unsealed_file_is_not_read_as_an_arena(reader):
    fd = os.memfd_create("not-an-arena")
    try:
        os.ftruncate(fd, _MIN_ARENA)
        os.pwrite(fd, b"t" * 16, 0)
        with pytest.raises(errors.InternalError, match="not a sealed arena"):
            reader.read(fd, b"t" * 16, _HEADER, 1, np.dtype(np.float32), (4,), 16)
    finally:
        os.close(fd)


def test_a_reply_from_a_process_gone_since_fails_as_unavailable(arenas):
    value = tensor(MiB)
    placed = arenas.place(b"asker", value)
    gone = PayloadReader(1 << 30, "a task")  # beyond any pid_max: no such process
    with pytest.raises(errors.UnavailableError, match=r"a task \(pid 1073741824\) is gone"):
        read_back(gone, placed, value)
    assert gone.broken


# -- the wire --------------------------------------------------------------------------------

def test_a_shared_request_carries_its_released_records():
    [head] = wire.encode_recv_tensor_shared(7, 12, "key;0", [3, 5, 2 ** 62])
    assert head[0] == wire.BINARY_RECV_TENSOR_SHARED
    assert wire.read_recv_tensor_shared(memoryview(head)) == (7, 12, "key;0", (3, 5, 2 ** 62))
    message = wire.decode([head])
    assert message.type == "RecvTensor" and message.fields == {"step_id": 12, "key": "key;0"}


@pytest.mark.parametrize("head, problem", [
    (struct.pack("<BBH4sQQ", 4, wire.PROTOCOL_VERSION, 2, bytes(4), 1, 1) + struct.pack("<Q", 9),
     "2 released records in a header of 32 bytes"),
    (struct.pack("<BBH4sQQ", 4, wire.PROTOCOL_VERSION, wire.MAX_RELEASED + 1, bytes(4), 1, 1),
     f"(at most {wire.MAX_RELEASED})"),
    (struct.pack("<BBH4sQQ", 4, wire.PROTOCOL_VERSION, 0, b"\0\0\0\1", 1, 1) + b"k", "padding bytes must be zero"),
    (struct.pack("<BBH4sQQ", 4, 1, 0, bytes(4), 1, 1) + b"k", "version"),
    (struct.pack("<BBH4sQQ", 4, wire.PROTOCOL_VERSION, 0, bytes(4), 1, 1) + b"\xff", "not valid UTF-8"),
    (struct.pack("<BBH4sQ", 4, wire.PROTOCOL_VERSION, 0, bytes(4), 1), "a binary header of 16 bytes (at least 24)"),
])
def test_malformed_shared_requests_are_wire_errors(head, problem):
    with pytest.raises(wire.WireError) as raised:
        wire.read_recv_tensor_shared(memoryview(head))
    assert problem in raised.value.message


def test_requests_the_binary_header_cannot_hold_are_left_to_json():
    assert wire.encode_recv_tensor_shared(1, -1, "k") is None
    assert wire.encode_recv_tensor_shared(1, 1, "\ud800") is None
    assert wire.encode_recv_tensor_shared(1, 1, "k", [1] * (wire.MAX_RELEASED + 1)) is None


def test_a_shared_reply_is_read_through_the_askers_reader_only(arenas, reader):
    value = tensor(MiB).reshape(2, -1)
    frames = wire.shared_tensor_reply(11, value, *arenas.place(b"asker", value))
    assert len(frames) == 1 and frames[0][0] == wire.BINARY_SHARED_TENSOR_REPLY
    message = wire.decode_reply(frames, shared=reader)
    assert message.id == 11 and message.error is None
    np.testing.assert_array_equal(message.values[0], value)
    for decode in (lambda: wire.decode_reply(frames), lambda: wire.decode(frames)):
        with pytest.raises(wire.WireError, match="did not ask for one"):
            decode()


def test_bool_and_strings_are_not_shared():
    assert not wire.shareable(np.zeros(4, bool)) and not wire.shareable(np.array([b"a"], object))
    assert wire.shareable(np.zeros(4, np.complex64))
    assert wire.shared_tensor_reply(1, np.zeros(4, bool), 3, bytes(16), _HEADER, 1) is None


@pytest.mark.parametrize("mutate, problem", [
    (lambda h: h[:2] + bytes([13]) + h[3:], "dtype code 13 cannot come through shared memory"),
    (lambda h: h[:3] + b"\1" + h[4:], "unknown flags"),
    (lambda h: h[:36] + b"\1" + h[37:], "padding bytes must be zero"),
    (lambda h: h + b"\0", "a shared tensor header of 65 bytes for 1 dimensions"),
])
def test_malformed_shared_replies_are_wire_errors(reader, mutate, problem):
    [head] = wire.shared_tensor_reply(11, np.zeros(4, np.float32), 3, bytes(16), _HEADER, 1)
    with pytest.raises(wire.WireError) as raised:
        wire.decode_reply([mutate(head)], shared=reader)
    assert problem in raised.value.message


def test_a_shared_reply_larger_than_the_limit_is_refused_before_it_is_read(reader):
    [head] = wire.shared_tensor_reply(11, np.zeros((1 << 20,), np.float32), 3, bytes(16), _HEADER, 1)
    with pytest.raises(wire.WireError, match="larger than the maximum message size of 1024 bytes"):
        wire.decode_reply([head], 1024, shared=reader)
    assert reader.reads == 0


# -- end to end ---------------------------------------------------------------------------

@pytest.fixture
def pair():
    from .test_remote_rendezvous import Pair
    p = Pair()
    yield p
    p.stop()


def pull(pair, step_id, values):
    ends = pair.ends(step_id)
    for i, value in enumerate(values):
        ends.sender.send(ends.key("edge_shared", (0, i)), value)
    got = [ends.receiver.recv(ends.key("edge_shared", (0, i)), timeout=30)[0] for i in range(len(values))]
    pair.cleanup(step_id)
    return got


def test_pulls_of_large_tensors_go_through_shared_memory_and_release_their_space(pair):
    pull(pair, 100, [np.zeros(1)])  # the first request to a peer leaves before its connection is made
    values = [tensor(MiB, seed) for seed in range(24)]  # six times what the 4 MiB arena holds at once
    got = pull(pair, 1, values + [np.arange(10, dtype=np.int64), np.zeros(8, bool)])
    for g, v in zip(got, values + [np.arange(10, dtype=np.int64), np.zeros(8, bool)]):
        np.testing.assert_array_equal(g, v)
    reader = pair.workers[1].channels.payload_reader("tcp://" + pair.cluster.task_address("worker", 0))
    assert reader is not None and reader.broken is None and reader.reads == len(values)
    assert pair.workers[0].status()["shared_payload"] == {"askers": 1, "arena_bytes": _MIN_ARENA,
                                                          "placed": len(values), "declined": 0}


def test_a_read_that_fails_fails_its_pull_and_later_pulls_use_the_socket(pair):
    address = "tcp://" + pair.cluster.task_address("worker", 0)
    pull(pair, 1, [np.zeros(1)])  # connects: the first request leaves before the peer is known
    reader = pair.workers[1].channels.payload_reader(address)
    reader.pid = 1 << 30  # as if the sender could not be seen
    ends = pair.ends(2)
    ends.sender.send(ends.key("edge_fail"), tensor(MiB))
    with pytest.raises(errors.UnavailableError) as raised:
        ends.receiver.recv(ends.key("edge_fail"), timeout=30)
    assert "placed in shared memory" in raised.value.message and "/job:worker/replica:0/task:0" in raised.value.message
    pair.cleanup(2)
    value = tensor(MiB, 3)
    np.testing.assert_array_equal(pull(pair, 3, [value])[0], value)
    assert reader.reads == 0 and pair.workers[0].arenas.placed == 1


def steps_between_processes(cluster, steps):
    """Runs `steps` steps pulling a 1 MiB tensor from task 1 into task 0 (this process, the master's),
    checking each against numpy; returns task 0's arenas and its reader of task 1 (the server is stopped)."""
    cluster.kill(0)
    server = tf.train.Server(cluster.cluster, job_name="worker", task_index=0)
    big = tensor(MiB).reshape(512, 512)
    try:
        with tf.Graph().as_default():
            with tf.device("/job:worker/task:1"):
                x = tf.constant(big) * 2.0
            with tf.device("/job:worker/task:0"):
                y = x + 1.0
            with tf.Session(server.target) as sess:
                for _ in range(steps):
                    np.testing.assert_array_equal(sess.run(y), big * 2.0 + 1.0)
        return server.service.arenas, server.service.channels.payload_reader(f"tcp://127.0.0.1:{cluster.ports[1]}")
    finally:
        server.stop()


def test_a_step_between_processes_takes_the_path_for_its_carried_pulls(make_cluster):
    # Twelve steps: three times what an arena holds at once, so its space is released and reused.
    _, reader = steps_between_processes(make_cluster(2), 12)
    assert reader is not None and reader.broken is None and reader.reads == 12


def test_the_switch_turns_the_path_off(monkeypatch, make_cluster):
    monkeypatch.setenv(shared_payload.ENV_SWITCH, "0")  # inherited by the worker processes
    arenas, reader = steps_between_processes(make_cluster(2), 1)
    assert arenas is None and reader is None


def shared_request(count=1, released=(9,), request_id=1, step_id=2, key=b"k", version=None, padding=bytes(4)):
    version = wire.PROTOCOL_VERSION if version is None else version
    return (struct.pack("<BBH4sQQ", wire.BINARY_RECV_TENSOR_SHARED, version, count, padding, request_id, step_id)
            + struct.pack(f"<{len(released)}Q", *released) + key)


@pytest.mark.parametrize("request_bytes", [
    shared_request(), shared_request(0, ()), shared_request(key=b""), shared_request(key=b"k" * 65536),
    shared_request(key=b"k" * 65537), shared_request(key="\u00e9".encode() * 65537), shared_request(key=b"\xff"),
    shared_request(request_id=2 ** 63 - 1, step_id=2 ** 63 - 1), shared_request(step_id=2 ** 63),
    shared_request(version=3), shared_request(padding=bytes(3) + b"\1"), shared_request(count=2),
    shared_request(count=3, released=(1, 2), key=b"12345678"), shared_request(wire.MAX_RELEASED + 1, ())])
def test_the_shared_request_readers_fast_path_reads_and_refuses_as_the_full_checks_do(request_bytes):
    assert_readers_agree(wire.read_recv_tensor_shared, wire._read_recv_tensor_shared_checked, request_bytes)


def test_releases_of_records_an_arena_does_not_hold_are_ignored(arenas):
    value = tensor(MiB)
    placed = arenas.place(b"asker", value)
    arenas.release(b"asker", [placed[3] + 1000, 0, 2 ** 63 - 1])
    assert arenas._arenas[b"asker"].released == set()
    arenas.release(b"asker", [placed[3]])
    assert arenas.place(b"asker", value)[2] == _HEADER and arenas._arenas[b"asker"].released == set()


def test_a_descriptor_that_is_not_an_arena_is_refused_without_waiting(reader, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO with no writer: a blocking open would wait
    try:
        with pytest.raises(errors.InternalError, match=f"/proc/{os.getpid()}/fd/{fd}"):
            reader.read(fd, bytes(16), _HEADER, 1, np.dtype(np.float32), (4,), 16)
    finally:
        os.close(fd)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["place", "release"]), st.integers(64 << 10, 3 << 20),
                          st.integers(0, 10)), max_size=40))
def test_live_records_never_overlap_and_each_reads_back_what_was_placed(operations):
    arenas = PayloadArenas()
    reader = PayloadReader(os.getpid(), "a task")
    try:
        live = []  # (placed, value) not yet released
        for i, (op, nbytes, pick) in enumerate(operations):
            if op == "place":
                value = np.full(nbytes // 4, i, np.float32)
                placed = arenas.place(b"asker", value)
                if placed is not None:
                    live.append((placed, value))
            elif live:
                placed, value = live.pop(pick % len(live))
                np.testing.assert_array_equal(read_back(reader, placed, value), value)
                arenas.release(b"asker", reader.take_released(10))
            spans = sorted((p[2], p[2] + v.nbytes, p[0]) for p, v in live)
            for (start, end, fd), (next_start, _, next_fd) in zip(spans, spans[1:]):
                assert fd != next_fd or end <= next_start
            for placed, value in live:  # nothing placed later wrote over a record not yet released
                np.testing.assert_array_equal(read_back(reader, placed, value), value)
                reader.take_released(100)  # (these reads release nothing: the test only looks)
    finally:
        reader.close()
        arenas.close()


def test_a_process_whose_descriptors_cannot_be_opened_is_not_asked_for_shared_memory():
    assert shared_payload.can_read_from(os.getpid())
    assert not shared_payload.can_read_from(1 << 30)


def test_a_peer_that_cannot_be_read_is_asked_over_the_socket(pair, monkeypatch):
    monkeypatch.setattr(shared_payload, "can_read_from", lambda pid: False)
    address = "tcp://" + pair.cluster.task_address("worker", 0)
    value = tensor(MiB)
    pull(pair, 1, [np.zeros(1)])
    np.testing.assert_array_equal(pull(pair, 2, [value])[0], value)
    assert pair.workers[1].channels.payload_reader(address) is None and pair.workers[0].arenas.placed == 0


def test_concurrent_pulls_each_get_their_own_tensor(pair):
    import threading
    pull(pair, 200, [np.zeros(1)])  # connects
    ends = pair.ends(201)
    values = [tensor(MiB, seed) for seed in range(16)]  # four arenas' worth in flight at once: some go by socket
    keys = [ends.key("edge_concurrent", (0, i)) for i in range(len(values))]
    got = [None] * len(values)

    def recv(i):
        got[i] = ends.receiver.recv(keys[i], timeout=30)[0]
    threads = [threading.Thread(target=recv, args=(i,)) for i in range(len(values))]
    for t in threads:
        t.start()
    for key, value in zip(keys, values):
        ends.sender.send(key, value)
    for t in threads:
        t.join(30)
    for g, v in zip(got, values):
        np.testing.assert_array_equal(g, v)
    arenas = pair.workers[0].arenas
    assert arenas.placed > 0 and arenas.placed + arenas.declined == len(values)
    pair.cleanup(201)
