"""Recursive halving then recursive doubling (Rabenseifner's all-reduce).

For P = 2^k devices: halving at mask P/2, P/4, ..., 1 pairs device r with
r XOR mask; both hold the same range of chunks, split it in two, and each
keeps one half, reducing the partner's copy of it into its own (the lower
rank's first, so the order is fixed). After k steps device r holds chunk r
fully reduced. Doubling reverses the pairing and concatenates. Each device
sends S/2 + S/4 + ... + S/P = (P-1)/P x S bytes each way, the ring's
2(N-1)/N x S, in 2 log2 P latency steps instead of 2(N-1).

For N that is not a power of two, the N - P extra devices first fold their
whole tensor into a partner (device e into e - P), sit out, and get the
result back at the end: 2 more steps and S more bytes for those pairs.
"""
from .replicas import chunk_sizes


def all_reduce(b, flats, devices, op, num_elements, finish=None):
    """flats[d]: the flattened tensor on device d. `finish(piece, device, rank)`
    maps each fully reduced chunk before the doubling (the mean's scaling).
    Returns out[d], the flat result on device d."""
    n = len(devices)
    p = 1
    while p * 2 <= n:
        p *= 2
    flats = list(flats)
    step = 1
    if n > p:
        for e in range(p, n):
            flats[e - p] = b.reduce(op, flats[e - p], flats[e], devices[e - p], f"step{step}", f"dev{e - p}")
        step += 1
    offsets = [0]
    for size in chunk_sizes(num_elements, p):
        offsets.append(offsets[-1] + size)
    piece, lo, hi = flats[:p], [0] * p, [p] * p
    mask = p // 2
    while mask >= 1:
        for r in range(p):
            if r & mask:
                continue
            q = r | mask
            mid = (lo[r] + hi[r]) // 2
            sizes = [offsets[mid] - offsets[lo[r]], offsets[hi[r]] - offsets[mid]]
            r_low, r_high = b.split(piece[r], sizes, devices[r], f"step{step}", f"split_dev{r}")
            q_low, q_high = b.split(piece[q], sizes, devices[q], f"step{step}", f"split_dev{q}")
            piece[r] = b.reduce(op, r_low, q_low, devices[r], f"step{step}", f"dev{r}")
            piece[q] = b.reduce(op, r_high, q_high, devices[q], f"step{step}", f"dev{q}")
            hi[r] = lo[q] = mid
        step, mask = step + 1, mask // 2
    if finish is not None:
        piece = [finish(piece[r], devices[r], r) for r in range(p)]
    mask = 1
    while mask < p:
        for r in range(p):
            if r & mask:
                continue
            q = r | mask
            pair = [piece[r], piece[q]]
            piece[r] = b.concat(pair, devices[r], f"step{step}", f"dev{r}")
            piece[q] = b.concat(pair, devices[q], f"step{step}", f"dev{q}")
        step, mask = step + 1, mask * 2
    out = piece + [None] * (n - p)
    for e in range(p, n):
        out[e] = b.copy(piece[e - p], devices[e], f"step{step}", f"dev{e}")
    return out
