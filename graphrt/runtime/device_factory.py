"""Creating devices by type: CPU devices here, accelerators (SIM, GPU)
registered by their own modules so the host path never imports them."""
from .. import errors
from ..executor import host_malloc
from .device import Device, local_device_names

_FACTORIES = {"CPU": lambda name, config: Device(name)}


def register_device_factory(device_type, factory):
    """`factory(full_name, config) -> Device` for `device_type`; a factory
    returns None for a device this machine does not have (GPUs, as in TF)."""
    _FACTORIES[device_type] = factory


def _factory(device_type):
    if device_type not in _FACTORIES and device_type in ("SIM", "GPU"):
        from . import accelerator  # noqa: F401 - registers the SIM and GPU factories
    factory = _FACTORIES.get(device_type)
    if factory is None:
        raise errors.InvalidArgumentError(f"Unknown device type '{device_type}' in device_count; known types: "
                                          f"{sorted(set(_FACTORIES) | {'SIM', 'GPU'})}")
    return factory


def create_device(name, config):
    device_type = name.rsplit("/device:", 1)[1].split(":")[0]
    return _factory(device_type)(name, config)


def create_local_devices(config, job="localhost", replica=0, task=0):
    """The devices `ConfigProto.device_count` asks for (CPU:0 always exists)
    that this machine has."""
    devices = (create_device(name, config) for name in local_device_names(config.device_count, job, replica, task))
    devices = [d for d in devices if d is not None]
    _apply_blas_policy(config, devices)
    host_malloc.keep_freed_memory()  # CPU:0 always exists: its tensors live in malloc
    return devices


def _apply_blas_policy(config, devices):
    """Host devices share numpy's BLAS threads: give each its share of the
    cores (or what `intra_op_parallelism_threads` says; see ops/blas.py)."""
    from ..ops import blas
    host = sum(1 for d in devices if getattr(d, "xp", None) is None or d.xp.__name__ == "numpy")
    blas.apply_thread_policy(getattr(config, "intra_op_parallelism_threads", 0), host)
