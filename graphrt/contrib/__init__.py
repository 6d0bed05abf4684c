"""`tf.contrib`: the parts of TF1's contrib that graphrt has (`tf.contrib.rnn`, `tf.contrib.nccl`,
`tf.contrib.layers.recompute_grad`, `tf.contrib.memory_stats`, the infeed ops of `tf.contrib.tpu`,
`tf.contrib.lookup`, and `tf.contrib.data`, TF 1.3's name of `tf.data`)."""
from . import layers, lookup, memory_stats, nccl, rnn, tpu  # noqa: F401
from .. import data  # noqa: F401 - tf.contrib.data
