"""The conformance cases with their CPU devices mapped to simulated accelerators.

Each conformance case (tests/tf1_programs/conformance/cases, TensorFlow's
outputs in its golden/) runs unchanged against a thin
wrapper around graphrt that rewrites device strings on the way in:
`tf.device("/cpu:i")` becomes `/device:SIM:i`, and every session gets one
SIM device per CPU device the case asked for (at least one), so the ops a
case leaves unplaced run on SIM:0 too. The client stays on CPU:0, so feeds
and fetches cross the host/device boundary through _Send/_Recv and copies.
Values must match the golden outputs with the tolerances of programs.py.

Two kinds of output are not values and are mapped back or checked apart:
device strings a case reports (mapped back from SIM to CPU), and the
partition structure of multi_device_partition, which gains the client's
CPU:0 as an extra partition.
"""
import re
import types

import numpy as np
import pytest

import graphrt

from ..tf1_programs.programs import case_names, compare, golden, run_case

_CPU_SPEC = re.compile(r"/(?:device:)?cpu:(\d+)", re.IGNORECASE)
_SIM_NAME = re.compile(r"/device:SIM:(\d+)")
# Outputs that describe placement structure, not computed values.
_STRUCTURE = {"multi_device_partition": ("partitions", "send_recv_per_partition")}


def to_sim(spec):
    """'/job:w/cpu:1' -> '/job:w/device:SIM:1'; anything else unchanged."""
    return _CPU_SPEC.sub(lambda m: f"/device:SIM:{m.group(1)}", spec) if isinstance(spec, str) else spec


class GraphrtOnSim(types.ModuleType):
    """graphrt, with CPU device requests and device counts mapped to SIM devices."""

    def __init__(self):
        super().__init__("graphrt_on_sim")

    def __getattr__(self, name):
        return getattr(graphrt, name)

    def device(self, spec):
        return graphrt.device(to_sim(spec))

    def ConfigProto(self, **kwargs):  # noqa: N802 - the TF name
        counts = dict(kwargs.pop("device_count", None) or {})
        cpus = counts.pop("CPU", 1)
        counts["CPU"] = 1
        counts["SIM"] = max(cpus, counts.get("SIM", 0), 1)
        return graphrt.ConfigProto(device_count=counts, **kwargs)

    def Session(self, target="", graph=None, config=None):  # noqa: N802 - the TF name
        return graphrt.Session(target, graph, config if config is not None else self.ConfigProto())


def _sim_names_back_to_cpu(values):
    out = {}
    for key, value in values.items():
        if value.dtype.kind in "US":
            value = np.array(_SIM_NAME.sub(r"/device:CPU:\1", str(value)))
        out[key] = value
    return out


def _split_structure(name, values):
    keys = _STRUCTURE.get(name, ())
    kept = {k: v for k, v in values.items() if not any(k == s or k.startswith(s + "/") for s in keys)}
    return kept, {k: v for k, v in values.items() if k not in kept}


@pytest.mark.parametrize("name", case_names("conformance"))
def test_case_on_sim_devices_gives_the_golden_values(name):
    got = _sim_names_back_to_cpu(run_case("conformance", name, GraphrtOnSim()))
    want = golden("conformance", name)
    got, got_structure = _split_structure(name, got)
    want, want_structure = _split_structure(name, want)
    assert compare(got, want) == []
    if name == "multi_device_partition":
        # Three SIM partitions as there were three CPU ones, plus the client CPU:0.
        assert int(got_structure["partitions"]) == int(want_structure["partitions"]) + 1


def test_the_wrapper_maps_cpu_requests_and_counts():
    tf = GraphrtOnSim()
    assert to_sim("/cpu:1") == "/device:SIM:1"
    assert to_sim("/job:worker/task:1/device:CPU:0") == "/job:worker/task:1/device:SIM:0"
    assert to_sim("/gpu:0") == "/gpu:0" and to_sim(None) is None
    assert tf.ConfigProto(device_count={"CPU": 3}).device_count == {"CPU": 1, "SIM": 3}
    with tf.Session(graph=graphrt.Graph()) as sess:
        assert [d.device_type for d in sess.devices] == ["CPU", "SIM"]
