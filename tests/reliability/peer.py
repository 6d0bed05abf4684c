"""Raw peers: a DEALER socket that sends hand-made frames to a worker and reads its replies, and a
ROUTER that plays a worker for a client's connection pool."""
import json
import threading

import zmq

from graphrt import errors
from graphrt.distributed import wire


class RawPeer:
    def __init__(self, address):
        self._ctx = zmq.Context()
        self.sock = self._ctx.socket(zmq.DEALER)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.connect(address if address.startswith("tcp://") else "tcp://" + address.split("://")[-1])

    def send(self, frames):
        self.sock.send_multipart(frames, copy=False)

    def replies(self, quiet_ms=700, limit=None):
        """Replies until none arrives for `quiet_ms` (or `limit` were read), decoded."""
        out = []
        while (limit is None or len(out) < limit) and self.sock.poll(quiet_ms):
            out.append(wire.decode(self.sock.recv_multipart(), expect={wire.REPLY}))
        return out

    def ask(self, frames, timeout_ms=5000):
        """Sends one request and returns the reply carrying its id."""
        request_id = wire.decode(frames).id
        self.send(frames)
        while self.sock.poll(timeout_ms):
            reply = wire.decode(self.sock.recv_multipart(), expect={wire.REPLY})
            if reply.id == request_id:
                return reply
        raise AssertionError(f"no reply to request {request_id} within {timeout_ms} ms")

    def close(self):
        self.sock.close(0)
        self._ctx.term()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class FakeWorker:
    """A ROUTER that answers each request with `answer(header) -> frames` (on its own thread)."""

    def __init__(self, answer):
        self._ctx = zmq.Context()
        self.sock = self._ctx.socket(zmq.ROUTER)
        self.sock.setsockopt(zmq.LINGER, 0)
        port = self.sock.bind_to_random_port("tcp://127.0.0.1")
        self.address = f"tcp://127.0.0.1:{port}"
        self._answer = answer
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self):
        while not self._stop.is_set():
            if self.sock.poll(50):
                identity, *frames = self.sock.recv_multipart()
                self.sock.send_multipart([identity] + self._answer(json.loads(frames[0])))

    def close(self):
        self._stop.set()
        self._thread.join(5)
        self.sock.close(0)
        self._ctx.term()


def request_outcome(pool, address, timeout):
    """A GetStatus request's reply through `pool`, or the OpError it raised."""
    try:
        return pool.request(address, "GetStatus", timeout=timeout)
    except errors.OpError as e:
        return e
