"""What the machine's phases do to a BLAS team: one 256x1024x1024 float32
matmul (the MLP step's hidden layer) sampled every few seconds, three ways:

  team:    numpy's OpenBLAS with two threads, which wait for each other
           several times per call;
  one_cpu: one thread pinned to each of the first two CPUs in turn;
  pair:    two independent one-thread matmuls at once, one pinned to each
           CPU, never waiting for each other (time per matmul's worth of work).

On a quiet machine the team is as fast as the pair. Where the host's load
delays the cores' hand-offs (a VM's slow phases), the team slows while one
thread and the pair keep their speed: that part of a slower MLP step is the
team's synchronization, not the cores. Prints per-sample rows and, per way,
the median and the slowest sample.

    python benchmarks/blas_team_sync.py [--seconds 60]
"""
import argparse
import os
import sys
import threading
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _util import emit, time_calls  # noqa: E402
from graphrt.ops import blas  # noqa: E402

M, K, N = 256, 1024, 1024
WINDOW_S = 0.4  # each way's timing window in a sample (the pair's two threads run through it together)


def _pinned(cpu, fn):
    """Runs fn on this thread pinned to `cpu`; the thread's affinity is restored afterwards."""
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {cpu})
    try:
        return fn()
    finally:
        os.sched_setaffinity(0, before)


def sample(cpus, a, b):
    blas.set_blas_threads(2)
    out = np.empty((M, N), np.float32)
    team = time_calls(lambda: np.matmul(a, b, out=out), min_time=WINDOW_S)
    blas.set_blas_threads(1)
    one = [_pinned(cpu, lambda: time_calls(lambda: np.matmul(a, b, out=out), min_time=WINDOW_S)) for cpu in cpus]
    pair_times = [None, None]

    def work(i):
        mine_a, mine_out = a.copy(), np.empty_like(out)
        pair_times[i] = _pinned(cpus[i], lambda: time_calls(lambda: np.matmul(mine_a, b, out=mine_out),
                                                            min_time=WINDOW_S))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Two matmuls' worth of work done at once: the time per matmul is 1 / (sum of the rates).
    pair = 1.0 / (1.0 / pair_times[0] + 1.0 / pair_times[1])
    return {"team_ms": team * 1e3, "one_cpu_ms": [t * 1e3 for t in one], "pair_ms": pair * 1e3}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--pause", type=float, default=1.0, help="seconds between samples")
    args = p.parse_args()
    if not hasattr(os, "sched_setaffinity") or blas.blas_threads() is None:
        emit("blas_team_sync", {"skipped": "needs Linux CPU affinity and numpy's OpenBLAS"})
        return
    cpus = sorted(os.sched_getaffinity(0))[:2]
    if len(cpus) < 2:
        emit("blas_team_sync", {"skipped": "needs two CPUs"})
        return
    rng = np.random.default_rng(0)
    a = rng.random((M, K), dtype=np.float32)
    b = rng.random((K, N), dtype=np.float32)
    default_threads = blas.blas_threads()
    rows = []
    end = time.monotonic() + args.seconds
    try:
        while time.monotonic() < end:
            row = sample(cpus, a, b)
            row["at_s"] = round(args.seconds - (end - time.monotonic()), 1)
            rows.append(row)
            time.sleep(args.pause)
    finally:
        blas.set_blas_threads(default_threads)
    team = np.array([r["team_ms"] for r in rows])
    pair = np.array([r["pair_ms"] for r in rows])
    one = np.array([r["one_cpu_ms"] for r in rows])
    summary = {
        "team_ms": {"median": round(float(np.median(team)), 2), "slowest": round(float(team.max()), 2)},
        "pair_ms": {"median": round(float(np.median(pair)), 2), "slowest": round(float(pair.max()), 2)},
        "one_cpu_ms": {f"cpu{c}": {"median": round(float(np.median(one[:, i])), 2),
                                   "slowest": round(float(one[:, i].max()), 2)} for i, c in enumerate(cpus)},
        "team_vs_pair": {"median": round(float(np.median(team / pair)), 3),
                         "slowest": round(float((team / pair).max()), 3)},
    }
    for r in rows:
        r["team_ms"] = round(r["team_ms"], 2)
        r["pair_ms"] = round(r["pair_ms"], 2)
        r["one_cpu_ms"] = [round(t, 2) for t in r["one_cpu_ms"]]
    emit("blas_team_sync", {"summary": summary, "samples": rows},
         shape=[M, K, N], cpus=cpus, window_s=WINDOW_S)


if __name__ == "__main__":
    main()
