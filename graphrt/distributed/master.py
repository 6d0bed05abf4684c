"""MasterBackend: the session backend of `tf.Session("zmq://host:port")`, a cluster.

Registered in `client/session_backends` for 'zmq://' and every other
non-empty target (when graphrt.distributed is imported). The backend
connects to the target server, asks it for the cluster, asks every task for
its devices (ListDevices: name, type, incarnation), and then runs the
session's plans like the local backend with three differences:

* Plans. The client graph uses the *rendezvous* convention: feeds are
  client-terminated `_Recv`s and fetches `_Send`s on the client device (the
  target task's CPU:0). The placer sees every device of every task; a group
  whose request leaves the task open goes to the client task (so an op
  without a device request runs where the client is; `/cpu:1` means the
  client task's CPU:1 if it has one). The graph is partitioned once, per
  device (partition/plan.build_plan); each task's device partitions are
  registered with its worker as one graph once per run signature (the
  worker splits it by device) and the handles are cached.
* Steps. Every step gets a random 57-bit step id. RunGraph goes to every
  task at once; the client task's request carries the feeds and names the
  fetch keys. The first root-cause error wins (errors that are only
  consequences of an abort are "derived" and lose), prefixed with
  `From /job:worker/replica:0/task:1:`; the other tasks get AbortStep.
  After every step, successful or not, every task gets CleanupStep: at once
  after a failure; after a success across tasks it comes with the next
  RunGraph to each task, or within 20 ms as one message (cleanups.py).
  When the client task is served in this process, its partitions' first
  receives from other tasks are asked for before any RunGraph leaves, and
  ride on the RunGraph to their task when this master shares that worker's
  connections (channel.SharedChannels; see `_prefetch`).
* Faults. The step timeout is RunOptions.timeout_in_ms, else
  ConfigProto.operation_timeout_in_ms, else DEFAULT_STEP_TIMEOUT_MS. A
  worker whose connection drops fails the step with UnavailableError naming
  it at once; a worker that does not answer gives DeadlineExceededError
  listing, per task, the rendezvous keys still waiting (their source device
  says where) and the tasks that never replied. After a failed step the
  session asks every task for its devices again before the next step: a
  worker that is back with new incarnations gets its graphs registered
  again, one that is not back fails that step fast with UnavailableError.
  Ctrl-C during `run` aborts the step on every task, then re-raises.
"""
import random
import threading
import time

from .. import errors
from ..framework.device_spec import DeviceInfo, DeviceSpec
from ..framework.graph_def import GraphDef
from ..ops import py_func_registry
from ..partition import partitioner
from ..partition.plan import build_plan
from ..rendezvous import ParsedKey
from ..rendezvous.remote import task_of
from ..runtime.step_stats import DeviceStepStats, NodeExecStats, NodeOutput, StepStats
from . import wire
from .channel import CONNECT_TIMEOUT_S, ChannelPool, SharedChannels, in_process, service_in_process
from .cleanups import DeferredCleanups
from .cluster import ClusterSpec, target_endpoint, tcp_endpoint
from .discovery import DeviceDiscovery
from .security import CurveClient
from .yield_policy import YieldPolicy

DEFAULT_STEP_TIMEOUT_MS = 120_000
_ABORT_DRAIN_S = 2.0      # after a failure, how long to wait for the other tasks to stop
_STEP_ID_MASK = (1 << 57) - 1


class RemoteDevice(DeviceInfo):
    """A device of some task, as the master knows it (for placement and partitioning)."""

    def __init__(self, name, device_type, incarnation):
        super().__init__(name, int(incarnation))
        self.device_type = device_type
        self.task = self.spec.task_prefix()
        self.memory_limit_bytes = 0

    def shutdown(self):
        """Nothing to release: the device lives in its worker."""

    def __repr__(self):
        return f"<RemoteDevice {self.name} incarnation={self.incarnation:016x}>"


class _MasterPlan:
    """A run signature on the cluster: the pipeline's `layout` (partitioned per device), each task's
    graph (its devices' partitions) and registered handle, and the client's feed and fetch keys."""

    __slots__ = ("key", "graph", "layout", "feeds", "feed_specs", "fetch_tensors", "targets", "tasks", "feed_keys",
                 "fetch_keys", "task_graphs", "device_partitions")

    client_graph = property(lambda self: self.layout.client_graph)
    placement = property(lambda self: self.layout.placement)
    transfers = property(lambda self: self.layout.transfers)
    partition_graphs = property(lambda self: list(self.device_partitions.values()))

    def __repr__(self):
        return (f"<MasterPlan feeds={[t.name for t in self.feeds]} fetches={[t.name for t in self.fetch_tensors]} "
                f"tasks={[t for t, _ in self.tasks]}>")


class _StepCall:
    """The outcome of the step's RunGraph on one task."""

    __slots__ = ("task", "address", "local", "call", "done", "error", "message", "arrived")

    def __init__(self, task, address):
        self.task = task
        self.address = address
        self.local = in_process(address)  # served on this thread (a service of this process), asked once a step
        self.call = None
        self.done = False
        self.error = None
        self.message = None
        self.arrived = 0.0


class MasterBackend:
    """Runs a session's plans on every device of a ZeroMQ cluster."""

    kind = "(master)"
    session_attributes = ("status", "cluster_spec", "client_task")   # a tf.Session to a cluster offers these

    def __init__(self, target, config, plans):
        self._endpoint = target_endpoint(target)
        self._config = config
        self._plans = plans
        self._closed = False
        self._new_name = partitioner.new_name_counter()
        self._channels = None
        self._tasks = {}          # task prefix -> tcp endpoint
        self._discovery = None
        self._lost_graphs = False  # a worker no longer knows a graph handle: register again
        self._active = set()      # step ids running now
        self._state_lock = threading.Lock()
        self._cleanups = DeferredCleanups(self._send_cleanup)
        self._yield_policy = YieldPolicy()  # see _start_step
        try:
            self.devices = self._create_devices()
        except BaseException:
            if self._channels is not None:
                self._channels.close()
            raise
        self.client_device = self.devices[0]

    # -- devices ------------------------------------------------------------------------------
    def _create_devices(self):
        config = self._config
        self._channels = self._make_channels(config)
        first = self._request(self._endpoint, "ListDevices", timeout=self._connect_timeout(),
                              peer=self._endpoint).fields["result"]
        self._client_task = first["task"]
        self._cluster = ClusterSpec(first["cluster"])
        tasks = {}
        for job, index, address in self._cluster.tasks():
            name = f"/job:{job}/replica:0/task:{index}"
            filters = self._config.device_filters
            if filters and name != self._client_task and not any(_filter_matches(f, name) for f in filters):
                continue
            tasks[name] = tcp_endpoint(address)
        tasks[self._client_task] = self._endpoint
        self._tasks = tasks
        self._discovery = DeviceDiscovery(tasks, self._client_task, self._list_devices_of, RemoteDevice)
        self._discovery.learn({self._client_task: first})
        return self._discovery.devices()

    def _make_channels(self, config):
        curve = CurveClient.from_config(config)
        max_bytes = config.max_message_bytes or wire.DEFAULT_MAX_MESSAGE_BYTES

        def own_pool():
            return ChannelPool(curve=curve, max_message_bytes=max_bytes, connect_timeout=self._connect_timeout(),
                               name="graphrt-master", in_process=True)
        service = service_in_process(self._endpoint)
        if service is not None and service.channels.can_lend(curve, max_bytes, self._connect_timeout()):
            return SharedChannels(service.channels, own_pool)
        return own_pool()

    def _connect_timeout(self):
        ms = self._config.operation_timeout_in_ms
        return min(CONNECT_TIMEOUT_S, ms / 1000.0) if ms and ms > 0 else CONNECT_TIMEOUT_S

    def _list_devices_of(self, tasks):
        return self._parallel({t: ("ListDevices", {}, ()) for t in tasks}, self._connect_timeout())

    def _fresh_plan(self, plan, options):
        """Before a step: ask the stale tasks this plan uses for their devices; re-plan after a restart.

        Tasks the plan does not use are not asked (a dead one does not stop this step)."""
        tasks = (t for t, _ in plan.tasks)  # a generator: read only when some task is stale (rarely)
        changed = self._discovery.refresh(tasks)   # an unreachable task raises UnavailableError naming it
        if not changed:
            return plan
        with self._plans.lock:
            self.devices = self._discovery.devices()
            self.client_device = self.devices[0]
            keys = [k for k, p in self._plans.items() if changed.intersection(t for t, _ in p.tasks)]
            dropped = [self._plans.pop(k) for k in keys]
            cached = any(p is plan for p in dropped)
        for old in dropped:
            self._deregister(old)
        # Its partitions name the old incarnations: build and register it again.
        return self._plan_again(plan, options, cache=cached)

    def _plan_again(self, plan, options, cache):
        new = self.make_plan(plan.graph, plan.feeds, plan.fetch_tensors, plan.targets, options)
        new.key, new.feed_specs = plan.key, plan.feed_specs
        if cache:
            with self._plans.lock:
                self._plans[plan.key] = new
        return new

    # -- plans --------------------------------------------------------------------------------
    def make_plan(self, graph, feeds, fetches, targets, options=None):
        client_device = self.client_device
        layout = build_plan(graph, feeds, fetches, targets, self.devices, client_device, convention="rendezvous",
                            allow_soft_placement=self._config.allow_soft_placement,
                            log_device_placement=self._config.log_device_placement,
                            default_task=self._client_task, new_name=self._new_name)
        # Partitioned once, per device; each task is sent its devices' partitions as one graph.
        order = sorted(layout.partitions, key=lambda d: (task_of(d) != self._client_task, d))
        task_graphs = {}
        for device in order:
            task_graphs.setdefault(task_of(device), GraphDef()).node.extend(layout.partitions[device].node)
        if self._client_task not in task_graphs and (feeds or fetches):
            raise errors.InternalError(f"No partition for the client task {self._client_task}, which feeds "
                                       f"and fetches go through")
        inc = client_device.incarnation & (2 ** 64 - 1)
        plan = _MasterPlan()
        plan.graph = graph
        plan.layout = layout
        plan.feeds = feeds
        plan.fetch_tensors = fetches
        plan.targets = targets
        plan.feed_keys = [ParsedKey(client_device.name, inc, client_device.name, t.name).full_key for t in feeds]
        plan.fetch_keys = [ParsedKey(client_device.name, inc, client_device.name, t.name).full_key
                           for t in fetches]
        plan.task_graphs = task_graphs
        handles = self._register(task_graphs, layout.client_graph.debug_info, options)
        plan.tasks = [(t, handles[t]["graph_handle"]) for t in task_graphs]
        plan.device_partitions = {d: layout.partitions[d] for d in order}
        return plan

    def _register(self, task_graphs, debug_info, options):
        """RegisterGraph of each task's graph, all at once: {task: result}, or the first failure
        (the graphs that did register are deregistered)."""
        debug_info = {k: str(v) for k, v in debug_info.items()}
        for graph_def in task_graphs.values():
            # This program registers these graphs itself: its py_funcs may run in its servers.
            py_func_registry.grant_graph(graph_def)
        requests = {t: ("RegisterGraph", {"graph_def": g.to_dict(), "debug_info": debug_info}, ())
                    for t, g in task_graphs.items()}
        # Registration happens inside the first `run` of a signature: it gets that run's timeout.
        replies = self._parallel(requests, self._step_timeout_ms(options) / 1000.0)
        handles, failure = {}, None
        for task in task_graphs:
            error, message = replies[task]
            if error is None:
                error = message.error
            if error is None:
                handles[task] = message.fields["result"]
            elif failure is None:
                failure = _from_task(task, error)
        if failure is not None:
            for task, result in handles.items():
                self._channels.send_oneway(self._tasks[task], "DeregisterGraph",
                                           {"graph_handle": result["graph_handle"]}, peer_name=task)
            raise failure
        return handles

    def _step_timeout_ms(self, options=None):
        if options is not None and options.timeout_in_ms > 0:
            return options.timeout_in_ms
        return self._config.operation_timeout_in_ms or DEFAULT_STEP_TIMEOUT_MS

    def _forget_plans(self):
        """A worker lost (evicted) one of our graphs: register every plan again when next used."""
        with self._plans.lock:
            self._lost_graphs = False
            plans = list(self._plans.values())
            self._plans.clear()
        for plan in plans:
            self._deregister(plan)

    def _deregister(self, plan):
        for task, handle in plan.tasks:
            self._channels.send_oneway(self._tasks[task], "DeregisterGraph", {"graph_handle": handle},
                                       peer_name=task)

    # -- steps ---------------------------------------------------------------------------------
    def execute(self, plan, args, options, run_metadata):
        """Runs one step of `plan` on every task it uses; returns the fetched values."""
        started = time.perf_counter()  # the step's length is what the spin policy weighs (spin_policy.py)
        if self._lost_graphs:
            self._forget_plans()
            plan = self._plan_again(plan, options, cache=True)
        timeout_ms = self._step_timeout_ms(options)
        trace = options is not None and options.trace_level > 0 and run_metadata is not None
        plan = self._fresh_plan(plan, options)
        step_id = random.getrandbits(57) & _STEP_ID_MASK or 1
        deadline = time.monotonic() + timeout_ms / 1000.0
        worker_timeout = max(1, timeout_ms - min(timeout_ms // 10, 500))
        calls = {task: _StepCall(task, self._tasks[task]) for task, _ in plan.tasks}
        changed = _Wakeup()
        with self._state_lock:
            self._active.add(step_id)
        cleanup_now = list(calls)
        try:
            carried = self._prefetch(plan, step_id, calls)
            self._start_step(plan, args, step_id, calls, changed, worker_timeout, trace, carried)
            error = self._wait(step_id, calls, changed, deadline, timeout_ms, started)
            if error is None and len(calls) > 1:
                # Sent with the next RunGraph to each task, see cleanups.py. That includes a task served in
                # this process: its cleanup then runs while the next step's other tasks already work,
                # not between this step's last reply and the caller getting its values.
                self._cleanups.add(list(calls), step_id)
                cleanup_now = []
        except KeyboardInterrupt:
            self._abort(step_id, calls, errors.CancelledError(
                f"Step {step_id} was cancelled by KeyboardInterrupt in the client"))
            self._discovery.mark_stale()
            raise
        finally:
            for task in cleanup_now:
                self._send_cleanup(task, {"step_id": step_id})
            with self._state_lock:
                self._active.discard(step_id)
        if error is not None:
            self._discovery.mark_stale()  # asked again before a step uses them: restarted, dead or fine
            if any(c.error is not None and "Graph handle is not found" in str(c.error) for c in calls.values()):
                self._lost_graphs = True
            raise error
        # Only targets on other tasks (say, a ps's update): nothing comes back to the client.
        values = self._fetched_values(plan, calls[self._client_task].message) if self._client_task in calls else []
        if run_metadata is not None:
            self._fill_remote_metadata(plan, options, run_metadata, calls if trace else None)
        return values

    def _prefetch(self, plan, step_id, calls):
        """When the client task is served in this process: its partitions' first receives from the
        other tasks are asked for now, before any RunGraph leaves (RemoteRendezvous.prefetch). When
        this master shares that worker's connections, the requests are not sent on their own but
        ride on the RunGraph to their task: returns {task: [[request id, key], ...]} for those."""
        local = service_in_process(self._tasks.get(self._client_task))
        if local is None or len(calls) < 2 or self._client_task not in calls:
            return {}
        carriers = [t for t, c in calls.items() if t != self._client_task and not c.local] \
            if self._channels.carries_for(local.channels) else ()
        return local.prefetch_recvs(step_id, dict(plan.tasks)[self._client_task], carriers)

    def _start_step(self, plan, args, step_id, calls, changed, worker_timeout, trace, carried):
        """RunGraph to every task at once; the client task's carries the feeds and names the fetches."""
        def on_reply(step_call):
            def callback(error, message):
                if error is None:
                    spec = message.fields.get("error")  # message.error, without the property's call
                    error = None if spec is None else wire.error_from_wire(spec)
                step_call.error = error
                step_call.message = message
                step_call.arrived = time.monotonic()
                step_call.done = True
                changed.set()
            return callback

        # A task served in this process runs its RunGraph on this thread: it goes last.
        sent = False  # a RunGraph went out through a socket
        for task, handle in sorted(plan.tasks, key=lambda th: calls[th[0]].local):
            local = calls[task].local
            if local and sent:
                # This thread now starts its own partitions, and ZeroMQ's thread, which writes the other
                # tasks' RunGraphs out, may be queued behind it (yield_policy.py).
                self._yield_policy.after_send()
                sent = False
            sent = sent or not local
            fields = {"graph_handle": handle, "step_id": step_id, "timeout_ms": worker_timeout}
            done_steps = self._cleanups.take(task)
            if done_steps:
                fields["cleanup_step_ids"] = done_steps
            if task in carried:
                fields["recv_tensors"] = carried[task]
            values = ()
            if task == self._client_task:
                if plan.feed_keys:
                    fields["send_keys"] = plan.feed_keys
                    values = args
                if plan.fetch_keys:
                    fields["recv_keys"] = plan.fetch_keys
            if trace:
                fields["trace"] = True
            calls[task].call = self._channels.call(calls[task].address, "RunGraph", fields, values,
                                                   callback=on_reply(calls[task]), peer_name=task)

    def _fetched_values(self, plan, reply):
        got = reply.fields.get("recv_keys", [])
        if got != plan.fetch_keys:
            raise errors.InternalError(f"Unexpected fetch keys from {self._client_task}: {got}")
        values = []
        for key, value in zip(got, reply.values):
            if value is wire.DEAD:
                raise errors.InvalidArgumentError(f"Retval for {key} does not have value (it is dead)")
            values.append(value)
        return values

    def _wait(self, step_id, calls, changed, deadline, timeout_ms, started=None):
        """Waits for every task; returns the step's error or None."""
        root = None
        # This thread reads the other tasks' replies itself while it waits (one wake-up per reply,
        # not two); it lets go of them before any abort below.
        reader = changed.reader = self._channels.read_here(
            [c.address for c in calls.values() if not c.done and not c.local], started)
        try:
            while True:
                # Plain loops, not comprehensions: this runs after every wake-up of every step.
                pending = False
                for c in calls.values():
                    if not c.done:
                        pending = True
                    elif c.error is not None and root is None and not errors.is_derived(c.error) \
                            and not isinstance(c.error, errors.DeadlineExceededError):
                        root = c
                if root is not None:
                    break
                if not pending:
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                if reader is None:
                    changed.wait(min(remaining, 0.25))
                elif not changed.take():
                    reader.wait(min(remaining, 0.25))
        finally:
            if reader is not None:
                changed.reader = None
                reader.done()
        if root is None:
            for c in calls.values():
                if c.error is not None or not c.done:
                    break
            else:
                return None
        if root is not None:
            failure = _from_task(root.task, root.error)
            # Give the other tasks a moment to stop, within the step's deadline.
            self._abort(step_id, calls, failure, min(_ABORT_DRAIN_S, deadline - time.monotonic()))
        else:
            failure = self._compose_failure(step_id, calls, timeout_ms)
            self._abort(step_id, calls, failure, 0.0)  # the silent ones will not answer
        return failure

    def _compose_failure(self, step_id, calls, timeout_ms):
        timed_out = [c for c in calls.values() if not c.done or isinstance(c.error, errors.DeadlineExceededError)]
        if not timed_out:
            first = min((c for c in calls.values() if c.error is not None), key=lambda c: c.arrived)
            return _from_task(first.task, first.error)
        lines = [f"Timed out after {timeout_ms} ms waiting for step {step_id}; still waiting:"]
        for c in sorted(calls.values(), key=lambda c: c.task):
            if not c.done:
                lines.append(f"  No response from RunGraph call to {c.task} ({c.address})")
            elif isinstance(c.error, errors.DeadlineExceededError):
                detail = c.error.message.split("\n", 1)
                lines.append(f"  From {c.task}:")
                lines.extend("    " + line for line in (detail[1] if len(detail) > 1 else detail[0]).splitlines())
        return errors.DeadlineExceededError("\n".join(lines))

    def _abort(self, step_id, calls, error, drain=_ABORT_DRAIN_S):
        """AbortStep to every task still running the step, then up to `drain` seconds for them to stop."""
        spec = wire.error_to_wire(error)
        spec["derived"] = True
        waiting = [c for c in calls.values() if not c.done]
        for c in waiting:
            self._channels.send_oneway(c.address, "AbortStep", {"step_id": step_id, "error": spec},
                                       peer_name=c.task)
        end = time.monotonic() + max(0.0, drain)
        while any(not c.done for c in waiting) and time.monotonic() < end:
            time.sleep(0.005)
        for c in waiting:
            if not c.done and c.call is not None:
                self._channels.forget(c.call)

    def _send_cleanup(self, task, fields):
        self._channels.send_oneway(self._tasks[task], "CleanupStep", fields, peer_name=task)

    def _fill_remote_metadata(self, plan, options, run_metadata, calls):
        if options is not None and options.output_partition_graphs:
            run_metadata.partition_graphs = [GraphDef([n.copy() for n in g.node], g.versions)
                                             for g in plan.partition_graphs]
        if calls is not None:
            stats = StepStats()
            for c in calls.values():
                result = c.message.fields.get("result") or {} if c.message is not None else {}
                for dev in result.get("step_stats", []):
                    stats.dev_stats.append(DeviceStepStats(dev["device"], [_node_stats(n) for n in dev["nodes"]]))
            stats.dev_stats.sort(key=lambda d: d.device)
            run_metadata.step_stats = stats

    # -- helpers --------------------------------------------------------------------------------
    def _request(self, address, msg_type, fields=None, values=(), timeout=None, peer=None):
        try:
            return self._channels.request(address, msg_type, fields, values, timeout=timeout, peer_name=peer)
        except errors.OpError as e:
            raise _from_task(peer or address, e) from None

    def _parallel(self, requests, timeout):
        """{task: (type, fields, values)} -> {task: (error, message)}, all in flight at once."""
        results = {}
        done = threading.Event()
        lock = threading.Lock()
        if not requests:
            return results

        def callback_for(task):
            def callback(error, message):
                with lock:
                    results[task] = (error, message)
                    if len(results) == len(requests):
                        done.set()
            return callback

        order = sorted(requests.items(), key=lambda item: in_process(self._tasks[item[0]]))  # ours last
        calls = [self._channels.call(self._tasks[task], msg_type, fields, values, callback=callback_for(task),
                                     timeout=timeout, peer_name=task)
                 for task, (msg_type, fields, values) in order]
        try:
            while not done.wait(0.25):
                pass
        except BaseException:
            for call in calls:
                self._channels.cancel(call, errors.CancelledError("interrupted"))
            raise
        return results

    def status(self):
        """Every task's GetStatus result (for tests and debugging)."""
        replies = self._parallel({t: ("GetStatus", {}, ()) for t in self._tasks}, self._connect_timeout())
        out = {}
        for task, (error, message) in replies.items():
            out[task] = {"error": str(error or message.error)} if (error or message.error) else \
                message.fields["result"]
        return out

    @property
    def cluster_spec(self):
        return self._cluster

    @property
    def client_task(self):
        return self._client_task

    def describe(self):
        return f"{len(self._tasks)} tasks, {len(self.devices)} devices"

    def close(self):
        if self._closed:
            return
        self._closed = True
        with self._state_lock:
            active = list(self._active)
        if self._channels is not None:
            for step_id in active:
                for task, address in self._tasks.items():
                    self._channels.send_oneway(address, "AbortStep", {"step_id": step_id, "error": {
                        "code": errors.CANCELLED, "message": "Step was cancelled by an explicit call to "
                                                             "`Session::Close()`.", "derived": True}},
                                               peer_name=task)
            self._cleanups.close()
            for plan in list(self._plans.values()):
                self._deregister(plan)
            self._channels.close()

    def __repr__(self):
        return f"<MasterBackend {self._endpoint} {self.describe()}>"


class _Wakeup:
    """What a step's RunGraph callbacks tell its waiting master: "something changed, look again".
    A lock released by `set` and taken back by `wait` (so a `set` before the `wait` is not lost,
    and one `wait` consumes any number of them): cheaper than an Event, made per step."""

    __slots__ = ("_lock", "reader")

    def __init__(self):
        self._lock = threading.Lock()
        self._lock.acquire()
        self.reader = None  # the waiting thread's CallerReads, if it reads its replies itself

    def set(self):
        try:
            self._lock.release()
        except RuntimeError:
            pass  # already set, not yet consumed
        reader = self.reader
        if reader is not None:
            reader.wake()

    def wait(self, timeout):
        return self._lock.acquire(True, max(0.0, timeout))

    def take(self):
        """True (and consumed) if set since the last wait or take; never blocks."""
        return self._lock.acquire(False)


def _filter_matches(filter_text, task):
    try:
        f = DeviceSpec.from_string(filter_text)
    except ValueError:
        return False
    t = DeviceSpec.from_string(task)
    return all(getattr(f, k) is None or getattr(f, k) == getattr(t, k) for k in ("job", "replica", "task"))


def _from_task(task, error):
    """The error as the user sees it: prefixed with the task it came from."""
    if not isinstance(error, errors.OpError):
        error = errors.InternalError(f"{type(error).__name__}: {error}")
    prefix = f"From {task}:\n"
    if error.message.startswith("From /job:"):
        return error
    out = type(error)(prefix + error.message, node=error.node, device=error.device, key=error.key)
    if errors.is_derived(error):
        errors.mark_derived(out)
    out.task = task
    return out


def _node_stats(d):
    outputs = [NodeOutput(o[0], o[1], tuple(o[2]), o[3]) for o in d.get("output", [])]
    start = d["all_start_micros"]
    return NodeExecStats(d["node_name"], d["op"], start, start + d["all_end_rel_micros"], d["thread_id"],
                         d["timeline_label"], outputs)

