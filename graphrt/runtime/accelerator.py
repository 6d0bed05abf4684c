"""Accelerator devices: a Device driven by a StreamExecutor (SIM and GPU).

`ConfigProto(device_count={"CPU": 1, "SIM": 2})` gives a session
`/device:SIM:0` and `/device:SIM:1`: simulated accelerators, each with its
own memory arena (BFC allocator) and its own compute, h2d, d2h and d2d
streams, configured by `ConfigProto.sim_options` (graphrt.SimOptions).
`"GPU": n` gives GPU devices backed by the `cuda` platform (cupy) where
cupy and a GPU exist.

Each session owns its devices' executors (`Platform.create_executor`, not
the platform's shared cache): sessions never share an arena, and closing a
session shuts its devices' streams down and frees their memory.

GPU devices follow TF: `device_count` is an upper bound, so on a machine
without cupy or without a GPU (or with fewer GPUs than asked for) the
missing GPU devices are simply absent. Ops pinned to one of them then fail
placement with the placer's error, which lists the devices that exist (or
move to another device under allow_soft_placement).

Importing this module registers the SIM and GPU device factories; the
device kernels (device_kernels.py) are registered when a device is made.
"""
from .. import logging
from ..executor import CudaOptions, SimOptions, get_platform
from ..framework import device_spec
from ..transfer import get_transfer_manager
from .device import Device
from .device_factory import register_device_factory
from .device_kernels import register_device_kernels


class AcceleratorDevice(Device):
    """A device whose kernels and copies run on a StreamExecutor's streams.

    Attributes:
        executor: the StreamExecutor (one per device ordinal, owned by this device).
        transfer_manager: the TransferManager of the executor's platform.
        xp: the array module of its kernels (numpy on sim, cupy on cuda).
        memory_limit_bytes: size of its memory arena.

    Example:
        >>> sess = tf.Session(config=tf.ConfigProto(device_count={"SIM": 1}))
        >>> dev = sess.device("/job:localhost/replica:0/task:0/device:SIM:0")
        >>> dev.executor, dev.allocator_stats()
    """

    def __init__(self, name, executor, incarnation=None):
        super().__init__(name, incarnation)
        self.executor = executor
        self.transfer_manager = get_transfer_manager(executor)
        self.xp = executor.array_module
        self.memory_limit_bytes = getattr(executor.options, "memory_bytes", None) or 0
        # How a kernel's or copy's `done` is called on a stream thread: the dataflow executor hands
        # its own (graph_executor.run_device_callback, which runs the woken loops right there) when
        # it is built for this device; until then `done` is simply called.
        self.completion_hook = None

    def complete(self, done, *args):
        """Calls an asynchronous kernel's `done(*args)` on this stream thread, through the hook."""
        hook = self.completion_hook
        if hook is None:
            done(*args)
        else:
            hook(self, done, *args)

    @property
    def streams(self):
        """DeviceStreams(compute, h2d, d2h, d2d) of the executor."""
        return self.executor.streams

    def allocator_stats(self):
        """AllocatorStats of the device's BFC allocator."""
        return self.executor.allocator_stats()

    def allocator_summary(self):
        """The BFC allocator's arena summary (bins, chunks, occupancy map)."""
        return self.executor.allocator.summary()

    def _new_infeed(self):
        return self.transfer_manager.infeed(self.executor)  # batches copied to the device as they are put

    def synchronize(self, timeout=None):
        """Waits until every stream of the device has drained."""
        return self.executor.synchronize_all_activity(timeout)

    def shutdown(self):
        super().shutdown()  # drops the variables first: their device buffers go back to the arena
        self.executor.shutdown()

    def __repr__(self):
        return f"<AcceleratorDevice {self.name} on {self.executor.name} incarnation={self.incarnation:016x}>"


def sim_options(config):
    """ConfigProto.sim_options as a SimOptions (it may have been set to a dict after construction)."""
    options = getattr(config, "sim_options", None)
    if options is None:
        return SimOptions()
    if isinstance(options, dict):
        return SimOptions.from_mapping(options)
    return options


def _ordinal(full_name):
    return device_spec.parse_full_name(full_name).device_index


def create_sim_device(full_name, config):
    """A SIM device with a fresh `sim` executor configured from ConfigProto.sim_options."""
    executor = get_platform("sim").create_executor(_ordinal(full_name), sim_options(config))
    register_device_kernels("SIM", "CPU")
    return AcceleratorDevice(full_name, executor)


def create_gpu_device(full_name, config):
    """A GPU device on the `cuda` platform, or None (absent, as in TF) without cupy or that GPU."""
    platform = get_platform("cuda")
    ordinal = _ordinal(full_name)
    reason = platform.unavailable_reason()
    if reason is None and ordinal >= platform.device_count():
        reason = f"only {platform.device_count()} GPU(s) visible"
    if reason is not None:
        logging.info("Not creating %s: %s", full_name, reason)
        return None
    gpu_options = getattr(config, "gpu_options", None)
    fraction = getattr(gpu_options, "per_process_gpu_memory_fraction", 0.0) or CudaOptions.memory_fraction
    executor = platform.create_executor(ordinal, CudaOptions(memory_fraction=fraction))
    register_device_kernels("GPU", "GPU")
    return AcceleratorDevice(full_name, executor)


register_device_factory("SIM", create_sim_device)
register_device_factory("GPU", create_gpu_device)
