"""`tf.contrib.layers`: the part graphrt has (recompute_grad; the layers themselves are `tf.layers`)."""
from ..recompute import recompute_grad  # noqa: F401
