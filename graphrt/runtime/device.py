"""Devices: a named place where kernels run, with its own resources.

A `Device` has a full TF name (`/job:localhost/replica:0/task:0/device:CPU:0`),
a random 64-bit incarnation (so a restarted worker is told apart from its
previous life), a resource manager holding its variables, and the array
module its kernels compute with. Accelerator devices (SIM, GPU) add a
StreamExecutor; see accelerator.py.
"""
import random
import threading

import numpy as np

from .. import errors
from ..framework import device_spec
from ..framework.device_spec import DEVICE_TYPE_PRIORITY, local_device_names  # noqa: F401
from ..transfer import HostInfeedQueue



class ResourceMgr:
    """Named per-device state (variables), grouped by container."""

    def __init__(self):
        self._lock = threading.Lock()
        self._containers = {}

    def lookup_or_create(self, container, name, create):
        with self._lock:
            table = self._containers.setdefault(container or "localhost", {})
            resource = table.get(name)
            if resource is None:
                resource = table[name] = create()
            return resource

    def lookup(self, container, name):
        with self._lock:
            return self._containers.get(container or "localhost", {}).get(name)

    def clear(self, container=None):
        with self._lock:
            if container is None:
                self._containers.clear()
            else:
                self._containers.pop(container, None)

    def names(self):
        with self._lock:
            return {c: sorted(t) for c, t in self._containers.items()}


def new_incarnation():
    return random.SystemRandom().getrandbits(64) or 1


class Device:
    """A host (CPU) device: kernels run on the executor's thread with numpy."""

    device_type = "CPU"
    xp = np

    def __init__(self, name, incarnation=None):
        self.spec = device_spec.parse_full_name(name)
        self.name = self.spec.to_string()
        self.device_type = self.spec.device_type
        self.index = self.spec.device_index
        self.incarnation = incarnation if incarnation is not None else new_incarnation()
        self.resources = ResourceMgr()
        self._feeds_lock = threading.Lock()
        self._infeed = None
        self._shut_down = False

    def infeed(self):
        """This device's infeed (what the InfeedEnqueue/InfeedDequeue ops of graphrt/infeed
        pass batches through), made on first use; closed when the device shuts down.

        Raises:
            CancelledError: the device has shut down (its session was closed).
        """
        with self._feeds_lock:
            if self._shut_down:
                raise errors.CancelledError(f"The infeed of {self.name} was closed with its session",
                                            device=self.name)
            if self._infeed is None or self._infeed.closed:
                self._infeed = self._new_infeed()
            return self._infeed

    def _new_infeed(self):
        return HostInfeedQueue(self.name)  # a CPU's memory is the host's: numpy copies

    @property
    def priority(self):
        return DEVICE_TYPE_PRIORITY.get(self.device_type, 0)

    @property
    def task_prefix(self):
        return self.spec.task_prefix()

    def attributes(self):
        """What a worker reports about this device (name, type, incarnation)."""
        return {"name": self.name, "device_type": self.device_type, "incarnation": self.incarnation}

    def shutdown(self):
        with self._feeds_lock:
            infeed, self._infeed = self._infeed, None
            self._shut_down = True
        if infeed is not None:
            infeed.close()  # a dequeue or enqueue still waiting ends with CancelledError
        self.resources.clear()

    def __repr__(self):
        return f"<Device {self.name} incarnation={self.incarnation:016x}>"
