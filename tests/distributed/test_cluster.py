"""ClusterSpec, Server (in-process) and replica_device_setter."""
import json

import numpy as np
import pytest

import graphrt as tf
from graphrt import errors


def test_cluster_spec_from_dict_and_json_file(tmp_path):
    spec = {"worker": ["127.0.0.1:2222", "127.0.0.1:2223"], "ps": ["127.0.0.1:2224"]}
    cluster = tf.train.ClusterSpec(spec)
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(spec))
    assert tf.train.ClusterSpec(str(path)) == cluster == tf.train.ClusterSpec(cluster)
    assert cluster.jobs == ["ps", "worker"]
    assert cluster.num_tasks("worker") == 2 and cluster.task_indices("worker") == [0, 1]
    assert cluster.task_address("worker", 1) == "127.0.0.1:2223"
    assert cluster.job_tasks("ps") == ["127.0.0.1:2224"]
    assert cluster.as_dict() == spec
    sparse = tf.train.ClusterSpec({"worker": {1: "h:1", 3: "h:3"}})
    assert sparse.job_tasks("worker") == [None, "h:1", None, "h:3"] and sparse.as_dict() == {"worker": {1: "h:1", 3: "h:3"}}
    with pytest.raises(ValueError, match="No task with index 5"):
        cluster.task_address("worker", 5)
    with pytest.raises(ValueError, match="not 'host:port'"):
        tf.train.ClusterSpec({"worker": ["nowhere"]})
    with pytest.raises(ValueError, match="Invalid job name"):
        tf.train.ClusterSpec({"1job": ["h:1"]})


def test_in_process_servers_and_a_master_session():
    server = tf.train.Server.create_local_server()
    try:
        assert server.target.startswith("zmq://127.0.0.1:")
        assert server.task_name == "/job:localhost/replica:0/task:0"
        g = tf.Graph()
        with g.as_default():
            v = tf.Variable(np.float32(1.0))
            inc = tf.assign_add(v, 2.0)
            init = tf.global_variables_initializer()
        with tf.Session(server.target, graph=g) as sess:
            sess.run(init)
            sess.run(inc)
            assert sess.run(v) == 3.0
        # the variable lives in the server, not in the session
        with tf.Session(server.target, graph=g) as sess:
            assert sess.run(v) == 3.0
    finally:
        server.stop()
    assert server.join(timeout=1)
    with pytest.raises(errors.FailedPreconditionError):
        server.start()


def test_replica_device_setter_puts_variables_round_robin_on_ps_tasks():
    cluster = tf.train.ClusterSpec({"ps": ["h:1", "h:2"], "worker": ["h:3"]})
    g = tf.Graph()
    with g.as_default(), tf.device(tf.train.replica_device_setter(cluster=cluster)):
        a = tf.Variable(1.0, name="a")
        b = tf.Variable(2.0, name="b")
        c = tf.Variable(3.0, name="c")
        s = tf.add(a, b, name="s")
        with tf.device("/job:ps/task:1"):
            pinned = tf.Variable(4.0, name="pinned")
    assert [v.op.device for v in (a, b, c)] == ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:0"]
    assert s.op.device == "/job:worker"
    assert pinned.op.device == "/job:ps/task:1"
    assert tf.train.replica_device_setter(ps_tasks=0) is None


def test_a_local_cluster_with_variables_on_the_ps_task():
    from graphrt.distributed.cluster import create_local_cluster
    workers, ps = create_local_cluster(num_workers=1, num_ps=2)
    try:
        cluster = tf.train.ClusterSpec(workers[0].cluster_spec)
        g = tf.Graph()
        with g.as_default(), tf.device(tf.train.replica_device_setter(cluster=cluster)):
            w = tf.Variable(np.array([1.0, 2.0], np.float32), name="w")
            b = tf.Variable(np.float32(0.5), name="b")
            loss = tf.reduce_sum(tf.square(w)) + b
            step = tf.train.GradientDescentOptimizer(0.25).minimize(loss)
            init = tf.global_variables_initializer()
        with tf.Session(workers[0].target, graph=g) as sess:
            sess.run(init)
            sess.run(step)
            np.testing.assert_allclose(sess.run(w), [0.5, 1.0])
            placement = sess.plan_for([step, loss]).placement
        assert placement["w"] == "/job:ps/replica:0/task:0/device:CPU:0"
        assert placement["b"] == "/job:ps/replica:0/task:1/device:CPU:0"
        assert placement[loss.op.name] == "/job:worker/replica:0/task:0/device:CPU:0"
    finally:
        for server in workers + ps:
            server.stop()


def test_report_uninitialized_variables_under_replica_device_setter():
    """Each IsVariableInitialized takes its variable's ref, so it lives on the variable's ps task (as TF
    places it), whatever the device function says; the name mask is built on the worker's CPU."""
    from graphrt.distributed.cluster import create_local_cluster
    workers, ps = create_local_cluster(num_workers=1, num_ps=2)
    try:
        cluster = tf.train.ClusterSpec(workers[0].cluster_spec)
        g = tf.Graph()
        with g.as_default(), tf.device(tf.train.replica_device_setter(cluster=cluster)):
            w = tf.Variable(1.0, name="w")
            b = tf.Variable(2.0, name="b")
            report = tf.report_uninitialized_variables()
            init = tf.variables_initializer([w])
        checks = [op for op in g.get_operations() if op.type == "IsVariableInitialized"]
        assert [op.device for op in checks] == ["/job:ps/task:0", "/job:ps/task:1"]
        assert [op.colocation_groups() for op in checks] == [[b"loc:@w"], [b"loc:@b"]]
        assert report.device == "/job:worker/device:CPU:0"
        with tf.Session(workers[0].target, graph=g) as sess:
            assert list(sess.run(report)) == [b"w", b"b"]
            sess.run(init)
            assert list(sess.run(report)) == [b"b"]
    finally:
        for server in workers + ps:
            server.stop()


def test_a_registered_graph_must_come_partitioned_per_device():
    """The worker splits what it is sent by device; an edge between devices that is not a _Send/_Recv
    pair (a graph not partitioned by the master) is refused, naming the node."""
    from graphrt.framework.graph_def import GraphDef, NodeDef
    server = tf.train.Server.create_local_server(config=tf.ConfigProto(device_count={"CPU": 2}))
    cpu0, cpu1 = "/job:localhost/replica:0/task:0/device:CPU:0", "/job:localhost/replica:0/task:0/device:CPU:1"
    try:
        c = NodeDef("c", "Const", [], cpu0, {"dtype": tf.float32, "value": np.float32(1.0)})
        same = GraphDef([c, NodeDef("n", "Neg", ["c"], cpu0, {"T": tf.float32})])
        parts = server.service._device_partitions(same)
        assert list(parts) == [cpu0] and [n.device for n in parts[cpu0].node] == [cpu0, cpu0]
        across = GraphDef([c, NodeDef("n", "Neg", ["c"], cpu1, {"T": tf.float32})])
        with pytest.raises(errors.InvalidArgumentError, match=f"node n on {cpu1} takes 'c' from {cpu0}"):
            server.service._device_partitions(across)
        dangling = GraphDef([NodeDef("n", "Neg", ["^gone"], cpu0, {"T": tf.float32})])
        with pytest.raises(errors.InvalidArgumentError, match="has input '\\^gone', which is not in the graph"):
            server.service._device_partitions(dangling)
    finally:
        server.stop()


def test_a_task_with_two_devices_runs_the_masters_device_partitions():
    server = tf.train.Server.create_local_server(config=tf.ConfigProto(device_count={"CPU": 2}))
    try:
        g = tf.Graph()
        with g.as_default():
            x = tf.placeholder(tf.float32, [2], name="x")
            with tf.device("/cpu:1"):
                y = tf.multiply(x, 3.0, name="y")
            z = tf.add(y, 1.0, name="z")
        with tf.Session(server.target, graph=g) as sess:
            assert [d.name for d in sess.list_devices()] == [
                "/job:localhost/replica:0/task:0/device:CPU:0", "/job:localhost/replica:0/task:0/device:CPU:1"]
            md = tf.RunMetadata()
            got = sess.run(z, {x: [1.0, 2.0]}, options=tf.RunOptions(output_partition_graphs=True), run_metadata=md)
            np.testing.assert_allclose(got, [4.0, 7.0])
        # Partitioned once by the master, per device: one graph per device, joined by _Send/_Recv pairs
        assert len(md.partition_graphs) == 2
        for pg in md.partition_graphs:
            assert len({n.device for n in pg.node}) == 1
        local = [n for pg in md.partition_graphs for n in pg.node
                 if n.op in ("_Send", "_Recv") and not n.attrs.get("client_terminated")]
        assert len(local) == 4   # x to CPU:1, y back to CPU:0
        sends = {n.attrs["tensor_name"] for n in local if n.op == "_Send"}
        assert sends == {n.attrs["tensor_name"] for n in local if n.op == "_Recv"} and len(sends) == 2
    finally:
        server.stop()


def test_tensors_of_simulated_accelerators_cross_tasks():
    # The sending worker copies a SIM tensor to host memory before it answers RecvTensor;
    # a SIM device that receives one copies it in (as a local _Recv does).
    from graphrt.distributed.cluster import free_port
    ports = [free_port(), free_port()]
    while ports[1] == ports[0]:
        ports[1] = free_port()
    spec = {"worker": [f"127.0.0.1:{p}" for p in ports]}
    sim = tf.ConfigProto(device_count={"SIM": 1})
    servers = [tf.train.Server(spec, "worker", i, config=sim) for i in range(2)]
    try:
        g = tf.Graph()
        with g.as_default():
            x = tf.placeholder(tf.float32, [3], name="x")
            with tf.device("/job:worker/task:1/device:SIM:0"):
                y = tf.multiply(x, 2.0, name="y")
            with tf.device("/job:worker/task:0/device:SIM:0"):
                z = tf.add(y, 1.0, name="z")
            with tf.device("/job:worker/task:1/device:CPU:0"):
                w = tf.add(z, 1.0, name="w")
        with tf.Session(servers[0].target, graph=g) as sess:
            np.testing.assert_allclose(sess.run([z, w], {x: [1.0, 2.0, 3.0]}), [[3.0, 5.0, 7.0], [4.0, 6.0, 8.0]])
    finally:
        for server in servers:
            server.stop()


def test_a_workers_devices_hand_over_fresh_arrays_and_keep_shared_ones(make_cluster):
    # Task 1 runs both CPU partitions in one process: 'mm' reaches CPU:1 by reference, marked for
    # the Relu to write into; 'kept' is fetched too, so it is not, and its fetched value stays intact.
    rng = np.random.RandomState(2)
    xv, wv = rng.randn(4, 6).astype(np.float32), rng.randn(6, 5).astype(np.float32)
    ref = xv @ wv
    cluster = make_cluster(2, device_count="CPU:2")
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [4, 6], name="x")
        with tf.device("/job:worker/task:1/cpu:0"):
            mm = tf.matmul(x, tf.constant(wv), name="mm")
            kept = tf.matmul(x, tf.constant(wv * 2), name="kept")
        with tf.device("/job:worker/task:1/cpu:1"):
            relu = tf.nn.relu(mm, name="relu")
            relu_kept = tf.nn.relu(kept, name="relu_kept")
    with tf.Session(cluster.target(0), graph=g) as sess:
        md = tf.RunMetadata()
        sess.run(relu, {x: xv}, options=tf.RunOptions(output_partition_graphs=True), run_metadata=md)
        recvs = {n.attrs.get("_src"): n for pg in md.partition_graphs for n in pg.node if n.op == "_Recv"}
        assert recvs["mm"].attrs.get("_sole_reference") is True
        for _ in range(6):  # past the profiled first runs
            r, rk, k = sess.run([relu, relu_kept, kept], {x: xv})
            np.testing.assert_allclose(r, np.maximum(ref, 0), rtol=1e-5)
            np.testing.assert_allclose(rk, np.maximum(2 * ref, 0), rtol=1e-5)
            np.testing.assert_allclose(k, 2 * ref, rtol=1e-5)
        md = tf.RunMetadata()
        sess.run([relu_kept, kept], {x: xv}, options=tf.RunOptions(output_partition_graphs=True), run_metadata=md)
        recvs = {n.attrs.get("_src"): n for pg in md.partition_graphs for n in pg.node if n.op == "_Recv"}
        assert not recvs["kept"].attrs.get("_sole_reference")
