"""`tf.contrib`: the parts of TF1's contrib that graphrt has (`tf.contrib.rnn`, `tf.contrib.nccl`,
`tf.contrib.layers.recompute_grad`, `tf.contrib.memory_stats`)."""
from . import layers, memory_stats, nccl, rnn  # noqa: F401
