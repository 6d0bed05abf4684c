"""How fast each CPU runs plain Python after it idles: the machine's phases.

On this VM a vCPU that idles for more than about a millisecond comes back to
one of two speeds and keeps it until it idles again: most often its usual
speed, but some of the time (7-73% of the samples, depending on the hour)
1.7-1.8x slower. Work that does not idle rarely slows (`--interval 0`: 2% of
samples). Work that is mostly interpreter, as graphrt's small steps are,
slows with each slow draw; a one-thread matmul in the same draws slowed ~7%.

One process per CPU, pinned to it, sleeps `--interval` seconds (the idle
that starts a new draw) and then times a fixed pure-Python loop; a sample is
"slow" when it takes over 1.25x that CPU's fastest. `--interval 0` samples
without idling, the control. It describes the machine, not a given run of
another benchmark: its `any_cpu_slow_share` just before three runs of
two_task_step.py (0.73-0.87) did not predict their ratios (0.308, 0.396,
0.436), since a step that idles for microseconds does not draw as one that
idles for a second.

    python benchmarks/cpu_phases.py [--samples 60] [--interval 1]
"""
import argparse
import multiprocessing
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _util import emit, time_calls  # noqa: E402

SLOW = 1.25  # a sample this many times the CPU's fastest counts as slow
REPEATS = 10  # loops per sample; the sample is their median


def _loop():
    counts = {}
    for i in range(20000):
        counts[i & 255] = counts.get(i & 255, 0) + i
    return counts


def _sample(cpu, samples, interval, start, out):
    os.sched_setaffinity(0, {cpu})
    times = []
    for n in range(samples):
        # Every CPU samples at the same moments, so their slow stretches can be compared.
        if interval:
            time.sleep(max(0.0, start + n * interval - time.time()))
        times.append(time_calls(_loop, min_time=0.0, min_calls=REPEATS, warmup=0))
    out.put((cpu, times))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--samples", type=int, default=60)
    p.add_argument("--interval", type=float, default=1.0)
    args = p.parse_args()
    cpus = sorted(os.sched_getaffinity(0))
    samples = max(1, args.samples)
    out = multiprocessing.Queue()
    start = time.time() + 0.5
    procs = [multiprocessing.Process(target=_sample, args=(cpu, samples, args.interval, start, out))
             for cpu in cpus]
    for proc in procs:
        proc.start()
    try:
        results = dict(out.get(timeout=samples * (args.interval + 0.2) * 4 + 60) for _ in procs)
    finally:
        for proc in procs:
            proc.join(timeout=10)
            if proc.is_alive():
                proc.kill()
                proc.join()
    figures, slow = {}, []
    for cpu in cpus:
        t = np.array(results[cpu])
        fastest = t.min()
        is_slow = t > SLOW * fastest
        slow.append(is_slow)
        figures[f"cpu{cpu}"] = {
            "fastest_loop_us": round(fastest * 1e6, 1),
            "median_loop_us": round(float(np.median(t)) * 1e6, 1),
            "slow_share": round(float(is_slow.mean()), 3),
            "slow_vs_fastest": round(float(np.median(t[is_slow]) / fastest), 2) if is_slow.any() else None,
        }
    slow = np.array(slow)
    figures["any_cpu_slow_share"] = round(float(slow.any(axis=0).mean()), 3)
    figures["all_cpus_slow_share"] = round(float(slow.all(axis=0).mean()), 3)
    emit("cpu_phases", figures, samples=samples, interval_s=args.interval, slow_threshold=SLOW,
         note="per CPU: one pinned process idling `interval` s, then timing a fixed pure-Python loop")


if __name__ == "__main__":
    main()
