"""`tf.lookup.experimental`."""
from .tables import MutableHashTable  # noqa: F401
