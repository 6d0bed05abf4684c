"""The worker service of one task: a ZeroMQ ROUTER socket and its handlers.

One thread reads the ROUTER: it sleeps in poll(2) on the socket's ZMQ_FD
(never inside a ZeroMQ call), reads requests under the socket's lock,
answers the cheap ones itself (ListDevices, GetStatus, RecvTensor when the
value is already there, CleanupStep, AbortStep, DeregisterGraph), starts
RunGraph's partitions itself (they run until they wait; a partition that may
block, a py_func, or that has loops goes to a thread pool instead) and hands
RegisterGraph to the pool, so a long step never blocks the socket. A reply made on another thread (a step's result, a RecvTensor
whose value arrived later) is sent by that thread under the same lock
(ZeroMQ sockets may move between threads across full memory barriers); it
then checks ZMQ_EVENTS and wakes the loop through a pipe if requests are
waiting, since ZMQ_FD is edge-triggered.

* RegisterGraph: this task's device partitions, sent as one graph: every
  node on a full device name of this task, every edge between devices
  already a _Send/_Recv pair (the master's plan is partitioned per device,
  once). The worker splits it by device, builds one GraphExecutor per
  device and returns a graph handle.
* RunGraph(handle, step_id, send_keys + tensors, recv_keys, timeout_ms):
  finds or creates the step's RemoteRendezvous, sends the fed tensors into
  it and starts the executors; when the last one finishes (on whichever
  thread finishes it) it receives the fetch keys and replies with them. The
  step is aborted (and the reply says what it still waited for) when
  timeout_ms passes. The RecvTensor requests it carries (`recv_tensors`,
  from a master that pulls at the step's start) are served just before the
  executors start, each answered by its own reply.
* A request made in this process (a session on this server's own target)
  skips the socket: `handle_in_process` runs its handler on the caller's
  thread and answers the caller's call directly, as TF's worker cache hands
  its master the local worker.
* RecvTensor(step_id, key): find-or-create the step's rendezvous (the
  request may come before this worker's RunGraph) and reply when the local
  send happens (long poll). The key's source device must be local and its
  incarnation current (else AbortedError: the requester saw an older life
  of this worker).
* CleanupStep(step_id): forgets the step's rendezvous, aborting whatever
  still waits; late requests for a cleaned step fail instead of waiting.
* AbortStep(step_id, error): aborts the step's rendezvous and executors.

A malformed message gets an InvalidArgumentError reply and the loop goes
on; so does any other failure while handling one message (it is counted
and answered with an error). Should the loop itself die, `on_fatal(error)`
is called (the Server marks itself failed; `graphrt server` then exits
non-zero, so a supervisor restarts it) rather than leaving a live process
that no longer serves. Nothing is unpickled.
"""
import itertools
import json
import os
import select
import sys
import threading
import time
from functools import partial

import numpy as np
import zmq

from .. import errors
from ..client.config import ConfigProto
from ..framework.device_spec import parse_full_name
from ..framework.graph_def import GraphDef
from ..ops import py_func_registry
from ..rendezvous import ParsedKey, RendezvousManager, parse_key
from ..rendezvous.remote import RemoteRendezvous
from ..runtime import device_factory
from ..runtime.graph_executor import GraphExecutor, run_io_callback
from ..runtime.runner import Runner
from ..runtime.step import Step
from ..runtime.step_driver import StepDriver
from ..runtime.step_stats import StepStatsCollector
from . import loopback, shared_payload, wire
from .log_limit import RateLimitedLog
from .sockets import readable, recv_frames, send_frames
from .step_table import GraphQuota, StepTable
from .yield_policy import YieldPolicy
from .channel import ChannelPool, _deliver, read_only, serve_in_process, stop_serving_in_process
from .cluster import ClusterSpec, tcp_endpoint

_MAX_POOL_REQUESTS = 1024     # RegisterGraph/RunGraph requests queued or running at once
_RCVHWM = 1000                # messages buffered per peer connection before TCP pushes back
_MAX_BATCH = 64               # deferred bookkeeping (after-reply work) run at once under a stream of requests
_SHUTDOWN_ANSWER_GRACE_S = 0.2  # how long a stopping worker lets peers read its Shutdown answers
_BINARY_RECV_TENSOR = wire.BINARY_RECV_TENSOR  # a binary RecvTensor header's first byte
_BINARY_RECV_TENSOR_SHARED = wire.BINARY_RECV_TENSOR_SHARED  # the same, from an asker that reads shared memory
_SHARED_MIN_BYTES = shared_payload.SHARED_MIN_BYTES
_MAX_CACHED_KEYS = 4096       # parsed keys kept per registered graph, and for RecvTensor
_INLINE_STEP_NS = 200_000     # a RunGraph whose kernels take less runs on the thread that received it


class _Registered:
    __slots__ = ("handle", "executors", "partition_graphs", "_inline", "_keys", "_prefetch")

    def __init__(self, handle, executors, partition_graphs):
        self.handle = handle
        self.executors = executors
        self.partition_graphs = partition_graphs
        self._keys = {}   # key text -> ParsedKey: a graph's steps feed and fetch the same keys
        self._inline = None
        self._prefetch = None

    def prefetch_keys(self, task):
        """The keys of the receives from other tasks that wait on nothing (a `_Recv` with no input):
        each step asks for them the moment it starts. A receive with inputs (in a loop, a branch, or
        after a control dependency) is asked for when it runs, as before."""
        if self._prefetch is None:
            keys, prefix = [], task + "/"
            for part in self.partition_graphs:
                for node in part.node:
                    a = node.attrs
                    if node.op != "_Recv" or node.input or a.get("client_terminated") \
                            or str(a.get("send_device", "")).startswith(prefix):
                        continue
                    try:
                        keys.append(ParsedKey(a["send_device"], int(a["send_device_incarnation"]) & (2 ** 64 - 1),
                                              a["recv_device"], a["tensor_name"], 0, 0))
                    except (errors.OpError, KeyError, TypeError, ValueError):
                        continue  # its kernel reports the bad attrs when it runs
            self._prefetch = keys
        return self._prefetch

    def parse_keys(self, texts):
        out = []
        for text in texts:
            key = self._keys.get(text)
            if key is None:
                key = parse_key(text)  # raises InvalidArgumentError for a bad key: nothing is cached
                if len(self._keys) < _MAX_CACHED_KEYS:
                    self._keys[text] = key
            out.append(key)
        return out

    def runs_inline(self):
        """Whether a RunGraph may run these partitions on the thread that received it (the serving
        loop, which must stay free to answer RecvTensor and AbortStep): only when every kernel
        proved cheap over the executors' profiled first runs (see GraphExecutor.all_cheap)."""
        if self._inline is None:
            if any(ex.runs_to_profile > 0 for ex in self.executors):
                return False
            self._inline = all(ex.all_cheap() for ex in self.executors)
        return self._inline


class _PendingReply:
    """What one RunGraph owes its caller: the reply sent when the step driver says it is over."""

    __slots__ = ("identity", "request_id", "step", "recv_keys", "recvs")

    def __init__(self, identity, request_id, step, recv_keys, recvs):
        self.identity = identity
        self.request_id = request_id
        self.step = step
        self.recv_keys = recv_keys
        self.recvs = recvs


class _Peers:
    """The transport a RemoteRendezvous uses: RecvTensor to other tasks over a ChannelPool."""

    def __init__(self, service):
        self._service = service
        self._addresses = {}
        self._holding = threading.local()  # .tasks: {task: [[id, key], ...]} while prefetch_recvs holds

    def recv_tensor(self, src_task, step_id, key, done, blocking=False):
        address = self._addresses.get(src_task)
        if address is None:
            address = self._addresses[src_task] = self._service.cluster.address_of_task(src_task)
        if address is None:
            raise errors.InternalError(f"No worker known as {src_task} (cluster: {self._service.cluster})",
                                       key=key.full_key)
        if blocking:  # a blocking recv reads its own reply: no executor waits on this thread
            on_reply = partial(_deliver_tensor, done)
        else:
            def on_reply(error, message):
                run_io_callback(_deliver_tensor, done, error, message)

        held = getattr(self._holding, "tasks", None)
        if held is not None and src_task in held:
            call = self._service.channels.hold(address, "RecvTensor", on_reply, peer_name=src_task)
            if call is not None:
                held[src_task].append([call.id, key.full_key])
                return call
        return self._service.channels.call(address, "RecvTensor", {"step_id": step_id, "key": key.full_key},
                                           callback=on_reply, peer_name=src_task)

    def read_here(self, src_task, started=None):
        """A blocking recv from `src_task` reads its reply on its own thread (ChannelPool.read_here);
        `started` is when the recv began (perf_counter)."""
        address = self._addresses.get(src_task) or self._service.cluster.address_of_task(src_task)
        return None if address is None else self._service.channels.read_here([address], started)

    def holding(self, tasks):
        """While active on this thread, RecvTensor requests to `tasks` are held for their RunGraphs to
        carry; yields {task: [[request id, key], ...]}."""
        return _Holding(self._holding, tasks)

    def cancel(self, handle):
        self._service.channels.forget(handle)


class _Holding:
    __slots__ = ("_local", "tasks")

    def __init__(self, local, tasks):
        self._local = local
        self.tasks = {task: [] for task in tasks}

    def __enter__(self):
        self._local.tasks = self.tasks
        return self.tasks

    def __exit__(self, *exc):
        self._local.tasks = None


def _deliver_tensor(done, error, message):
    """A RecvTensor's answer to the rendezvous waiting for it."""
    if error is None:
        spec = message.fields.get("error")  # message.error without the property's call: a tensor reply has none
        error = None if spec is None else wire.error_from_wire(spec)
        if error is None:
            value = message.values[0] if message.values else None
            if value is wire.DEAD:
                done(None, None, True)
            else:
                done(None, value, False)
            return
    done(error, None, False)


class _InProcessCaller:
    """Who asked, for a request made in this process: the reply goes to its call, not a socket."""

    __slots__ = ("call",)

    def __init__(self, call):
        self.call = call

    def answer(self, request_id, error, fields, values):
        call = self.call
        if not call.id or not call.claim():
            return  # one-way, or its caller gave up on it
        try:
            # A RunGraph's answer without step stats is plain too (recv_keys and an empty result).
            out = _json_copy(fields) if fields and fields.get("result") else dict(fields or ())
        except (TypeError, ValueError) as e:  # what the wire could not carry either
            out, error, values = {}, _as_op_error(e), ()
        out["error"] = None if error is None else wire.error_to_wire(error)
        _deliver(call, None, wire.Message(wire.REPLY, request_id, out, read_only(values)))


def _json_copy(fields):
    """The fields as a peer would decode them (the same JSON round trip the wire makes)."""
    return json.loads(_to_json(fields))


_to_json = wire.to_json


# Requests whose fields are only strings, numbers, booleans and lists of strings (built by the master),
# which a handler only reads: a shallow copy is what the wire would give. The rest take the JSON trip.
_PLAIN_REQUESTS = frozenset({"RunGraph", "CleanupStep", "AbortStep", "DeregisterGraph", "GetStatus",
                             "ListDevices"})


class WorkerService:
    def __init__(self, cluster, job_name, task_index, config=None, bind_address="127.0.0.1",
                 curve_secret_key=None, curve_authorized=None, port=None, devices=None, on_fatal=None):
        self.cluster = ClusterSpec(cluster)
        self.config = config or ConfigProto()
        self.job_name = job_name
        self.task_index = int(task_index)
        self.task = f"/job:{job_name}/replica:0/task:{self.task_index}"
        self._max_bytes = int(getattr(self.config, "max_message_bytes", 0) or wire.DEFAULT_MAX_MESSAGE_BYTES)
        self.devices = devices or device_factory.create_local_devices(self.config, job_name, 0, self.task_index)
        self._by_name = {d.name: d for d in self.devices}
        self._incarnations = {d.name: d.incarnation for d in self.devices}
        self._curve = None
        if curve_secret_key:
            from .security import CurveServer
            self._curve = CurveServer.from_files(curve_secret_key, curve_authorized)
        client_curve = self._curve.client() if self._curve is not None else None
        # Large tensors to askers of this machine go through shared memory (shared_payload.py): never
        # with CURVE keys, whose users asked for encrypted connections.
        self.arenas = shared_payload.PayloadArenas() \
            if self._curve is None and shared_payload.enabled() else None
        self.channels = ChannelPool(curve=client_curve, max_message_bytes=self._max_bytes,
                                    name=f"graphrt-peers{self.task}")
        peers = self._peers = _Peers(self)
        self.rendezvous = RendezvousManager(lambda step_id: RemoteRendezvous(step_id, self.task, peers))
        self.step_table = StepTable(self.rendezvous, self.task)
        self.graph_quota = GraphQuota(self.task)
        self._pool_requests = 0
        self._graphs = {}
        self._graph_ids = itertools.count(1)
        self._steps = {}
        self._lock = threading.Lock()
        self._messages = 0
        self._bad_messages = 0
        self._handler_failures = 0
        self._on_fatal = on_fatal
        self.failure = None     # why the serving loop died, if it did
        self._log = RateLimitedLog(f"graphrt worker {self.task}")
        threads = max(4, 2 * len(self.devices))
        self._exec_runner = Runner(threads, name=f"graphrt-worker-exec{self.task}")
        self._driver = StepDriver(self._exec_runner)   # the local session's step runner, on this pool's thread
        self._rpc_runner = Runner(128, name=f"graphrt-worker-rpc{self.task}")
        self._handlers = {
            "ListDevices": self._list_devices, "GetStatus": self._get_status, "RecvTensor": self._recv_tensor,
            "CleanupStep": self._cleanup_step, "AbortStep": self._abort_step,
            "DeregisterGraph": self._deregister_graph,
            "RegisterGraph": self._in_pool(self._register_graph), "RunGraph": self._run_graph,
        }
        # A caller in this process waits for the answer anyway: its requests run on its own thread.
        self._in_process_handlers = dict(self._handlers, RegisterGraph=self._register_graph)
        self._ctx = zmq.Context()
        self._router = self._ctx.socket(zmq.ROUTER)
        try:
            self._router.setsockopt(zmq.LINGER, 0)
            self._router.setsockopt(zmq.SNDHWM, 0)
            # Bounded input per connection: a flooding peer is slowed down by TCP instead of making
            # this process buffer everything it sends (ZeroMQ stops reading, it drops nothing).
            self._router.setsockopt(zmq.RCVHWM, _RCVHWM)
            self._router.setsockopt(zmq.MAXMSGSIZE, self._max_bytes + (1 << 20))
            if self._curve is not None:
                self._curve.start(self._ctx)
                self._curve.apply_server(self._router)
            if port is None:
                port = self.cluster.task_address(job_name, self.task_index).rpartition(":")[2]
            self.endpoint = f"tcp://{bind_address}:{port}"
            # Processes of this machine connect here instead (loopback.py). Bound right after the TCP
            # address (whose failure names the address the user gave): a TCP handshake takes round trips.
            self.loopback_endpoints = loopback.server_endpoints(bind_address, port)
            for endpoint in [self.endpoint] + self.loopback_endpoints:
                try:
                    self._router.bind(endpoint)
                except zmq.ZMQError as e:
                    raise _bind_error(self.task, endpoint, e) from None
        except Exception:
            self._close_sockets()
            self.channels.close()
            raise
        self._router_fd = self._router.getsockopt(zmq.FD)
        self._router_lock = threading.Lock()
        self._router_closed = False
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._running = True
        self._stopping = False
        self._answers_sent = 0
        self._loop_ident = None
        self._recv_keys = {}  # RecvTensor key text -> its checked ParsedKey: the same keys come every step
        self._held_replies = []  # RunGraph replies of inline steps, sent once the loop's input is drained
        self._after_replies = []  # (function, argument): the loop's bookkeeping that no reply waits for
        self.yield_policy = YieldPolicy()  # whether the loop yields its core after a reply in an inline run
        self._running_inline = False  # the loop runs a step's partitions (between start_step and its return)
        self._thread = threading.Thread(target=self._serve, name=f"graphrt-worker{self.task}", daemon=True)
        self._thread.start()
        endpoints = {self.endpoint}
        try:
            endpoints.add(tcp_endpoint(self.cluster.task_address(job_name, self.task_index)))
        except (ValueError, TypeError):
            pass  # not in its own cluster spec (a port given explicitly): only its bound endpoint
        serve_in_process(endpoints, self)

    # -- the loop ---------------------------------------------------------------------
    def _serve(self):
        self._loop_ident = threading.get_ident()
        poll = select.poll()
        poll.register(self._router_fd, select.POLLIN)
        poll.register(self._wake_r, select.POLLIN)
        router, lock = self._router, self._router_lock
        try:
            while self._running:
                # One request at a time: whether another is queued is asked after this one is answered,
                # not before (the question is a system call, and every request waits for it first).
                with lock:
                    frames = recv_frames(router) if readable(router) else None
                if frames is not None:
                    head = frames[1].buffer if len(frames) == 2 else None
                    if head is not None and head.nbytes and (head[0] == _BINARY_RECV_TENSOR
                                                             or head[0] == _BINARY_RECV_TENSOR_SHARED):
                        # A tensor's pull, on every cross-process edge: straight to its handler (its
                        # serving runs cold after a wake-up, and each call costs several times its loop time).
                        try:
                            self._messages += 1
                            self._dispatch_recv_tensor(frames[0].bytes, head, frames)
                        except Exception as e:  # noqa: BLE001 - as _dispatch_safely
                            self._handler_failed(frames, e)
                    else:
                        self._dispatch_safely(frames)
                    frames = head = None
                    if len(self._after_replies) > _MAX_BATCH:
                        self._run_after_replies()  # bounded under a stream of requests
                    continue
                if self._held_replies:
                    self._send_held_replies()
                    continue  # our sends may have consumed the socket's edge-triggered signal
                if self._after_replies:
                    # Once the replies are out: the master's step goes on meanwhile.
                    self._run_after_replies()
                    continue
                # ZMQ_FD is edge-triggered: EVENTS was just checked, so a later arrival signals it again
                # (and a thread that sends meanwhile checks EVENTS itself and wakes us through the pipe).
                for fd, _ in poll.poll():
                    if fd == self._wake_r:
                        try:
                            os.read(self._wake_r, 65536)
                        except BlockingIOError:
                            pass
        except BaseException as e:  # noqa: BLE001 - the loop must not end silently while the process lives
            if self._running and not self._stopping:
                self.failure = errors.UnavailableError(
                    f"The worker service of {self.task} stopped serving: {type(e).__name__}: {e}")
                print(f"graphrt worker {self.task}: the serving loop died: {type(e).__name__}: {e}",
                      file=sys.stderr)
        finally:
            try:
                self._send_held_replies()
                self._run_after_replies()
            finally:
                with lock:
                    self._close_sockets()
            if self.failure is not None:
                self._running = False
                if self._on_fatal is not None:
                    self._on_fatal(self.failure)

    def _send(self, identity, frames):
        """Sends on the calling thread (any thread; the socket's lock serializes its users)."""
        with self._router_lock:
            if self._router_closed:
                return
            try:
                send_frames(self._router, [identity] + frames)
                self._answers_sent += 1
            except zmq.ZMQError as e:  # the peer is gone; nothing to tell
                self._log(f"graphrt worker {self.task}: could not send a reply: {e}")
            pending = threading.get_ident() != self._loop_ident and readable(self._router)
        if pending:
            try:
                os.write(self._wake_w, b"\0")
            except OSError:
                pass
        if self._running_inline and threading.get_ident() == self._loop_ident:
            # The loop goes on running the step, and ZeroMQ's thread, which writes this reply out, may be
            # queued behind it (yield_policy.py). Elsewhere a reply is soon followed by sleep or more replies.
            self.yield_policy.after_send()

    def _send_held_replies(self):
        held, self._held_replies = self._held_replies, []
        for identity, request_id, error, fields, values in held:
            self._reply(identity, request_id, error, fields, values)

    def _after_reply(self, function, argument):
        """`function(argument)` now, or on the serving loop once its replies are sent: everything the
        loop does is on a step's critical path until then (ZeroMQ's thread may wait for it, see
        yield_policy.py), and these the master does not wait for."""
        if threading.get_ident() == self._loop_ident:
            self._after_replies.append((function, argument))
        else:
            function(argument)

    def _run_after_replies(self):
        todo, self._after_replies = self._after_replies, []
        for function, argument in todo:
            try:
                function(argument)
            except Exception as e:  # noqa: BLE001 - bookkeeping of one step; the loop goes on
                self._log(f"graphrt worker {self.task}: {function.__name__}({argument}) failed: "
                          f"{type(e).__name__}: {wire.short(e, 200)}")

    def _reply(self, identity, request_id, error=None, fields=None, values=()):
        if type(identity) is _InProcessCaller:
            identity.answer(request_id, error, fields, values)
            return
        if request_id == 0 and error is None:
            return  # one-way request
        try:
            frames = wire.encode_reply(request_id, error, fields, values)
        except Exception as e:  # noqa: BLE001 - e.g. a fetched value the wire cannot carry
            frames = wire.encode_reply(request_id, _as_op_error(e))
        self._send(identity, frames)

    def _dispatch_safely(self, frames):
        """Handles one message; whatever goes wrong stays with that message."""
        try:
            self._dispatch(frames)
        except Exception as e:  # noqa: BLE001 - a bug or a hostile message; the loop goes on
            self._handler_failed(frames, e)

    def _handler_failed(self, frames, e):
        """A message's handler raised (a bug, or a hostile message): logged and answered with an
        InternalError; the loop goes on."""
        self._handler_failures += 1
        self._log(f"graphrt worker {self.task}: failed to handle a message: {type(e).__name__}: "
                  f"{wire.short(e, 200)}")
        try:
            identity = frames[0].bytes
            self._send(identity, wire.encode_reply(wire.best_effort_id(frames[1:]), errors.InternalError(
                f"{self.task} failed to handle the message: {type(e).__name__}")))
        except Exception:  # noqa: BLE001 - nothing sensible to answer, or nobody to answer to
            pass

    def _dispatch(self, frames):
        self._messages += 1
        if len(frames) < 2:
            self._bad_messages += 1
            if frames:
                self._send(frames[0].bytes, wire.encode_reply(0, wire.WireError("Empty message")))
            return
        identity = frames[0].bytes
        if len(frames) == 2:
            head = frames[1].buffer
            if head.nbytes and head[0] == wire.BINARY_RECV_TENSOR:
                self._dispatch_recv_tensor(identity, head, frames)
                return
        try:
            message = wire.decode(frames[1:], self._max_bytes, expect=wire.MESSAGE_TYPES)
        except errors.OpError as e:  # wire.decode maps every failure to a WireError
            self._bad_messages += 1
            self._send(identity, wire.encode_reply(wire.best_effort_id(frames[1:]), e))
            return
        try:
            self._handlers[message.type](identity, message)
        except Exception as e:  # noqa: BLE001 - every failure becomes an error reply
            self._reply(identity, message.id, _as_op_error(e))

    def _in_pool(self, handler):
        def run_in_pool(identity, message):
            with self._lock:
                if self._pool_requests >= _MAX_POOL_REQUESTS:
                    raise errors.ResourceExhaustedError(
                        f"{message.type}: {self.task} already has {self._pool_requests} RegisterGraph/RunGraph "
                        f"requests queued or running")
                self._pool_requests += 1

            def work():
                try:
                    handler(identity, message)
                except Exception as e:  # noqa: BLE001
                    self._reply(identity, message.id, _as_op_error(e))
                finally:
                    with self._lock:
                        self._pool_requests -= 1
            self._rpc_runner(work)
        return run_in_pool

    def handle_in_process(self, call, fields, values):
        """A request made in this process (a session on this server's target): handled on the
        caller's thread, with no socket and no hand-off; the fields take the wire's JSON round trip
        so a handler sees exactly what a remote caller would send."""
        caller = _InProcessCaller(call)
        self._messages += 1
        try:
            plain = call.msg_type in _PLAIN_REQUESTS
            message = wire.Message(call.msg_type, call.id, dict(fields or ()) if plain else _json_copy(fields or {}),
                                   read_only(values))
            self._in_process_handlers[call.msg_type](caller, message)
        except Exception as e:  # noqa: BLE001 - every failure becomes an error reply, as on the wire
            self._reply(caller, call.id, _as_op_error(e))

    # -- handlers ----------------------------------------------------------------------------
    def device_attributes(self):
        return [{"name": d.name, "device_type": d.device_type, "incarnation": int(d.incarnation)}
                for d in self.devices]

    def _list_devices(self, identity, message):
        self._reply(identity, message.id, fields={"result": {
            "task": self.task, "devices": self.device_attributes(), "cluster": self.cluster.as_dict(),
            "protocol": wire.PROTOCOL_VERSION, "pid": os.getpid()}})

    def _get_status(self, identity, message):
        self._reply(identity, message.id, fields={"result": self.status()})

    def status(self):
        with self._lock:
            running = sorted(self._steps)
            graphs = len(self._graphs)
        return {"task": self.task, "pid": os.getpid(), "devices": self.device_attributes(),
                "graphs": graphs, "running_steps": running, "rendezvous_steps": self.rendezvous.active_steps(),
                "messages": self._messages, "bad_messages": self._bad_messages,
                "handler_failures": self._handler_failures, "step_table": self.step_table.stats(),
                "graph_quota": self.graph_quota.stats(),
                "shared_payload": None if self.arenas is None else self.arenas.stats()}

    def _register_graph(self, identity, message):
        graph_def = GraphDef.from_dict(message.fields["graph_def"])
        py_func_registry.check_registered_graph(graph_def, self.task)
        debug_info = message.fields.get("debug_info") or {}
        parts = self._device_partitions(graph_def)
        executors = [GraphExecutor(parts[name], self._by_name[name], self._exec_runner, debug_info)
                     for name in sorted(parts)]
        handle = f"{next(self._graph_ids):016x}"
        with self._lock:
            for old in self.graph_quota.admit(handle, message.nbytes):
                self._graphs.pop(old, None)  # a step running it keeps its executors until it ends
            self._graphs[handle] = _Registered(handle, executors, [parts[n] for n in sorted(parts)])
        self._reply(identity, message.id, fields={"result": {
            "graph_handle": handle, "partition_graphs": [parts[n].to_dict() for n in sorted(parts)]}})

    def _device_partitions(self, graph_def):
        """{device: GraphDef}: the registered graph split by device. Each node must be on a device
        of this task and take its inputs from its own device (the master partitioned per device)."""
        device_of, parts = {}, {}
        for node in graph_def.node:
            node.device = device_of[node.name] = self._local_device_of(node)
            parts.setdefault(node.device, GraphDef(versions=graph_def.versions)).node.append(node)
        for node in graph_def.node:
            for inp in node.input:
                src = inp[1:] if inp.startswith("^") else inp.split(":")[0]
                if src not in device_of:
                    raise errors.InvalidArgumentError(
                        f"Cannot register the graph for {self.task}: node {node.name} has input {inp!r}, which is "
                        f"not in the graph", node=node.name)
                if device_of[src] != node.device:
                    raise errors.InvalidArgumentError(
                        f"Cannot register the graph for {self.task}: node {node.name} on {node.device} takes "
                        f"{inp!r} from {device_of[src]} (edges between devices must be _Send/_Recv pairs: "
                        f"the master partitions per device)", node=node.name)
        return parts

    def _local_device_of(self, node):
        if not node.device:
            raise errors.InvalidArgumentError(f"Missing device name in: {node.name} ({node.op})", node=node.name)
        try:
            name = parse_full_name(node.device).to_string()
        except errors.OpError:
            raise errors.InvalidArgumentError(f"Node {node.name} has an invalid device name {node.device!r}",
                                              node=node.name) from None
        if name not in self._by_name:
            raise errors.InvalidArgumentError(
                f"Node {node.name} is placed on {name}, which is not a device of {self.task} "
                f"(devices: {sorted(self._by_name)})", node=node.name)
        return name

    def _deregister_graph(self, identity, message):
        with self._lock:
            graph = self._graphs.pop(message.fields["graph_handle"], None)
        if graph is not None:
            self.graph_quota.release(graph.handle)
        self._reply(identity, message.id)

    def prefetch_recvs(self, step_id, handle, carried_by=()):
        """For a master of this process, just before it sends the step's RunGraphs: asks the other
        tasks now for what the graph's partitions receive at their start, so each request reaches
        its task with (not after) that task's RunGraph and is answered as soon as the value is sent.
        Requests to the tasks in `carried_by` are not sent but returned, {task: [[id, key], ...]},
        for that task's RunGraph to carry (`recv_tensors`); the caller must then send it through
        this service's pool. The step's rendezvous is made here; the RunGraph that follows, or the
        master's CleanupStep, takes it over."""
        graph = self._graphs.get(handle)
        if graph is None or not self._running:
            return {}  # the RunGraph reports it
        keys = graph.prefetch_keys(self.task)
        if not keys:
            return {}
        rendezvous = self.rendezvous.find_or_create(step_id)
        with self._peers.holding(carried_by) as held:
            for key in keys:
                rendezvous.prefetch(key)
        return {task: pulls for task, pulls in held.items() if pulls}

    def _run_graph(self, identity, message):
        """Starts the step on this thread and returns: the reply goes out when its last partition
        finishes, on whichever thread finishes it. A step of cheap kernels then costs the serving
        loop no hand-off, and a step waiting for a tensor holds no thread (as TF's RunGraphAsync).
        The RecvTensor requests it carries (`recv_tensors`) are served as if they had come alone,
        just before its partitions start; if the step cannot start, they fail with it."""
        pulls = message.fields.get("recv_tensors")
        if not pulls:
            self._start_run_graph(identity, message, ())
            return
        if type(identity) is _InProcessCaller:
            raise errors.InvalidArgumentError("RunGraph: recv_tensors ride only on requests over the wire")
        try:
            self._start_run_graph(identity, message, pulls)
        except Exception as e:
            error = errors.mark_derived(errors.AbortedError(
                f"RunGraph of step {message.fields.get('step_id')} on {self.task} did not start: "
                f"{e.message if isinstance(e, errors.OpError) else e}"))
            for request_id, _ in pulls:
                self._reply(identity, request_id, error)
            raise

    def _start_run_graph(self, identity, message, pulls):
        fields = message.fields
        for done_step in fields.get("cleanup_step_ids", ()):  # earlier steps' CleanupStep, carried along
            self._after_reply(self._forget_step, done_step)
        handle = fields["graph_handle"]
        graph = self._graphs.get(handle)
        if graph is None:
            raise errors.AbortedError(f"Graph handle is not found: {handle}. Possibly, this worker just restarted "
                                      f"(or evicted the graph to register others).")
        self.graph_quota.touch(handle)
        step_id = fields["step_id"]
        send_keys = fields.get("send_keys", [])
        if len(send_keys) != len(message.values):
            raise errors.InvalidArgumentError(f"RunGraph: {len(send_keys)} send keys but {len(message.values)} "
                                              f"tensors")
        sends = graph.parse_keys(send_keys) if send_keys else ()
        recv_keys = fields.get("recv_keys", [])
        recvs = graph.parse_keys(recv_keys) if recv_keys else ()
        stats = StepStatsCollector() if fields.get("trace") else None
        with self._lock:
            if step_id in self._steps:
                raise errors.InvalidArgumentError(f"Step {step_id} is already running on {self.task}")
            if len(self._steps) >= _MAX_POOL_REQUESTS:
                raise errors.ResourceExhaustedError(
                    f"RunGraph: {self.task} already runs {len(self._steps)} steps")
            rendezvous = self.step_table.for_run(step_id)
            step = Step(step_id, rendezvous, [], 0, len(graph.executors), stats)
            self._steps[step_id] = step
        pending = _PendingReply(identity, message.id, step, recv_keys, recvs)
        try:
            if rendezvous.status is not None:
                raise rendezvous.status
            for key, value in zip(sends, message.values):
                if value is wire.DEAD:
                    rendezvous.send(key, None, True)
                else:
                    rendezvous.send(key, value, False)
            runs = [ex.start(step) for ex in graph.executors]
        except BaseException:
            self._end_step(pending)
            raise
        released = fields.get("shared_released")
        shared = released is not None and self.arenas is not None
        if shared and released:
            self.arenas.release(identity, released)
        for request_id, key in pulls:  # each answered as if it had come alone
            try:
                self._answer_recv_tensor(identity, request_id, step_id, key, shared)
            except Exception as e:  # noqa: BLE001
                self._reply(identity, request_id, _as_op_error(e))
        inline = graph.runs_inline()
        on_loop = inline and threading.get_ident() == self._loop_ident
        if on_loop:
            self._running_inline = True
        try:
            self._driver.start_step(step, runs, int(fields.get("timeout_ms", 0) or 0),
                                    lambda: self._finish_run_graph(pending), where=f" on {self.task}",
                                    inline=inline)
        finally:
            if on_loop:
                self._running_inline = False

    def _finish_run_graph(self, pending):
        """The step's partitions are done (or given up on): answer with the fetched keys or the error."""
        step = pending.step
        error, values, result = step.error, [], {}
        try:
            if error is None:
                for key in pending.recvs:
                    value, is_dead = step.rendezvous.recv(key, timeout=0)
                    values.append(wire.DEAD if is_dead else value)
                if step.stats is not None:
                    result["step_stats"] = _stats_to_wire(step.stats.finalize())
        except errors.DeadlineExceededError as e:
            error = errors.InternalError(f"RunGraph of step {step.step_id} on {self.task}: every partition "
                                         f"finished but a fetched key was never sent ({e.key})", key=e.key)
        except Exception as e:  # noqa: BLE001 - the reply carries it
            error = e
        self._end_step(pending)
        # Replied only once the step is no longer running here (a status request that follows sees it).
        if error is not None:
            reply = (pending.identity, pending.request_id, error, None, ())
        elif pending.recv_keys or result:
            reply = (pending.identity, pending.request_id, None, {"recv_keys": pending.recv_keys, "result": result},
                     values)
        else:  # a task that only sends: the empty reply, whose header is binary (the master reads no fields)
            reply = (pending.identity, pending.request_id, None, None, ())
        if threading.get_ident() == self._loop_ident:
            # An inline step, finished on the serving loop: the RecvTensor requests that came in meanwhile
            # are answered first. Other tasks' steps wait on those tensors; the master waits for
            # everything anyway.
            self._held_replies.append(reply)
        else:
            self._reply(*reply)

    def _end_step(self, pending):
        step_id = pending.step.step_id
        with self._lock:
            self._steps.pop(step_id, None)
        # Its table waits (unowned) for the CleanupStep; late RecvTensors still find it meanwhile.
        self._after_reply(self.step_table.release, step_id)

    def _dispatch_recv_tensor(self, identity, head, frames):
        """A binary RecvTensor, on every cross-process edge of every step: read and answered without
        the general path's Message, handler table and reply encoder. Right after a wake-up, when all
        of this runs cold, that took a 4-byte pull from 263 to 241 us (remote_transfer.py's child)."""
        shared = False
        try:
            if head[0] == _BINARY_RECV_TENSOR:
                request_id, step_id, text = wire.read_recv_tensor(head, self._max_bytes)
            else:
                request_id, step_id, text, released = wire.read_recv_tensor_shared(head, self._max_bytes)
                shared = self.arenas is not None
                if released and shared:
                    self.arenas.release(identity, released)
        except errors.OpError as e:  # a WireError: answered as `_dispatch` answers any malformed message
            self._bad_messages += 1
            self._send(identity, wire.encode_reply(wire.best_effort_id(frames[1:]), e))
            return
        try:
            self._answer_recv_tensor(identity, request_id, step_id, text, shared)
        except Exception as e:  # noqa: BLE001 - every failure becomes an error reply
            self._reply(identity, request_id, _as_op_error(e))

    def _recv_tensor(self, identity, message):
        self._answer_recv_tensor(identity, message.id, message.fields["step_id"], message.fields["key"])

    def _answer_recv_tensor(self, identity, request_id, step_id, text, shared=False):
        """Answers a RecvTensor once the key's value is sent here. `shared`: the asker reads this process's
        shared memory, where a large tensor goes instead of the socket (shared_payload.py)."""
        key = self._recv_keys.get(text)
        if key is None:
            key = self._checked_recv_key(text)
        rendezvous, ticket = self.step_table.for_recv(step_id, key.full_key)

        def done(error, value, is_dead):
            if ticket is not None:
                self.step_table.recv_answered(step_id, ticket)
            if error is None and not is_dead and type(value) is np.ndarray and type(identity) is bytes:
                # The common answer: a host tensor to a peer over the wire, with the binary header.
                frames = self._shared_reply(identity, request_id, value) \
                    if shared and value.nbytes >= _SHARED_MIN_BYTES else None
                if frames is None:
                    frames = wire.binary_tensor_reply(request_id, value)
                if frames is not None:
                    self._send(identity, frames)
                    return
            if error is not None:
                # The sender's step failed; for the requester that is a consequence, not its root cause.
                error = errors.mark_derived(type(error)(error.message, node=error.node, device=error.device,
                                                        key=error.key)) if isinstance(error, errors.OpError) \
                    else error
                self._reply(identity, request_id, error)
            elif not is_dead and _on_device(value):
                # An accelerator's tensor: copy it to host memory first (on the sender, as TF does),
                # then answer from the copy's completion.
                self._copy_to_host(key, value, lambda err, host=None: self._reply(
                    identity, request_id, err, values=() if err is not None else [host]))
            else:
                self._reply(identity, request_id, values=[wire.DEAD if is_dead else value])

        rendezvous.recv_local_async(key, done)

    def _shared_reply(self, identity, request_id, value):
        """The reply placing `value` in the asker's arena, or None to send it over the socket."""
        if not wire.shareable(value):
            return None  # checked before anything is copied
        placed = self.arenas.place(identity, value)
        return None if placed is None else wire.shared_tensor_reply(request_id, value, *placed)

    def _checked_recv_key(self, text):
        """The ParsedKey of a RecvTensor's key, once it names one of this task's devices in its
        current incarnation; cached, so a key that comes every step is checked once (a device's
        incarnation does not change while this process lives)."""
        key = parse_key(text)  # raises InvalidArgumentError for a bad key: nothing is cached
        device = self._by_name.get(key.src_device)
        if device is None:
            raise errors.InvalidArgumentError(f"Invalid rendezvous key (src): {key.full_key} @ {self.task}",
                                              key=key.full_key)
        if key.src_incarnation != device.incarnation:
            raise errors.AbortedError(
                f"RecvTensor expects a different device incarnation for {device.name}: "
                f"{key.src_incarnation:016x} vs. {device.incarnation:016x}. Your worker job was probably "
                f"restarted. Check your worker job for the reason why it was restarted.",
                device=device.name, key=key.full_key)
        if len(self._recv_keys) >= _MAX_CACHED_KEYS:
            self._recv_keys.clear()  # bounded whatever peers send
        self._recv_keys[text] = key
        return key

    def _copy_to_host(self, key, tensor, done):
        from ..runtime.device_transfer import copy_to_host
        copy_to_host(tensor, self.devices[0], key.src_device, key.edge_name, done)

    def _cleanup_step(self, identity, message):
        self._forget_step(message.fields["step_id"])
        for step_id in message.fields.get("more_step_ids", ()):
            self._forget_step(step_id)
        self._reply(identity, message.id)

    def _forget_step(self, step_id):
        with self._lock:
            step = self._steps.get(step_id)
        if step is not None:
            step.abort(errors.mark_derived(errors.AbortedError(f"Cleanup {step_id}")))
        self.step_table.cleanup(step_id)

    def _abort_step(self, identity, message):
        step_id = message.fields["step_id"]
        spec = message.fields.get("error")
        error = wire.error_from_wire(spec) if spec else errors.AbortedError(f"Step {step_id}")
        errors.mark_derived(error)
        with self._lock:
            step = self._steps.get(step_id)
        if step is not None:
            step.abort(error)
        self.step_table.abort(step_id, error)
        self._reply(identity, message.id)

    # -- lifetime ---------------------------------------------------------------------------
    def stop(self):
        if not self._running or self._stopping:
            return
        self._stopping = True
        stop_serving_in_process(self)
        answers_before = self._answers_sent
        with self._lock:
            steps = list(self._steps.values())
        for step in steps:
            step.abort(errors.AbortedError("Shutdown"))
        try:
            self.rendezvous.abort_all(errors.mark_derived(errors.AbortedError("Shutdown")))
        except Exception:  # noqa: BLE001 - shutting down
            pass
        # Only now let the loop end: it closes the socket, and the Shutdown answers to the receives
        # that were waiting here must be sent before that. A peer drops replies it had not yet read
        # when the connection goes down, so give those answers a moment to be read.
        if self._answers_sent != answers_before:
            time.sleep(_SHUTDOWN_ANSWER_GRACE_S)
        self._running = False
        try:
            os.write(self._wake_w, b"\0")
        except OSError:
            pass
        self._thread.join(5.0)
        self.channels.close()
        if self.arenas is not None:
            self.arenas.close()
        self._rpc_runner.shutdown(1.0)
        self._exec_runner.shutdown(1.0)
        for d in self.devices:
            d.shutdown()
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass

    def _close_sockets(self):
        self._router_closed = True
        try:
            # A short linger lets the replies already queued (the Shutdown aborts of waiting
            # receives among them) reach their peers before the connection drops.
            self._router.close(linger=1000)
        except Exception:  # noqa: BLE001
            pass
        if self._curve is not None:
            self._curve.stop()
        try:
            self._ctx.term()
        except Exception:  # noqa: BLE001
            pass

    def __repr__(self):
        also = "".join(f" (and {e})" for e in self.loopback_endpoints)
        return f"<WorkerService {self.task} {self.endpoint}{also}>"


def _bind_error(task, endpoint, error):
    """A graphrt error naming the address for a failed bind (zmq.ZMQError is not one)."""
    import errno
    if error.errno == errno.EADDRINUSE:
        return errors.UnavailableError(f"Cannot start the server of {task}: address {endpoint} is already in use "
                                       f"({error})")
    return errors.InvalidArgumentError(f"Cannot start the server of {task} on {endpoint}: {error}")


def _on_device(value):
    """True for a tensor in an accelerator's memory (a DeviceTensor), which the wire cannot carry as is."""
    if value is None or type(value) is np.ndarray or isinstance(value, np.generic):
        return False  # the common cases, without the import below (a microsecond on every RecvTensor)
    from ..executor import DeviceTensor
    return isinstance(value, DeviceTensor)


def _as_op_error(e):
    if isinstance(e, errors.OpError):
        return e
    if isinstance(e, MemoryError):
        return errors.ResourceExhaustedError(f"MemoryError: {e}")
    if isinstance(e, (ValueError, TypeError, KeyError, IndexError)):
        return errors.InvalidArgumentError(f"{type(e).__name__}: {e}")
    return errors.InternalError(f"{type(e).__name__}: {e}")


def _stats_to_wire(step_stats):
    out = []
    for dev in step_stats.dev_stats:
        out.append({"device": dev.device, "nodes": [
            {"node_name": s.node_name, "op": s.op, "all_start_micros": s.all_start_micros,
             "all_end_rel_micros": s.all_end_rel_micros, "thread_id": s.thread_id,
             "timeline_label": s.timeline_label,
             "output": [[o.slot, o.dtype, list(o.shape), o.requested_bytes] for o in s.output]}
            for s in dev.node_stats]})
    return out
