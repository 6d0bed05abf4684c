"""Binomial trees (MPI's reduce and broadcast): ceil(log2 N) steps each way.

Ranks are positions relative to the root. Reduce, at mask 1, 2, 4, ...:
rank r with r % 2mask == mask sends its partial result to rank r - mask,
which reduces it into its own (its own first, so the order is fixed).
Broadcast runs the same tree downwards. Whole tensors travel: each non-root
device sends S bytes up and the tree sends S bytes down each edge, so an
all-reduce moves 2(N-1) x S bytes in all, in 2 ceil(log2 N) latency steps
instead of the ring's 2(N-1).
"""


def reduce(b, values, devices, op, root=0, first_step=1):
    """Returns (values reduced onto devices[root]; the next step number)."""
    n = len(devices)
    acc = list(values)
    step, mask = first_step, 1
    while mask < n:
        for rel in range(mask, n, 2 * mask):
            src, dst = (rel + root) % n, (rel - mask + root) % n
            acc[dst] = b.reduce(op, acc[dst], acc[src], devices[dst], f"step{step}", f"dev{dst}")
        step, mask = step + 1, mask * 2
    return acc[root], step


def broadcast(b, value, devices, root=0, first_step=1):
    """Returns (out[d] = `value` copied to devices[d], out[root] = value; the next step number)."""
    n = len(devices)
    out = [None] * n
    out[root] = value
    top = 1
    while top * 2 < n:
        top *= 2
    step, mask = first_step, top if n > 1 else 0
    while mask >= 1:
        for rel in range(0, n - mask, 2 * mask):
            src, dst = (rel + root) % n, (rel + mask + root) % n
            out[dst] = b.copy(out[src], devices[dst], f"step{step}", f"dev{dst}")
        step, mask = step + 1, mask // 2
    return out, step
