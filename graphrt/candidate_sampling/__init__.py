"""Sampled losses for large output vocabularies: candidate samplers and
`tf.nn.nce_loss` / `tf.nn.sampled_softmax_loss`. Importing registers the ops."""
from .losses import nce_loss, sampled_softmax_loss  # noqa: F401
from .ops import (compute_accidental_hits, log_uniform_candidate_sampler,  # noqa: F401
                  uniform_candidate_sampler)
from .unigram import all_candidate_sampler, fixed_unigram_candidate_sampler  # noqa: F401
