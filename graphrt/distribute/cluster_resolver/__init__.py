"""`tf.distribute.cluster_resolver`: the cluster from the scheduler's environment.

    TFConfigClusterResolver   the TF_CONFIG variable (Kubernetes, Cloud ML, any launcher)
    SlurmClusterResolver      the SLURM_* variables of an `srun` step
    SimpleClusterResolver     a ClusterSpec given directly

Every resolver gives `cluster_spec()`, `task_type`, `task_id` and
`master()` ('zmq://host:port', graphrt's session target). Bad input (a
TF_CONFIG that is not JSON, a task missing from the cluster, an index out of
range, a Slurm variable missing) raises ValueError naming the variable or
the task.
"""
from .base import ClusterResolver, SimpleClusterResolver  # noqa: F401
from .tfconfig import TFConfigClusterResolver  # noqa: F401
from .slurm import SlurmClusterResolver, expand_hostlist, expand_tasks_per_node  # noqa: F401
