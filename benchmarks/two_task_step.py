"""A step across two tasks: the fixed cost of a distributed Session.run.

Two processes on 127.0.0.1, each running a server of the cluster
{"worker": [task 0, task 1]}. The parent (task 0) opens a session on its own
server's target and runs a graph whose constant lives on task 1 and whose
add lives on task 0, fetching the 4-byte result: one RunGraph per task and
one tensor crossing the processes, as in the smallest parameter-server step.
The same program runs on TensorFlow's compat.v1 (`--tf-python PYTHON`: an
interpreter that has TensorFlow runs the TensorFlow side, gRPC servers) so
the two figures come from the same machine, in alternating rounds.

Also printed: the floor, a raw pyzmq DEALER->ROUTER round trip of 4 bytes
between two processes over the transport graphrt's step uses (`transports`:
a Unix socket between processes of one machine, see
graphrt/distributed/loopback.py), timed in the same alternating rounds (a distributed
step needs at least one: the RunGraph to the other task, carrying the request
for its tensor, answered by the tensor and the RunGraph's reply), and the
spread of the per-round ratios to TensorFlow. The figures are means over a
round's calls (as TensorFlow's side is timed); `median_call_us` is each side's
median single call, what a step costs between the machine's slow stretches.

    python benchmarks/two_task_step.py [--tf-python PYTHON] [--rounds N]
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _util import emit  # noqa: E402

CALLS_PER_ROUND = 200
# Untimed steps at the start of every round, on every side. A side idles while the others run their
# rounds, and in two of three runs of 16 rounds, graphrt's rounds after a 0.3 s idle ran their first
# ~100 steps at 330-380 us against ~270-290 from their 200th (TensorFlow's: its first ~10 steps only);
# in the third, no difference. A round of 200 steps is 60 ms for graphrt and 180 ms for TensorFlow, so
# the shorter step was timed mostly in that slow start, which a training loop's back-to-back steps
# never see.
WARMUP_S = 0.2


def time_round(call, calls):
    """(mean, median) seconds per call of `calls` calls, after WARMUP_S of untimed ones. The mean is
    the figure; the median says what a call costs between the machine's slow stretches, which
    lengthen a few steps by up to a millisecond."""
    clock = time.perf_counter
    warm_until = clock() + WARMUP_S
    while clock() < warm_until:
        call()
    ends = np.empty(calls + 1)
    ends[0] = clock()
    for i in range(1, calls + 1):
        call()
        ends[i] = clock()
    return (ends[-1] - ends[0]) / calls, float(np.median(np.diff(ends)))


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def load(impl):
    if impl == "tensorflow":
        import tensorflow
        tf = tensorflow.compat.v1
        tf.disable_eager_execution()
        return tf
    sys.path.insert(0, os.path.join(HERE, ".."))
    import graphrt
    return graphrt


def task(impl, cluster, index):
    """Serve one task until stdin closes (the child side)."""
    tf = load(impl)
    server = tf.train.Server(tf.train.ClusterSpec(cluster), job_name="worker", task_index=index)
    print("ready", flush=True)
    sys.stdin.read()
    if hasattr(server, "stop"):
        server.stop()


def raw_peer(port):
    """Answer raw pyzmq 4-byte requests until told to stop (the child side). It listens where a
    graphrt server would (loopback.py), so the floor is timed over the transport graphrt's step uses."""
    import zmq
    loopback = load_loopback()
    ctx = zmq.Context()
    router = ctx.socket(zmq.ROUTER)
    for endpoint in [f"tcp://127.0.0.1:{port}"] + loopback.server_endpoints("127.0.0.1", port):
        router.bind(endpoint)
    print("ready", flush=True)
    while True:
        ident, body = router.recv_multipart(copy=False)
        if bytes(body.buffer) == b"stop":
            router.send_multipart([ident, b"bye"])
            break
        router.send_multipart([ident, body], copy=False)
    router.close(linger=0)
    ctx.term()


def load_loopback():
    load("graphrt")
    from graphrt.distributed import loopback
    return loopback


def build_step(tf):
    """The step, in the default graph: a constant on task 1, an add on task 0; returns the fetch."""
    with tf.device("/job:worker/task:1"):
        x = tf.constant(1.0)
    with tf.device("/job:worker/task:0"):
        return x + 1.0


def driver(impl):
    """Build the step on task 0 and time it on request (one line in, one out)."""
    ports = free_ports(2)
    cluster = {"worker": [f"127.0.0.1:{p}" for p in ports]}
    child = subprocess.Popen([sys.executable, __file__, "--role", "task", "--impl", impl,
                              "--cluster", json.dumps(cluster)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        tf = load(impl)
        server = tf.train.Server(tf.train.ClusterSpec(cluster), job_name="worker", task_index=0)
        with tf.Graph().as_default():
            y = build_step(tf)
            with tf.Session(server.target) as sess:
                assert sess.run(y) == 2.0
                for _ in range(50):
                    sess.run(y)
                if impl == "tensorflow":
                    transport = "grpc"
                else:
                    endpoint = server.service.channels.connections()["tcp://" + cluster["worker"][1]]
                    transport = endpoint.partition("://")[0]
                print("ok", transport, flush=True)
                for line in sys.stdin:
                    print(*time_round(lambda: sess.run(y), int(line)), flush=True)
        if hasattr(server, "stop"):
            server.stop()
    finally:
        child.stdin.close()
        stop_process(child, 30)


def stop_process(proc, timeout):
    """Waits for a child that was told to stop; kills it if it does not."""
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class Side:
    def __init__(self, python, impl):
        self.proc = subprocess.Popen([python, __file__, "--role", "driver", "--impl", impl],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().split()
        if line[:1] != ["ok"]:
            self.proc.kill()
            self.proc.wait()
            raise RuntimeError(f"the {impl} side did not start (said {line!r})")
        self.transport = line[1]

    def time(self, calls):
        """(mean, median) seconds per call over `calls` steps."""
        self.proc.stdin.write(f"{calls}\n")
        self.proc.stdin.flush()
        mean, median = self.proc.stdout.readline().split()
        return float(mean), float(median)

    def close(self):
        self.proc.stdin.close()
        stop_process(self.proc, 60)


class RawSide:
    """The floor, timed in the same rounds as the runtimes: a raw pyzmq DEALER->ROUTER round trip of
    4 bytes to a child process (the round trip itself also moves with the machine's load)."""

    def __init__(self):
        import zmq
        (port,) = free_ports(1)
        self.proc = subprocess.Popen([sys.executable, __file__, "--role", "raw", "--port", str(port)],
                                     stdout=subprocess.PIPE, text=True)
        if self.proc.stdout.readline().strip() != "ready":
            self.proc.kill()
            self.proc.wait()
            raise RuntimeError("the raw pyzmq peer did not start")
        self.ctx = zmq.Context()
        self.dealer = self.ctx.socket(zmq.DEALER)
        self.dealer.setsockopt(zmq.RCVTIMEO, 10_000)  # a dead peer raises zmq.Again, not a hang
        self.transport_endpoint = load_loopback().connect_endpoint(f"tcp://127.0.0.1:{port}")
        self.transport = self.transport_endpoint.partition("://")[0]
        self.dealer.connect(self.transport_endpoint)
        self.payload = np.ones(1, np.float32)

    def time(self, calls):
        dealer, payload = self.dealer, self.payload

        def round_trip():
            dealer.send(payload, copy=False)
            dealer.recv(copy=False)
        return time_round(round_trip, calls)

    def close(self):
        try:
            self.dealer.send(b"stop")
            self.dealer.recv()
        finally:
            self.dealer.close(linger=0)
            self.ctx.term()
            stop_process(self.proc, 30)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tf-python")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--role", default="main")
    p.add_argument("--impl", default="graphrt")
    p.add_argument("--cluster")
    p.add_argument("--port", type=int)
    args = p.parse_args()
    if args.role == "task":
        return task(args.impl, json.loads(args.cluster), 1)
    if args.role == "driver":
        return driver(args.impl)
    if args.role == "raw":
        return raw_peer(args.port)

    sides = {}
    try:
        sides["graphrt"] = Side(sys.executable, "graphrt")
        if args.tf_python:
            sides["tensorflow"] = Side(args.tf_python, "tensorflow")
        sides["raw_pyzmq"] = RawSide()
        samples = {name: [] for name in sides}
        for _ in range(args.rounds):  # alternating, so the machine's phases hit every side alike
            for name, side in sides.items():
                samples[name].append(side.time(CALLS_PER_ROUND))
    finally:
        failed = None
        for side in sides.values():  # each is stopped even when another's stop fails
            try:
                side.close()
            except Exception as e:  # noqa: BLE001 - re-raised below, after the others stopped
                failed = failed or e
        if failed is not None:
            raise failed
    means = {name: [mean for mean, _ in s] for name, s in samples.items()}
    figures = {f"{name}_step_us": round(float(np.median(m)) * 1e6, 1) for name, m in means.items()
               if name != "raw_pyzmq"}
    figures["median_call_us"] = {name: round(float(np.median([median for _, median in s])) * 1e6, 1)
                                 for name, s in samples.items()}
    raw = float(np.median(means["raw_pyzmq"]))
    figures["raw_pyzmq_round_trip_us"] = round(raw * 1e6, 1)
    figures["graphrt_vs_raw_round_trips"] = round(figures["graphrt_step_us"] / (raw * 1e6), 2)
    if "tensorflow" in sides:
        figures["graphrt_vs_tensorflow"] = round(figures["graphrt_step_us"] / figures["tensorflow_step_us"], 3)
        # The spread says how much of the figure is the machine: a round's ratio moves with its phase.
        per_round = np.array(means["graphrt"]) / np.array(means["tensorflow"])
        figures["graphrt_vs_tensorflow_per_round"] = {
            "min": round(float(per_round.min()), 3), "median": round(float(np.median(per_round)), 3),
            "max": round(float(per_round.max()), 3)}
    # Processes of one machine: graphrt and the floor connect over a Unix socket unless that is off
    # (graphrt/distributed/loopback.py); TensorFlow over gRPC's TCP.
    transports = {name: side.transport for name, side in sides.items()}
    emit("two_task_step", figures, calls_per_round=CALLS_PER_ROUND, rounds=args.rounds, transports=transports,
         target={"graphrt_vs_tensorflow": "<= 0.35", "graphrt_step_us": "<= 1000"})


if __name__ == "__main__":
    main()
