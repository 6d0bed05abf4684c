"""The Rendezvous interface: how tensors cross from a `_Send` to a `_Recv`.

A rendezvous is a table of one-shot channels, one per rendezvous key (see
`parsed_key`), living for exactly one step. The producer side of an edge
calls `send(key, value, is_dead)`; the consumer side calls
`recv_async(key, done)` or the blocking `recv(key)`. The two calls may come
in either order; whichever comes second completes the pair.

Contract every implementation keeps (local table, ZeroMQ remote, ...):

* `send` never blocks. It either stores the value until its recv arrives or
  hands it to the recv already waiting. `is_dead` travels with the value so
  that deadness from an untaken `Switch` branch crosses devices; a dead
  value is usually `None`.

* `recv_async(key, done)` calls `done(error, value, is_dead)` exactly once:
  `error` is `None` on success, else an `OpError` (and `value` is `None`).
  `done` runs outside every rendezvous lock, on whichever thread completes
  the pair: inside `send` on the sender's thread if the recv came first,
  inside `recv_async` on the caller's thread if the value was already there
  (or the rendezvous was already aborted), inside `start_abort` on the
  aborting thread for recvs still waiting then. A `done` that raises breaks
  the executor, not the rendezvous: the exception propagates out of the
  call that ran it, after the table is already consistent.

* `recv(key, timeout=None)` waits for the value and returns
  `(value, is_dead)`, raising the error `done` would have got. With a
  timeout (seconds) it raises `DeadlineExceededError("Timed out waiting
  for <key> ...")`; the recv stays registered (as in TensorFlow) so that
  `pending()` still shows what the step is stuck on.

* Within one step each key carries one value: one send, one recv. A second
  send of a key (still queued or already received) raises
  `AbortedError("Duplicated send: <key>")` from `send`; a second recv gets
  `AbortedError("Duplicated recv: <key>")` in its own `done`. In both cases
  the pair already in flight is unaffected. Loops get one key per
  iteration (`key.with_frame_iter`).

* `start_abort(error)` takes an `OpError`; the first abort wins and later
  ones are ignored. It fails every waiting recv with that error, drops every
  queued value, and from then on `send` raises it and `recv_async` fails
  with it immediately. It does not wait for callbacks running elsewhere.
  `status` is the abort error or `None`; `is_aborted` says which.

* `pending()` lists what is still waiting, oldest first, as
  `PendingRecord`s: a recv waiting for its send, or a sent value waiting
  for its recv, with the key (so both devices) and since when. It is what a
  session prints when a step hangs; `format_pending` words it.

* Implementations are thread-safe and keep their critical sections short:
  the rendezvous sits on the executor's critical path.
"""
import abc
import dataclasses
import threading
from time import monotonic

from ..errors import DeadlineExceededError, OpError

__all__ = ["Rendezvous", "PendingRecord", "RECV_WAITING", "SEND_WAITING", "format_pending"]

RECV_WAITING = "recv"
"""PendingRecord.kind of a recv that has no value yet."""
SEND_WAITING = "send"
"""PendingRecord.kind of a sent value nobody has received yet."""

# A recv waiting in a reader's wait looks at the clock at least this often.
_READER_SLICE_S = 0.25


@dataclasses.dataclass(frozen=True, slots=True)
class PendingRecord:
    """One rendezvous entry still waiting when `pending()` was called.

    `kind` is RECV_WAITING or SEND_WAITING, `key` the ParsedKey, `since`
    the `time.monotonic()` at which it started waiting and `waited` the
    seconds it had waited at the snapshot.
    """

    kind: str
    key: object
    since: float
    waited: float

    @property
    def src_device(self):
        return self.key.src_device

    @property
    def dst_device(self):
        return self.key.dst_device

    def __str__(self):
        other = SEND_WAITING if self.kind == RECV_WAITING else RECV_WAITING
        key = self.key
        return (f"{self.kind} waiting {self.waited:.1f}s for {other}: "
                f"{key.src_device} -> {key.dst_device} {key.edge_name};{key.frame_id}:{key.iter_id}")


def format_pending(records, limit=20):
    """A multi-line summary of `pending()` for a hung-step error message."""
    if not records:
        return "no rendezvous entries waiting"
    lines = [f"{len(records)} rendezvous entr{'y' if len(records) == 1 else 'ies'} waiting:"]
    lines += [f"  {record}" for record in records[:limit]]
    if len(records) > limit:
        lines.append(f"  ... and {len(records) - limit} more")
    return "\n".join(lines)


def fail_waiters(callbacks, error, first_failure=None):
    """Calls every `done(error, None, False)`: each waiter hears about the
    abort even if an earlier callback raises; the first failure is re-raised
    at the end (`first_failure` seeds it, for callers that failed earlier)."""
    for done in callbacks:
        try:
            done(error, None, False)
        except Exception as failure:  # noqa: BLE001 - re-raised below
            if first_failure is None:
                first_failure = failure
    if first_failure is not None:
        raise first_failure


class Rendezvous(abc.ABC):
    """A per-step table pairing `send`s with `recv`s; see the module docstring."""

    @abc.abstractmethod
    def send(self, key, value, is_dead=False):
        """Delivers `value` for `key`; never blocks. Raises the abort error or
        AbortedError on a duplicated send."""

    @abc.abstractmethod
    def recv_async(self, key, done):
        """Arranges for `done(error, value, is_dead)` to be called exactly once."""

    @abc.abstractmethod
    def start_abort(self, error):
        """Fails every waiting and later call with `error` (an OpError); first abort wins."""

    @abc.abstractmethod
    def pending(self):
        """What is still waiting, oldest first, as a list of PendingRecord."""

    @property
    @abc.abstractmethod
    def status(self):
        """The abort error, or None while the rendezvous is healthy."""

    @property
    def is_aborted(self):
        return self.status is not None

    def has_pending(self):
        """True while any recv or value is waiting (cheaper than `pending()` where overridden)."""
        return bool(self.pending())

    def recv(self, key, timeout=None):
        """Waits for `key`'s value and returns `(value, is_dead)`.

        `timeout` is in seconds (None waits forever); on timeout raises
        DeadlineExceededError naming the key, leaving the recv registered.
        """
        return self._recv_waiting(key, timeout)

    def _recv_waiting(self, key, timeout, take_reader=None, start=None):
        """`recv`. `start(key, done)` asks for the value (default: recv_async). Then, unless the value
        is already in, `take_reader()` may return a reader (an object with `wait(seconds)`, `wake()`
        and `done()`, see RemoteRendezvous.recv): the wait is spent in `reader.wait`, which may itself
        read and deliver the value, and `wake()` is called once the value is in."""
        # A bare lock is the cheapest one-shot signal; `done` may run before
        # recv_async returns, in which case acquire() succeeds at once.
        signal = threading.Lock()
        signal.acquire()
        result = []
        reader = None

        def done(error, value, is_dead):
            result.append((error, value, is_dead))
            signal.release()
            if reader is not None:  # read when called: the reader is taken after the request left
                reader.wake()

        (start or self.recv_async)(key, done)
        if take_reader is not None and not result:
            reader = take_reader()
        if reader is None:
            got = signal.acquire(timeout=-1 if timeout is None else max(timeout, 0))
        else:
            try:
                end = None if timeout is None else monotonic() + max(timeout, 0)
                while not (got := signal.acquire(False)):
                    remaining = _READER_SLICE_S if end is None else min(_READER_SLICE_S, end - monotonic())
                    if remaining <= 0:
                        break
                    reader.wait(remaining)
            finally:
                reader.done()
        if not got:
            raise DeadlineExceededError(
                f"Timed out waiting for {key} after {timeout}s (the recv stays registered)",
                device=key.dst_device, key=str(key))
        error, value, is_dead = result[0]
        if error is not None:
            # The abort error is one object shared by every failed call; drop
            # its old traceback so repeated raises don't pile frames onto it.
            raise error.with_traceback(None)
        return value, is_dead

    @staticmethod
    def _check_abort_error(error):
        if not isinstance(error, OpError):
            raise TypeError(f"start_abort needs an OpError, got {type(error).__name__}: {error!r}")
