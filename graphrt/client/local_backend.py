"""The session backend for target '': the devices of this process (TF's DirectSession).

A plan (built once per run signature by `make_plan`) is pruned, placed,
partitioned per device and verified, with one GraphExecutor per partition.
A plan with one partition and no async kernels runs on the calling thread;
otherwise the StepDriver runs its partitions on the backend's runner,
joined by the step barrier, and with a step timeout off the calling thread
so that the timeout holds even if a kernel blocks.
"""
import itertools
import weakref

from .. import errors
from ..partition import partitioner
from ..partition.plan import build_plan
from ..rendezvous import LocalRendezvous
from ..runtime import device_factory
from ..runtime.graph_executor import GraphExecutor
from ..runtime.runner import Runner
from ..runtime.step import Step
from ..runtime.step_driver import StepDriver
from ..runtime.step_stats import StepStatsCollector
from . import session_backends

_step_ids = itertools.count(1)


class _Plan:
    """Everything a run signature needs, built once: the pipeline's `layout`
    (partition/plan.Plan) and an executor per partition."""

    __slots__ = ("key", "feeds", "feed_specs", "fetch_tensors", "targets", "layout", "executors",
                 "device_partitions", "inline")

    client_graph = property(lambda self: self.layout.client_graph)
    placement = property(lambda self: self.layout.placement)
    transfers = property(lambda self: self.layout.transfers)
    partition_graphs = property(lambda self: list(self.device_partitions.values()))   # in executor order

    def __repr__(self):
        return (f"<Plan feeds={[t.name for t in self.feeds]} fetches={[t.name for t in self.fetch_tensors]} "
                f"partitions={len(self.executors)}>")


class LocalBackend:
    """Runs plans on the local devices that `config` asks for."""

    kind = ""                 # what a session repr says it is beside its target
    session_attributes = ()   # no public names beyond tf.Session's own

    def __init__(self, target, config, plans):
        self._config = config
        self._closed = False
        self._new_name = partitioner.new_name_counter()
        self._active_steps = weakref.WeakSet()
        self.devices = device_factory.create_local_devices(config)
        self.client_device = self.devices[0]
        threads = config.inter_op_parallelism_threads or max(2, len(self.devices) + 1)
        self._runner = Runner(threads, name="graphrt-session")
        self._driver = StepDriver(self._runner)

    def make_plan(self, graph, feeds, fetches, targets, options=None):
        layout = build_plan(graph, feeds, fetches, targets, self.devices, self.client_device,
                            allow_soft_placement=self._config.allow_soft_placement,
                            log_device_placement=self._config.log_device_placement, new_name=self._new_name)
        parts = layout.partitions
        by_name = {d.name: d for d in self.devices}
        executors = []
        for device_name in sorted(parts, key=lambda n: (n != self.client_device.name, n)):
            device = by_name.get(device_name)
            if device is None:
                raise errors.InvalidArgumentError(f"Creating a partition for {device_name} which doesn't exist in "
                                                  f"the list of available devices")
            executors.append(GraphExecutor(parts[device_name], device, self._runner, layout.client_graph.debug_info))
        plan = _Plan()
        plan.layout = layout
        plan.feeds = feeds
        plan.fetch_tensors = fetches
        plan.targets = targets
        plan.executors = executors
        plan.device_partitions = {e.device.name: parts[e.device.name] for e in executors}
        plan.inline = len(executors) == 1 and not executors[0].has_async
        return plan

    def execute(self, plan, args, options, run_metadata):
        """Runs one step of `plan` with the feeds `args`; returns the fetched values."""
        trace = options is not None and options.trace_level > 0
        stats = StepStatsCollector([ex.device for ex in plan.executors]) \
            if trace and run_metadata is not None else None
        step_id = next(_step_ids)
        timeout_ms = (options.timeout_in_ms if options is not None and options.timeout_in_ms > 0
                      else self._config.operation_timeout_in_ms)
        if plan.inline and timeout_ms <= 0:
            step = Step(step_id, None, args, len(plan.fetch_tensors), 1, stats)
            self._active_steps.add(step)
            try:
                plan.executors[0].run_async(step, inline=True)
            finally:
                self._active_steps.discard(step)
        else:  # with a deadline, the step driver runs the partitions off this thread so the deadline holds
            step = self._run_concurrently(plan, step_id, args, stats, timeout_ms)
        if run_metadata is not None:
            _fill_metadata(plan, options, run_metadata, stats)
        if step.error is not None:
            raise step.error
        return step.retvals

    def _run_concurrently(self, plan, step_id, args, stats, timeout_ms):
        rendezvous = LocalRendezvous(step_id)
        step = Step(step_id, rendezvous, args, len(plan.fetch_tensors), len(plan.executors), stats)
        self._active_steps.add(step)
        if self._closed:
            # close() ran after run() checked: it may not have seen this step, which
            # could then wait forever (a queue op). Checked after the add, so one sees the other.
            self._active_steps.discard(step)
            raise errors.CancelledError("Run call was cancelled: the session was closed.")
        try:
            self._driver.run_step(step, [ex.start(step) for ex in plan.executors], timeout_ms)
        finally:
            if rendezvous.has_pending():
                rendezvous.start_abort(errors.mark_derived(errors.AbortedError(f"Cleanup {step_id}")))
            self._active_steps.discard(step)
        return step

    def describe(self):
        return f"{len(self.devices)} devices"

    def close(self):
        self._closed = True
        for step in list(self._active_steps):
            step.abort(errors.CancelledError("Run call was cancelled: the session was closed."))
        self._runner.shutdown()
        for d in self.devices:
            d.shutdown()

    def __repr__(self):
        return f"<LocalBackend {[d.name for d in self.devices]}>"


def _fill_metadata(plan, options, run_metadata, stats):
    if options is not None and options.output_partition_graphs:
        run_metadata.partition_graphs = [copy_graph_def(g) for g in plan.partition_graphs]
    if stats is not None:
        run_metadata.step_stats = stats.finalize()


def copy_graph_def(graph_def):
    from ..framework.graph_def import GraphDef
    return GraphDef([n.copy() for n in graph_def.node], graph_def.versions)


session_backends.register([""], LocalBackend)
