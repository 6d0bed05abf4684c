"""The ClusterResolver interface and SimpleClusterResolver."""


class ClusterResolver:
    """cluster_spec(), master(), task_type, task_id, rpc_layer (TF's interface)."""

    task_type = None
    task_id = None
    rpc_layer = "zmq"

    def cluster_spec(self):
        raise NotImplementedError("cluster_spec is abstract")

    def master(self, task_type=None, task_id=None, rpc_layer=None):
        """'zmq://host:port' of the task (by default this one), '' when there is no cluster."""
        task_type = self.task_type if task_type is None else task_type
        task_id = self.task_id if task_id is None else task_id
        spec = self.cluster_spec()
        if task_type is None or task_id is None or not spec:
            return ""
        if task_type not in spec.jobs:
            raise ValueError(f"Task type {task_type!r} is not in the cluster, whose jobs are {spec.jobs}")
        if task_id not in spec.task_indices(task_type):
            raise ValueError(f"Task /job:{task_type}/task:{task_id} is not in the cluster: job {task_type!r} has "
                             f"tasks {spec.task_indices(task_type)}")
        return f"{rpc_layer or self.rpc_layer or 'zmq'}://{spec.task_address(task_type, task_id)}"

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None):
        return {}

    @property
    def environment(self):
        return ""

    def __repr__(self):
        return f"<{type(self).__name__} task {self.task_type}:{self.task_id} {self.cluster_spec().as_dict()}>"


class SimpleClusterResolver(ClusterResolver):
    def __init__(self, cluster_spec, master="", task_type=None, task_id=None, environment="", rpc_layer="zmq"):
        from ...distributed.cluster import ClusterSpec
        self._spec = ClusterSpec(cluster_spec)
        self._master = master
        self.task_type = task_type
        self.task_id = task_id
        self._environment = environment
        self.rpc_layer = rpc_layer

    def cluster_spec(self):
        return self._spec

    def master(self, task_type=None, task_id=None, rpc_layer=None):
        if task_type is None and task_id is None and self._master:
            return self._master
        return super().master(task_type, task_id, rpc_layer)

    @property
    def environment(self):
        return self._environment
