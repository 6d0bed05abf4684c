"""Candidate samplers (TF's candidate_sampling_ops) and ComputeAccidentalHits.

A sampler draws `num_sampled` classes in [0, range_max) and reports, for
the true classes and for the drawn ones, their expected count in a draw:
what nce_loss and sampled_softmax_loss subtract (log Q) to correct for
sampling. Log-uniform (Zipfian): P(c) = log((c + 2) / (c + 1)) / log(range_max + 1),
the distribution of word frequencies when classes are sorted by frequency.
With `unique`, draws repeat until `num_sampled` distinct classes came out
and the expected count of a class is 1 - (1 - P(c))^tries, as TF computes it.
The kernels draw from a numpy Generator seeded by (seed, seed2).
"""
import numpy as np

from .. import errors
from ..framework import dtypes
from ..framework.op_builder import apply_op, convert_to_tensor
from ..framework.registry import REQUIRED, not_differentiable, register_kernel, register_op
from ..framework.tensor_shape import TensorShape
from ..ops.random_ops import _seed_attrs


def _sampler_shape(ctx):
    true = ctx.shape(0)
    if true.ndims not in (None, 2):
        raise ValueError(f"Shape must be rank 2 but is rank {true.ndims} (true_classes)")
    n = ctx.attr("num_sampled")
    return [TensorShape([n]), true, TensorShape([n])]


_SAMPLER_ATTRS = {"num_true": REQUIRED, "num_sampled": REQUIRED, "unique": REQUIRED, "range_max": REQUIRED,
                  "seed": 0, "seed2": 0}
for _name in ("LogUniformCandidateSampler", "UniformCandidateSampler"):
    register_op(_name, ["true_classes: int64"], ["sampled_candidates: int64", "true_expected_count: float32",
                                                 "sampled_expected_count: float32"],
                attrs=dict(_SAMPLER_ATTRS), shape_fn=_sampler_shape, is_stateful=True)
    not_differentiable(_name)
register_op("ComputeAccidentalHits", ["true_classes: int64", "sampled_candidates: int64"],
            ["indices: int32", "ids: int64", "weights: float32"], attrs={"num_true": REQUIRED, "seed": 0, "seed2": 0},
            shape_fn=lambda ctx: [TensorShape([None])] * 3)
not_differentiable("ComputeAccidentalHits")


def _log_uniform(range_max):
    classes = np.arange(range_max, dtype=np.float64)
    return np.log((classes + 2.0) / (classes + 1.0)) / np.log(range_max + 1.0)


def _uniform(range_max):
    return np.full(range_max, 1.0 / range_max)


def _sampler_kernel(probabilities_of):
    def factory(ctx):
        n, unique, range_max = ctx.attr("num_sampled"), ctx.attr("unique"), ctx.attr("range_max")
        num_true, node = ctx.attr("num_true"), ctx.name
        seed, seed2 = ctx.attr("seed"), ctx.attr("seed2")
        rng = np.random.default_rng(None if seed == 0 and seed2 == 0 else [seed, seed2])
        probs = probabilities_of(range_max)
        if unique and n > range_max:
            raise errors.InvalidArgumentError(f"Sampler's range is too small: num_sampled {n} > range_max "
                                              f"{range_max} with unique=True", node=node)

        def expected(classes, tries):
            p = probs[np.clip(classes, 0, range_max - 1)]
            if unique:
                return (-np.expm1(tries * np.log1p(-p))).astype(np.float32)
            return (p * n).astype(np.float32)

        def sample(true_classes):
            true_classes = np.asarray(true_classes)
            if true_classes.ndim != 2 or true_classes.shape[1] != num_true:
                raise errors.InvalidArgumentError(f"true_classes must be a matrix with num_true={num_true} columns, "
                                                  f"got shape {list(true_classes.shape)}", node=node)
            if unique:
                picked, seen, tries = [], set(), 0
                while len(picked) < n:
                    for c in rng.choice(range_max, size=max(n - len(picked), 1), p=probs):
                        tries += 1
                        if c not in seen:
                            seen.add(c)
                            picked.append(c)
                            if len(picked) == n:
                                break
                sampled = np.array(picked, dtype=np.int64)
            else:
                sampled, tries = rng.choice(range_max, size=n, p=probs).astype(np.int64), n
            return sampled, expected(true_classes, tries), expected(sampled, tries)
        return sample
    return factory


register_kernel("LogUniformCandidateSampler", ("CPU",))(_sampler_kernel(_log_uniform))
register_kernel("UniformCandidateSampler", ("CPU",))(_sampler_kernel(_uniform))


@register_kernel("ComputeAccidentalHits", ("CPU",))
def _compute_accidental_hits(ctx):
    def hits(true_classes, sampled):
        # A class sampled more than once is a hit at its last position only (as TF's kernel).
        position = {c: j for j, c in enumerate(np.asarray(sampled).tolist())}
        indices, ids = [], []
        for i, row in enumerate(np.asarray(true_classes).tolist()):
            for c in row:
                if c in position:
                    indices.append(i)
                    ids.append(position[c])
        weights = np.full(len(indices), -np.finfo(np.float32).max, dtype=np.float32)
        return np.array(indices, dtype=np.int32), np.array(ids, dtype=np.int64), weights
    return hits


def _sampler(op_type, true_classes, num_true, num_sampled, unique, range_max, seed, name):
    true_classes = convert_to_tensor(true_classes, dtype=dtypes.int64, name="true_classes")
    op = apply_op(op_type, [true_classes], name=name or op_type, num_true=int(num_true),
                  num_sampled=int(num_sampled), unique=bool(unique), range_max=int(range_max), **_seed_attrs(seed))
    return tuple(op.outputs)


def log_uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None):
    """(sampled_candidates, true_expected_count, sampled_expected_count) from the log-uniform distribution."""
    return _sampler("LogUniformCandidateSampler", true_classes, num_true, num_sampled, unique, range_max, seed, name)


def uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None):
    """(sampled_candidates, true_expected_count, sampled_expected_count), classes equally likely."""
    return _sampler("UniformCandidateSampler", true_classes, num_true, num_sampled, unique, range_max, seed, name)


def compute_accidental_hits(true_classes, sampled_candidates, num_true, seed=None, name=None):
    """(indices, ids, weights): where a sampled candidate is one of its row's true classes."""
    true_classes = convert_to_tensor(true_classes, dtype=dtypes.int64)
    op = apply_op("ComputeAccidentalHits", [true_classes, sampled_candidates], name=name or "ComputeAccidentalHits",
                  num_true=int(num_true), **_seed_attrs(seed))
    return tuple(op.outputs)
