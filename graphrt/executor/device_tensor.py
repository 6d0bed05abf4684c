"""DeviceTensor: a typed, shaped array living in one device's memory."""
import math

import numpy as np

from graphrt import errors

from ._format import format_bytes
from .device_memory import DeviceMemory
from .dma import check_dma_safe


class DeviceTensor:
    """DeviceMemory + dtype + shape + the executor that owns the bytes.

    This is what the runtime passes between kernels on `sim` and `cuda`
    devices. A tensor made by `DeviceTensor.empty` (or by the
    TransferManager) owns its memory: it is freed by `free()` or, failing
    that, when the tensor is garbage collected. Work enqueued on a stream
    keeps the tensors it was given alive until it has run, so dropping a
    tensor right after enqueuing a copy or kernel that uses it is safe.

    Attributes:
        memory: the DeviceMemory holding the bytes.
        dtype: numpy dtype.
        shape: tuple of ints.
        executor: the StreamExecutor of the device.

    Example:
        >>> t = DeviceTensor.empty(executor, (2, 3), "float32")
        >>> t
        <DeviceTensor float32[2,3] on sim:0 @0x1200 (24 B)>
    """

    # `_owned`: the memory this tensor frees (None: it owns none, False: freed). Freed by __del__
    # rather than a weakref.finalize, which costs several times more to set up and to run: a device
    # kernel makes and drops a tensor per output (runtime/device_kernels.py).
    __slots__ = ("memory", "dtype", "shape", "executor", "_owned", "__weakref__")

    def __init__(self, memory, dtype, shape, executor=None, owned=False):
        self._owned = None
        self.memory = memory
        self.dtype = np.dtype(dtype)
        self.shape = tuple(int(d) for d in shape)
        self.executor = executor if executor is not None else memory.executor
        if self.nbytes > memory.size:
            raise errors.FailedPreconditionError(
                f"Allocation on device not large enough for array: {memory.size} < {self.nbytes}",
                device=self.device)
        if owned and not memory.is_null():
            self._owned = memory

    def __del__(self):
        memory = self._owned
        if memory:
            self._owned = False
            try:
                self.executor._release(memory)
            except Exception:  # noqa: BLE001 - the interpreter is shutting down; nothing to give back
                pass

    @classmethod
    def empty(cls, executor, shape, dtype):
        """Allocates an uninitialised tensor on `executor`'s device; it owns its memory."""
        dtype = np.dtype(dtype)
        check_dma_safe(dtype, device=executor.name)
        shape = tuple(int(d) for d in shape)
        memory = executor.allocate(math.prod(shape) * dtype.itemsize)
        return cls(memory, dtype, shape, executor, owned=True)

    @property
    def nbytes(self):
        return math.prod(self.shape) * self.dtype.itemsize

    @property
    def size(self):
        """Number of elements."""
        return math.prod(self.shape)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def device(self):
        """Short device name, e.g. 'sim:0'."""
        return self.executor.name

    @property
    def owns_memory(self):
        return bool(self._owned)

    def as_array(self):
        """The device-side array (numpy or cupy); for kernels running on this device's streams."""
        return self.executor.as_array(self.memory, self.dtype, self.shape)

    def __array__(self, dtype=None, copy=None):
        # np.asarray(tensor) would otherwise make a useless object array; say what to do instead.
        raise errors.FailedPreconditionError(
            f"{self!r} lives in device memory; copy it to the host with the TransferManager "
            "(transfer_from_device) or Stream.then_memcpy_d2h", device=self.device)

    def free(self):
        """Frees the memory now if this tensor owns it (idempotent)."""
        memory = self._owned
        if memory:
            self._owned = False
            self.executor._release(memory)

    def __repr__(self):
        dims = ",".join(str(d) for d in self.shape)
        where = "null" if self.memory.is_null() else f"@{self.memory.opaque:#x}"
        freed = " freed" if self._owned is False else ""
        return (f"<DeviceTensor {self.dtype.name}[{dims}] on {self.device} {where} "
                f"({format_bytes(self.nbytes)}){freed}>")


def memory_of(x, stream=None, role="memory"):
    """The DeviceMemory behind a DeviceMemory or DeviceTensor argument."""
    if isinstance(x, DeviceMemory):
        return x
    if isinstance(x, DeviceTensor):
        return x.memory
    where = f"{stream.name}: " if stream is not None else ""
    raise errors.InvalidArgumentError(
        f"{where}{role} must be a DeviceMemory or DeviceTensor, got {type(x).__name__}",
        device=None if stream is None else stream.executor.name)
