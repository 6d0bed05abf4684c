"""`tf.contrib`: the parts of TF1's contrib that graphrt has (`tf.contrib.rnn`)."""
from . import rnn  # noqa: F401
