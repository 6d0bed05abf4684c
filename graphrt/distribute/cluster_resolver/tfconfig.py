"""TFConfigClusterResolver: TF_CONFIG = {"cluster": {job: [host:port, ...]},
"task": {"type": job, "index": i}, "rpc_layer": ..., "environment": ...}."""
import json
import os

from .base import ClusterResolver


def load_tf_config(environ=None):
    """TF_CONFIG as a dict ({} when unset or empty); ValueError naming TF_CONFIG if it is not a JSON object."""
    text = (environ if environ is not None else os.environ).get("TF_CONFIG", "")
    if not text.strip():
        return {}
    try:
        config = json.loads(text)
    except ValueError as e:
        raise ValueError(f"TF_CONFIG is not valid JSON ({e}): {text[:200]!r}") from None
    if not isinstance(config, dict):
        raise ValueError(f"TF_CONFIG must be a JSON object, got {type(config).__name__}: {text[:200]!r}")
    return config


class TFConfigClusterResolver(ClusterResolver):
    def __init__(self, task_type=None, task_id=None, rpc_layer=None, environment=None, environ=None):
        """`environ` (graphrt): a mapping read instead of os.environ (for tests and launchers)."""
        self._environ = environ
        config = load_tf_config(environ)
        task = config.get("task", {}) or {}
        if not isinstance(task, dict):
            raise ValueError(f"TF_CONFIG 'task' must be an object with 'type' and 'index', got {task!r}")
        self.task_type = task_type if task_type is not None else task.get("type")
        index = task_id if task_id is not None else task.get("index")
        if index is not None:
            try:
                index = int(index)
            except (TypeError, ValueError):
                raise ValueError(f"TF_CONFIG task index must be an integer, got {index!r}") from None
        self.task_id = index
        self.rpc_layer = rpc_layer or config.get("rpc_layer") or "zmq"
        self._environment = environment if environment is not None else config.get("environment", "")
        self._cluster = config.get("cluster", {}) or {}
        spec = self.cluster_spec()  # validates the cluster and the task now, not at first use
        if spec and self.task_type is not None:
            if self.task_type not in spec.jobs:
                raise ValueError(f"TF_CONFIG task type {self.task_type!r} is not a job of its cluster "
                                 f"{spec.jobs}")
            if self.task_id is not None and self.task_id not in spec.task_indices(self.task_type):
                raise ValueError(f"TF_CONFIG task index {self.task_id} is out of range for job {self.task_type!r} "
                                 f"(tasks {spec.task_indices(self.task_type)})")

    def cluster_spec(self):
        from ...distributed.cluster import ClusterSpec
        try:
            return ClusterSpec(self._cluster)
        except (TypeError, ValueError) as e:
            raise ValueError(f"TF_CONFIG 'cluster' is invalid: {e}") from None

    @property
    def environment(self):
        return self._environment
