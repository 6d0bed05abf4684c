"""`tf.data.experimental`: the names TF1 programs use from it."""
from .dataset_ops import AUTOTUNE  # noqa: F401
