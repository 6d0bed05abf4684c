"""Copy bandwidth on the `sim` device next to numpy.copyto of the same bytes.

Prints one JSON object: for each size, host->device and device->host GB/s
through a sim stream (copies enqueued back to back, then one wait), plain
np.copyto GB/s measured in the same run, and their ratios (medians of
interleaved trials); plus the cost of one stream operation and of an
enqueue+wait round trip (best of 3). Copies are not
modelled here (SimOptions defaults), so this measures the runtime's own
overhead.

    python benchmarks/sim_copy.py
"""
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from graphrt.executor import SimOptions  # noqa: E402
from graphrt.executor.platforms.sim import SimPlatform  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _util import cpu_model  # noqa: E402

MiB = 1 << 20
SIZES_MIB = (1, 16, 64)
TRIALS = 15
BYTES_PER_TRIAL = 256 * MiB  # enough repetitions that one trial takes tens of milliseconds


def best_seconds(run, trials=TRIALS):
    run()  # warm up: first touch of pages, thread start
    return min(_timed(run) for _ in range(trials))


def median_seconds_interleaved(runs, trials=TRIALS):
    """Median time of each run over trials interleaved, so machine noise hits all runs alike."""
    for run in runs:
        run()  # warm up: first touch of pages, thread start
    times = [[] for _ in runs]
    for _ in range(trials):
        for run, samples in zip(runs, times):
            samples.append(_timed(run))
    return [statistics.median(samples) for samples in times]


def _timed(run):
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def measure_size(executor, nbytes):
    reps = max(2, BYTES_PER_TRIAL // nbytes)
    host_src = np.ones(nbytes, dtype=np.uint8)
    host_dst = np.empty(nbytes, dtype=np.uint8)
    memory = executor.allocate(nbytes)
    h2d, d2h = executor.h2d_stream, executor.d2h_stream

    def numpy_copy():
        for _ in range(reps):
            np.copyto(host_dst, host_src)

    def sim_h2d():
        for _ in range(reps):
            h2d.then_memcpy_h2d(memory, host_src)
        h2d.block_host_until_done(60)

    def sim_d2h():
        for _ in range(reps):
            d2h.then_memcpy_d2h(host_dst, memory)
        d2h.block_host_until_done(60)

    moved = reps * nbytes
    numpy_s, h2d_s, d2h_s = median_seconds_interleaved([numpy_copy, sim_h2d, sim_d2h])
    executor.deallocate(memory)
    numpy_gbs, h2d_gbs, d2h_gbs = (moved / seconds / 1e9 for seconds in (numpy_s, h2d_s, d2h_s))
    return {
        "size_mib": nbytes // MiB,
        "numpy_copyto_gbs": round(numpy_gbs, 2),
        "sim_h2d_gbs": round(h2d_gbs, 2),
        "sim_d2h_gbs": round(d2h_gbs, 2),
        "h2d_ratio": round(h2d_gbs / numpy_gbs, 3),
        "d2h_ratio": round(d2h_gbs / numpy_gbs, 3),
    }


def stream_overheads(executor, n=20000):
    stream = executor.compute_stream
    noop = int  # cheapest callable: measures the stream, not the kernel

    def enqueue_many():
        for _ in range(n):
            stream.then_launch(noop)
        stream.block_host_until_done(60)

    def round_trips():
        for _ in range(n // 10):
            stream.then_launch(noop).block_host_until_done(60)

    return {
        "stream_op_us": round(best_seconds(enqueue_many, 3) / n * 1e6, 2),
        "enqueue_and_wait_round_trip_us": round(best_seconds(round_trips, 3) / (n // 10) * 1e6, 2),
    }


def main():
    platform = SimPlatform(options=SimOptions(memory_bytes=max(SIZES_MIB) * MiB + MiB))
    executor = platform.executor(0)
    try:
        results = {
            "benchmark": "sim_copy",
            "cpu": cpu_model(),
            "sizes": [measure_size(executor, size * MiB) for size in SIZES_MIB],
            **stream_overheads(executor),
        }
    finally:
        platform.reset()
    print(json.dumps(results))


if __name__ == "__main__":
    main()
