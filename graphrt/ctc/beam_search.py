"""TF's CTC beam search (util/ctc/ctc_beam_search.h with the default
scorer), one batch item at a time: a prefix tree of beam entries, each with
the log probability of its prefix ending in a blank, in its last label, and
in total; `beam_width` leaves survive each step. Each step's inputs are
log-softmax normalized first, as TF's kernel does, so logits and log
probabilities decode alike.
"""
import math

_NEG_INF = -math.inf


def _log_sum_exp(a, b):
    if a == _NEG_INF:
        return b
    if b == _NEG_INF:
        return a
    if a > b:
        return a + math.log1p(math.exp(b - a))
    return b + math.log1p(math.exp(a - b))


class _Entry:
    __slots__ = ("parent", "label", "children", "old", "new")

    def __init__(self, parent, label):
        self.parent = parent
        self.label = label
        self.children = {}
        self.old = [_NEG_INF, _NEG_INF, _NEG_INF]  # total, blank, label
        self.new = [_NEG_INF, _NEG_INF, _NEG_INF]

    def active(self):
        return self.new[0] != _NEG_INF

    def child(self, label):
        c = self.children.get(label)
        if c is None:
            c = self.children[label] = _Entry(self, label)
        return c

    def label_seq(self, merge_repeated):
        labels, prev, e = [], -1, self
        while e.parent is not None:
            if not merge_repeated or e.label != prev:
                labels.append(e.label)
            prev = e.label
            e = e.parent
        return labels[::-1]


class _Leaves:
    """TF's TopN of beam entries by new total log probability."""

    def __init__(self, limit):
        self.limit = limit
        self.items = []

    def push(self, e):
        if len(self.items) < self.limit:
            self.items.append(e)
        else:
            bottom = self.bottom()
            if e.new[0] > bottom.new[0]:
                self.items.remove(bottom)
                self.items.append(e)

    def bottom(self):
        return min(self.items, key=lambda e: e.new[0])

    def extract(self):
        out = sorted(self.items, key=lambda e: -e.new[0])
        self.items = []
        return out


def decode(steps, beam_width, top_paths, merge_repeated):
    """(paths, log probabilities) of the `top_paths` best beams over `steps` ([T, C] inputs),
    or a message where TF fails."""
    root = _Entry(None, -1)
    root.new[0] = root.new[1] = 0.0
    leaves = _Leaves(beam_width)
    leaves.push(root)
    for x in steps:
        _step(leaves, [float(v) for v in x], beam_width)
    if top_paths > beam_width:
        return "requested more paths than the beam width."
    if top_paths > len(leaves.items):
        return "Less leaves in the beam search than requested."
    best = sorted(leaves.items, key=lambda e: -e.new[0])[:top_paths]
    return [e.label_seq(merge_repeated) for e in best], [e.new[0] for e in best]


def _step(leaves, x, beam_width):
    blank = len(x) - 1
    top = max(x)
    norm = top + math.log(sum(math.exp(v - top) for v in x))  # the log-softmax's normalizer
    branches = leaves.extract()
    for b in branches:
        b.old = list(b.new)
    for b in branches:
        if b.parent is not None:
            if b.parent.active():
                previous = b.parent.old[1] if b.label == b.parent.label else b.parent.old[0]
                b.new[2] = _log_sum_exp(b.new[2], previous)
            b.new[2] += x[b.label] - norm
        b.new[1] = b.old[0] + x[blank] - norm
        b.new[0] = _log_sum_exp(b.new[1], b.new[2])
        leaves.push(b)

    def is_candidate(total):
        return total > _NEG_INF and (len(leaves.items) < beam_width or total > leaves.bottom().new[0])

    for b in branches:
        if not is_candidate(b.old[0]):
            continue
        for label in range(blank):
            c = b.child(label)
            if c.active():
                continue
            previous = b.old[1] if label == b.label else b.old[0]
            c.new = [x[label] - norm + previous, _NEG_INF, x[label] - norm + previous]
            if is_candidate(c.new[0]):
                if len(leaves.items) == beam_width:
                    leaves.bottom().new = [_NEG_INF, _NEG_INF, _NEG_INF]
                leaves.push(c)
            else:
                c.old = [_NEG_INF, _NEG_INF, _NEG_INF]
                c.new = [_NEG_INF, _NEG_INF, _NEG_INF]
