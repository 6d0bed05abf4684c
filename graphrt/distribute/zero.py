"""ZeRO's partition of the model state, at the granularity of whole variables.

Each trainable variable gets one owner replica: the largest variables
first, each to the replica that owns the fewest bytes so far (ties to the
lowest replica), so each owns about 1/N of the parameters (as PyTorch's
ZeroRedundancyOptimizer partitions parameters). The owner alone keeps the
optimizer slots of its variables (stage 1) and the reduced gradient of
them (stage 2), applies the update, and broadcasts the new values to the
other replicas.
"""


def assign_owners(nbytes, num_replicas):
    """owner[i] of each variable i, given each variable's size in bytes."""
    load = [0] * num_replicas
    owner = [0] * len(nbytes)
    for i in sorted(range(len(nbytes)), key=lambda i: (-nbytes[i], i)):
        r = min(range(num_replicas), key=lambda r: (load[r], r))
        owner[i] = r
        load[r] += nbytes[i]
    return owner
