"""Between-graph replication: 1 ps task + 2 worker processes on this machine.

Every worker runs the same TF1 program: `replica_device_setter` puts the
variables on the ps task, `MonitoredTrainingSession` initializes the model
(the chief, task 0) or waits for it (task 1), and `StopAtStepHook` ends
training at a global step. `--mode sync` wraps the optimizer in
`SyncReplicasOptimizer` (each global step is one update averaging a
gradient from each worker); `--mode async` lets each worker update the
variables on its own. The model is a linear regression, each worker
reading its own shard of the data. Each worker prints its progress and,
at the end, one JSON line; the launcher stops every process it started.

    python samples/ps_training.py [--mode sync|async] [--last-step 40]
"""
import argparse
import json
import os
import selectors
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
import graphrt as tf  # noqa: E402

FEATURES = 8
TRUE_W = np.linspace(-1.0, 1.0, FEATURES).astype(np.float32)


def shard(task, n=256):
    """This worker's data: y = x . TRUE_W + noise, a different sample per task."""
    rng = np.random.default_rng(100 + task)
    x = rng.normal(size=(n, FEATURES)).astype(np.float32)
    return x, (x @ TRUE_W + 0.01 * rng.normal(size=n)).astype(np.float32)


def train(cluster, task, mode, last_step, batch=32):
    server = tf.train.Server(cluster, "worker", task)
    is_chief = task == 0
    x_all, y_all = shard(task)
    with tf.device(tf.train.replica_device_setter(cluster=cluster, worker_device=f"/job:worker/task:{task}")):
        gs = tf.train.get_or_create_global_step()
        x = tf.placeholder(tf.float32, [None, FEATURES])
        y = tf.placeholder(tf.float32, [None])
        w = tf.Variable(tf.zeros([FEATURES]), name="w")
        loss = tf.reduce_mean(tf.square(tf.reduce_sum(x * w, axis=1) - y))
        opt = tf.train.GradientDescentOptimizer(0.1)
        hooks = [tf.train.StopAtStepHook(last_step=last_step)]
        if mode == "sync":
            opt = tf.train.SyncReplicasOptimizer(opt, replicas_to_aggregate=2, total_num_replicas=2)
            hooks.append(opt.make_session_run_hook(is_chief))
        train_op = opt.minimize(loss, global_step=gs)
    final = tf.train.FinalOpsHook([w, gs])  # read when the session ends
    hooks.append(final)
    runs, first_loss, last_loss = 0, None, None
    with tf.train.MonitoredTrainingSession(master=server.target, is_chief=is_chief, hooks=hooks,
                                           max_wait_secs=120) as sess:
        while not sess.should_stop():
            i = (runs * batch) % len(x_all)
            _, value, step = sess.run([train_op, loss, gs], {x: x_all[i:i + batch], y: y_all[i:i + batch]})
            first_loss = value if first_loss is None else first_loss
            last_loss = value
            runs += 1
            if runs % 10 == 0:
                print(f"worker {task}: run {runs} global step {step} loss {value:.4f}", flush=True)
    final_w, final_step = final.final_ops_values
    print(json.dumps({"task": task, "mode": mode, "runs": runs, "global_step": int(final_step),
                      "first_loss": float(first_loss), "last_loss": float(last_loss),
                      "w_error": float(np.abs(final_w - TRUE_W).max())}), flush=True)
    server.stop()


def serve_ps(cluster):
    server = tf.train.Server(cluster, "ps", 0)
    print(f"ps listening on {server.target}", flush=True)
    server.join()


def launch(mode, last_step, timeout=300):
    """Starts 1 ps + 2 workers, streams their output, returns the workers' JSON results."""
    from graphrt.distributed.cluster import free_port
    ports = []
    while len(ports) < 3:
        p = free_port()
        if p not in ports:
            ports.append(p)
    cluster = {"ps": [f"127.0.0.1:{ports[0]}"], "worker": [f"127.0.0.1:{p}" for p in ports[1:]]}
    workdir = tempfile.mkdtemp(prefix="ps_training-")
    cluster_file = os.path.join(workdir, "cluster.json")
    with open(cluster_file, "w") as f:
        json.dump(cluster, f)
    me = os.path.abspath(__file__)
    procs = []
    try:
        def spawn(job, task):
            proc = subprocess.Popen([sys.executable, me, "--cluster", cluster_file, "--job", job, "--task", str(task),
                                     "--mode", mode, "--last-step", str(last_step)], stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, text=True, start_new_session=True)
            procs.append(proc)
            return proc
        ps = spawn("ps", 0)
        if "listening" not in ps.stdout.readline():
            raise RuntimeError("the ps task did not start")
        workers = [spawn("worker", i) for i in range(2)]
        results = {}
        sel = selectors.DefaultSelector()
        for i, proc in enumerate(workers):
            sel.register(proc.stdout, selectors.EVENT_READ, i)
        deadline = time.monotonic() + timeout
        open_streams = 2
        while open_streams and time.monotonic() < deadline:
            for key, _ in sel.select(1.0):
                line = key.fileobj.readline()
                if not line:
                    sel.unregister(key.fileobj)
                    open_streams -= 1
                    continue
                if line.startswith("{"):
                    results[key.data] = json.loads(line)
                else:
                    print(line.rstrip(), flush=True)
        codes = [proc.wait(max(1.0, deadline - time.monotonic())) for proc in workers]
        if any(codes) or len(results) != 2:
            raise RuntimeError(f"workers exited with {codes}; results {results}")
        return [results[0], results[1]]
    finally:
        for proc in procs:
            if proc.poll() is None:
                os.killpg(proc.pid, 9)
            proc.wait(10)
            proc.stdout.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mode", choices=["sync", "async"], default="sync")
    parser.add_argument("--last-step", type=int, default=40)
    parser.add_argument("--cluster", help=argparse.SUPPRESS)
    parser.add_argument("--job", help=argparse.SUPPRESS)
    parser.add_argument("--task", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.job == "ps":
        serve_ps(tf.train.ClusterSpec(args.cluster))
    elif args.job == "worker":
        train(tf.train.ClusterSpec(args.cluster), args.task, args.mode, args.last_step)
    else:
        for result in launch(args.mode, args.last_step):
            print(json.dumps(result))


if __name__ == "__main__":
    main()
