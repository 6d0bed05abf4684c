"""`tf.train`: optimizers, Saver, global step, and the cluster (ClusterSpec, Server)."""
from .optimizer import (AdagradOptimizer, AdamOptimizer, GradientDescentOptimizer, MomentumOptimizer,  # noqa: F401
                        Optimizer, RMSPropOptimizer)
from .learning_rate_decay import (cosine_decay, exponential_decay, inverse_time_decay,  # noqa: F401
                                  natural_exp_decay, piecewise_constant, polynomial_decay)
from .loops import repeat  # noqa: F401
from .saver import Saver, checkpoint_exists, latest_checkpoint  # noqa: F401
from .training_util import (create_global_step, get_global_step, get_or_create_global_step,  # noqa: F401
                            global_step)


def write_graph(graph_or_graph_def, logdir, name, as_text=True):
    """Writes the graph as GraphDef JSON to logdir/name; returns the path."""
    import os
    graph_def = graph_or_graph_def.as_graph_def() if hasattr(graph_or_graph_def, "as_graph_def") else \
        graph_or_graph_def
    os.makedirs(logdir, exist_ok=True)
    path = os.path.join(logdir, name)
    with open(path, "w") as f:
        f.write(graph_def.to_json(indent=1 if as_text else None))
    return path


def __getattr__(name):
    # The distributed pieces load on first use, so importing graphrt never imports zmq.
    if name in ("ClusterSpec", "Server", "replica_device_setter"):
        try:
            from ..distributed import cluster
        except ImportError as e:  # hasattr() must see an absent attribute, not an import failure
            raise AttributeError(f"graphrt.train.{name} is unavailable: {e}") from e
        return getattr(cluster, name)
    raise AttributeError(f"module 'graphrt.train' has no attribute '{name}'")
