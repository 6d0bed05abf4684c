"""Host kernels next to the plain numpy call they replace.

Two numpy calls are slow on large arrays, and graphrt's kernels go around
them (ops/math_kernels.py): `np.where` branches on every element, and
`np.maximum`/`np.minimum` against a scalar miss numpy's SIMD loop. This
times, for float32 arrays of 256x1024, each drop-in against the numpy call
(both give the same bits), then the Sigmoid kernel through a session with
its page faults per run (executor/host_malloc.py keeps freed memory; run
with GRAPHRT_KEEP_FREED_MEMORY=0 to see malloc's default).

Prints one JSON object: microseconds per call (median of rounds) and the
ratio graphrt / numpy.

    python benchmarks/kernels.py
"""
import os
import resource
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import graphrt as tf  # noqa: E402
from _util import emit  # noqa: E402
from graphrt.executor import host_malloc  # noqa: E402
from graphrt.ops import math_kernels  # noqa: E402

SHAPE = (256, 1024)
CALLS = 200
ROUNDS = 7


def per_call_us(fn):
    for _ in range(10):
        fn()
    times = []
    for _ in range(ROUNDS):
        t0 = time.perf_counter()
        for _ in range(CALLS):
            fn()
        times.append((time.perf_counter() - t0) / CALLS)
    return statistics.median(times) * 1e6


def pair(graphrt_fn, numpy_fn):
    got, want = graphrt_fn(), numpy_fn()
    if got.dtype != want.dtype or not np.array_equal(got.view(np.uint8), want.view(np.uint8)):
        raise AssertionError("the drop-in does not give numpy's bits")
    ours, theirs = per_call_us(graphrt_fn), per_call_us(numpy_fn)
    return {"graphrt_us": round(ours, 1), "numpy_us": round(theirs, 1), "ratio": round(ours / theirs, 3)}


def sigmoid_through_a_session():
    x0 = np.random.default_rng(1).standard_normal(SHAPE).astype(np.float32)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, SHAPE)
        y = tf.sigmoid(x)
        with tf.Session() as sess:
            run = lambda: sess.run(y.op, {x: x0})  # noqa: E731
            for _ in range(10):
                run()
            before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            us = per_call_us(run)
            faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    return {"us_per_run": round(us, 1), "page_faults_per_run": round(faults / (ROUNDS * CALLS + 10), 1),
            "keeps_freed_memory": host_malloc.keep_freed_memory()}


def main():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(SHAPE).astype(np.float32)
    y = rng.standard_normal(SHAPE).astype(np.float32)
    mask = x > 0
    zero, lo, hi = np.float32(0), np.float32(-0.5), np.float32(0.5)
    figures = {
        "select_vs_where": pair(lambda: math_kernels.select(mask, x, y), lambda: np.where(mask, x, y)),
        "relu_vs_maximum_0": pair(lambda: math_kernels.blockwise_with_scalar(np.maximum, x, zero),
                                  lambda: np.maximum(x, zero)),
        "clip_vs_minimum_maximum": pair(
            lambda: math_kernels.blockwise_with_scalar(
                np.maximum, math_kernels.blockwise_with_scalar(np.minimum, x, hi), lo),
            lambda: np.maximum(np.minimum(x, hi), lo)),
        "sigmoid_session": sigmoid_through_a_session(),
    }
    emit("kernels", figures, shape=list(SHAPE), dtype="float32")


if __name__ == "__main__":
    main()
