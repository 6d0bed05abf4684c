"""`tf.train.ClusterSpec`, `tf.train.Server`, `tf.train.replica_device_setter`.

    cluster = tf.train.ClusterSpec({"worker": ["127.0.0.1:2222", "127.0.0.1:2223"]})
    server = tf.train.Server(cluster, job_name="worker", task_index=0)
    with tf.Session(server.target) as sess:   # 'zmq://127.0.0.1:2222'
        ...

A Server is one task of the cluster: its devices and the worker service on
a ZeroMQ ROUTER socket. It binds 127.0.0.1 unless given another
`bind_address` (the port is the one the cluster spec names for the task).
"""
import json
import os
import threading

from .. import errors

ZMQ_SCHEME = "zmq://"


class ClusterSpec:
    """Jobs -> task index -> "host:port".

    Accepts a dict {job: [address, ...]} or {job: {index: address}}, another
    ClusterSpec, or the path of a JSON file holding such a dict.
    """

    def __init__(self, cluster):
        if isinstance(cluster, ClusterSpec):
            jobs = {job: dict(tasks) for job, tasks in cluster._jobs.items()}
        else:
            if isinstance(cluster, (str, os.PathLike)):
                cluster = _load_json(cluster)
            if not isinstance(cluster, dict):
                raise TypeError(f"ClusterSpec needs a dict, a ClusterSpec or a JSON file, got {type(cluster)}")
            jobs = {}
            for job, tasks in cluster.items():
                if not isinstance(job, str) or not job or not (job[0].isalpha() and
                                                               job.replace("_", "a").isalnum()):
                    raise ValueError(f"Invalid job name {job!r}")
                if isinstance(tasks, (list, tuple)):
                    tasks = dict(enumerate(tasks))
                elif isinstance(tasks, dict):
                    tasks = {int(k): v for k, v in tasks.items()}
                else:
                    raise TypeError(f"Tasks of job {job!r} must be a list or a dict, got {type(tasks)}")
                for index, address in tasks.items():
                    if index < 0:
                        raise ValueError(f"Task index {index} of job {job!r} is negative")
                    _split_address(address, f"/job:{job}/task:{index}")
                jobs[job] = dict(sorted(tasks.items()))
        self._jobs = jobs

    @classmethod
    def from_json_file(cls, path):
        return cls(_load_json(path))

    @property
    def jobs(self):
        return sorted(self._jobs)

    def num_tasks(self, job_name):
        return len(self._tasks(job_name))

    def task_indices(self, job_name):
        return sorted(self._tasks(job_name))

    def task_address(self, job_name, task_index):
        tasks = self._tasks(job_name)
        if task_index not in tasks:
            raise ValueError(f"No task with index {task_index} in job {job_name!r}")
        return tasks[task_index]

    def job_tasks(self, job_name):
        """Addresses of the job's tasks, indexed by task (None for a gap)."""
        tasks = self._tasks(job_name)
        return [tasks.get(i) for i in range(max(tasks) + 1)] if tasks else []

    def tasks(self):
        """Every (job, index, address), jobs sorted by name."""
        return [(job, i, a) for job in self.jobs for i, a in sorted(self._jobs[job].items())]

    def as_dict(self):
        out = {}
        for job, tasks in self._jobs.items():
            indices = sorted(tasks)
            out[job] = [tasks[i] for i in indices] if indices == list(range(len(indices))) else dict(tasks)
        return out

    def as_json(self):
        return json.dumps({job: {str(i): a for i, a in tasks.items()} for job, tasks in self._jobs.items()},
                          sort_keys=True)

    def task_name(self, job_name, task_index):
        self.task_address(job_name, task_index)
        return f"/job:{job_name}/replica:0/task:{task_index}"

    def address_of_task(self, task_prefix):
        """'tcp://host:port' of '/job:j/replica:0/task:t', or None if the cluster has no such task."""
        from ..framework.device_spec import DeviceSpec
        try:
            spec = DeviceSpec.from_string(task_prefix)
        except (ValueError, TypeError):
            return None
        address = self._jobs.get(spec.job, {}).get(spec.task)
        return None if address is None or spec.replica not in (None, 0) else tcp_endpoint(address)

    def _tasks(self, job_name):
        if job_name not in self._jobs:
            raise ValueError(f"No such job in cluster: {job_name!r}")
        return self._jobs[job_name]

    def __eq__(self, other):
        return isinstance(other, ClusterSpec) and self._jobs == other._jobs

    def __bool__(self):
        return bool(self._jobs)

    def __repr__(self):
        return f"ClusterSpec({self.as_dict()!r})"


def _load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise ValueError(f"Cannot read cluster spec {path}: {e}") from None


def _split_address(address, what="address"):
    if not isinstance(address, str):
        raise TypeError(f"{what}: address must be a 'host:port' string, got {address!r}")
    text = address[len(ZMQ_SCHEME):] if address.startswith(ZMQ_SCHEME) else address
    text = text[len("tcp://"):] if text.startswith("tcp://") else text
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) < 65536:
        raise ValueError(f"{what}: address {address!r} is not 'host:port'")
    return host.strip("[]"), int(port)


def tcp_endpoint(address):
    host, port = _split_address(address)
    return f"tcp://{host}:{port}"


def target_endpoint(target):
    """'zmq://host:port' (or 'host:port', 'tcp://host:port') -> 'tcp://host:port'."""
    if not isinstance(target, str) or not target:
        raise errors.InvalidArgumentError(f"A session target must be 'zmq://host:port', got {target!r}")
    if "://" in target and not target.startswith((ZMQ_SCHEME, "tcp://")):
        raise errors.InvalidArgumentError(
            f"Unsupported session target {target!r}: graphrt servers speak 'zmq://host:port' "
            f"(grpc:// targets are TensorFlow's)")
    try:
        return tcp_endpoint(target)
    except (ValueError, TypeError) as e:
        raise errors.InvalidArgumentError(f"Bad session target {target!r}: {e}") from None


class Server:
    """One task of a cluster: its devices and its worker service.

    `Server(cluster, job_name, task_index, config=None, start=True,
    bind_address="127.0.0.1", curve_secret_key=None, curve_authorized=None)`;
    `cluster` may also be a dict or JSON path. `target` is 'zmq://host:port'.
    """

    def __init__(self, server_or_cluster_def, job_name=None, task_index=None, protocol=None, config=None,
                 start=True, bind_address="127.0.0.1", curve_secret_key=None, curve_authorized=None):
        if protocol not in (None, "zmq"):
            raise ValueError(f"Unsupported protocol {protocol!r}: graphrt servers speak 'zmq'")
        cluster = ClusterSpec(server_or_cluster_def)
        if job_name is None:
            if len(cluster.jobs) != 1:
                raise ValueError(f"job_name must be given for a cluster with jobs {cluster.jobs}")
            job_name = cluster.jobs[0]
        if task_index is None:
            indices = cluster.task_indices(job_name)
            if len(indices) != 1:
                raise ValueError(f"task_index must be given: job {job_name!r} has tasks {indices}")
            task_index = indices[0]
        address = cluster.task_address(job_name, int(task_index))
        self.cluster_spec = cluster
        self.job_name = job_name
        self.task_index = int(task_index)
        self.config = config
        self._host, self._port = _split_address(address)
        self._bind_address = bind_address
        self._curve_secret_key = curve_secret_key
        self._curve_authorized = curve_authorized
        self._service = None
        self.failure = None    # set if the serving loop died (join() then returns)
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        if start:
            self.start()

    @classmethod
    def create_local_server(cls, config=None, start=True):
        """A one-task cluster ('localhost' job) on a free port of 127.0.0.1."""
        port = free_port()
        return cls({"localhost": [f"127.0.0.1:{port}"]}, "localhost", 0, config=config, start=start)

    @property
    def target(self):
        return f"{ZMQ_SCHEME}{self._host}:{self._port}"

    @property
    def task_name(self):
        return f"/job:{self.job_name}/replica:0/task:{self.task_index}"

    @property
    def server_def(self):
        return {"cluster": self.cluster_spec.as_dict(), "job_name": self.job_name, "task_index": self.task_index,
                "protocol": "zmq"}

    @property
    def service(self):
        return self._service

    def start(self):
        from .worker import WorkerService
        with self._lock:
            if self._service is not None:
                return
            if self._stopped.is_set():
                raise errors.FailedPreconditionError("A stopped Server cannot be restarted; create a new one")
            self._service = WorkerService(self.cluster_spec, self.job_name, self.task_index, self.config,
                                          bind_address=self._bind_address,
                                          curve_secret_key=self._curve_secret_key,
                                          curve_authorized=self._curve_authorized, port=self._port,
                                          on_fatal=self._service_died)

    def _service_died(self, error):
        """The worker's serving loop died: the server is stopped and `failure` says why."""
        self.failure = error
        self._stopped.set()
    def join(self, timeout=None):
        """Blocks until the server is stopped (by `stop()` or a signal handler)."""
        if timeout is None:
            while not self._stopped.wait(0.5):
                pass
            return True
        return self._stopped.wait(timeout)

    def stop(self):
        with self._lock:
            service, self._service = self._service, None
            self._stopped.set()
        if service is not None:
            service.stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def __repr__(self):
        state = "stopped" if self._stopped.is_set() else ("running" if self._service else "not started")
        return f"<tf.train.Server {self.task_name} {self.target} {state}>"


def create_local_cluster(num_workers, num_ps=0, protocol="zmq", worker_config=None, ps_config=None):
    """In-process servers for a 'worker' (and 'ps') cluster on free ports of 127.0.0.1,
    as TF's `tf.test.create_local_cluster`. Returns (workers, ps_servers)."""
    import zmq
    for attempt in range(3):
        ports = []
        while len(ports) < num_workers + num_ps:
            port = free_port()
            if port not in ports:
                ports.append(port)
        spec = {"worker": [f"127.0.0.1:{p}" for p in ports[:num_workers]]}
        if num_ps:
            spec["ps"] = [f"127.0.0.1:{p}" for p in ports[num_workers:]]
        started = []
        try:
            for i in range(num_workers):
                started.append(Server(spec, "worker", i, protocol=protocol, config=worker_config))
            for i in range(num_ps):
                started.append(Server(spec, "ps", i, protocol=protocol, config=ps_config))
        except (zmq.ZMQError, errors.UnavailableError):
            for server in started:
                server.stop()
            if attempt == 2:
                raise
            continue
        return started[:num_workers], started[num_workers:]


def free_port(host="127.0.0.1"):
    """A TCP port that was free a moment ago (for tests and local servers).

    It is picked below the kernel's ephemeral range when it can be, so the
    port is not also handed out as the local end of some outgoing
    connection before the server binds it."""
    import random
    import socket
    low = 32768
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        pass
    candidates = [random.randrange(10000, low) for _ in range(20)] if low > 11000 else []
    for port in candidates + [0]:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind((host, port))
            except OSError:
                continue
            return s.getsockname()[1]
    raise OSError("no free TCP port")


# -- replica_device_setter -------------------------------------------------------------

_VARIABLE_OPS = frozenset({"Variable", "VariableV2", "VarHandleOp", "AutoReloadVariable", "MutableHashTable",
                           "MutableHashTableV2", "MutableHashTableOfTensors", "MutableDenseHashTable"})


def replica_device_setter(ps_tasks=0, ps_device="/job:ps", worker_device="/job:worker", merge_devices=True,
                          cluster=None, ps_ops=None, ps_strategy=None):
    """TF1's device function: variables round-robin over the ps tasks, other ops
    on `worker_device`. Fields an op already requests win (merge_devices)."""
    from ..framework.device_spec import DeviceSpec
    if cluster is not None:
        spec = cluster if isinstance(cluster, ClusterSpec) else ClusterSpec(cluster)
        ps_job = DeviceSpec.from_string(ps_device).job or "ps"
        ps_tasks = spec.num_tasks(ps_job) if ps_job in spec.jobs else 0
    if ps_tasks == 0:
        return None
    if not merge_devices:
        raise NotImplementedError("replica_device_setter(merge_devices=False) is not supported")
    ps_ops = frozenset(ps_ops) if ps_ops is not None else _VARIABLE_OPS
    strategy = ps_strategy or _RoundRobin(ps_tasks)
    ps_spec = DeviceSpec.from_string(ps_device or "")
    worker_spec = DeviceSpec.from_string(worker_device or "")

    def device_function(op):
        current = DeviceSpec.from_string(op.device or "")
        if op.type in ps_ops and (current.job is None or current.job == ps_spec.job):
            target = ps_spec.copy()
            if target.job is not None:
                target.task = strategy(op)
            return target.make_merged_spec(current).to_string()
        return worker_spec.make_merged_spec(current).to_string()

    return device_function


class _RoundRobin:
    def __init__(self, num_tasks):
        self._num_tasks = num_tasks
        self._next = 0

    def __call__(self, op):
        task = self._next
        self._next = (self._next + 1) % self._num_tasks
        return task
