"""The all-classes and fixed-unigram candidate samplers (TF's
AllCandidateSampler and FixedUnigramCandidateSampler).

Fixed unigram draws class c with probability proportional to
unigram[c] ** distortion, the first `num_reserved_ids` classes never; the
unigrams come from the `unigrams` attr or from `vocab_file`, a CSV whose last
field of each line is the count. Expected counts follow `ops.py`'s sampler.
"""
import numpy as np

from .. import errors
from ..framework import dtypes
from ..framework.op_builder import apply_op, convert_to_tensor
from ..framework.registry import REQUIRED, not_differentiable, register_kernel, register_op
from ..ops.random_ops import _seed_attrs
from .ops import _SAMPLER_ATTRS, _sampler_kernel, _sampler_shape

_OUTPUTS = ["sampled_candidates: int64", "true_expected_count: float32", "sampled_expected_count: float32"]
register_op("AllCandidateSampler", ["true_classes: int64"], _OUTPUTS,
            attrs={"num_true": REQUIRED, "num_sampled": REQUIRED, "unique": REQUIRED, "seed": 0, "seed2": 0},
            shape_fn=_sampler_shape, is_stateful=True)
register_op("FixedUnigramCandidateSampler", ["true_classes: int64"], _OUTPUTS,
            attrs={**_SAMPLER_ATTRS, "vocab_file": "", "distortion": 1.0, "num_reserved_ids": 0, "num_shards": 1,
                   "shard": 0, "unigrams": []},
            shape_fn=_sampler_shape, is_stateful=True)
not_differentiable("AllCandidateSampler")
not_differentiable("FixedUnigramCandidateSampler")


@register_kernel("AllCandidateSampler", ("CPU",))
def _all_candidate_sampler(ctx):
    n = ctx.attr("num_sampled")

    def sample(true_classes):
        true_classes = np.asarray(true_classes)
        return (np.arange(n, dtype=np.int64), np.ones(true_classes.shape, np.float32), np.ones(n, np.float32))
    return sample


def _unigrams(ctx):
    if ctx.attr("num_shards") != 1:
        raise errors.UnimplementedError("FixedUnigramCandidateSampler: num_shards > 1 is not supported",
                                        node=ctx.name)
    counts = list(ctx.attr("unigrams"))
    path = ctx.attr("vocab_file")
    if path:
        with open(path, encoding="utf-8") as f:
            counts = [float(line.rstrip("\n").split(",")[-1]) for line in f if line.strip()]
    weights = np.concatenate([np.zeros(ctx.attr("num_reserved_ids")),
                              np.power(np.asarray(counts, np.float64), ctx.attr("distortion"))])
    range_max = ctx.attr("range_max")
    if len(weights) != range_max:
        raise errors.InvalidArgumentError(f"range_max {range_max} must equal num_reserved_ids plus the number of "
                                          f"unigrams ({len(weights)})", node=ctx.name)
    return weights / weights.sum()


@register_kernel("FixedUnigramCandidateSampler", ("CPU",))
def _fixed_unigram_sampler(ctx):
    probs = _unigrams(ctx)
    return _sampler_kernel(lambda range_max: probs)(ctx)


def all_candidate_sampler(true_classes, num_true, num_sampled, unique, seed=None, name=None):
    """Every class in [0, num_sampled), each with expected count 1 (for tests of sampled losses)."""
    true_classes = convert_to_tensor(true_classes, dtype=dtypes.int64, name="true_classes")
    return tuple(apply_op("AllCandidateSampler", [true_classes], name=name or "AllCandidateSampler",
                          num_true=int(num_true), num_sampled=int(num_sampled), unique=bool(unique),
                          **_seed_attrs(seed)).outputs)


def fixed_unigram_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, vocab_file="",
                                    distortion=1.0, num_reserved_ids=0, num_shards=1, shard=0, unigrams=(),
                                    seed=None, name=None):
    """Classes drawn in proportion to unigram ** distortion (counts from `unigrams` or `vocab_file`)."""
    true_classes = convert_to_tensor(true_classes, dtype=dtypes.int64, name="true_classes")
    return tuple(apply_op("FixedUnigramCandidateSampler", [true_classes], name=name or "FixedUnigramCandidateSampler",
                          num_true=int(num_true), num_sampled=int(num_sampled), unique=bool(unique),
                          range_max=int(range_max), vocab_file=vocab_file, distortion=float(distortion),
                          num_reserved_ids=int(num_reserved_ids), num_shards=int(num_shards), shard=int(shard),
                          unigrams=[float(u) for u in unigrams], **_seed_attrs(seed)).outputs)
