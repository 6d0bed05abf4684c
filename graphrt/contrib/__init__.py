"""`tf.contrib`: the parts of TF1's contrib that graphrt has (`tf.contrib.rnn`, `tf.contrib.nccl`)."""
from . import nccl, rnn  # noqa: F401
