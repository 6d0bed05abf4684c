"""The ring (Baidu, Horovod, NCCL): N devices in a circle, each tensor cut
into N chunks.

Reduce-scatter, steps 1..N-1: at step s device d sends chunk (d-1-s) mod N
to device d+1, which reduces it into its own copy of that chunk. Afterwards
device d holds chunk d reduced over all devices. All-gather, the next N-1
steps: each device passes on the last complete chunk it has, so after
2(N-1) steps every device has every chunk. Each device sends 2(N-1) chunks,
2(N-1)/N x S bytes for an S-byte tensor, whatever N is.

Every hop is an ordinary op on the receiving device (an Add/Maximum during
reduce-scatter, an Identity during all-gather) reading a tensor of the
previous device, so the partitioner puts one `_Send`/`_Recv` pair per hop.
Each chunk is reduced in a fixed order (starting from device k+1 for chunk
k) and then only copied, so every device ends with bitwise the same values
and the same program gives the same bits every run.
"""


def reduce_scatter(b, chunks, devices, op, first_step=1):
    """chunks[d][k]: chunk k on device d. Returns (reduced[d] = chunk d reduced
    over all devices, on device d; the next step number)."""
    n = len(devices)
    cur = [list(c) for c in chunks]
    for s in range(n - 1):
        step = f"step{first_step + s}"
        updates = []
        for d in range(n):
            e, k = (d + 1) % n, (d - 1 - s) % n
            updates.append((e, k, b.reduce(op, cur[d][k], cur[e][k], devices[e], step, f"dev{e}")))
        for e, k, value in updates:
            cur[e][k] = value
    return [cur[d][d] for d in range(n)], first_step + n - 1


def all_gather(b, pieces, devices, first_step=1):
    """pieces[d] on device d. Returns (have[d] = [piece 0 .. piece N-1] on device d; the next step number)."""
    n = len(devices)
    have = [[None] * n for _ in range(n)]
    for d in range(n):
        have[d][d] = pieces[d]
    for s in range(n - 1):
        step = f"step{first_step + s}"
        updates = []
        for d in range(n):
            e, k = (d + 1) % n, (d - s) % n
            updates.append((e, k, b.copy(have[d][k], devices[e], step, f"dev{e}")))
        for e, k, value in updates:
            have[e][k] = value
    return have, first_step + n - 1
