"""Python-level function calls per 2-task step, on the master and on the task.

The smallest distributed step (`two_task_step.py`'s: a constant on task 1, an
add on task 0, a 4-byte fetch, a session on task 0's server) runs code right
after each thread wake-up, when every call costs several times its loop time
(docs/performance.md, 5.2). The count of calls a step makes is the figure that
moved its time, and unlike the time it does not depend on the machine's
phase: two runs of the same code give the same counts. Counted with
`sys.setprofile`/`threading.setprofile` ("call" events: functions written in
Python, including the standard library's), over STEPS steps after a warm-up;
the counting itself makes the steps slower, so no time is printed here.

Prints one JSON object: calls per step on each side and the functions called
most.

    python benchmarks/step_calls.py [--steps N] [--top K]
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
from _util import emit  # noqa: E402
from two_task_step import build_step, free_ports, stop_process  # noqa: E402

ROOT = os.path.dirname(HERE) + os.sep


class CallCounter:
    """Counts "call" events of the threads it is installed on while `on`."""

    def __init__(self):
        self.counts = collections.Counter()
        self.on = False

    def __call__(self, frame, event, arg):
        if self.on and event == "call":
            code = frame.f_code
            self.counts[(code.co_filename, code.co_firstlineno, code.co_name)] += 1

    def install(self):
        """On every thread started from now on, and on this one."""
        threading.setprofile(self)
        sys.setprofile(self)

    def summary(self, steps, top):
        total = sum(self.counts.values())
        return {"python_calls_per_step": round(total / steps, 1),
                "most_called": [{"function": f"{_short_path(path)}:{line} {name}", "per_step": round(n / steps, 2)}
                                for (path, line, name), n in self.counts.most_common(top)]}


def _short_path(path):
    path = os.path.normpath(path)
    return path[len(ROOT):] if path.startswith(ROOT) else path


def task(cluster, steps, top):
    """Task 1 (the child): serves, counting its threads' calls between "on" and "off" on stdin."""
    import graphrt as tf
    counter = CallCounter()
    counter.install()  # before the server starts its threads
    server = tf.train.Server(tf.train.ClusterSpec(cluster), job_name="worker", task_index=1)
    print("ready", flush=True)
    for line in sys.stdin:
        if line.strip() == "on":
            counter.counts.clear()
            counter.on = True
            print("counting", flush=True)
        elif line.strip() == "off":
            counter.on = False
            print(json.dumps(counter.summary(steps, top)), flush=True)
    server.stop()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=500)
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--role", default="master", help=argparse.SUPPRESS)
    ap.add_argument("--cluster", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.role == "task":
        task(json.loads(args.cluster), args.steps, args.top)
        return 0
    import graphrt as tf
    cluster = {"worker": [f"127.0.0.1:{p}" for p in free_ports(2)]}
    child = subprocess.Popen([sys.executable, __file__, "--role", "task", "--cluster", json.dumps(cluster),
                              "--steps", str(args.steps), "--top", str(args.top)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        if child.stdout.readline().strip() != "ready":
            raise RuntimeError("the task did not start")
        counter = CallCounter()
        counter.install()
        server = tf.train.Server(tf.train.ClusterSpec(cluster), job_name="worker", task_index=0)
        with tf.Graph().as_default():
            y = build_step(tf)
            with tf.Session(server.target) as sess:
                for _ in range(300):  # plans, caches, the spin policy's first choices
                    assert sess.run(y) == 2.0
                child.stdin.write("on\n")
                child.stdin.flush()
                if child.stdout.readline().strip() != "counting":
                    raise RuntimeError("the task did not start counting")
                counter.on = True
                for _ in range(args.steps):
                    sess.run(y)
                counter.on = False
                child.stdin.write("off\n")
                child.stdin.flush()
                task_summary = json.loads(child.stdout.readline())
        sys.setprofile(None)
        threading.setprofile(None)
        server.stop()
    finally:
        child.stdin.close()
        stop_process(child, 30)
    master_summary = counter.summary(args.steps, args.top)
    emit("step_calls", {"master": master_summary, "task": task_summary},
         steps=args.steps, what="Python-level function calls per 2-task step (sys.setprofile 'call' events), "
                                "on the master (task 0, the session's process) and on task 1")
    return 0


if __name__ == "__main__":
    sys.exit(main())
