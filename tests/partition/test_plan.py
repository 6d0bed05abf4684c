"""partition/plan.build_plan: the one pipeline (prune, place, partition, verify) every session kind uses."""
import pytest

import graphrt as tf
from graphrt import errors
from graphrt.framework.device_spec import DeviceInfo
from graphrt.partition import build_plan
from graphrt.rendezvous import parse_key

CPU0 = "/job:worker/replica:0/task:0/device:CPU:0"
CPU1 = "/job:worker/replica:0/task:0/device:CPU:1"
TASK1 = "/job:worker/replica:0/task:1/device:CPU:0"


def _graph():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        with tf.device("/device:CPU:1"):
            a = tf.multiply(x, 2.0, name="a")
        with tf.device("/job:worker/task:1"):
            b = tf.add(a, 1.0, name="b")
        unused = tf.negative(x, name="unused")  # noqa: F841 - pruned: no fetch needs it
        out = tf.identity(b, name="out")
    return g, x, out


def _devices():
    return [DeviceInfo(CPU0, 0x11), DeviceInfo(CPU1, 0x22), DeviceInfo(TASK1, 0x33)]


def test_a_plan_is_pruned_placed_with_reasons_and_partitioned_per_device():
    g, x, out = _graph()
    plan = build_plan(g, [x], [out], [], _devices())
    assert "unused" not in {n.name for n in plan.graph_def.node}
    assert (plan.placement["a"], plan.placement["b"], plan.placement["out"]) == (CPU1, TASK1, CPU0)
    assert "a" in plan.placement.reasons and plan.placement.reasons["a"]
    assert sorted(plan.partitions) == [CPU0, CPU1, TASK1]
    assert plan.client_graph is not None and plan.client_graph.graph_def is plan.graph_def


def test_transfer_keys_are_the_keys_the_send_nodes_use():
    g, x, out = _graph()
    plan = build_plan(g, [x], [out], [], _devices())
    keys = dict((t.send_node, k) for t, k in plan.transfer_keys())
    assert len(keys) == len(plan.transfers) >= 3   # x to CPU:1, a to task 1, b back to CPU:0
    for graph_def in plan.partitions.values():
        for node in graph_def.node:
            if node.op == "_Send":
                key = parse_key(keys[node.name])
                assert (key.src_device, key.dst_device, key.edge_name) == (
                    node.attrs["send_device"], node.attrs["recv_device"], node.attrs["tensor_name"])
                assert key.src_incarnation == {CPU0: 0x11, CPU1: 0x22, TASK1: 0x33}[key.src_device]


def test_the_rendezvous_convention_as_the_master_plans():
    g, x, out = _graph()
    plan = build_plan(g, [x], [out], [], _devices(), convention="rendezvous",
                      default_task="/job:worker/replica:0/task:0")
    assert sorted(plan.partitions) == [CPU0, CPU1, TASK1]
    client = [n for n in plan.partitions[CPU0].node if n.attrs.get("client_terminated")]
    assert sorted(n.op for n in client) == ["_Recv", "_Send"]   # the feed x and the fetch out
    assert not any(n.op in ("_Arg", "_Retval") for gd in plan.partitions.values() for n in gd.node)


def test_a_graph_def_is_placed_whole_and_errors_name_the_node():
    g, x, out = _graph()
    plan = build_plan(g.as_graph_def(), [], [], [], _devices())
    assert plan.client_graph is None and "unused" in plan.placement
    with pytest.raises(errors.InvalidArgumentError, match="Must specify at least one target"):
        build_plan(g, [], [], [], _devices())
