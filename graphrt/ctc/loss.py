"""The CTC loss and its gradient (TF's CTCLossCalculator, Graves' thesis
ch. 7): log-space forward-backward over the label lattice l' (a blank before
each label and one at the end), vectorized over the batch: every item's l'
is padded to the longest, padded states observe log 0.

Items are judged as TF judges them (`label_sequences`), and skipped ones
(sequence length 0, or too long with `ignore_longer_outputs_than_inputs`)
get loss 0 and gradient 0; an item no alignment can explain gets loss inf
and, as TF, the softmax as its gradient.
"""
import numpy as np

from .. import errors


def _logsumexp(a, axis):
    m = np.max(a, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return np.squeeze(np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m, axis=axis)


def label_sequences(labels, seq_len, num_classes, collapse, ignore_longer, node):
    """Each item's target l (TF's PopulateLPrimes): repeats collapsed when asked, a value
    >= num_classes - 1 ends the sequence; errors with TF's messages."""
    out = []
    for b, label in enumerate(labels):
        if not label:
            raise errors.InvalidArgumentError(f"Labels length is zero in batch {b}", node=node)
        target, finished = [], False
        for i, v in enumerate(label):
            if i and collapse and v == label[i - 1]:
                continue
            if v >= num_classes - 1:
                finished = True
            elif finished:
                raise errors.InvalidArgumentError(
                    f"Saw a non-null label (index >= num_classes - 1) following a null label, batch: {b} "
                    f"num_classes: {num_classes} labels: {','.join(map(str, label))} labels seen so far: "
                    f"{','.join(map(str, target))}", node=node)
            else:
                target.append(v)
        if any(v < 0 for v in target):
            raise errors.InvalidArgumentError(f"All labels must be nonnegative integers, batch: {b} labels: "
                                              f"{','.join(map(str, target))}", node=node)
        if not ignore_longer and len(label) > seq_len[b]:
            raise errors.InvalidArgumentError(
                f"Not enough time for target transition sequence (required: {len(label)}, available: "
                f"{seq_len[b]}){b}You can turn this error into a warning by using the flag "
                "ignore_longer_outputs_than_inputs", node=node)
        out.append(target)
    return out


def _lattice(targets, blank):
    """l' per item padded to [B, U] (padding -1), its lengths, and where a state may be
    entered from two states below (not a blank, not a repeat of the label two below)."""
    lengths = np.array([2 * len(t) + 1 for t in targets], np.int64)
    u_max = int(lengths.max()) if len(targets) else 1
    l_prime = np.full((len(targets), u_max), -1, np.int64)
    for b, t in enumerate(targets):
        l_prime[b, :lengths[b]] = blank
        l_prime[b, 1:lengths[b]:2] = t
    return l_prime, lengths


def ctc_loss(logits, targets, seq_len, merge_repeated, active):
    """(loss [B], gradient [T, B, C]) of time-major logits; `active` marks the items computed."""
    max_time, batch, num_classes = logits.shape
    blank = num_classes - 1
    x = logits.astype(np.float64)
    x = x - x.max(axis=2, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        y = np.exp(x)
        y /= y.sum(axis=2, keepdims=True)
        log_y = np.log(y)
    loss = np.zeros(batch)
    grad = np.zeros_like(y)
    if batch == 0 or not active.any():
        return loss, grad
    l_prime, lengths = _lattice(targets, blank)
    u_max = l_prime.shape[1]
    valid = l_prime >= 0
    is_blank = l_prime == blank
    two_back = np.zeros_like(valid)
    two_back[:, 2:] = ~is_blank[:, 2:] & valid[:, 2:]
    if merge_repeated:
        two_back[:, 2:] &= l_prime[:, 2:] != l_prime[:, :-2]
    stay = is_blank | merge_repeated
    # log y of each state's label at each time: [T, B, U], log 0 on padding
    rows = np.arange(batch)[:, None]
    emit = np.where(valid[None], log_y[:, rows, np.maximum(l_prime, 0)], -np.inf)
    t_len = np.where(active, seq_len, 0)
    t_max = int(t_len.max())
    neg_inf = np.full((batch, u_max), -np.inf)

    def shifted(a, k):
        out = np.full_like(a, -np.inf)
        out[:, k:] = a[:, :-k] if k else a
        return out

    log_alpha = np.full((t_max, batch, u_max), -np.inf)
    first = neg_inf.copy()
    first[:, 0] = emit[0, :, 0]
    first[:, 1] = np.where(lengths > 1, emit[0, :, 1], -np.inf)
    log_alpha[0] = first
    for t in range(1, t_max):
        prev = log_alpha[t - 1]
        terms = np.stack([np.where(stay, prev, -np.inf), shifted(prev, 1),
                          np.where(two_back, shifted(prev, 2), -np.inf)])
        log_alpha[t] = _logsumexp(terms, 0) + emit[t]

    log_beta = np.full((t_max, batch, u_max), -np.inf)
    last = neg_inf.copy()
    last[rows[:, 0], lengths - 1] = 0.0
    last[rows[:, 0], np.maximum(lengths - 2, 0)] = 0.0
    nxt = neg_inf
    for t in range(t_max - 1, -1, -1):
        if t + 1 < t_max:
            e = emit[t + 1]
            up1 = np.full_like(nxt, -np.inf)
            up1[:, :-1] = nxt[:, 1:] + e[:, 1:]
            up2 = np.full_like(nxt, -np.inf)
            up2[:, :-2] = np.where(two_back[:, 2:], nxt[:, 2:] + e[:, 2:], -np.inf)
            recur = _logsumexp(np.stack([np.where(stay, nxt + e, -np.inf), up1, up2]), 0)
        else:
            recur = neg_inf
        here = np.where((t == t_len - 1)[:, None], last, np.where((t < t_len - 1)[:, None], recur, -np.inf))
        log_beta[t] = here
        nxt = here

    log_p = _logsumexp(log_alpha[0] + log_beta[0], 1)
    loss = np.where(active, -log_p, 0.0)
    # posterior of each class at each time: occupancy of its states, summed
    with np.errstate(invalid="ignore", over="ignore"):
        occupancy = np.exp(log_alpha + log_beta - log_p[None, :, None])
    occupancy = np.where(np.isfinite(log_p)[None, :, None], np.nan_to_num(occupancy), 0.0)
    one_hot = (l_prime[:, :, None] == np.arange(num_classes)).astype(np.float64)
    posterior = np.einsum("tbu,buc->tbc", occupancy, one_hot)
    in_time = (np.arange(t_max)[:, None] < t_len[None, :])[:, :, None]
    grad[:t_max] = np.where(in_time, y[:t_max] - posterior, 0.0)
    return loss, grad
