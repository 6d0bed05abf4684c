"""Shared helpers for the benchmark scripts: timing and JSON output."""
import json
import platform
import sys
import time

import numpy as np


def time_calls(fn, min_time=1.0, min_calls=5, warmup=2):
    """Median seconds per call of fn(), measured in batches for at least min_time."""
    for _ in range(warmup):
        fn()
    samples = []
    start = time.perf_counter()
    while time.perf_counter() - start < min_time or len(samples) < min_calls:
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return float(np.median(samples))


def cpu_model():
    """The CPU the figures come from, as the kernel names it (a VM's can change between boots)."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    break  # the first processor's block is enough
                key, _, value = line.partition(":")
                fields[key.strip()] = value.strip()
    except OSError:
        return platform.processor() or platform.machine()
    name = fields.get("model name", platform.machine())
    if "cpu family" in fields and "model" in fields:
        name += f" (family {fields['cpu family']}, model {fields['model']})"
    return name


def emit(name, figures, **extra):
    out = {"benchmark": name, "python": platform.python_version(), "numpy": np.__version__, "cpu": cpu_model()}
    out.update(extra)
    out.update(figures)
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")
