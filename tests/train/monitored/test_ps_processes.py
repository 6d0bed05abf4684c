"""The TF1 between-graph program (replica_device_setter + SyncReplicasOptimizer +
MonitoredTrainingSession + StopAtStepHook) with 1 ps and 2 worker processes on
127.0.0.1, in sync and async mode (samples/parameter_server.py: a softmax
regression on the digits, each worker its own shard; it stops every process it
starts)."""
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def _busiest(workers):
    """The worker that made the most runs (on a loaded machine one may join after training ended)."""
    return max(workers.values(), key=lambda r: r["runs"])


def _run(mode, last_step, *args):
    result = subprocess.run([sys.executable, os.path.join(ROOT, "samples", "parameter_server.py"), "--mode", mode,
                             "--last-step", str(last_step), *args], capture_output=True, text=True, timeout=280)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    for task in (0, 1):  # the launcher passes on each worker's progress, ending with its test accuracy
        assert re.search(rf"^worker {task}: done after \d+ runs, global step \d+, loss ([\d.]+|n/a), "
                         rf"test accuracy 0\.\d+$", result.stdout, re.M), result.stdout[-3000:]
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    workers = {r["task"]: r for r in lines}
    assert sorted(workers) == [0, 1]
    return workers


def test_sync_training_between_processes():
    workers = _run("sync", 20)
    for r in workers.values():
        # both workers finished, and the global step counts aggregated updates: it stops exactly at 20
        assert r["global_step"] == 20
        # the workers read the same trained weights from the ps: a chance model scores about 0.1
        assert r["test_accuracy"] > 0.7
    assert workers[0]["test_accuracy"] == workers[1]["test_accuracy"]
    # 20 updates of 2 gradients each: at least 40 gradients were computed between the two workers (the
    # chief alone may supply both of an update, as in TF, so a worker that joined late may have none)
    assert workers[0]["runs"] + workers[1]["runs"] >= 40
    # cross entropy from ln(10) = 2.30 (zero weights) to about 1.2 after 20 aggregated steps
    assert _busiest(workers)["last_loss"] < _busiest(workers)["first_loss"] * 0.7


def test_async_training_between_processes():
    workers = _run("async", 20)
    for r in workers.values():
        # each worker's update counts: training ends at step 20, or a little after in async mode (as in TF):
        # StopAtStepHook reads the step in the same run as the update, so a read taken before the other worker's
        # update lets each of the two workers run a step more; a loaded machine can stretch this by one
        assert 20 <= r["global_step"] <= 23
    assert _busiest(workers)["last_loss"] < _busiest(workers)["first_loss"] * 0.7
    # 20 single-gradient updates, some computed on stale weights: 0.6-0.85 depending on the interleaving
    # (sync mode averages two gradients per update and is steadier); chance is about 0.1
    assert workers[0]["test_accuracy"] > 0.5
    assert workers[0]["runs"] + workers[1]["runs"] >= 20


def test_ssp_training_between_processes_keeps_the_clock_gap_within_staleness():
    # worker 1 sleeps after each step, so worker 0 runs into the bound of 1 and waits for it
    workers = _run("ssp", 20, "--staleness", "1", "--slow-sleep", "0.03")
    for r in workers.values():
        assert 20 <= r["global_step"] <= 22  # asynchronous updates: the same overshoot as async
        assert r["max_gap"] <= 1             # no step started more than 1 ahead of the other worker's clock
    assert workers[0]["test_accuracy"] > 0.6
    assert workers[0]["runs"] + workers[1]["runs"] >= 20


class _Cluster:
    """1 ps + 2 workers running samples/parameter_server.py, each killable and restartable; close() kills all."""

    def __init__(self, tmp_path, *worker_args):
        from graphrt.distributed.cluster import free_port
        ports = []
        while len(ports) < 3:
            port = free_port()
            if port not in ports:
                ports.append(port)
        self.cluster_file = str(tmp_path / "cluster.json")
        with open(self.cluster_file, "w") as f:
            json.dump({"ps": [f"127.0.0.1:{ports[0]}"], "worker": [f"127.0.0.1:{p}" for p in ports[1:]]}, f)
        self.worker_args = list(worker_args)
        self.procs = {}

    def start(self, job, task):
        args = [sys.executable, os.path.join(ROOT, "samples", "parameter_server.py"), "--cluster", self.cluster_file,
                "--job", job, "--task", str(task), "--exit-with-parent"] + (self.worker_args if job == "worker" else [])
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)
        self.procs[job, task] = proc
        if job == "ps":
            assert "listening" in proc.stdout.readline()
        return proc

    def kill(self, job, task):
        proc = self.procs[job, task]
        os.killpg(proc.pid, 9)
        proc.wait(10)
        proc.stdout.close()

    def wait_for_line(self, job, task, text):
        proc = self.procs[job, task]
        for line in proc.stdout:
            if text in line:
                return line
        raise AssertionError(f"{job}:{task} ended without printing {text!r}")

    def result(self, job, task, timeout=120):
        proc = self.procs[job, task]
        out, _ = proc.communicate(timeout=timeout)
        assert proc.returncode == 0, out[-3000:]
        return [json.loads(line) for line in out.splitlines() if line.startswith("{")][-1]

    def close(self):
        for proc in self.procs.values():
            if proc.poll() is None:
                os.killpg(proc.pid, 9)
                proc.wait(10)
            if proc.stdout and not proc.stdout.closed:
                proc.stdout.close()


def test_a_killed_worker_rejoins_and_sync_training_finishes(tmp_path):
    # Each step takes at least 40 ms, so the chief alone (which, as in TF, may supply both gradients of a step:
    # it gets 2 tokens per update) needs 8 s or more for the 200 gradients: the restarted worker joins long before.
    cluster = _Cluster(tmp_path, "--mode", "sync", "--last-step", "100", "--sleep", "0.04")
    try:
        cluster.start("ps", 0)
        cluster.start("worker", 0)
        cluster.start("worker", 1)
        cluster.wait_for_line("worker", 0, "worker 0: run 10 ")
        cluster.kill("worker", 1)      # mid-training
        cluster.start("worker", 1)     # the same task comes back: it waits for readiness and rejoins
        chief, rejoined = cluster.result("worker", 0), cluster.result("worker", 1)
        assert chief["global_step"] == 100 and rejoined["global_step"] == 100
        assert 1 <= rejoined["runs"] < 100   # it joined late and did part of the work
        assert chief["sessions"] == 1  # the chief's session was not affected
        assert chief["test_accuracy"] > 0.8
    finally:
        cluster.close()


def test_a_killed_ps_comes_back_and_the_chief_restores_the_last_checkpoint(tmp_path):
    ckpt = tmp_path / "ckpt"
    # Every step takes 20 ms or more (worker 1's 70 ms), so when both workers have trained a while the
    # global step is still far from 60: the ps dies in the middle of training for both.
    cluster = _Cluster(tmp_path, "--mode", "sync", "--last-step", "60", "--sleep", "0.02", "--slow-sleep", "0.05",
                       "--checkpoint-dir", str(ckpt))
    try:
        cluster.start("ps", 0)
        cluster.start("worker", 0)
        cluster.start("worker", 1)
        cluster.wait_for_line("worker", 0, "worker 0: run 20 ")
        cluster.wait_for_line("worker", 1, "worker 1: run 10 ")  # it has a session, made before the ps died
        cluster.kill("ps", 0)          # every variable, accumulator and token is lost
        cluster.start("ps", 0)
        chief, other = cluster.result("worker", 0), cluster.result("worker", 1)
        assert chief["global_step"] == 60 and other["global_step"] == 60
        assert chief["sessions"] == 2 and other["sessions"] == 2  # both re-created their sessions
        assert chief["test_accuracy"] > 0.7
        import graphrt as tf
        assert tf.train.load_variable(str(ckpt), "global_step") == 60
    finally:
        cluster.close()
