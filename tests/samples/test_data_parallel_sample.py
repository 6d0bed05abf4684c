"""samples/data_parallel.py trains the digits MLP over 4 devices and shows the ring."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_data_parallel_sample_trains_and_writes_the_ring(tmp_path):
    result = subprocess.run([sys.executable, os.path.join(ROOT, "samples", "data_parallel.py"),
                             "--epochs", "3", "--out", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    epochs = [line for line in result.stdout.splitlines() if line.startswith("epoch")]
    assert len(epochs) == 3
    losses = [float(line.split("loss")[1].split()[0]) for line in epochs]
    accuracy = float(epochs[-1].split("test accuracy")[1].split()[0])
    assert losses[-1] < losses[0] / 3 and accuracy > 0.9
    sent = [line for line in result.stdout.splitlines() if line.startswith("  /job:localhost")]
    assert len(sent) == 4 and all("gradients" in line for line in sent)
    text = (tmp_path / "partitions.txt").read_text()
    assert text.count("== /job:localhost/replica:0/task:0/device:CPU:") == 4
    assert "bucket0/ring/step1/dev1" in text and "bucket0/ring/step6/dev0" in text
    trace = json.loads((tmp_path / "trace.json").read_text())
    ring_adds = [e for e in trace["traceEvents"] if e.get("args", {}).get("name", "").endswith("/ring/step3/dev2")]
    assert ring_adds and ring_adds[0]["name"] == "AddV2"
    flows = [e for e in trace["traceEvents"] if e.get("ph") == "s" and "/ring/step" in e["name"]]
    assert flows, "the trace draws an arrow for each hop of the ring"
