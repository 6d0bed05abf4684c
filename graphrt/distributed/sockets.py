"""Thin, fast socket helpers shared by the channel pool and the worker loop.

pyzmq's convenience layer spends microseconds per call on flag enums and
argument checks (send_multipart, recv_multipart, getsockopt with enum
options); on the RecvTensor path that is several calls per message on both
sides. These helpers call the backend socket methods with plain int flags.
Semantics are the same: multipart sends are atomic, buffers are sent
zero-copy (pyzmq still copies frames below the socket's copy_threshold),
and frames are received as zmq.Frame objects (zero-copy).
"""
import zmq

SNDMORE = int(zmq.SNDMORE)
NOBLOCK = int(zmq.NOBLOCK)
EVENTS = int(zmq.EVENTS)
POLLIN = int(zmq.POLLIN)
FD = int(zmq.FD)

_send = zmq.backend.Socket.send
_recv = zmq.backend.Socket.recv
_get = zmq.backend.Socket.get


def send_frames(sock, frames, flags=0):
    """send_multipart(frames, flags, copy=False); raises zmq.Again like it."""
    last = len(frames) - 1
    more = flags | SNDMORE
    for i, frame in enumerate(frames):
        _send(sock, frame, more if i < last else flags, False, False)


def recv_frames(sock, flags=NOBLOCK):
    """recv_multipart(flags, copy=False)."""
    # A Frame received with copy=False carries RCVMORE as `more`, read by pyzmq in C; asking the
    # socket again would build an option enum per frame (about 2 us).
    frame = _recv(sock, flags, False, False)
    parts = [frame]
    while frame.more:
        frame = _recv(sock, flags, False, False)
        parts.append(frame)
    return parts


def readable(sock):
    """ZMQ_EVENTS & POLLIN (also processes the socket's pending commands)."""
    return _get(sock, EVENTS) & POLLIN
