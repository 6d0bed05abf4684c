"""The TF1 between-graph program (replica_device_setter + SyncReplicasOptimizer +
MonitoredTrainingSession + StopAtStepHook) with 1 ps and 2 worker processes on
127.0.0.1, in sync and async mode (samples/ps_training.py, which stops every
process it starts)."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def _run(mode, last_step):
    result = subprocess.run([sys.executable, os.path.join(ROOT, "samples", "ps_training.py"), "--mode", mode,
                             "--last-step", str(last_step)], capture_output=True, text=True, timeout=280)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    workers = {r["task"]: r for r in lines}
    assert sorted(workers) == [0, 1]
    return workers


def test_sync_training_between_processes():
    workers = _run("sync", 20)
    for r in workers.values():
        # both workers finished, and the global step counts aggregated updates: it stops exactly at 20
        assert r["global_step"] == 20
        assert r["runs"] >= 1
        assert r["w_error"] < 0.05
    # 20 updates of 2 gradients each: at least 40 gradients were computed between the two workers
    assert workers[0]["runs"] + workers[1]["runs"] >= 40
    assert workers[0]["last_loss"] < workers[0]["first_loss"] / 10


def test_async_training_between_processes():
    workers = _run("async", 20)
    for r in workers.values():
        # each worker's update counts: training ends at step 20 (one more if the other worker was mid-step)
        assert 20 <= r["global_step"] <= 21
    assert workers[0]["last_loss"] < workers[0]["first_loss"] / 10
    assert workers[0]["runs"] + workers[1]["runs"] >= 20
