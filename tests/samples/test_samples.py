"""The README's main job runs end to end and writes its artefacts."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_model_parallel_mlp_trains_and_writes_partitions_and_trace(tmp_path):
    result = subprocess.run([sys.executable, os.path.join(ROOT, "samples", "model_parallel_mlp.py"),
                             "--epochs", "4", "--out", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    epochs = [line for line in result.stdout.splitlines() if line.startswith("epoch")]
    assert len(epochs) == 4
    losses = [float(line.split("loss")[1].split()[0]) for line in epochs]
    accuracy = float(epochs[-1].split("test accuracy")[1].split()[0])
    assert losses[-1] < losses[0] / 3 and accuracy > 0.85
    assert "3 partitions" in result.stdout
    text = (tmp_path / "partitions.txt").read_text()
    assert text.count("== /job:localhost/replica:0/task:0/device:CPU:") == 3
    assert (tmp_path / "partitions.dot").read_text().count("subgraph cluster_") == 3
    trace = json.loads((tmp_path / "trace.json").read_text())
    flows = [e for e in trace["traceEvents"] if e.get("ph") == "s" and e["name"].startswith("edge_")]
    assert flows, "the trace draws Send->Recv arrows"
    from google.protobuf import text_format
    from tensorboard.compat.proto import graph_pb2
    graph = text_format.Parse((tmp_path / "graph.pbtxt").read_text(), graph_pb2.GraphDef())
    assert any(n.op == "MatMul" for n in graph.node)
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    events = EventAccumulator(str(tmp_path / "train"))
    events.Reload()
    assert [e.step for e in events.Scalars("test_accuracy")] == [1, 2, 3, 4]
    assert abs(events.Scalars("test_accuracy")[-1].value - accuracy) < 1e-3
    assert "layer1/weights" in events.Tags()["histograms"] and events.Graph().node
    stats = events.RunMetadata("traced_step").step_stats
    assert len(stats.dev_stats) == 3
