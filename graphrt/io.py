"""`tf.io`: the file side of the API (gfile, write_graph, event-file records)."""
from . import gfile  # noqa: F401
from .summary.reader import tf_record_iterator  # noqa: F401
from .train import write_graph  # noqa: F401
