"""EditDistance's kernel body: the Levenshtein distance of the sequences of
two sparse tensors, grouped by every index but the last (TF walks both
tensors' groups in row-major order, as it assumes the indices are)."""
import numpy as np

from .. import errors


def levenshtein(a, b):
    if not len(a):
        return len(b)
    if not len(b):
        return len(a)
    row = np.arange(len(b) + 1)
    for i, x in enumerate(a, 1):
        new = np.empty_like(row)
        new[0] = i
        sub = row[:-1] + (np.asarray(b) != x)
        for j in range(1, len(b) + 1):
            new[j] = min(sub[j - 1], row[j] + 1, new[j - 1] + 1)
        row = new
    return int(row[-1])


def _groups(indices, values):
    """[(group index tuple, values)] of consecutive runs sharing all but the last index."""
    out = []
    keys = [tuple(int(i) for i in row[:-1]) for row in indices]
    start = 0
    for n in range(1, len(keys) + 1):
        if n == len(keys) or keys[n] != keys[start]:
            out.append((keys[start], values[start:n]))
            start = n
    return out


def edit_distance(h_indices, h_values, h_shape, t_indices, t_values, t_shape, normalize, name):
    out_shape = tuple(int(max(h, t)) for h, t in zip(h_shape[:-1], t_shape[:-1]))
    flat = np.zeros(int(np.prod(out_shape)), np.float32)
    strides = np.cumprod((out_shape + (1,))[:0:-1])[::-1]

    def at(key):
        loc = int(np.dot(key, strides))
        if loc >= flat.size:
            raise errors.InternalError(f"Got an inner product {loc} which would require writing to outside of the "
                                       f"buffer for the output tensor (max elements {flat.size})", node=name)
        return loc

    hyp, truth = _groups(h_indices, h_values), _groups(t_indices, t_values)
    i = j = 0
    with np.errstate(divide="ignore", invalid="ignore"):
        while i < len(hyp) or j < len(truth):
            if j == len(truth) or (i < len(hyp) and hyp[i][0] < truth[j][0]):  # no truth here
                key, seq = hyp[i]
                flat[at(key)] = np.float32(len(seq)) / np.float32(0.0) if normalize else len(seq)
                i += 1
            elif i == len(hyp) or truth[j][0] < hyp[i][0]:  # no hypothesis here
                key, seq = truth[j]
                flat[at(key)] = 1.0 if normalize else len(seq)
                j += 1
            else:
                key, t_seq = truth[j]
                d = np.float32(levenshtein(t_seq, hyp[i][1]))
                flat[at(key)] = d / np.float32(len(t_seq)) if normalize else d
                i += 1
                j += 1
    return flat.reshape(out_shape)
