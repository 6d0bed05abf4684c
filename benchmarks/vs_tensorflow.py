"""graphrt beside TensorFlow's compat.v1 graph mode:
the same graphs built with both (`import graphrt as tf` mirrors TF1's API),
timed in interleaved rounds so machine load hits both alike.

Prints one JSON object: per case, graphrt's and TensorFlow's median time
and their ratio (graphrt / TensorFlow; below 1 is faster). TensorFlow is
optional: `--tf-python PYTHON` names an interpreter that has it, and this
script runs TensorFlow's side there (graphrt and TensorFlow both register
the tensorflow.* protos and cannot share a process), in rounds alternating
with graphrt's; without it, only graphrt's figures are printed.

Cases: `wide` (1,000 independent scalar adds and an add_n of them, one
run; the adds are alike, `x + one`, so both runtimes' common subexpression
elimination computes one), `wide_distinct` (the same with 1,000 different
constants: every add runs), `chain_two_devices` (1,000 dependent adds on
one CPU device of a value received from another), `chain` (1,000 dependent scalar adds), `tiny` (one run of a one-op
graph), `while_loop` (per iteration of a 10,000-iteration scalar loop),
`mlp_step` (784-1024-1024-10, batch 256, one SGD step on one device),
`mlp_step_two_devices` (the same, its layers alternating over two CPU
devices, gradients colocated with their ops), `mlp_matmuls` (the step's
eight matmuls alone, one after another).

The MLP cases also time their floors in the same rounds: the step written as
plain numpy (`mlp_step.numpy_step`, the kernels graphrt runs), printed as
`numpy_step_*`, its ratio to TensorFlow (`numpy_step_ratio_*`) and graphrt's
to it (`graphrt_over_numpy_step`, the median of the per-round ratios); and
numpy doing the step's eight matmuls alone (`mlp_step.numpy_matmuls`),
printed as `numpy_matmuls_*`. Where `numpy_matmuls_ratio_wall` is above
0.9, a runtime built on numpy would need its whole step to take less than
numpy's BLAS takes for those matmuls alone to be 0.9x TensorFlow's.
`mlp_matmuls` times the same floor against TensorFlow's own eight matmuls:
how fast numpy's BLAS is against TensorFlow's matrix library on this CPU.
They run more rounds than the others (ROUNDS), and print the quartiles of
graphrt's per-round time over TensorFlow's beside the ratio of medians: a
single round strays far (see ROUNDS).

    python benchmarks/vs_tensorflow.py [--tf-python PYTHON] [--cases NAME,NAME]
"""
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _util import emit  # noqa: E402

N = 1000
LOOP = 10_000


def _tensorflow():
    import tensorflow
    v1 = tensorflow.compat.v1
    v1.disable_eager_execution()
    return v1


def serve():
    """The TensorFlow side, in its own process (graphrt's and TF's proto
    registrations clash in one): builds and times cases on request, one
    line in ("build NAME" / "time NAME CALLS"), one line out."""
    tf1 = _tensorflow()
    built = {}
    for line in sys.stdin:
        cmd, name, *rest = line.split()
        if cmd == "build":
            built[name] = CASES[name][0](tf1)
            for _ in range(WARMUP.get(name, 2)):
                built[name][1]()
            print("ok", flush=True)
        elif cmd == "time":
            fn, per = built[name][1], built[name][2]
            calls = int(rest[0])
            print(*_local_time(fn, per, calls), flush=True)
        elif cmd == "close":
            built.pop(name)[0].close()
            print("ok", flush=True)


class _Remote:
    """A case on the TensorFlow side (see `serve`)."""

    def __init__(self, proc, name):
        self.proc, self.name = proc, name
        self._ask(f"build {name}")

    def _ask(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        if not answer:
            raise RuntimeError(f"the TensorFlow process stopped while answering {line!r}")
        return answer.strip()

    def time(self, calls):
        wall, cpu = self._ask(f"time {self.name} {calls}").split()
        return float(wall), float(cpu)

    def close(self):
        self._ask(f"close {self.name}")


def wide(tf):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        one = tf.constant(1.0)
        total = tf.add_n([x + one for _ in range(N)])
    sess = tf.Session(graph=g)
    feed = {x: np.float32(0)}
    assert sess.run(total, feed) == N
    return sess, (lambda: sess.run(total, feed)), 1


def wide_distinct(tf):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        total = tf.add_n([x + tf.constant(float(k)) for k in range(N)])
    sess = tf.Session(graph=g)
    feed = {x: np.float32(0)}
    assert sess.run(total, feed) == N * (N - 1) / 2
    return sess, (lambda: sess.run(total, feed)), 1


def chain(tf):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        one = tf.constant(1.0)
        y = x
        for _ in range(N):
            y = y + one
    sess = tf.Session(graph=g)
    feed = {x: np.float32(0)}
    assert sess.run(y, feed) == N
    return sess, (lambda: sess.run(y, feed)), 1


def chain_two_devices(tf):
    g = tf.Graph()
    with g.as_default():
        with tf.device("/cpu:1"):
            x = tf.placeholder(tf.float32, [], name="x")
            y = x * 2.0
        with tf.device("/cpu:0"):  # a partition with a receive
            for k in range(N):
                y = y + tf.constant(float(k % 5))
    sess = tf.Session(graph=g, config=tf.ConfigProto(device_count={"CPU": 2}))
    feed = {x: np.float32(1)}
    assert sess.run(y, feed) == 2 + 2 * N
    return sess, (lambda: sess.run(y, feed)), 1


def tiny(tf):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [])
        y = tf.identity(x)
    sess = tf.Session(graph=g)
    feed = {x: np.float32(1)}
    return sess, (lambda: sess.run(y, feed)), 1


def while_loop(tf):
    g = tf.Graph()
    with g.as_default():
        n = tf.placeholder(tf.int32, [], name="n")
        i, a = tf.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a * 0.999 + 1.0),
                             [tf.constant(0), tf.constant(0.0)])
    sess = tf.Session(graph=g)
    feed = {n: np.int32(LOOP)}
    assert sess.run(i, feed) == LOOP
    return sess, (lambda: sess.run([i, a], feed)), LOOP


MLP_SIZES, MLP_BATCH = [784, 1024, 1024, 10], 256  # mlp_step.py's (which TensorFlow's process cannot import)


def _numpy_matmuls():
    """The MLP cases' second floor: numpy doing the step's eight matmuls (imported here: mlp_step
    imports graphrt, which TensorFlow's process must not)."""
    import mlp_step
    return mlp_step.numpy_matmuls()


def _mlp(tf, devices):
    """784-1024-1024-10, batch 256, one SGD step; layer i on devices[i % len(devices)]."""
    sizes, batch = MLP_SIZES, MLP_BATCH
    rng = np.random.RandomState(0)
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, sizes[0]])
        y = tf.placeholder(tf.int64, [None])
        h = x
        for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
            with tf.device(devices[i % len(devices)]):
                w = tf.Variable((rng.randn(a, b) * np.sqrt(2.0 / a)).astype(np.float32))
                h = tf.matmul(h, w) + tf.Variable(np.zeros(b, np.float32))
                if i < len(sizes) - 2:
                    h = tf.nn.relu(h)
        with tf.device(devices[-1]):
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=h))
        train = tf.train.GradientDescentOptimizer(0.01).minimize(loss, colocate_gradients_with_ops=True)
        variables = tf.trainable_variables()
        init = tf.global_variables_initializer()
    config = tf.ConfigProto(device_count={"CPU": len(devices)})
    sess = tf.Session(graph=g, config=config)
    sess.run(init)
    feed = {x: rng.rand(batch, sizes[0]).astype(np.float32), y: rng.randint(0, 10, batch).astype(np.int64)}

    def numpy_step():
        # The same step in plain numpy from this session's weights, checked against one of the session's
        # steps (imported here, as in _numpy_matmuls).
        import mlp_step
        return mlp_step.checked_numpy_step(sess, train, variables, feed)
    return sess, (lambda: sess.run(train, feed)), 1, {"numpy_step": numpy_step, "numpy_matmuls": _numpy_matmuls}


def mlp_step(tf):
    return _mlp(tf, ["/cpu:0"])


def mlp_matmuls(tf):
    """The MLP step's eight matmuls alone (mlp_step.numpy_matmuls' shapes: each layer's forward
    product, weight gradient and, past the first, input gradient), one after another: what each
    runtime's matrix library gives for the shapes that take most of the step."""
    sizes, batch = MLP_SIZES, MLP_BATCH
    rng = np.random.RandomState(0)
    g = tf.Graph()
    with g.as_default():
        def var(*shape):  # variables, not constants: nothing for constant folding to compute once
            return tf.Variable(rng.rand(*shape).astype(np.float32))
        ws = [var(a, b) for a, b in zip(sizes[:-1], sizes[1:])]
        xs = [var(batch, a) for a in sizes[:-1]]
        gs = [var(batch, b) for b in sizes[1:]]
        products = [lambda x=x, w=w: tf.matmul(x, w) for x, w in zip(xs, ws)]
        for i, (x, w, g_out) in enumerate(zip(xs, ws, gs)):
            products.append(lambda x=x, g_out=g_out: tf.matmul(x, g_out, transpose_a=True))
            if i:
                products.append(lambda w=w, g_out=g_out: tf.matmul(g_out, w, transpose_b=True))
        # One element of each product is fetched: TensorFlow's graph optimizer turns a node that only
        # feeds control edges into a NoOp, so a group of the products would time nothing. The element
        # is summed out of its product right after it, and the next product waits for that sum
        # (TensorFlow would run them side by side): each product is then freed before the next, as
        # numpy's are.
        picked = []
        for make in products:
            with tf.control_dependencies(picked[-1:]):
                picked.append(tf.reduce_sum(make()[:1, :1]))
        done = tf.add_n(picked)
        init = tf.global_variables_initializer()
    sess = tf.Session(graph=g)
    sess.run(init)
    return sess, (lambda: sess.run(done)), 1, {"numpy_matmuls": _numpy_matmuls}


def mlp_step_two_devices(tf):
    return _mlp(tf, ["/cpu:0", "/cpu:1"])


CASES = {"wide": (wide, 20), "wide_distinct": (wide_distinct, 10), "chain": (chain, 20),
         "chain_two_devices": (chain_two_devices, 10), "tiny": (tiny, 500), "while_loop": (while_loop, 1),
         "mlp_step": (mlp_step, 20), "mlp_step_two_devices": (mlp_step_two_devices, 20),
         "mlp_matmuls": (mlp_matmuls, 20)}
# The MLP rounds are 20 steps: each side's first step after the other's round runs on cold caches.
# Calls before timing, on both sides. The MLP steps get more: graphrt's BLAS team size is chosen by
# measuring both sizes (ops/blas.ThreadChooser, first at its 64th BLAS call, about the 7th step), and
# 35 timed steps would otherwise time mostly the untried starting choice.
WARMUP = {"mlp_step": 30, "mlp_step_two_devices": 30, "mlp_matmuls": 30}
# Seconds of quiet before each side's round: a thread pool's threads spin for a while after their last
# task before they sleep (OpenBLAS's for up to ~0.1 s), and would run during the other side's round.
# Without the pause graphrt's BLAS threads slowed TensorFlow's MLP rounds from ~16 to ~25 ms, which
# made graphrt's MLP look 0.6x TensorFlow; measured apart, the two are within ~10% of each other.
SETTLE_S = {"mlp_step": 0.3, "mlp_step_two_devices": 0.3, "mlp_matmuls": 0.3}
# Rounds per case. An MLP round's time moved 12.5-17.3 ms on graphrt's side and 12.7-19.7 on TensorFlow's
# within one run (2026-11-27, 23:03), round to round rather than in phases, so the median of 7 rounds
# moved several percent from run to run; 15 rounds narrow that by a third, for ~30 s more.
ROUNDS = {"mlp_step": 15, "mlp_step_two_devices": 15, "mlp_matmuls": 15}
DEFAULT_ROUNDS = 7
DEFAULT_SETTLE_S = 0.05


def _local_time(fn, per, calls):
    """(wall, process CPU) seconds per call and unit: CPU time (all threads)
    is the steadier figure on a machine other work keeps busy."""
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls / per, (time.process_time() - c0) / calls / per


def start_tensorflow(argv):
    """The TensorFlow process named by `--tf-python PYTHON` in argv, or None."""
    if "--tf-python" not in argv:
        return None
    tf_python = argv[argv.index("--tf-python") + 1]
    return subprocess.Popen([tf_python, os.path.abspath(__file__), "--serve"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def stop_tensorflow(proc):
    if proc is not None:
        proc.stdin.close()
        proc.wait(timeout=60)


def compare(names, proc, rounds=None):
    """Per case in `names`: graphrt's (and, with `proc`, TensorFlow's) median
    wall and CPU time per unit in microseconds, and their ratios, over `rounds`
    rounds (default: the case's entry in ROUNDS)."""
    import graphrt
    figures = {}
    for name in names:
        build, calls = CASES[name]
        # TensorFlow's side is built and warmed first: its process imports TensorFlow meanwhile, and
        # that import, beside graphrt's warm-up, kept graphrt's ThreadChooser from its first trial
        # (the cores looked taken), so the first timed round ran on the narrow team.
        remote = _Remote(proc, name) if proc else None
        settle = SETTLE_S.get(name, DEFAULT_SETTLE_S) if remote is not None else 0.0
        time.sleep(settle)
        # a case with floors names them: {name: a function making the floor's step}
        sess, fn, per, *makers = build(graphrt)
        floors = {floor: make() for floor, make in (makers[0] if makers else {}).items()}
        for _ in range(WARMUP.get(name, 2)):
            fn()
            for floor_fn in floors.values():
                floor_fn()
        samples = {"graphrt": [], "tensorflow": [], **{floor: [] for floor in floors}}
        n_rounds = rounds or ROUNDS.get(name, DEFAULT_ROUNDS)
        for _ in range(n_rounds):  # alternating, so load drifts hit both sides alike
            time.sleep(settle)
            samples["graphrt"].append(_local_time(fn, per, calls))
            if remote is not None:
                time.sleep(settle)
                samples["tensorflow"].append(remote.time(calls))
            for floor, floor_fn in floors.items():
                time.sleep(settle)
                samples[floor].append(_local_time(floor_fn, per, calls))
        sess.close()
        if remote is not None:
            remote.close()
        unit = "us_per_iteration" if name == "while_loop" else "us_per_run"
        case = {"rounds": n_rounds}
        for k, kind in enumerate(("wall", "cpu")):
            med = {side: float(np.median([x[k] for x in s])) for side, s in samples.items() if s}
            case.update({f"{side}_{kind}_{unit}": round(m * 1e6, 2) for side, m in med.items()})
            if remote is not None:
                case[f"ratio_{kind}"] = round(med["graphrt"] / med["tensorflow"], 3)
                for floor in floors:
                    case[f"{floor}_ratio_{kind}"] = round(med[floor] / med["tensorflow"], 3)
        for floor in floors:
            per_round = [g[0] / f[0] for g, f in zip(samples["graphrt"], samples[floor])]
            case[f"graphrt_over_{floor}"] = round(float(np.median(per_round)), 3)
        if remote is not None and name in ROUNDS:
            # how far single rounds stray: the quartiles of graphrt's per-round time over TensorFlow's
            per_round = [g[0] / t[0] for g, t in zip(samples["graphrt"], samples["tensorflow"])]
            case["ratio_wall_per_round_quartiles"] = [round(float(q), 3) for q in np.percentile(per_round, [25, 75])]
        figures[name] = case
    return figures


def main():
    names = list(CASES)
    if "--cases" in sys.argv:
        names = sys.argv[sys.argv.index("--cases") + 1].split(",")
        unknown = [n for n in names if n not in CASES]
        if unknown:
            sys.exit(f"unknown case(s) {', '.join(unknown)}; the cases are {', '.join(CASES)}")
    proc = start_tensorflow(sys.argv)
    try:
        figures = compare(names, proc)
    finally:
        stop_tensorflow(proc)
    emit("vs_tensorflow", figures, tensorflow=proc is not None, load_average_1min=round(os.getloadavg()[0], 1),
         note="median of each case's alternating rounds (`rounds`) with a pause before each (so neither "
              "side's spinning pool threads run in the other's round), TensorFlow in its own process; "
              "ratio = graphrt / TensorFlow; "
              "cpu = process CPU time of all threads, wall = elapsed")


if __name__ == "__main__":
    serve() if "--serve" in sys.argv else main()
