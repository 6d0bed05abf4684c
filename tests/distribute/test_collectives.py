"""Collectives (graphrt.distribute): values against numpy, the ring's ops and
transfers, bytes per algorithm, determinism, bad input."""
import numpy as np
import pytest

import graphrt as tf
from graphrt import errors
from graphrt.distribute import replicas

REDUCE = {"sum": np.sum, "mean": np.mean, "max": np.max}
SHAPES = [(), (1,), (7,), (3, 5), (2, 3, 7)]  # 1, 7, 15, 42 elements: none divisible by 4 or 8
TRACE = dict(trace_level=tf.RunOptions.FULL_TRACE, output_partition_graphs=True)


def _on_devices(arrays, device_type="CPU"):
    out = []
    for i, a in enumerate(arrays):
        with tf.device(f"/device:{device_type}:{i}"):
            out.append(tf.identity(tf.constant(a)))
    return out


def _session(n, device_type="CPU"):
    return tf.Session(config=tf.ConfigProto(device_count={device_type: n}))


@pytest.mark.parametrize("n", [2, 3, 4, 8])
@pytest.mark.parametrize("algorithm", ["ring", "tree", "halving_doubling", "auto"])
def test_all_reduce_equals_numpy_for_every_op_and_odd_sizes(graph, n, algorithm):
    rng = np.random.RandomState(n)
    cases, fetches = [], []
    for shape in SHAPES:
        for op in REDUCE:
            xs = [np.asarray(rng.randn(*shape), np.float32) for _ in range(n)]
            cases.append((op, xs))
            fetches.append(tf.distribute.all_reduce(_on_devices(xs), op=op, algorithm=algorithm))
    with _session(n) as sess:
        results = sess.run(fetches)
    for (op, xs), outs in zip(cases, results):
        want = REDUCE[op](np.stack(xs), axis=0)
        assert len(outs) == n
        for out in outs:
            assert out.shape == want.shape and out.dtype == np.float32
            np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)
            np.testing.assert_array_equal(out, outs[0])  # every device gets the very same bits


def test_results_are_placed_on_their_inputs_devices_and_integer_sums_are_exact(graph):
    xs = [np.arange(10, dtype=np.int64) * (i + 1) for i in range(3)]
    outs = tf.distribute.all_reduce(_on_devices(xs), algorithm="ring")
    assert [o.device for o in outs] == ["/device:CPU:0", "/device:CPU:1", "/device:CPU:2"]
    with _session(3) as sess:
        for out in sess.run(outs):
            np.testing.assert_array_equal(out, np.arange(10) * 6)


def test_ring_ops_are_named_by_step_and_device_and_each_hop_is_a_transfer(graph):
    xs = [np.full(12, i, np.float32) for i in range(4)]
    outs = tf.distribute.all_reduce(_on_devices(xs), algorithm="ring")
    step3 = graph.get_operation_by_name("allreduce/ring/step3/dev2")
    assert step3.type == "AddV2" and step3.device == "/device:CPU:2"
    # at step 3 device 1 sends chunk (1 - 1 - 2) % 4 = 2, which device 2 reduces into its own
    assert step3.inputs[0].op.name == "allreduce/ring/step2/dev1"
    gather = graph.get_operation_by_name("allreduce/ring/step6/dev0")
    assert gather.type == "Identity" and gather.device == "/device:CPU:0"
    md = tf.RunMetadata()
    with _session(4) as sess:
        sess.run(outs, options=tf.RunOptions(**TRACE), run_metadata=md)
    hops = [(t.send_device[-5:], t.recv_device[-5:]) for t in tf.distribute.transfers(md)
            if "/out/" not in t.recv_node]  # not the fetches of the results to the client
    # 2(N-1) = 6 steps, each device sending one chunk to its right neighbour per step
    assert sorted(hops) == sorted([(f"CPU:{d}", f"CPU:{(d + 1) % 4}") for d in range(4)] * 6)


@pytest.mark.parametrize("n", [2, 4, 8])
def test_ring_and_halving_doubling_send_2_n_minus_1_over_n_of_the_bytes(graph, n):
    size = 8 * 120  # elements, divisible by every n here
    xs = [np.ones(size, np.float32) for _ in range(n)]
    vals = _on_devices(xs, "SIM")
    ring = tf.distribute.all_reduce(vals, algorithm="ring", name="ring")
    hd = tf.distribute.all_reduce(vals, algorithm="halving_doubling", name="hd")
    tree = tf.distribute.all_reduce(vals, algorithm="tree", name="tree")
    devices = [f"/device:SIM:{i}" for i in range(n)]
    sent = {}
    with _session(n, "SIM") as sess:
        for name, outs in (("ring", ring), ("hd", hd), ("tree", tree)):
            md = tf.RunMetadata()
            sess.run(outs, options=tf.RunOptions(**TRACE), run_metadata=md)
            sent[name] = tf.distribute.bytes_sent(md, devices)
    s = size * 4
    assert sorted(sent["ring"].values()) == [2 * (n - 1) * s // n] * n
    assert sorted(sent["hd"].values()) == [2 * (n - 1) * s // n] * n
    # a binomial tree moves S up and S down each of its N-1 edges
    assert sum(sent["tree"].values()) == 2 * (n - 1) * s
    # ... and its busiest devices (the root, and rank N/2) send log2(N) x S
    assert max(sent["tree"].values()) == int(np.log2(n)) * s


def test_ring_with_a_size_not_divisible_by_n_sends_all_but_two_chunks(graph):
    n, size = 4, 10  # chunks of 3, 3, 2, 2 elements
    outs = tf.distribute.all_reduce(_on_devices([np.ones(size, np.float32)] * n), algorithm="ring")
    md = tf.RunMetadata()
    with _session(n) as sess:  # fetch nothing: results fetched to the client would count as transfers
        sess.run(tf.group(outs), options=tf.RunOptions(**TRACE), run_metadata=md)
    sizes = replicas.chunk_sizes(size, n)
    assert sizes == [3, 3, 2, 2]
    sent = tf.distribute.bytes_sent(md, [f"/cpu:{i}" for i in range(n)])
    for d in range(n):  # device d never sends chunk d (reduce-scatter) nor chunk d+1 (all-gather)
        want = 4 * (2 * size - sizes[d] - sizes[(d + 1) % n])
        assert sent[f"/job:localhost/replica:0/task:0/device:CPU:{d}"] == want


def test_the_same_program_twice_gives_bitwise_identical_results():
    def run():
        g = tf.Graph()
        with g.as_default():
            rng = np.random.RandomState(0)
            xs = [(rng.randn(1001) * 10.0 ** rng.randint(-3, 4, 1001)).astype(np.float32) for _ in range(5)]
            outs = [tf.distribute.all_reduce(_on_devices(xs), algorithm=a, op="mean")
                    for a in ("ring", "tree", "halving_doubling")]
            with _session(5) as sess:
                return sess.run(outs)
    first, second = run(), run()
    for a, b in zip(first, second):
        for x, y in zip(a, b):
            assert x.tobytes() == y.tobytes()


def test_reduce_scatter_all_gather_broadcast_and_reduce(graph):
    rng = np.random.RandomState(1)
    n = 3
    xs = [rng.randn(2, 5).astype(np.float32) for _ in range(n)]
    vals = _on_devices(xs, "SIM")
    scattered = tf.distribute.reduce_scatter(vals)
    mean_scattered = tf.distribute.reduce_scatter(vals, op="mean")
    shards = [rng.randn(k, 2).astype(np.float32) for k in (3, 1, 2)]  # uneven along axis 0
    gathered = tf.distribute.all_gather(_on_devices(shards, "SIM"))
    copies = tf.distribute.broadcast(vals[1], ["/device:SIM:2", "/device:SIM:0", "/device:SIM:1"])
    reduced = tf.distribute.reduce(vals, root=2, op="max")
    assert [t.device for t in scattered] == [f"/device:SIM:{i}" for i in range(n)]
    assert [t.device for t in copies] == ["/device:SIM:2", "/device:SIM:0", "/device:SIM:1"]
    assert reduced.device == "/device:SIM:2"
    with _session(n, "SIM") as sess:
        sc, msc, ga, co, re = sess.run([scattered, mean_scattered, gathered, copies, reduced])
    total = np.sum(np.stack(xs), 0).reshape(-1)
    assert [len(p) for p in sc] == [4, 3, 3]
    np.testing.assert_allclose(np.concatenate(sc), total, rtol=1e-6)
    np.testing.assert_allclose(np.concatenate(msc), total / n, rtol=1e-6)
    for g in ga:
        np.testing.assert_array_equal(g, np.concatenate(shards))
    for c in co:
        np.testing.assert_array_equal(c, xs[1])
    np.testing.assert_array_equal(re, np.max(np.stack(xs), 0))


def test_contrib_nccl_all_sum_is_the_tf1_alias(graph):
    xs = [np.arange(6, dtype=np.float32).reshape(2, 3) + i for i in range(2)]
    outs = tf.contrib.nccl.all_sum(_on_devices(xs))
    assert outs[0].op.name.startswith("NcclAllSum/ring/")
    with _session(2) as sess:
        for out in sess.run(outs):
            np.testing.assert_array_equal(out, xs[0] + xs[1])


def test_bad_input_is_invalid_argument_naming_the_tensors(graph):
    with tf.device("/cpu:0"):
        a = tf.zeros([2, 3], name="a")
        a_int = tf.zeros([2, 3], tf.int32, name="a_int")
    with tf.device("/cpu:1"):
        b = tf.zeros([3, 2], name="b")
        c = tf.zeros([2, 3], name="c")
        c_int = tf.zeros([2, 3], tf.int32, name="c_int")
    loose = tf.zeros([2, 3], name="loose")
    with pytest.raises(errors.InvalidArgumentError, match=r"shapes differ.*a:0.*b:0"):
        tf.distribute.all_reduce([a, b])
    with pytest.raises(errors.InvalidArgumentError, match=r"dtypes differ.*a_int:0 is int32, c:0 is float32"):
        tf.distribute.all_reduce([a_int, c])
    with pytest.raises(errors.InvalidArgumentError, match=r"device /device:CPU:0 is listed twice.*a:0.*a_int:0"):
        tf.distribute.all_reduce([a, a_int])
    with pytest.raises(errors.InvalidArgumentError, match="at least 1 value"):
        tf.distribute.all_reduce([])
    with pytest.raises(errors.InvalidArgumentError, match="loose:0 has no device"):
        tf.distribute.all_reduce([a, loose])
    with pytest.raises(errors.InvalidArgumentError, match="unknown algorithm 'butterfly'"):
        tf.distribute.all_reduce([a, c], algorithm="butterfly")
    with pytest.raises(errors.InvalidArgumentError, match="op must be one of"):
        tf.distribute.all_reduce([a, c], op="prod")
    with pytest.raises(errors.InvalidArgumentError, match="needs a floating dtype"):
        tf.distribute.reduce_scatter([a_int, c_int], op="mean")
    with pytest.raises(errors.InvalidArgumentError, match="same shape past axis 0"):
        tf.distribute.all_gather([a, b])
    with pytest.raises(errors.InvalidArgumentError, match="listed twice"):
        tf.distribute.broadcast(a, ["/cpu:1", "/device:CPU:1"])


def test_auto_follows_the_alpha_beta_model():
    assert tf.distribute.choose_algorithm(8, 64 << 20) == "halving_doubling"  # the ring's bytes in fewer steps
    assert tf.distribute.choose_algorithm(6, 1024) == "halving_doubling"  # latency-bound: fewest steps
    assert tf.distribute.choose_algorithm(6, 64 << 20) == "ring"  # folding 6 into 4 costs S more
    ring = tf.distribute.modelled_time("ring", 4, 1e6, latency=1e-4, bandwidth=1e8)
    assert ring == pytest.approx(6 * 1e-4 + 1.5 * 1e6 / 1e8)
