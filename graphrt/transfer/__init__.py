"""graphrt's TransferManager: host arrays <-> DeviceTensors, and infeed/outfeed queues.

    transfer_manager.py   TransferManager (one per platform), its registry, shortcuts
    feed_queue.py         InfeedQueue / OutfeedQueue: bounded host<->device queues;
                          HostInfeedQueue: a CPU device's infeed

Built on graphrt.executor only.

Example:
    >>> from graphrt.executor import get_platform
    >>> from graphrt.transfer import transfer_to_device, transfer_from_device
    >>> ex = get_platform("sim").executor(0)
    >>> t = transfer_to_device(ex, np.ones(3, np.float32))
    >>> transfer_from_device(t)
    array([1., 1., 1.], dtype=float32)
"""
from .feed_queue import DEFAULT_CAPACITY, FeedQueue, HostInfeedQueue, InfeedQueue, OutfeedQueue
from .transfer_manager import (TransferManager, get_transfer_manager, infeed, outfeed, register_transfer_manager,
                               transfer_from_device, transfer_to_device)

__all__ = [
    "DEFAULT_CAPACITY", "FeedQueue", "HostInfeedQueue", "InfeedQueue", "OutfeedQueue", "TransferManager", "get_transfer_manager",
    "infeed", "outfeed", "register_transfer_manager", "transfer_from_device", "transfer_to_device",
]
