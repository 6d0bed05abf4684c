"""Worker processes for the distributed tests.

`ProcessCluster(n)` writes a cluster spec with free ports of 127.0.0.1,
starts one `graphrt server` process per task (each in its own process
group, via tests/distributed/_worker_main.py so the test ops exist there),
waits for each to print its "listening" line, and can kill, stop (SIGSTOP),
continue and restart tasks. `close()` kills every process group; the
fixtures call it in a finalizer, so no worker outlives the tests.
"""
import json
import os
import selectors
import signal
import subprocess
import sys
import time

from graphrt.distributed.cluster import free_port

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
START_TIMEOUT = 30.0


class ProcessCluster:
    def __init__(self, num_tasks, tmpdir, job="worker", device_count="CPU:1", extra_args=(), per_task_args=None):
        self.job = job
        self.tmpdir = str(tmpdir)
        self.device_count = device_count
        self.extra_args = list(extra_args)
        self.per_task_args = per_task_args or {}
        for attempt in range(3):
            self._choose_ports(num_tasks)
            try:
                for i in range(num_tasks):
                    self._spawn(i)
                for i in range(num_tasks):
                    self._wait_ready(i)
                return
            except BaseException as e:
                self.close()
                # a port taken between choosing and binding it: try other ports
                if not (isinstance(e, RuntimeError) and "in use" in str(e)) or attempt == 2:
                    raise

    def _choose_ports(self, num_tasks):
        self.ports = []
        while len(self.ports) < num_tasks:
            port = free_port()
            if port not in self.ports:
                self.ports.append(port)
        self.cluster = {self.job: [f"127.0.0.1:{p}" for p in self.ports]}
        self.cluster_file = os.path.join(self.tmpdir, f"cluster-{self.ports[0]}.json")
        with open(self.cluster_file, "w") as f:
            json.dump(self.cluster, f)
        self.procs = [None] * num_tasks
        self.logs = [None] * num_tasks

    @property
    def num_tasks(self):
        return len(self.ports)

    def target(self, i=0):
        return f"zmq://127.0.0.1:{self.ports[i]}"

    def task_name(self, i):
        return f"/job:{self.job}/replica:0/task:{i}"

    def device(self, i, index=0):
        return f"/job:{self.job}/replica:0/task:{i}/device:CPU:{index}"

    def _spawn(self, i):
        args = [sys.executable, "-m", "tests.distributed._worker_main", "--cluster", self.cluster_file,
                "--job", self.job, "--task", str(i), "--device-count", self.device_count]
        args += self.extra_args + list(self.per_task_args.get(i, ()))
        env = dict(os.environ)
        env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
        env.setdefault("OMP_NUM_THREADS", "1")
        env.setdefault("OPENBLAS_NUM_THREADS", "1")
        log = open(os.path.join(self.tmpdir, f"task{i}-{self.ports[i]}.log"), "ab")
        self.logs[i] = log
        self.procs[i] = subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=log,
                                         start_new_session=True)

    def _wait_ready(self, i):
        proc = self.procs[i]
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + START_TIMEOUT
        line = b""
        try:
            while b"listening on" not in line:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or proc.poll() is not None:
                    raise RuntimeError(f"task {i} did not start (exit {proc.poll()}): {self.log_text(i)}")
                if sel.select(remaining):
                    line = proc.stdout.readline()
                    if not line and proc.poll() is not None:
                        continue
        finally:
            sel.close()

    def log_text(self, i):
        try:
            with open(os.path.join(self.tmpdir, f"task{i}-{self.ports[i]}.log"), "rb") as f:
                return f.read().decode(errors="replace")[-2000:]
        except OSError:
            return ""

    def _signal(self, i, sig):
        proc = self.procs[i]
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                pass

    def kill(self, i):
        self._signal(i, signal.SIGKILL)
        if self.procs[i] is not None:
            self.procs[i].wait(10)

    def pause(self, i):
        self._signal(i, signal.SIGSTOP)

    def resume(self, i):
        self._signal(i, signal.SIGCONT)

    def terminate(self, i, sig=signal.SIGTERM, timeout=10):
        self._signal(i, sig)
        return self.procs[i].wait(timeout)

    def restart(self, i):
        self.kill(i)
        self._spawn(i)
        self._wait_ready(i)

    def close(self):
        for i in range(len(self.procs)):
            self._signal(i, signal.SIGCONT)
            self._signal(i, signal.SIGKILL)
        for i, proc in enumerate(self.procs):
            if proc is not None:
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    pass
                if proc.stdout:
                    proc.stdout.close()
            if self.logs[i] is not None:
                self.logs[i].close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def wait_until_idle(sess, timeout=30.0):
    """True once no task runs a step or holds a step's rendezvous (CleanupStep is
    fire-and-forget, so tasks drop a step's state shortly after it ends)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = sess.status()
        if all(s["running_steps"] == [] and s["rendezvous_steps"] == [] for s in status.values()):
            return True
        time.sleep(0.02)
    return False
