"""`tf.contrib`: the parts of TF1's contrib that graphrt has (`tf.contrib.rnn`,
`tf.contrib.data`, TF 1.3's name of `tf.data`)."""
from . import rnn  # noqa: F401
from .. import data  # noqa: F401 - tf.contrib.data
