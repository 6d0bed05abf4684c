"""Client side of the worker service: one DEALER per peer, requests
multiplexed by request id.

Threads. Every socket is guarded by a lock and used by one thread at a
time (ZeroMQ allows a socket to move between threads across full memory
barriers, which a mutex gives). The I/O thread sleeps in poll(2) on the
sockets' ZMQ_FD descriptors, never inside a ZeroMQ call, so a thread that
makes a request sends it itself, on its own thread, while the I/O thread
sleeps: no thread hand-off on the way out. The I/O thread receives replies
(under the socket's lock, briefly) and runs `callback(error, message)`
exactly once: with the decoded reply, or with an error (the connection was
lost or could not be made, the call's deadline passed, or it was
cancelled). ZMQ_FD is edge-triggered, so whoever touches a socket checks
ZMQ_EVENTS afterwards and wakes the I/O thread (a pipe) if input is
waiting. Requests that cannot go out at once (no connection yet, or a
deadline to track) are queued for the I/O thread instead.

A thread that blocks until replies come (a master waiting for its step's
RunGraphs, a blocking RecvTensor) may read them itself (`read_here`): the
I/O thread leaves those sockets alone meanwhile (epoll lets another thread
take them out of its set while it sleeps), so a reply wakes one thread, not
two, on its way to the waiter; while that pays (spin_policy.py) the waiter
polls for a while before it sleeps at all.

Connection state per peer comes from the socket's monitor:

* `HANDSHAKE_SUCCEEDED` -> up: queued requests are sent. Unless the peer
  is on this machine and loopback.py now picks the other transport (its
  Unix socket, or TCP): the socket moves there first, and that handshake
  brings it up. A refused connection asks the same question.
* `DISCONNECTED` while up -> every request still waiting for a reply from
  that peer fails with UnavailableError naming the peer; ZeroMQ keeps
  reconnecting in the background.
* `CONNECT_RETRIED` on a peer that was up before (it died and its port
  refuses) -> queued requests fail at once ("fail fast"); a peer never seen
  up (still starting) gets `connect_timeout` seconds.
* `HANDSHAKE_FAILED_*` -> queued requests fail at once: a CURVE server
  rejected this client, or a security mechanism mismatch.

A reply that cannot be decoded fails its call (if its id can be read) and
the I/O thread goes on; whatever else goes wrong with one reply stays with
it. Should the I/O thread die anyway, the pool marks itself failed: every
waiting and every later call gets UnavailableError at once, never a hang.

Sockets use IMMEDIATE (nothing is queued for a connection that does not
exist, so a request can never reach a restarted worker late), LINGER 0,
ZMTP heartbeats (a peer that vanishes without closing its connection is
detected) and MAXMSGSIZE.
"""
import collections
import heapq
import itertools
import math
import os
import select
import threading
import time

import numpy as np
import zmq
from zmq.utils.monitor import parse_monitor_message

from .. import errors
from . import loopback, shared_payload, wire
from .log_limit import RateLimitedLog
from .sockets import NOBLOCK, readable, recv_frames, send_frames
from .spin_policy import SpinPolicy, spin

CONNECT_TIMEOUT_S = 10.0
HEARTBEAT_IVL_MS = 1000
HEARTBEAT_TIMEOUT_MS = 10000
RECONNECT_IVL_MS = 100
RECONNECT_IVL_MAX_MS = 1000
_LAST_REPLIES_GRACE_MS = 50
_MONITOR_EVENTS = (zmq.EVENT_HANDSHAKE_SUCCEEDED | zmq.EVENT_DISCONNECTED | zmq.EVENT_CONNECT_RETRIED
                   | zmq.EVENT_HANDSHAKE_FAILED_AUTH | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
                   | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL | zmq.EVENT_MONITOR_STOPPED)

# Worker services serving in this process, by endpoint. A call to one of them is handled on the
# caller's thread with no socket (as TF's worker cache hands the master its local worker directly):
# a session on its own server's target then pays no round trip to itself.
_IN_PROCESS = {}
_IN_PROCESS_LOCK = threading.Lock()
_CALL_IDS = itertools.count(1)


def serve_in_process(endpoints, service):
    """Routes this process's calls to `endpoints` to `service.handle_in_process(call, fields, values)`."""
    with _IN_PROCESS_LOCK:
        for endpoint in endpoints:
            _IN_PROCESS[endpoint] = service


def stop_serving_in_process(service):
    with _IN_PROCESS_LOCK:
        for endpoint in [e for e, s in _IN_PROCESS.items() if s is service]:
            del _IN_PROCESS[endpoint]


def in_process(address):
    """True if a master's calls to `address` run on the caller's thread (a service of this process)."""
    return address in _IN_PROCESS


def service_in_process(address):
    """The worker service of this process serving `address`, or None."""
    return _IN_PROCESS.get(address)


def read_only(values):
    """Values as a peer would receive them: arrays become read-only views (the wire's are read-only
    views of the received frame), so neither side can write into what the other holds."""
    out = []
    for value in values:
        if type(value) is np.ndarray and value.flags.writeable:
            value = value.view()
            value.flags.writeable = False
        out.append(value)
    return out


class Call:
    """One request in flight; `callback(error, message)` runs once."""

    __slots__ = ("id", "address", "peer_name", "msg_type", "frames", "callback", "deadline", "queued_at",
                 "_claim", "__weakref__")

    def __init__(self, request_id, address, peer_name, msg_type, callback, deadline):
        self.id = request_id
        self.address = address
        self.peer_name = peer_name
        self.msg_type = msg_type
        self.frames = None
        self.callback = callback
        self.deadline = deadline
        self.queued_at = 0.0
        self._claim = threading.Lock()

    def claim(self):
        """True exactly once: whoever claims the call delivers its outcome."""
        return self._claim.acquire(False)

    @property
    def finished(self):
        return self._claim.locked()

    def __repr__(self):
        return f"<Call {self.msg_type} #{self.id} -> {self.peer_name}{' done' if self.finished else ''}>"


class _Peer:
    __slots__ = ("address", "name", "endpoint", "left", "socket", "fd", "monitor", "monitor_fd", "lock", "state",
                 "ever_up", "backlog", "outstanding", "failure", "reader", "shared")

    def __init__(self, address, name):
        self.address = address
        self.name = name
        self.endpoint = address              # where the socket connects: `address`, or its Unix socket (loopback.py)
        self.left = set()                    # endpoints the socket connected to before (their events are stale)
        self.socket = None
        self.fd = None
        self.monitor = None
        self.monitor_fd = None
        self.lock = threading.Lock()         # guards every use of `socket` and swaps of `outstanding`
        self.state = "connecting"            # connecting | up | down (written by the I/O thread)
        self.ever_up = False
        self.backlog = collections.deque()   # calls waiting for the connection (I/O thread only)
        self.outstanding = {}                # id -> call sent, waiting for its reply
        self.failure = None                  # why the last handshake failed, if it did
        self.reader = None                   # the CallerReads reading this peer's replies instead of the I/O thread
        self.shared = None                   # a PayloadReader when RecvTensors ask for shared memory (shared_payload.py)

    def describe(self):
        return f"{self.name} at {self.address}" if self.name and self.name != self.address else self.address


class _IoPoll:
    """The I/O thread's poll set. With epoll (Linux) another thread may take a socket out of the set
    and put it back while the I/O thread sleeps in it (EPOLL_CTL_MOD is safe then), which
    `CallerReads` needs; elsewhere it is poll(2), and `can_pause` is False."""

    def __init__(self):
        self._epoll = select.epoll() if hasattr(select, "epoll") else None
        self._poll = None if self._epoll is not None else select.poll()
        self.can_pause = self._epoll is not None

    def register(self, fd):
        if self._epoll is not None:
            self._epoll.register(fd, select.EPOLLIN)
        else:
            self._poll.register(fd, select.POLLIN)

    def pause(self, fd):
        try:
            self._epoll.modify(fd, 0)
        except (OSError, ValueError):
            pass  # the socket or the set itself was closed with the pool meanwhile

    def resume(self, fd):
        try:
            self._epoll.modify(fd, select.EPOLLIN)
        except (OSError, ValueError):
            pass

    def poll(self, timeout_ms):
        """The descriptors that are ready, waiting at most `timeout_ms` (None: no limit)."""
        if self._epoll is not None:
            return [fd for fd, _ in self._epoll.poll(-1 if timeout_ms is None else timeout_ms / 1000.0)]
        return [fd for fd, _ in self._poll.poll(timeout_ms)]

    def close(self):
        if self._epoll is not None:
            self._epoll.close()


class CallerReads:
    """A thread reading its own replies from some peers while it waits (`ChannelPool.read_here`).

    `wait` reads and delivers what has arrived and, if nothing had, sleeps in poll(2) on those peers'
    sockets and a pipe of its own until a reply comes, `wake()` is called from another thread (say,
    a callback delivered elsewhere that the waiter must see), or the timeout passes. `done()` gives
    the sockets back to the I/O thread (and wakes it if a reply is already waiting)."""

    __slots__ = ("pool", "peers", "thread", "_pipe", "_poll", "_woken", "_started", "_arm", "_spin_s", "_longest")

    def __init__(self, pool, pipe, started=None):
        self.pool = pool
        self.peers = []
        self.thread = threading.get_ident()
        self._pipe = pipe
        self._poll = None
        self._woken = False  # a byte may be in the pipe (reading an empty one costs an exception)
        # The blocking operation this reader serves is timed for the spin policy (spin_policy.py).
        self._started = time.perf_counter() if started is None else started
        self._arm, self._spin_s = pool.spin_policy.begin()
        self._longest = 0.0  # the longest wait that ended with something to read (0: none yet)

    def wake(self):
        # On the reading thread itself there is nothing to wake: it reads before it sleeps.
        pipe = self._pipe
        if pipe is not None and threading.get_ident() != self.thread:
            self._woken = True
            try:
                os.write(pipe[1], b"\0")
            except OSError:
                pass  # full (a wake-up is pending anyway) or closed

    def wait(self, timeout):
        if self._read():
            return
        if self._poll is None:
            self._poll = select.poll()
            self._poll.register(self._pipe[0], select.POLLIN)
            for peer in self.peers:
                self._poll.register(peer.fd, select.POLLIN)
        t0 = time.perf_counter()
        spin_s = self._spin_s
        fired = spin(self._poll.poll, min(spin_s, timeout)) if spin_s else None
        if not fired:
            fired = self._poll.poll(max(0, math.ceil((timeout - (time.perf_counter() - t0)) * 1000.0)))
        if fired:
            took = time.perf_counter() - t0
            if took > self._longest:
                self._longest = took
            wake_r = self._pipe[0]
            for fd, _ in fired:
                if fd == wake_r:
                    self._drain()
                    break
            self._read()

    def _read(self):
        # One reply per peer: whether another waits is asked at the next wait() (which reads before it
        # sleeps) or by done(), and most blocking operations end with this reply. Reading until the
        # socket is empty asked ZeroMQ once more per wait, to hear "no".
        count = 0
        for peer in self.peers:
            count += self.pool._read_replies(peer, 1)
        return count

    def _drain(self):
        self._woken = False
        try:
            os.read(self._pipe[0], 4096)
        except OSError:
            pass

    def done(self):
        pool, pipe = self.pool, self._pipe
        if pipe is None:
            return
        ended = time.perf_counter()
        for peer in self.peers:
            with peer.lock:
                peer.reader = None
                pool._poll.resume(peer.fd)
                # A reply left in the socket after this thread's reads (whose checks consumed its
                # signal) is the I/O thread's to read now. With no call waiting on this peer nothing can
                # be missed: a stray message (a one-way request's error, a dropped call's reply) is read
                # after the next send to the peer, which checks the socket itself (every send path does,
                # under this lock). The check is a system call and pyzmq's option lookup, several
                # microseconds right after a wait, on every blocking operation.
                waiting = peer.socket is not None and peer.outstanding and readable(peer.socket)
            if waiting:
                pool._wake()  # the I/O thread's signal for it may have been consumed here
        self.peers = []
        if self._woken:
            self._drain()
        self._pipe = None
        pool._give_pipe(pipe)
        # Last: the sockets are the I/O thread's again whatever happens here.
        if self._longest:  # an operation whose replies were all in before it waited says nothing either way
            pool.spin_policy.finished(self._arm, ended - self._started, self._longest)

    def __repr__(self):
        return f"<CallerReads on thread {self.thread}: {', '.join(p.describe() for p in self.peers) or 'done'}>"


class ChannelPool:
    """DEALER channels to any number of peers; replies are read by one I/O thread."""

    def __init__(self, curve=None, max_message_bytes=wire.DEFAULT_MAX_MESSAGE_BYTES,
                 connect_timeout=CONNECT_TIMEOUT_S, name="graphrt-channels", heartbeat_timeout_ms=None,
                 in_process=False):
        self._curve = curve
        self._max_bytes = int(max_message_bytes)
        self.connect_timeout = float(connect_timeout)
        self._heartbeat_timeout_ms = heartbeat_timeout_ms or HEARTBEAT_TIMEOUT_MS
        self.name = name
        # A master's pool calls a worker of its own process directly (see serve_in_process); the
        # workers' pools always use the socket, as their peers are other processes in a real cluster.
        self._in_process = _IN_PROCESS if in_process else {}
        self._ctx = zmq.Context()
        self._commands = collections.deque()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._ids = _CALL_IDS   # unique in the process: a drop sent to the wrong pool finds nothing
        self._peers = {}
        self._by_fd = {}
        self._deadlines = []
        self._backlogged = 0
        self._in_hand = None  # the call the I/O thread is starting: neither queued nor outstanding
        self._closed = False
        self.failure = None   # UnavailableError once the I/O thread died
        self._log = RateLimitedLog(name)
        self._poll = _IoPoll()
        self._poll.register(self._wake_r)
        self._reader_pipes = []  # wake-up pipes of CallerReads, reused across waits
        self.spin_policy = SpinPolicy()  # whether CallerReads poll a while before they sleep
        self._pipes_lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    # -- API (any thread) -------------------------------------------------------------
    def call(self, address, msg_type, fields=None, values=(), callback=None, timeout=None, peer_name=None):
        """Sends a request; `callback(error, message)` gets the reply (on the I/O thread)."""
        return self._call(self._in_process, address, msg_type, fields, values, callback, timeout, peer_name)

    def _call(self, local, address, msg_type, fields, values, callback, timeout, peer_name):
        deadline = None if timeout is None else time.monotonic() + timeout
        call = Call(next(self._ids), address, peer_name or address, msg_type, callback, deadline)
        service = local.get(address)
        if service is not None and not self._closed:
            service.handle_in_process(call, fields, values)
            return call
        frames = None
        if msg_type == "RecvTensor" or (msg_type == "RunGraph" and "recv_tensors" in fields):
            # Pulls from a peer of this machine ask for large tensors in shared memory (shared_payload.py).
            peer = self._peers.get(address)
            shared = None if peer is None else peer.shared
            if shared is not None and shared.broken is None:
                if msg_type == "RecvTensor":
                    frames = wire.encode_recv_tensor_shared(call.id, fields["step_id"], fields["key"],
                                                            shared.take_released(wire.MAX_RELEASED))
                else:
                    fields = dict(fields, shared_released=list(shared.take_released(wire.MAX_RELEASED)))
        call.frames = frames or wire.encode(msg_type, call.id, fields, values)
        if self._closed:
            self._finish_closed(call)
            return call
        if deadline is None and self._send_now(call):
            return call
        self._commands.append(("call", call))
        self._wake()
        if self._closed:  # closed (or the I/O thread died) while we queued: nobody else will answer
            self._drain_commands()
        return call

    def hold(self, address, msg_type, callback, peer_name=None):
        """A call whose request another message to the same peer carries (RunGraph's `recv_tensors`):
        it waits for its reply like any call, but nothing is sent for it. None when the peer is not
        connected right now (the caller then makes the call itself). A held call's carrier must go
        through this pool, after this returns."""
        peer = self._peers.get(address)
        if self._closed or peer is None or peer.state != "up" or peer.backlog:
            return None
        call = Call(next(self._ids), address, peer_name or address, msg_type, callback, None)
        with peer.lock:
            if peer.state != "up" or peer.socket is None:
                return None
            call.queued_at = time.monotonic()
            peer.outstanding[call.id] = call
        return call

    def send_oneway(self, address, msg_type, fields=None, values=(), peer_name=None):
        """A request with id 0: the peer does not reply; dropped if the peer is unreachable."""
        self._send_oneway(self._in_process, address, msg_type, fields, values, peer_name)

    def _send_oneway(self, local, address, msg_type, fields, values, peer_name):
        call = Call(0, address, peer_name or address, msg_type, None, None)
        service = local.get(address)
        if service is not None and not self._closed:
            service.handle_in_process(call, fields, values)
            return
        call.frames = wire.encode(msg_type, 0, fields, values)
        if not self._closed and not self._send_now(call):
            self._commands.append(("call", call))
            self._wake()

    def request(self, address, msg_type, fields=None, values=(), timeout=None, peer_name=None):
        """Blocking call: returns the reply Message or raises its error."""
        return self._request(self._in_process, address, msg_type, fields, values, timeout, peer_name)

    def _request(self, local, address, msg_type, fields, values, timeout, peer_name):
        done = threading.Lock()
        done.acquire()
        box = []

        def callback(error, message):
            box.append((error, message))
            done.release()

        call = self._call(local, address, msg_type, fields, values, callback, timeout, peer_name)
        try:
            while not done.acquire(timeout=0.5):
                if not self._thread.is_alive():  # belt and braces: nobody is left to answer
                    self.cancel(call, self._closed_error(call))
        except BaseException:
            self.cancel(call, errors.CancelledError(f"{msg_type} to {call.peer_name} was interrupted"))
            raise
        error, message = box[0]
        if error is None:
            error = message.error
        if error is not None:
            raise error.with_traceback(None)
        return message

    def cancel(self, call, error):
        """Fails the call with `error` now (on this thread) unless it already finished."""
        if call.claim():
            self._commands.append(("drop", call))
            self._wake()
            _deliver(call, error, None)

    def forget(self, call):
        """Drops a call without calling its callback (its owner already gave up on it)."""
        if call.claim():
            self._commands.append(("drop", call))
            self._wake()

    @property
    def closed(self):
        return self._closed

    def carries_for(self, pool):
        """True if calls made here go through `pool` (so calls held there can ride on them)."""
        return pool is self and not self._closed

    def can_lend(self, curve, max_message_bytes, connect_timeout):
        """Whether a master of this process asking for these settings may share this pool
        (see SharedChannels): same limits, and no CURVE keys on either side."""
        return (not self._closed and curve is None and self._curve is None
                and int(max_message_bytes) == self._max_bytes and float(connect_timeout) == self.connect_timeout
                and self._heartbeat_timeout_ms == HEARTBEAT_TIMEOUT_MS)

    def close(self):
        if self._closed:
            return
        self._closed = True
        self._commands.append(("close", None))
        self._wake()
        if self._thread is not threading.current_thread():
            self._thread.join(5.0)

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    def _send_now(self, call):
        """Sends on the caller's thread if the peer is connected and nothing is queued before it."""
        peer = self._peers.get(call.address)
        if peer is None or peer.state != "up" or peer.backlog:
            return False
        with peer.lock:
            if peer.state != "up" or peer.socket is None:
                return False
            if call.id:
                peer.outstanding[call.id] = call
            call.queued_at = time.monotonic()
            try:
                send_frames(peer.socket, call.frames, NOBLOCK)
            except zmq.ZMQError:  # Again: no connection right now; let the I/O thread handle it
                peer.outstanding.pop(call.id, None)
                return False
            reader = peer.reader
            # A thread that reads this peer itself reads before it next sleeps (CallerReads.wait): it
            # needs no check here (each costs a system call and pyzmq's option lookup, ~2.5 us).
            pending = (reader is None or reader.thread != threading.get_ident()) and readable(peer.socket)
        call.frames = None
        if pending:  # our send consumed the socket's wake-up signal; input is waiting
            if reader is not None:
                reader.wake()
            else:
                self._wake()
        return True

    def read_here(self, addresses, started=None):
        """Lets the calling thread read the replies from `addresses` itself while it waits for them.

        A master waiting for its step's replies would otherwise be woken by the I/O thread after the
        I/O thread was woken by ZeroMQ: two thread wake-ups per reply instead of one, and each costs
        tens of microseconds (more on a VM whose idle vCPUs sleep). The peers' sockets leave the I/O
        thread's poll set until `CallerReads.done()`; meanwhile every reply from them is read and
        delivered (its callback run) on the reading thread, in `CallerReads.wait`. Returns None when
        no peer can be read here: none is connected, another thread reads them, or this platform's
        poll cannot take a socket out of the I/O thread's set while it sleeps (no epoll). `started` is
        when the blocking operation began (perf_counter; default now): its length from there until
        `done()` is what the spin policy compares."""
        if self._closed or not self._poll.can_pause:
            return None
        reader = None
        for address in addresses:
            peer = self._peers.get(address)
            if peer is None or peer.state != "up" or peer.reader is not None:
                continue
            if reader is None:
                reader = CallerReads(self, self._take_pipe(), started)
            with peer.lock:
                if peer.reader is not None or peer.socket is None:
                    continue
                peer.reader = reader
                reader.peers.append(peer)
                self._poll.pause(peer.fd)
        if reader is not None and not reader.peers:
            reader.done()
            return None
        return reader

    def _take_pipe(self):
        with self._pipes_lock:
            if self._reader_pipes:
                return self._reader_pipes.pop()
        r, w = os.pipe()
        os.set_blocking(r, False)
        os.set_blocking(w, False)
        return r, w

    def _give_pipe(self, pipe):
        with self._pipes_lock:
            if not self._closed:
                self._reader_pipes.append(pipe)
                return
        for fd in pipe:
            os.close(fd)

    def _finish_closed(self, call):
        if call.id and call.claim():
            _deliver(call, self._closed_error(call), None)

    def _closed_error(self, call):
        if self.failure is not None:
            return errors.UnavailableError(f"{call.msg_type} to {call.peer_name} failed: {self.failure.message}")
        return errors.CancelledError(f"{call.msg_type} to {call.peer_name}: the channel is closed")

    def _drain_commands(self):
        """Fails the calls queued for an I/O thread that is gone."""
        while True:
            try:
                kind, call = self._commands.popleft()
            except IndexError:
                return
            if kind == "call":
                self._finish_closed(call)

    # -- I/O thread ----------------------------------------------------------------------
    def _wake(self):
        try:
            os.write(self._wake_w, b"\0")
        except OSError:
            pass  # full (the I/O thread is awake anyway) or closed

    def _run(self):
        wake_r = self._wake_r
        fired = None  # None: look at every socket (after a wake-up through the pipe, or at start)
        try:
            while True:
                if fired is None:
                    for peer in list(self._peers.values()):
                        if peer.reader is None:
                            self._read_replies(peer)
                        self._monitor_events(peer)
                else:
                    for fd in fired:
                        peer = self._by_fd.get(fd)
                        if peer is not None:
                            if fd == peer.fd:
                                if peer.reader is None:
                                    self._read_replies(peer)
                            else:
                                self._monitor_events(peer)
                if not self._commands_run():
                    break
                if self._backlogged:
                    self._flush_backlogs()
                if self._deadlines:
                    self._expire()
                if self._commands:
                    fired = None
                    continue
                fired = self._poll.poll(self._poll_timeout())
                if wake_r in fired or not fired:
                    # Another thread woke us (it may have consumed a socket's edge-triggered signal
                    # by sending), or a timer is due: look at everything.
                    fired = None
                    try:
                        os.read(wake_r, 65536)
                    except BlockingIOError:
                        pass
        except BaseException as e:  # noqa: BLE001 - a bug here must be loud, and must not leave waiters
            import traceback
            traceback.print_exc()
            self.failure = errors.UnavailableError(f"{self.name}: the connection pool's I/O thread died "
                                                   f"({type(e).__name__}: {e})")
            self._closed = True
            if self._in_hand is not None:
                self._finish_closed(self._in_hand)
            self._fail_everything(self.failure)
            self._drain_commands()
        finally:
            self._shutdown_sockets()

    def _poll_timeout(self):
        timeout = None
        if self._backlogged:
            now = time.monotonic()
            for peer in self._peers.values():
                if peer.backlog:
                    if peer.state == "up":
                        return 1  # sending was refused for a moment (pipe not attached yet): retry soon
                    first = peer.backlog[0].queued_at + self.connect_timeout
                    t = max(0, int((first - now) * 1000) + 1)
                    timeout = t if timeout is None else min(timeout, t)
        if self._deadlines:
            t = max(0, int((self._deadlines[0][0] - time.monotonic()) * 1000) + 1)
            timeout = t if timeout is None else min(timeout, t)
        return timeout

    def _commands_run(self):
        commands = self._commands
        while commands:
            kind, call = commands.popleft()
            if kind == "call":
                self._in_hand = call
                self._start(call)
                self._in_hand = None
            elif kind == "drop":
                peer = self._peers.get(call.address)
                if peer is not None:
                    peer.outstanding.pop(call.id, None)
                    try:
                        peer.backlog.remove(call)
                        self._backlogged -= 1
                    except ValueError:
                        pass
            elif kind == "close":
                self._fail_everything(errors.CancelledError(f"{self.name} was closed"))
                return False
        return True

    def _peer(self, address, name):
        peer = self._peers.get(address)
        if peer is None:
            peer = _Peer(address, name)
            self._open(peer)
            self._peers[address] = peer
        return peer

    def _open(self, peer):
        sock = self._ctx.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        sock.setsockopt(zmq.IMMEDIATE, 1)
        sock.setsockopt(zmq.SNDHWM, 0)
        sock.setsockopt(zmq.RCVHWM, 0)
        sock.setsockopt(zmq.MAXMSGSIZE, self._max_bytes + (1 << 20))
        sock.setsockopt(zmq.RECONNECT_IVL, RECONNECT_IVL_MS)
        sock.setsockopt(zmq.RECONNECT_IVL_MAX, RECONNECT_IVL_MAX_MS)
        sock.setsockopt(zmq.HEARTBEAT_IVL, HEARTBEAT_IVL_MS)
        sock.setsockopt(zmq.HEARTBEAT_TIMEOUT, self._heartbeat_timeout_ms)
        sock.setsockopt(zmq.HEARTBEAT_TTL, self._heartbeat_timeout_ms)
        if self._curve is not None:
            self._curve.apply_client(sock)
        monitor = sock.get_monitor_socket(_MONITOR_EVENTS)
        peer.endpoint, pid = loopback.connect_target(peer.address)
        self._share_with(peer, pid)
        try:
            sock.connect(peer.endpoint)
        except zmq.ZMQError:
            sock.close(0)
            monitor.close(0)
            raise
        peer.socket, peer.monitor = sock, monitor
        peer.fd, peer.monitor_fd = sock.getsockopt(zmq.FD), monitor.getsockopt(zmq.FD)
        for fd in (peer.fd, peer.monitor_fd):
            self._poll.register(fd)
            self._by_fd[fd] = peer
        # ZMQ_FD only signals a socket that has been found idle once: look at both now.
        readable(sock)
        self._monitor_events(peer)

    def _start(self, call):
        try:
            peer = self._peer(call.address, call.peer_name)
        except zmq.ZMQError as e:  # an address ZeroMQ cannot connect to at all, e.g. "tcp://no such host:1"
            if call.id and call.claim():
                where = call.address if call.peer_name == call.address else f"{call.peer_name} at {call.address}"
                _deliver(call, errors.InvalidArgumentError(
                    f"{call.msg_type} to {where}: ZeroMQ cannot connect to that address ({e})"), None)
            return
        if call.id and call.finished:
            return  # cancelled before it left
        if call.deadline is not None:
            heapq.heappush(self._deadlines, (call.deadline, call.id, call))
        if peer.failure is not None and peer.state != "up" and call.id:
            self._fail(call, peer, peer.failure)
            return
        call.queued_at = time.monotonic()
        if peer.state == "up" and not peer.backlog and self._send(peer, call):
            return
        peer.backlog.append(call)
        self._backlogged += 1

    def _send(self, peer, call):
        """Sends a call on the I/O thread; False if the socket refused it for now."""
        with peer.lock:
            if call.id:
                peer.outstanding[call.id] = call
            try:
                send_frames(peer.socket, call.frames, NOBLOCK)
            except zmq.Again:
                peer.outstanding.pop(call.id, None)
                return False
            except zmq.ZMQError as e:
                peer.outstanding.pop(call.id, None)
                failure = errors.UnavailableError(f"Cannot send {call.msg_type} to {peer.describe()}: {e}")
            else:
                failure = None
            if readable(peer.socket):  # the send consumed the socket's edge-triggered signal
                if peer.reader is not None:
                    peer.reader.wake()
                else:
                    self._wake()
        if failure is not None:
            self._fail(call, peer, failure)
        call.frames = None
        return True

    def _flush_backlogs(self):
        now = time.monotonic()
        for peer in self._peers.values():
            backlog = peer.backlog
            if peer.state == "up":
                while backlog:
                    call = backlog[0]
                    if call.id and call.finished:
                        backlog.popleft()
                        self._backlogged -= 1
                        continue
                    if not self._send(peer, call):
                        break
                    backlog.popleft()
                    self._backlogged -= 1
            while backlog and (now - backlog[0].queued_at >= self.connect_timeout or
                               (backlog[0].id and backlog[0].finished)):
                call = backlog.popleft()
                self._backlogged -= 1
                if call.id and not call.finished:
                    self._fail(call, peer, self._unreachable(peer, call))

    def _unreachable(self, peer, call, waited=None):
        if peer.ever_up:
            what = "the connection was lost and has not come back"
        else:
            what = "no connection could be made"
        waited = self.connect_timeout if waited is None else waited
        return errors.UnavailableError(
            f"{call.msg_type} to {peer.describe()} failed: {what} within {waited:.1f}s (is the server running?)")

    def _expire(self):
        heap = self._deadlines
        now = time.monotonic()
        while heap and heap[0][0] <= now:
            _, _, call = heapq.heappop(heap)
            if call.finished:
                continue
            peer = self._peers.get(call.address)
            if peer is not None and call in peer.backlog:
                # It never left: the peer was not connected. That is unavailability, not slowness.
                peer.backlog.remove(call)
                self._backlogged -= 1
                self._fail(call, peer, self._unreachable(peer, call, now - call.queued_at))
                continue
            waited = now - call.queued_at if call.queued_at else 0.0
            self._fail(call, peer, errors.DeadlineExceededError(
                f"{call.msg_type} to {peer.describe() if peer else call.peer_name} timed out after {waited:.2f}s"))

    def _fail(self, call, peer, error):
        if peer is not None:
            peer.outstanding.pop(call.id, None)
        if call.id and call.claim():
            _deliver(call, error, None)

    def _read_replies(self, peer, limit=256):
        """Reads and delivers the replies waiting on `peer`'s socket (at most `limit`); returns how many
        were read."""
        batch = []
        with peer.lock:
            sock = peer.socket
            while sock is not None and len(batch) < limit and readable(sock):
                batch.append(recv_frames(sock))
        count = len(batch)
        if count == limit and peer.reader is None:
            self._wake()  # more to read: come back after the others had their turn
        batch.reverse()
        while batch:
            # Hold no reference to a reply once it is delivered: its receiver frees large frames
            # as soon as it drops the tensor, so the next receive can reuse the memory.
            frames = batch.pop()
            try:
                message = wire.decode_reply(frames, self._max_bytes, peer.shared)
            except Exception as e:  # noqa: BLE001 - wire.decode maps every failure to a WireError
                if isinstance(e, errors.OpError) and not isinstance(e, wire.WireError):
                    error = e  # read, but its tensor could not be (shared_payload.py): the error names the peer
                else:
                    text = e.message if isinstance(e, errors.OpError) else f"{type(e).__name__}: {e}"
                    error = errors.InternalError(f"Malformed reply from {peer.describe()}: {text}")
                request_id = wire.best_effort_id(frames)
                call = peer.outstanding.pop(request_id, None) if request_id else None
                if call is not None and call.claim():
                    _deliver(call, error, None)
                else:
                    self._log(f"graphrt: dropped a reply from {peer.describe()}: {error.message}")
                continue
            del frames
            call = peer.outstanding.pop(message.id, None)
            if call is not None and call.claim():
                _deliver(call, None, message)
            del message
        return count

    def _monitor_events(self, peer):
        monitor = peer.monitor
        while readable(monitor):
            try:
                parts = monitor.recv_multipart(zmq.NOBLOCK)
            except zmq.ZMQError:  # pragma: no cover - closing
                return
            parsed = parse_monitor_message(parts)
            event = parsed["event"]
            if event != zmq.EVENT_MONITOR_STOPPED and peer.left:
                endpoint = parsed["endpoint"].decode(errors="replace")
                if endpoint != peer.endpoint and endpoint in peer.left:
                    continue  # the connection this peer left for another transport
            if event == zmq.EVENT_HANDSHAKE_SUCCEEDED and self._change_transport(peer):
                continue  # not up yet: the handshake over the other transport says when
            if event == zmq.EVENT_CONNECT_RETRIED:
                self._change_transport(peer)  # a refused peer may listen on the other transport now
            if event == zmq.EVENT_HANDSHAKE_SUCCEEDED:
                peer.state = "up"
                peer.ever_up = True
                peer.failure = None
                self._wake()  # flush the backlog
            elif event == zmq.EVENT_DISCONNECTED:
                # Replies that arrived just before the disconnect are answers, not losses; the monitor
                # may report the disconnect before the socket shows the last replies, so give them a
                # moment (disconnects are rare, and this bounds the wait).
                self._read_replies(peer)
                if peer.outstanding:
                    # Under the lock: a thread that reads this peer itself (read_here) may be using the
                    # socket, and a ZeroMQ socket used by two threads at once can crash the process.
                    with peer.lock:
                        late = peer.socket is not None and peer.socket.poll(_LAST_REPLIES_GRACE_MS, zmq.POLLIN)
                    if late:
                        self._read_replies(peer)
                with peer.lock:
                    peer.state = "down" if peer.ever_up else "connecting"
                    lost, peer.outstanding = peer.outstanding, {}
                for call in lost.values():
                    if call.claim():
                        _deliver(call, errors.UnavailableError(
                            f"{call.msg_type} to {peer.describe()} failed: the connection was lost (the "
                            f"process died or closed the connection)"), None)
            elif event == zmq.EVENT_CONNECT_RETRIED:
                if peer.state != "up" and peer.ever_up:
                    self._fail_backlog(peer, lambda call: errors.UnavailableError(
                        f"{call.msg_type} to {peer.describe()} failed: the connection was lost and the peer "
                        f"refuses connections (the process is not running)"))
            elif event in (zmq.EVENT_HANDSHAKE_FAILED_AUTH, zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL,
                           zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL):
                why = ("the server rejected this client's CURVE credentials (not authorized)"
                       if event == zmq.EVENT_HANDSHAKE_FAILED_AUTH else
                       "the security handshake failed (does the server require CURVE authentication, "
                       "and does this client have the right server key?)")
                peer.failure = errors.UnavailableError(f"Cannot connect to {peer.describe()}: {why}")
                self._fail_backlog(peer, lambda call: errors.UnavailableError(
                    f"{call.msg_type} to {peer.describe()} failed: {why}"))
            elif event == zmq.EVENT_MONITOR_STOPPED:
                return

    def _change_transport(self, peer):
        """Moves a peer's socket to the transport loopback.py chooses now, if that differs; True if it
        did. Asked when a connection is made and when one is refused, before any request goes out on it
        (requests wait in the backlog until the peer is up): a client that started before its server
        moves to the server's Unix socket once the server listens, and one whose server came back
        without a Unix socket moves to TCP."""
        endpoint, pid = loopback.connect_target(peer.address)
        if endpoint == peer.endpoint:
            if pid is not None and (peer.shared is None or peer.shared.pid != pid):
                self._share_with(peer, pid)  # the server came back as another process
            return False
        with peer.lock:
            if peer.socket is None or peer.state == "up":
                return False
            self._share_with(peer, pid)
            try:
                peer.socket.disconnect(peer.endpoint)
            except zmq.ZMQError:
                pass  # ZeroMQ already let go of it
            peer.left.add(peer.endpoint)
            peer.left.discard(endpoint)
            peer.endpoint = endpoint
            peer.socket.connect(endpoint)
        return True

    def _share_with(self, peer, pid):
        """Whether this peer's RecvTensors ask for shared memory: only over its Unix socket, to a listener
        of this user whose process this one can see (pid), and never with CURVE keys (shared_payload.py)."""
        old = peer.shared
        peer.shared = shared_payload.PayloadReader(pid, peer.describe()) \
            if pid and self._curve is None and shared_payload.enabled() and shared_payload.can_read_from(pid) \
            else None
        if old is not None:
            old.close()

    def _fail_backlog(self, peer, make_error):
        backlog = peer.backlog
        peer.backlog = collections.deque()
        self._backlogged -= len(backlog)
        for call in backlog:
            if call.id and call.claim():
                _deliver(call, make_error(call), None)

    def _fail_everything(self, error):
        for peer in self._peers.values():
            with peer.lock:
                calls = list(peer.backlog) + list(peer.outstanding.values())
                peer.backlog.clear()
                peer.outstanding = {}
                peer.state = "closed"
            for call in calls:
                if call.id and call.claim():
                    _deliver(call, error, None)
        self._backlogged = 0

    def _shutdown_sockets(self):
        for peer in self._peers.values():
            with peer.lock:
                for sock in (peer.socket, peer.monitor):
                    try:
                        sock.close(200)
                    except Exception:  # noqa: BLE001
                        pass
                peer.socket = None
                if peer.shared is not None:
                    peer.shared.close()
        self._peers.clear()
        self._by_fd.clear()
        try:
            self._ctx.term()
        except Exception:  # noqa: BLE001
            pass
        with self._pipes_lock:
            pipes, self._reader_pipes = self._reader_pipes, []
        for fd in [self._wake_r, self._wake_w] + [fd for pipe in pipes for fd in pipe]:
            try:
                os.close(fd)
            except OSError:
                pass
        self._poll.close()

    def payload_reader(self, address):
        """The PayloadReader through which pulls from `address` read shared memory, or None when they do
        not ask for it (shared_payload.py)."""
        peer = self._peers.get(address)
        return None if peer is None else peer.shared

    def connections(self):
        """{peer address: the endpoint its socket connects to}: the address itself, or the Unix socket
        of a server on this machine (loopback.py)."""
        return {p.address: p.endpoint for p in list(self._peers.values())}

    def __repr__(self):
        peers = ", ".join(address + (f" via {endpoint}" if endpoint != address else "")
                          for address, endpoint in self.connections().items())
        return f"<ChannelPool {self.name}: {len(self._peers)} peers{': ' + peers if peers else ''}>"


class SharedChannels:
    """A master's channels when the worker service of its session's target runs in this process.

    Calls to a service of this process run on the caller's thread (as a master's own pool with
    `in_process=True` does); the others go through the worker's pool, so the process keeps one
    socket and one I/O thread per peer instead of two. A step's RunGraph and its tensors' RecvTensor
    to the same task then travel on one connection, and their replies wake one thread. Once the
    worker's pool closes (its server stopped), calls go through a pool of the master's own, made
    then by `make_own()`.
    """

    def __init__(self, pool, make_own):
        self._pool = pool
        self._make_own = make_own
        self._own = None
        self._lock = threading.Lock()

    # The pool's _closed is read directly (same module): the property is a Python call, and the
    # target is looked up for every call a master makes.
    def _target(self):
        pool = self._pool
        if not pool._closed:
            return pool
        with self._lock:
            if self._own is None:
                self._own = self._make_own()
            return self._own

    def call(self, address, msg_type, fields=None, values=(), callback=None, timeout=None, peer_name=None):
        return self._target()._call(_IN_PROCESS, address, msg_type, fields, values, callback, timeout, peer_name)

    def send_oneway(self, address, msg_type, fields=None, values=(), peer_name=None):
        self._target()._send_oneway(_IN_PROCESS, address, msg_type, fields, values, peer_name)

    def request(self, address, msg_type, fields=None, values=(), timeout=None, peer_name=None):
        return self._target()._request(_IN_PROCESS, address, msg_type, fields, values, timeout, peer_name)

    def cancel(self, call, error):
        self._owner(call).cancel(call, error)

    def read_here(self, addresses, started=None):
        return self._target().read_here(addresses, started)

    def carries_for(self, pool):
        """True while this master's calls go through `pool` (so its held calls can ride on them)."""
        return self._pool is pool and not pool._closed

    def forget(self, call):
        self._owner(call).forget(call)

    def _owner(self, call):
        # A call's id is only known to the pool that sent it; the fallback pool exists only once the
        # worker's is closed, and a closed pool ignores drops.
        own = self._own
        return own if own is not None and self._pool._closed else self._pool

    def close(self):
        """Closes the fallback pool, if one was made; the worker's pool belongs to its service."""
        with self._lock:
            own, self._own = self._own, None
        if own is not None:
            own.close()

    def __repr__(self):
        return f"<SharedChannels of {self._pool!r}{' (closed: own pool)' if self._own is not None else ''}>"


def _deliver(call, error, message):
    # Called once per call (whoever claimed it). Dropping the callback breaks the reference cycle a
    # caller's closure may form with the call, so a large reply is freed at once, not by the GC.
    callback, call.callback = call.callback, None
    if callback is None:
        return
    try:
        callback(error, message)
    except Exception:  # noqa: BLE001 - a callback must not kill the I/O thread
        import traceback
        traceback.print_exc()
