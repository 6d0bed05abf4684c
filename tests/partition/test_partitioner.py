import numpy as np
import pytest

import graphrt as tf
from graphrt import errors
from graphrt.framework.device_spec import DeviceInfo, local_device_names
from graphrt.framework.graph_def import GraphDef, NodeDef
from graphrt.partition import partition, place, verify_partitions

CPU = "/job:localhost/replica:0/task:0/device:CPU:{}"


def split(g, n=3):
    devs = [DeviceInfo(name, incarnation=0xdead0000 + i) for i, name in enumerate(local_device_names({"CPU": n}))]
    gd = g.as_graph_def()
    placement = place(gd, devs)
    return partition(gd, placement, {d.name: d.incarnation for d in devs})


def ops(gd, op):
    return [n for n in gd.node if n.op == op]


def test_one_pair_per_tensor_and_destination_device():
    g = tf.Graph()
    with g.as_default():
        with tf.device("/cpu:0"):
            a = tf.constant(np.ones((2, 2), np.float32), name="a")
        with tf.device("/cpu:1"):
            tf.add(tf.nn.relu(a, name="r"), tf.tanh(a, name="t"), name="b")
        with tf.device("/cpu:2"):
            tf.identity(a, name="c")
    parts = split(g)
    assert len(ops(parts[CPU.format(0)], "_Send")) == 2       # one per destination device
    assert len(ops(parts[CPU.format(1)], "_Recv")) == 1       # r and t share the recv
    recv = ops(parts[CPU.format(1)], "_Recv")[0]
    r = next(n for n in parts[CPU.format(1)].node if n.name == "r")
    t = next(n for n in parts[CPU.format(1)].node if n.name == "t")
    assert r.input == [recv.name] and t.input == [recv.name]
    verify_partitions(parts)


def test_send_recv_attrs_and_names():
    g = tf.Graph()
    with g.as_default():
        with tf.device("/cpu:0"):
            a = tf.constant(1.0, name="a")
        with tf.device("/cpu:1"):
            tf.identity(a, name="b")
    parts = split(g, 2)
    send = ops(parts[CPU.format(0)], "_Send")[0]
    recv = ops(parts[CPU.format(1)], "_Recv")[0]
    for node in (send, recv):
        assert node.attrs["send_device"] == CPU.format(0)
        assert node.attrs["recv_device"] == CPU.format(1)
        assert node.attrs["send_device_incarnation"] == 0xdead0000
        assert node.attrs["client_terminated"] is False
        assert node.attrs["tensor_name"] == send.attrs["tensor_name"]
    assert send.attrs["tensor_name"].startswith("edge_") and send.attrs["tensor_name"].endswith("_a")
    assert send.attrs["T"] == tf.float32 and recv.attrs["tensor_type"] == tf.float32
    assert send.name.startswith("a/_") and recv.name.startswith("a/_") and send.name != recv.name
    assert send.device == CPU.format(0) and recv.device == CPU.format(1)


def test_control_edge_crosses_as_a_dummy_tensor():
    g = tf.Graph()
    with g.as_default():
        with tf.device("/cpu:1"):
            first = tf.no_op(name="first")
        with tf.device("/cpu:0"), tf.control_dependencies([first]):
            tf.constant(1.0, name="after")
    parts = split(g, 2)
    src, dst = parts[CPU.format(1)], parts[CPU.format(0)]
    dummy = ops(src, "Const")[0]
    assert dummy.input == ["^first"] and dummy.attrs["value"].shape == (0,)
    assert ops(src, "_Send")[0].input == [dummy.name]
    ident = ops(dst, "Identity")[0]
    assert ident.input == [ops(dst, "_Recv")[0].name]
    after = next(n for n in dst.node if n.name == "after")
    assert after.input == [f"^{ident.name}"]
    verify_partitions(parts)


def test_partitions_do_not_change_the_input_graph_def():
    g = tf.Graph()
    with g.as_default():
        with tf.device("/cpu:1"):
            tf.identity(tf.constant(1.0, name="a"), name="b")
    gd = g.as_graph_def()
    before = gd.to_json()
    devs = [DeviceInfo(n) for n in local_device_names({"CPU": 2})]
    partition(gd, place(gd, devs), {})
    assert gd.to_json() == before


def _pair(tensor_name, send_dtype=tf.float32, recv_dtype=tf.float32, recv_device=1):
    attrs = dict(tensor_name=tensor_name, send_device=CPU.format(0), send_device_incarnation=0,
                 recv_device=CPU.format(recv_device), client_terminated=False)
    send = NodeDef("s_" + tensor_name, "_Send", ["c"], CPU.format(0), dict(T=send_dtype, **attrs))
    recv = NodeDef("r_" + tensor_name, "_Recv", [], CPU.format(1), dict(tensor_type=recv_dtype, **attrs))
    return send, recv


def test_verifier_catches_a_recv_without_send():
    send, recv = _pair("edge_1_c")
    const = NodeDef("c", "Const", [], CPU.format(0), {"dtype": tf.float32, "value": np.float32(1)})
    parts = {CPU.format(0): GraphDef([const]), CPU.format(1): GraphDef([recv])}
    with pytest.raises(errors.InternalError, match="_Recv 'r_edge_1_c'.*which no _Send produces"):
        verify_partitions(parts)


def test_verifier_catches_dtype_mismatch_and_names_both_ends():
    send, recv = _pair("edge_1_c", recv_dtype=tf.int32)
    const = NodeDef("c", "Const", [], CPU.format(0), {"dtype": tf.float32, "value": np.float32(1)})
    parts = {CPU.format(0): GraphDef([const, send]), CPU.format(1): GraphDef([recv])}
    with pytest.raises(errors.InternalError, match="s_edge_1_c.*float32.*r_edge_1_c.*int32"):
        verify_partitions(parts)


def test_verifier_catches_a_send_nobody_receives():
    send, _ = _pair("edge_1_c")
    const = NodeDef("c", "Const", [], CPU.format(0), {"dtype": tf.float32, "value": np.float32(1)})
    with pytest.raises(errors.InternalError, match="which no _Recv receives"):
        verify_partitions({CPU.format(0): GraphDef([const, send])})


def test_verifier_accepts_matching_pairs():
    send, recv = _pair("edge_1_c")
    const = NodeDef("c", "Const", [], CPU.format(0), {"dtype": tf.float32, "value": np.float32(1)})
    assert verify_partitions({CPU.format(0): GraphDef([const, send]), CPU.format(1): GraphDef([recv])}) is None


def test_verifier_catches_two_recvs_for_one_key_and_names_both():
    send, recv = _pair("edge_1_c")
    twin = NodeDef("r_twin", "_Recv", [], CPU.format(1), dict(recv.attrs))
    const = NodeDef("c", "Const", [], CPU.format(0), {"dtype": tf.float32, "value": np.float32(1)})
    parts = {CPU.format(0): GraphDef([const, send]), CPU.format(1): GraphDef([recv, twin])}
    with pytest.raises(errors.InternalError, match="Two _Recv nodes for the key .*CPU:0 -> .*CPU:1 'edge_1_c'") as e:
        verify_partitions(parts)
    assert "_Recv 'r_edge_1_c' on " + CPU.format(1) in str(e.value) and "_Recv 'r_twin'" in str(e.value)


def test_verifier_catches_two_sends_for_one_key_and_names_both():
    send, recv = _pair("edge_1_c")
    twin = NodeDef("s_twin", "_Send", ["c"], CPU.format(0), dict(send.attrs))
    const = NodeDef("c", "Const", [], CPU.format(0), {"dtype": tf.float32, "value": np.float32(1)})
    parts = {CPU.format(0): GraphDef([const, send, twin]), CPU.format(1): GraphDef([recv])}
    with pytest.raises(errors.InternalError, match="Two _Send nodes for the key .*CPU:0 -> .*CPU:1 'edge_1_c'") as e:
        verify_partitions(parts)
    assert "_Send 's_edge_1_c' on " + CPU.format(0) in str(e.value) and "_Send 's_twin'" in str(e.value)


def test_verifier_catches_a_deadlock_cycle():
    # CPU:0 sends x only after receiving y; CPU:1 sends y only after receiving x.
    a = dict(send_device_incarnation=0, client_terminated=False)
    x_attrs = dict(tensor_name="x", send_device=CPU.format(0), recv_device=CPU.format(1), **a)
    y_attrs = dict(tensor_name="y", send_device=CPU.format(1), recv_device=CPU.format(0), **a)
    p0 = GraphDef([NodeDef("recv_y", "_Recv", [], CPU.format(0), dict(tensor_type=tf.float32, **y_attrs)),
                   NodeDef("send_x", "_Send", ["recv_y"], CPU.format(0), dict(T=tf.float32, **x_attrs))])
    p1 = GraphDef([NodeDef("recv_x", "_Recv", [], CPU.format(1), dict(tensor_type=tf.float32, **x_attrs)),
                   NodeDef("send_y", "_Send", ["recv_x"], CPU.format(1), dict(T=tf.float32, **y_attrs))])
    with pytest.raises(errors.InternalError, match="deadlock.*cycle") as e:
        verify_partitions({CPU.format(0): p0, CPU.format(1): p1})
    for name in ("recv_y", "send_x", "recv_x", "send_y"):
        assert name in str(e.value)
