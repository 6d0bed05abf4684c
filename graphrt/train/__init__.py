"""`tf.train`: optimizers, Saver, global step, and the cluster (ClusterSpec, Server)."""
from .optimizer import (AdagradOptimizer, AdamOptimizer, GradientDescentOptimizer, MomentumOptimizer,  # noqa: F401
                        Optimizer, RMSPropOptimizer)
from .adadelta import AdadeltaOptimizer  # noqa: F401
from .adagrad_da import AdagradDAOptimizer  # noqa: F401
from .ftrl import FtrlOptimizer  # noqa: F401
from .proximal_adagrad import ProximalAdagradOptimizer  # noqa: F401
from .proximal_gradient_descent import ProximalGradientDescentOptimizer  # noqa: F401
from .moving_averages import ExponentialMovingAverage  # noqa: F401
from .learning_rate_decay import (cosine_decay, exponential_decay, inverse_time_decay,  # noqa: F401
                                  natural_exp_decay, piecewise_constant, polynomial_decay)
from .learning_rate_decay import piecewise_constant as piecewise_constant_decay  # noqa: F401
from .cosine_decays import cosine_decay_restarts, linear_cosine_decay, noisy_linear_cosine_decay  # noqa: F401
from .checkpoint_utils import (basic_train_loop, checkpoints_iterator, get_checkpoint_mtimes,  # noqa: F401
                               init_from_checkpoint)
from .loops import repeat  # noqa: F401
from .saver import Saver  # noqa: F401
from . import checkpoint_ops  # noqa: F401 - registers SaveV2 / RestoreV2
from .checkpoint_state import (checkpoint_exists, get_checkpoint_state, latest_checkpoint,  # noqa: F401
                               update_checkpoint_state)
from .checkpoint_reader import (NewCheckpointReader, list_variables, load_checkpoint,  # noqa: F401
                                load_variable)
from .meta_graph import export_meta_graph, import_meta_graph  # noqa: F401
from tensorboard.compat.proto.saver_pb2 import SaverDef  # noqa: F401, E402
from ..records.example_pb2 import (BytesList, Example, Feature, FeatureList, FeatureLists, Features,  # noqa: F401
                                   FloatList, Int64List, SequenceExample)
from .training_util import (assert_global_step, create_global_step, get_global_step,  # noqa: F401
                            get_or_create_global_step, global_step)
from ..data_flow import (Coordinator, LooperThread, QueueRunner, add_queue_runner, batch, batch_join,  # noqa: F401
                         input_producer, limit_epochs, match_filenames_once, queue_runner, range_input_producer, shuffle_batch,
                         shuffle_batch_join, slice_input_producer, start_queue_runners, string_input_producer)
from .monitored import (CheckpointSaverHook, CheckpointSaverListener, ChiefSessionCreator, FeedFnHook,  # noqa: F401, E402
                        FinalOpsHook, LoggingTensorHook, MonitoredSession, MonitoredTrainingSession,
                        NanLossDuringTrainingError, NanTensorHook, Scaffold, SecondOrStepTimer, SessionCreator,
                        SessionManager, SessionRunArgs, SessionRunContext, SessionRunHook, SessionRunValues,
                        SingularMonitoredSession, StepCounterHook, StopAtStepHook, SummarySaverHook,
                        SummaryWriterCache, WorkerSessionCreator)
from .sync_replicas import SyncReplicasOptimizer  # noqa: F401, E402
from .staleness import StalenessBoundHook  # noqa: F401, E402 - graphrt's SSP (no TF equivalent)
from .supervisor import Supervisor  # noqa: F401, E402
from .conditional_batching import (maybe_batch, maybe_batch_join, maybe_shuffle_batch,  # noqa: F401, E402
                                  maybe_shuffle_batch_join)
from .checkpoint_management import generate_checkpoint_state_proto, remove_checkpoint  # noqa: F401, E402
from .waiter_profiler_hooks import GlobalStepWaiterHook, ProfilerHook  # noqa: F401, E402
from .warm_starting import VocabInfo, warm_start  # noqa: F401, E402
from tensorboard.compat.proto.cluster_pb2 import ClusterDef, JobDef  # noqa: F401, E402 - no ServerDef is shipped


def write_graph(graph_or_graph_def, logdir, name, as_text=True):
    """Writes TensorFlow's GraphDef to logdir/name, in protobuf text format (`as_text`,
    the `.pbtxt` TF writes) or binary (`.pb`); returns the path. Written atomically."""
    import os
    from ..framework import graph_proto
    graph_def = graph_or_graph_def.as_graph_def() if hasattr(graph_or_graph_def, "as_graph_def") else \
        graph_or_graph_def
    proto = graph_def if isinstance(graph_def, graph_proto.GraphDefProto) else \
        graph_proto.to_proto(graph_proto.as_graph_def(graph_def))
    data = graph_proto.to_text(proto).encode() if as_text else proto.SerializeToString(deterministic=True)
    os.makedirs(logdir, exist_ok=True)
    path = os.path.join(logdir, name)
    with open(path + ".tmp", "wb") as f:
        f.write(data)
    os.replace(path + ".tmp", path)
    return path


def summary_iterator(path):
    """The Event protobufs of a TensorBoard event file (see graphrt/summary/reader.py)."""
    from ..summary.reader import summary_iterator as iterate
    return iterate(path)


def __getattr__(name):
    # The distributed pieces load on first use, so importing graphrt never imports zmq.
    if name in ("ClusterSpec", "Server", "replica_device_setter"):
        try:
            from ..distributed import cluster
        except ImportError as e:  # hasattr() must see an absent attribute, not an import failure
            raise AttributeError(f"graphrt.train.{name} is unavailable: {e}") from e
        return getattr(cluster, name)
    raise AttributeError(f"module 'graphrt.train' has no attribute '{name}'")
