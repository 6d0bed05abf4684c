"""The loss and gradient of `ctc_loss_v2` on dense labels: TF's
ctc_loss_dense (Sim et al. 2017's batched forward-backward), step for step,
in numpy. The blank is class 0 here (the API moves it there).

Its lattice differs from CTCLoss's: states are a start state, one per label
slot and one blank after each slot (2 (L + 1)), over every padded label
slot; the start and final state distributions put log(1e-307) (as float32)
rather than log 0 on the other states, and each step is renormalized. So
where no alignment exists the loss is large but finite, as TF's.
"""
import numpy as np

_LOG_0 = float(np.float32(np.log(1e-307)))


def _logsumexp(a, axis, keepdims=False):
    m = np.max(a, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


def _log_softmax(x):
    return x - _logsumexp(x, -1, keepdims=True)


def _transitions(labels):
    """log P(to, from) per item: [B, S, S] (TF's _ctc_state_trans)."""
    batch, n = labels.shape
    k = n + 1
    s = 2 * k
    trans = np.eye(s)
    trans[1, 0] = 1.0                                   # start -> first label
    trans[np.arange(1, k), np.arange(k, 2 * k - 1)] = 1.0  # blank i -> label i + 1
    trans[np.arange(k, 2 * k), np.arange(k)] = 1.0      # label i -> blank i
    trans = np.broadcast_to(trans, (batch, s, s)).copy()
    if n > 1:
        repeats = labels[:, :-1] == labels[:, 1:]
        trans[:, np.arange(2, k), np.arange(1, k - 1)] += 1.0 - repeats
    with np.errstate(divide="ignore"):
        return np.log(trans)


def ctc_loss_dense(logits, labels, label_length, logit_length):
    """(loss [B], gradient [T, B, C]) as TF's ctc_loss_and_grad."""
    max_time, batch, num_classes = logits.shape
    labels = labels.astype(np.int64)
    n = labels.shape[1]
    k = n + 1
    logp = _log_softmax(logits.astype(np.float64))
    # observed log probs per state: start (log 0), label slots, blanks
    slots = np.broadcast_to(np.clip(labels, 0, num_classes - 1)[None], (max_time,) + labels.shape)
    label_lp = np.take_along_axis(logp, slots, 2)
    label_lp = np.where(((labels >= 0) & (labels < num_classes))[None], label_lp, 0.0)
    obs = np.concatenate([np.full((max_time, batch, 1), -np.inf), label_lp,
                          np.repeat(logp[:, :, :1], k, axis=2)], axis=2)
    trans = _transitions(labels)
    initial = np.full((batch, 2 * k), _LOG_0)
    initial[:, 0] = 0.0
    final_mask = np.zeros((batch, k))
    in_range = (label_length >= 0) & (label_length < k)
    final_mask[np.flatnonzero(in_range), label_length[in_range]] = 1.0
    final = (1.0 - np.concatenate([final_mask, final_mask], axis=1)) * _LOG_0
    mask = (np.arange(max_time)[:, None] < logit_length[None, :]).astype(np.float64)  # [T, B]

    fwd = [initial]
    for t in range(max_time):
        s = _logsumexp(fwd[-1][:, None, :] + trans, -1) + obs[t]
        fwd.append(s - _logsumexp(s, -1, keepdims=True))
    bwd_trans = np.transpose(trans, (0, 2, 1))
    bwd = [None] * (max_time + 1)
    bwd[max_time] = final
    cum = np.zeros(batch)
    with np.errstate(invalid="ignore"):
        for t in range(max_time - 1, -1, -1):
            s = _logsumexp((bwd[t + 1] + obs[t])[:, None, :] + bwd_trans, -1)
            total = _logsumexp(s, -1, keepdims=True)
            s = s - total
            cum = cum + total[:, 0] * mask[t]
            m = mask[t][:, None]
            bwd[t] = s * m + final * (1.0 - m)
        fwd_bwd = np.stack(fwd[1:]) + np.stack(bwd[1:])
        fwd_bwd = fwd_bwd - _logsumexp(fwd_bwd, 2, keepdims=True)
        with np.errstate(divide="ignore"):
            fwd_bwd = fwd_bwd + np.log(mask)[:, :, None]
    log_likelihood = bwd[0][:, 0] + cum

    label_states = fwd_bwd[:, :, 1:k]
    blank_states = fwd_bwd[:, :, k:]
    one_hot = np.where((labels - 1)[:, :, None] == np.arange(num_classes - 1), 0.0, -np.inf)  # [B, L, C-1]
    label_olabels = _logsumexp(label_states[..., None] + one_hot[None], 2)
    blank_olabels = _logsumexp(blank_states, 2, keepdims=True)
    olabel = np.concatenate([blank_olabels, label_olabels], axis=-1)
    grad = (np.exp(logp) - np.exp(olabel)) * mask[:, :, None]
    return -log_likelihood, grad
