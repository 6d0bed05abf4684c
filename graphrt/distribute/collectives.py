"""Collectives as graph builders: all_reduce, reduce_scatter, all_gather,
broadcast and reduce over tensors that live on different devices.

    with tf.device("/cpu:0"): a = ...
    with tf.device("/cpu:1"): b = ...
    a_sum, b_sum = tf.distribute.all_reduce([a, b], op="sum", algorithm="ring")

Each result is placed on its input's device. Nothing here is a special op:
the algorithms (ring.py, tree.py, halving_doubling.py) are splits, adds and
copies placed per device, so the partitioner inserts the transfers and a
traced run shows every hop. Static shapes must be fully defined, since the
tensors are cut into chunks while the graph is built.
"""
import math

from .. import errors
from . import halving_doubling, ring, tree
from .replicas import Builder, Replicas, canonical_device, check_op, chunk_sizes, device_of

ALGORITHMS = ("ring", "tree", "halving_doubling", "auto")

# The alpha-beta model `algorithm="auto"` compares (per message: latency +
# bytes / bandwidth): a fast interconnect's order of magnitude. Ties go to the ring.
AUTO_LATENCY_S = 1e-5
AUTO_BANDWIDTH_BPS = 1e9


def modelled_time(algorithm, num_devices, nbytes, latency=AUTO_LATENCY_S, bandwidth=AUTO_BANDWIDTH_BPS):
    """Textbook time of an all-reduce of `nbytes` over `num_devices` (alpha-beta model, seconds)."""
    n, s = num_devices, float(nbytes)
    if n <= 1:
        return 0.0
    if algorithm == "ring":
        return 2 * (n - 1) * latency + 2 * (n - 1) / n * s / bandwidth
    if algorithm == "tree":
        return 2 * math.ceil(math.log2(n)) * (latency + s / bandwidth)
    if algorithm == "halving_doubling":
        p = 2 ** int(math.floor(math.log2(n)))
        t = 2 * math.log2(p) * latency + 2 * (p - 1) / p * s / bandwidth
        return t + (2 * (latency + s / bandwidth) if p != n else 0.0)
    raise errors.InvalidArgumentError(f"Unknown all-reduce algorithm {algorithm!r}; one of {ALGORITHMS}")


def choose_algorithm(num_devices, nbytes):
    """What `algorithm="auto"` picks: the lowest modelled time, the ring on a tie."""
    order = ("ring", "halving_doubling", "tree")
    times = [modelled_time(a, num_devices, nbytes) for a in order]
    return order[min(range(len(order)), key=lambda i: (times[i], i))]


def all_reduce(values, op="sum", algorithm="ring", name=None):
    """Reduces `values` (one tensor per device) and returns the result on every device.

    Args:
        values: tensors of one shape and dtype, each on a different device
            (local CPU or SIM devices, or devices of other tasks).
        op: 'sum', 'mean' or 'max'.
        algorithm: 'ring', 'tree' (binomial tree reduce + broadcast),
            'halving_doubling' (Rabenseifner) or 'auto' (choose_algorithm).
        name: scope of the ops (default 'allreduce'); ops are named
            `<name>/<algorithm>/step<k>/dev<i>`, i the position in `values`.

    Returns:
        A list: result i is on the device of values[i], with its shape.

    Raises:
        InvalidArgumentError: no values, a device listed twice, a value
            without a device, shapes or dtypes that differ (naming the tensors).
    """
    reps = Replicas(values, "all_reduce")
    check_op(op, reps.dtype, "all_reduce")
    if algorithm not in ALGORITHMS:
        raise errors.InvalidArgumentError(f"all_reduce: unknown algorithm {algorithm!r}; one of {ALGORITHMS}")
    n, devices = len(reps), reps.devices
    if algorithm == "auto":
        algorithm = choose_algorithm(n, reps.nbytes)
    b = Builder(name or "allreduce", algorithm)
    if n == 1:
        return [b.copy(reps.tensors[0], devices[0], "out", "dev0")]

    def finish(value, device, i):
        return b.scale(value, 1.0 / n, device, "mean", f"dev{i}") if op == "mean" else value

    if algorithm == "tree":
        total, step = tree.reduce(b, reps.tensors, devices, op)
        out, _ = tree.broadcast(b, finish(total, devices[0], 0), devices, first_step=step)
        return out
    flats = [b.flatten(t, d, f"dev{i}") for i, (t, d) in enumerate(zip(reps.tensors, devices))]
    if algorithm == "halving_doubling":
        out = halving_doubling.all_reduce(b, flats, devices, op, reps.num_elements, finish)
    else:
        sizes = chunk_sizes(reps.num_elements, n)
        chunks = [b.split(f, sizes, d, "split", f"dev{i}") for i, (f, d) in enumerate(zip(flats, devices))]
        owned, step = ring.reduce_scatter(b, chunks, devices, op)
        owned = [finish(c, devices[i], i) for i, c in enumerate(owned)]
        have, _ = ring.all_gather(b, owned, devices, first_step=step)
        out = [b.concat(have[i], devices[i], "concat", f"dev{i}") for i in range(n)]
    return [b.reshape(f, reps.shape, d, f"dev{i}") for i, (f, d) in enumerate(zip(out, devices))]


def reduce_scatter(values, op="sum", name=None):
    """Reduces `values` and leaves piece i of the flattened result on device i (the ring's first half).

    The flattened tensor of n elements is cut into N pieces, the first n % N
    one element longer (`chunk_sizes(n, N)`); result i is 1-D. Each device
    sends (N-1)/N x S bytes.
    """
    reps = Replicas(values, "reduce_scatter")
    check_op(op, reps.dtype, "reduce_scatter")
    n, devices = len(reps), reps.devices
    b = Builder(name or "reducescatter", "ring")
    flats = [b.flatten(t, d, f"dev{i}") for i, (t, d) in enumerate(zip(reps.tensors, devices))]
    if n == 1:
        return flats
    sizes = chunk_sizes(reps.num_elements, n)
    chunks = [b.split(f, sizes, d, "split", f"dev{i}") for i, (f, d) in enumerate(zip(flats, devices))]
    owned, _ = ring.reduce_scatter(b, chunks, devices, op)
    if op == "mean":
        owned = [b.scale(c, 1.0 / n, devices[i], "mean", f"dev{i}") for i, c in enumerate(owned)]
    return owned


def all_gather(values, name=None):
    """Concatenates `values` (one per device, same shape past axis 0) along
    axis 0 on every device, in the order given (a ring of N-1 steps)."""
    reps = Replicas(values, "all_gather", same_shape=False)
    n, devices = len(reps), reps.devices
    b = Builder(name or "allgather", "ring")
    if n == 1:
        return [b.copy(reps.tensors[0], devices[0], "out", "dev0")]
    have, _ = ring.all_gather(b, reps.tensors, devices)
    return [b.concat(have[i], devices[i], "concat", f"dev{i}") for i in range(n)]


def broadcast(value, devices, name=None):
    """Copies `value` (from its device) to every device of `devices` down a binomial tree.

    Returns one tensor per device of `devices`, in that order; the value's
    own device may be among them (its result is an Identity of the value).
    """
    src = Replicas([value], "broadcast")
    names = [canonical_device(d) for d in devices]
    if not names:
        raise errors.InvalidArgumentError("broadcast needs at least 1 destination device, got 0")
    for i, d in enumerate(names):
        if not d:
            raise errors.InvalidArgumentError(f"broadcast: destination device {devices[i]!r} is empty")
        if d in names[:i]:
            raise errors.InvalidArgumentError(f"broadcast: device {d} is listed twice")
    source = device_of(src.tensors[0])
    ranks = [source] + [d for d in names if d != source]
    b = Builder(name or "broadcast", "tree")
    out, _ = tree.broadcast(b, src.tensors[0], ranks)
    by_device = dict(zip(ranks, out))
    if source in names:
        by_device[source] = b.copy(src.tensors[0], source, "out", "dev0")
    return [by_device[d] for d in names]


def reduce(values, root=0, op="sum", name=None):
    """Reduces `values` onto the device of values[root] (binomial tree); returns that one tensor."""
    reps = Replicas(values, "reduce")
    check_op(op, reps.dtype, "reduce")
    n = len(reps)
    if not 0 <= root < n:
        raise errors.InvalidArgumentError(f"reduce: root {root} is not a position in the {n} values")
    b = Builder(name or "reduce", "tree")
    total, _ = tree.reduce(b, reps.tensors, reps.devices, op, root=root)
    if op == "mean":
        total = b.scale(total, 1.0 / n, reps.devices[root], "mean", f"dev{root}")
    if n == 1:
        total = b.copy(total, reps.devices[0], "out", "dev0")
    return total


__all__ = ["ALGORITHMS", "all_gather", "all_reduce", "broadcast", "choose_algorithm",
           "modelled_time", "reduce", "reduce_scatter"]
