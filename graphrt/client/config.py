"""ConfigProto, RunOptions, RunMetadata: TF's protos as small classes.

Unknown fields are an error, as setting a field a proto lacks is in TF.

`ConfigProto.sim_options` configures the simulated accelerators (`SIM`
devices). It is the executor layer's `SimOptions` (also `graphrt.SimOptions`),
so there is one spelling of every option; a dict of the same field names
is accepted too:

    ConfigProto(device_count={"SIM": 2},
                sim_options=SimOptions(memory_bytes=64 << 20, copy_bandwidth=2e9, copy_latency=1e-5))
    ConfigProto(device_count={"SIM": 2}, sim_options={"memory_bytes": 64 << 20})
"""
from .. import errors
from ..executor.platforms.sim import SimOptions
from ..runtime.step_stats import StepStats


class _Message:
    _fields = {}

    def __init__(self, **kwargs):
        for name, default in self._fields.items():
            setattr(self, name, default() if callable(default) else default)
        for name, value in kwargs.items():
            if name not in self._fields:
                raise ValueError(f'Protocol message {type(self).__name__} has no "{name}" field.')
            setattr(self, name, value)

    def __setattr__(self, name, value):
        if name not in self._fields and not name.startswith("_"):
            raise AttributeError(f'Assignment not allowed (no field "{name}" in protocol message '
                                 f'{type(self).__name__}).')
        object.__setattr__(self, name, value)

    def __repr__(self):
        fields = ", ".join(f"{k}={getattr(self, k)!r}" for k, d in self._fields.items()
                           if getattr(self, k) != (d() if callable(d) else d))
        return f"{type(self).__name__}({fields})"


class GPUOptions(_Message):
    _fields = {"allow_growth": False, "per_process_gpu_memory_fraction": 0.0, "visible_device_list": ""}


class GraphOptions(_Message):
    _fields = {"enable_bfloat16_sendrecv": False, "build_cost_model": 0, "place_pruned_graph": False}


class ClusterDef(_Message):
    _fields = {"job": list}


class ConfigProto(_Message):
    _fields = {
        "device_count": dict,
        "intra_op_parallelism_threads": 0,
        "inter_op_parallelism_threads": 0,
        "use_per_session_threads": False,
        "allow_soft_placement": False,
        "log_device_placement": False,
        "operation_timeout_in_ms": 0,
        "gpu_options": GPUOptions,
        "graph_options": GraphOptions,
        "sim_options": SimOptions,
        "device_filters": list,
        "isolate_session_state": False,
        "cluster_def": None,
        # distributed runtime (graphrt): CURVE key files and message size limit
        "curve_server_public_key": "",
        "curve_client_secret_key": "",
        "curve_client_public_key": "",
        "max_message_bytes": 1 << 30,
    }

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        if isinstance(self.sim_options, dict):
            object.__setattr__(self, "sim_options", SimOptions.from_mapping(self.sim_options))
        elif not isinstance(self.sim_options, SimOptions):
            raise errors.InvalidArgumentError(
                f"ConfigProto.sim_options takes a graphrt.SimOptions or a dict of its fields, got "
                f"{type(self.sim_options).__name__}")
        if isinstance(self.gpu_options, dict):
            object.__setattr__(self, "gpu_options", GPUOptions(**self.gpu_options))


class RunOptions(_Message):
    NO_TRACE = 0
    SOFTWARE_TRACE = 1
    HARDWARE_TRACE = 2
    FULL_TRACE = 3

    class TraceLevel:
        NO_TRACE = 0
        SOFTWARE_TRACE = 1
        HARDWARE_TRACE = 2
        FULL_TRACE = 3

    _fields = {"trace_level": 0, "timeout_in_ms": 0, "inter_op_thread_pool": 0, "output_partition_graphs": False,
               "report_tensor_allocations_upon_oom": False, "debug_options": None}


class RunMetadata(_Message):
    _fields = {"step_stats": StepStats, "partition_graphs": list, "cost_graph": None, "function_graphs": list}

    def _reset(self):
        object.__setattr__(self, "step_stats", StepStats())
        object.__setattr__(self, "partition_graphs", [])

    def to_proto(self):
        """TensorFlow's RunMetadata message (config.proto) with these step stats and partition graphs."""
        from .run_metadata import to_proto
        return to_proto(self)

    def SerializeToString(self):  # noqa: N802 - the protobuf name
        return self.to_proto().SerializeToString(deterministic=True)
