"""Conformance programs written for one process with several CPUs, run against
a cluster: `tf.device("/cpu:i")` means `/job:worker/task:i` and `tf.Session`
connects to task 0. Values are compared with TensorFlow's goldens.

Not compared (they describe the plan, which differs by design):
* `requested_devices`: the mapped requests are job/task names, not `/device:CPU:i`;
* `send_recv_per_partition`: the master terminates feeds and fetches with
  client-terminated `_Recv`/`_Send` nodes on the client task (the rendezvous
  convention), where a local TF session uses `_Arg`/`_Retval`; so task 0's
  partition has one more `_Recv` (the feed) and one more `_Send` (the fetch).
`partitions` is compared: one per device, and each task has one device.
"""
import pytest

import graphrt
from graphrt.framework.device_spec import DeviceSpec

from ..tf1_programs.programs import compare, golden, run_case

EXCLUDED = {"multi_device_partition": ("requested_devices/", "send_recv_per_partition/")}


class ClusterTF:
    """`graphrt` with tf.device mapping /cpu:i to task i and tf.Session connecting to the cluster."""

    def __init__(self, target, job="worker"):
        self._target = target
        self._job = job

    def __getattr__(self, name):
        return getattr(graphrt, name)

    def device(self, spec):
        if isinstance(spec, str):
            parsed = DeviceSpec.from_string(spec)
            if parsed.job is None and parsed.device_type == "CPU" and parsed.device_index is not None:
                spec = f"/job:{self._job}/task:{parsed.device_index}/device:CPU:0"
        return graphrt.device(spec)

    def Session(self, target="", graph=None, config=None):  # noqa: N802 - the TF name
        return graphrt.Session(self._target, graph=graph, config=config)


@pytest.mark.parametrize("case", ["multi_device_partition", "control_edges_across_devices"])
def test_conformance_case_on_a_cluster(case, cluster3):
    got = run_case("conformance", case, ClusterTF(cluster3.target(0)))
    want = golden("conformance", case)
    skip = EXCLUDED.get(case, ())
    got = {k: v for k, v in got.items() if not k.startswith(skip)}
    want = {k: v for k, v in want.items() if not k.startswith(skip)}
    assert want, "nothing left to compare"
    assert compare(got, want) == []
