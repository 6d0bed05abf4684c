"""Between-graph replication: 1 ps task + 2 worker processes on this machine.

Every worker runs the same TF1 program: `replica_device_setter` puts the
variables on the ps task, `MonitoredTrainingSession` initializes the model
(the chief, task 0) or waits for it (task 1), and `StopAtStepHook` ends
training at a global step. `--mode sync` wraps the optimizer in
`SyncReplicasOptimizer` (each global step is one update averaging a
gradient from each worker); `--mode async` lets each worker update the
variables on its own; `--mode ssp` is async with graphrt's
`StalenessBoundHook` (no worker starts a step more than `--staleness`
steps ahead of the slowest). `--slow-sleep S` makes worker 1 sleep S
seconds after each step (a slower machine). The model is a softmax
regression on the UCI handwritten digits (samples/data, the data of
samples/model_parallel_mlp.py), each worker training on its own shard of
the training set. Each worker prints its progress and, at the end, its
test accuracy and one JSON line; the launcher stops every process it
started (and a task it started exits if the launcher dies).

Each worker's session sees only the ps and its own task (ConfigProto
device_filters, as TF's between-graph guide sets them): a worker that starts
late, after the others finished and stopped, still gets a session. It finds
the global step at --last-step and stops without a run.

    python samples/parameter_server.py [--mode sync|async|ssp] [--last-step 40] [--staleness 3] [--slow-sleep 0]
"""
import argparse
import json
import os
import selectors
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
import graphrt as tf  # noqa: E402
from datasets import digits  # noqa: E402

FEATURES, CLASSES = 64, 10


def shard(task, num_workers):
    """This worker's training examples (every num_workers-th, from its index) and the whole test set."""
    x_train, y_train, x_test, y_test = digits()
    return x_train[task::num_workers], y_train[task::num_workers], x_test, y_test


class SleepHook(tf.train.SessionRunHook):
    def __init__(self, seconds):
        self.seconds = seconds

    def after_run(self, run_context, run_values):
        time.sleep(self.seconds)


class SessionCounter(tf.train.SessionRunHook):
    """Counts the sessions made: more than one means the session recovered from a lost task."""
    def __init__(self):
        self.sessions = 0

    def after_create_session(self, session, coord):
        self.sessions += 1


def train(cluster, task, mode, last_step, staleness=3, slow_sleep=0.0, checkpoint_dir=None, bind="127.0.0.1",
          sleep=0.0, batch=32, learning_rate=0.5):
    server = tf.train.Server(cluster, "worker", task, bind_address=bind)
    is_chief = task == 0
    x_all, y_all, x_test, y_test = shard(task, cluster.num_tasks("worker"))
    with tf.device(tf.train.replica_device_setter(cluster=cluster, worker_device=f"/job:worker/task:{task}")):
        gs = tf.train.get_or_create_global_step()
        x = tf.placeholder(tf.float32, [None, FEATURES], name="x")
        y = tf.placeholder(tf.int64, [None], name="y")
        w = tf.Variable(tf.zeros([FEATURES, CLASSES]), name="w")
        b = tf.Variable(tf.zeros([CLASSES]), name="b")
        logits = tf.matmul(x, w) + b
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
        opt = tf.train.GradientDescentOptimizer(learning_rate)
        hooks = [tf.train.StopAtStepHook(last_step=last_step)]
        if mode == "sync":
            n = cluster.num_tasks("worker")
            opt = tf.train.SyncReplicasOptimizer(opt, replicas_to_aggregate=n, total_num_replicas=n)
            hooks.append(opt.make_session_run_hook(is_chief))
        train_op = opt.minimize(loss, global_step=gs)
    ssp = None
    if mode == "ssp":
        ssp = tf.train.StalenessBoundHook(staleness=staleness, worker_index=task,
                                           num_workers=cluster.num_tasks("worker"))
        hooks.append(ssp)
    if slow_sleep and task == 1:
        hooks.append(SleepHook(slow_sleep))
    if sleep:
        hooks.append(SleepHook(sleep))
    # the test accuracy of the trained (shared) weights, read when the session ends
    final = tf.train.FinalOpsHook([accuracy, gs], final_ops_feed_dict={x: x_test, y: y_test})
    counter = SessionCounter()
    hooks += [final, counter]
    runs, first_loss, last_loss, started, curve = 0, None, None, None, []
    # Without the filter a worker's session would need every task of the cluster to answer, including
    # the other workers, which stop when they are done.
    config = tf.ConfigProto(device_filters=["/job:ps", f"/job:worker/task:{task}"])
    with tf.train.MonitoredTrainingSession(master=server.target, is_chief=is_chief, hooks=hooks, config=config,
                                           checkpoint_dir=checkpoint_dir, save_checkpoint_steps=5,
                                           save_summaries_steps=None, log_step_count_steps=None,
                                           max_wait_secs=120) as sess:
        while not sess.should_stop():
            i = (runs * batch) % len(x_all)
            _, value, step = sess.run([train_op, loss, gs], {x: x_all[i:i + batch], y: y_all[i:i + batch]})
            started = started or time.monotonic()
            curve.append((round(time.monotonic() - started, 4), float(value)))
            first_loss = value if first_loss is None else first_loss
            last_loss = value
            runs += 1
            if runs % 10 == 0:
                print(f"worker {task}: run {runs} global step {step} loss {value:.4f}", flush=True)
    elapsed = time.monotonic() - started if started is not None else 0.0
    test_accuracy, final_step = final.final_ops_values
    loss_text = "n/a" if last_loss is None else f"{last_loss:.4f}"  # joined after training had ended
    print(f"worker {task}: done after {runs} runs, global step {final_step}, loss {loss_text}, "
          f"test accuracy {test_accuracy:.3f}", flush=True)
    print(json.dumps({"task": task, "mode": mode, "runs": runs, "global_step": int(final_step),
                      "first_loss": None if first_loss is None else float(first_loss),
                      "last_loss": None if last_loss is None else float(last_loss),
                      "test_accuracy": float(test_accuracy),
                      "runs_per_sec": runs / elapsed if elapsed > 0 else None,
                      "max_gap": ssp.max_gap if ssp else None, "sessions": counter.sessions,
                      "loss_curve": curve}), flush=True)
    server.stop()


def exit_with_parent():
    """Ends this process when the one that started it is gone (a launcher killed before its cleanup
    ran), instead of serving forever with nobody left to stop it."""
    parent = os.getppid()

    def watch():
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(3)
    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def serve_ps(cluster, task=0, bind="127.0.0.1"):
    server = tf.train.Server(cluster, "ps", task, bind_address=bind)
    print(f"ps listening on {server.target}", flush=True)
    server.join()


def launch(mode, last_step, staleness=3, slow_sleep=0.0, sleep=0.0, checkpoint_dir=None, timeout=300):
    """Starts 1 ps + 2 workers, streams their output, returns the workers' JSON results."""
    from graphrt.distributed.cluster import free_port
    ports = []
    while len(ports) < 3:
        p = free_port()
        if p not in ports:
            ports.append(p)
    cluster = {"ps": [f"127.0.0.1:{ports[0]}"], "worker": [f"127.0.0.1:{p}" for p in ports[1:]]}
    workdir = tempfile.mkdtemp(prefix="parameter_server-")
    cluster_file = os.path.join(workdir, "cluster.json")
    with open(cluster_file, "w") as f:
        json.dump(cluster, f)
    me = os.path.abspath(__file__)
    procs = []
    try:
        def spawn(job, task):
            proc = subprocess.Popen([sys.executable, me, "--cluster", cluster_file, "--job", job, "--task", str(task),
                                     "--mode", mode, "--last-step", str(last_step), "--staleness", str(staleness),
                                     "--slow-sleep", str(slow_sleep), "--sleep", str(sleep), "--exit-with-parent"]
                                    + (["--checkpoint-dir", checkpoint_dir] if checkpoint_dir else []), stdout=subprocess.PIPE,
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
        shutil.rmtree(workdir, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mode", choices=["sync", "async", "ssp"], default="sync")
    parser.add_argument("--last-step", type=int, default=40)
    parser.add_argument("--staleness", type=int, default=3)
    parser.add_argument("--slow-sleep", type=float, default=0.0, help="worker 1 sleeps this long after each step")
    parser.add_argument("--sleep", type=float, default=0.0, help="every worker sleeps this long after each step")
    parser.add_argument("--checkpoint-dir", help="the chief saves a checkpoint every 5 steps there, and restores "
                                                 "the latest one when it starts or recovers")
    parser.add_argument("--resolver", choices=["tf_config", "slurm"],
                        help="run one task of a cluster given by TF_CONFIG (Kubernetes: deploy/kubernetes) or an "
                             "srun step (deploy/slurm: task 0 is the ps, the others workers)")
    parser.add_argument("--bind", default="127.0.0.1", help="the address the task listens on (0.0.0.0 across "
                                                           "machines)")
    parser.add_argument("--exit-with-parent", action="store_true",
                        help="exit when the process that started this task is gone")
    parser.add_argument("--cluster", help=argparse.SUPPRESS)
    parser.add_argument("--job", help=argparse.SUPPRESS)
    parser.add_argument("--task", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    cluster = tf.train.ClusterSpec(args.cluster) if args.cluster else None
    if args.exit_with_parent:
        exit_with_parent()
    if args.resolver:
        resolvers = tf.distribute.cluster_resolver
        if args.resolver == "tf_config":
            resolver = resolvers.TFConfigClusterResolver()
        else:
            num_tasks = int(os.environ.get("SLURM_STEP_NUM_TASKS") or os.environ.get("SLURM_NTASKS") or 0)
            resolver = resolvers.SlurmClusterResolver(jobs={"ps": 1, "worker": num_tasks - 1})
        cluster, args.job, args.task = resolver.cluster_spec(), resolver.task_type, resolver.task_id
    if args.job == "ps":
        serve_ps(cluster, args.task, args.bind)
    elif args.job == "worker":
        train(cluster, args.task, args.mode, args.last_step, args.staleness, args.slow_sleep, args.checkpoint_dir,
              args.bind, args.sleep)
    else:
        for result in launch(args.mode, args.last_step, args.staleness, args.slow_sleep, args.sleep,
                             args.checkpoint_dir):
            result.pop("loss_curve")
            print(json.dumps(result))


if __name__ == "__main__":
    main()
