"""`Session`: runs fetches of a graph on local devices.

`run` is built for repetition. The first call with a given signature (the
fetch structure and the feed keys) builds a plan: prune and rewrite the
graph for those feeds and fetches, place it, partition it per device,
verify the transfers, and build one GraphExecutor per partition. Later
calls with the same signature look the plan up and only convert feeds,
start a step and collect the fetches. A plan with one partition runs on
the calling thread; several run concurrently on the session's runner,
joined by the step barrier. With a step timeout, the StepDriver runs them
off the calling thread, so the timeout holds even if a kernel blocks.
"""
import collections
import itertools
import threading
import time
import weakref

import numpy as np

from .. import errors
from ..framework import dtypes
from ..framework.default_session import get_default_session, session_context  # noqa: F401 - tf.get_default_session
from ..framework.graph import Operation, Tensor, get_default_graph
from ..framework.indexed_slices import IndexedSlices, IndexedSlicesValue
from ..framework.tensor_shape import TensorShape
from ..partition import partitioner, placer, subgraph, verifier
from ..rendezvous import LocalRendezvous, format_pending
from ..runtime import device_factory
from ..runtime.graph_executor import GraphExecutor
from ..runtime.runner import Runner
from ..runtime.step import Step
from ..runtime.step_driver import StepDriver
from ..runtime.step_stats import StepStatsCollector
from .config import ConfigProto

_step_ids = itertools.count(1)
# After an abort, executors stop within milliseconds; a kernel that ignores
# the abort could keep a step alive, so the wait for them is bounded too.
_DRAIN_TIMEOUT_S = 10.0


# -- fetches --------------------------------------------------------------------------

class _FetchHandler:
    """Flattens a nested fetch structure into unique graph elements and rebuilds it."""

    def __init__(self, graph, fetches):
        self.elements = []
        self._index = {}
        self.rebuild = self._compile(graph, fetches)
        self.tensors = [e for e in self.elements if isinstance(e, Tensor)]
        self.targets = [e for e in self.elements if isinstance(e, Operation)]

    def _add(self, element):
        i = self._index.get(element)
        if i is None:
            i = self._index[element] = len(self.elements)
            self.elements.append(element)
        return i

    def _compile(self, graph, fetch):
        if isinstance(fetch, IndexedSlices):
            parts = [fetch.values, fetch.indices] + ([fetch.dense_shape] if fetch.dense_shape is not None else [])
            subs = [self._compile(graph, p) for p in parts]
            return lambda vals: IndexedSlicesValue(*[s(vals) for s in subs], *([None] * (3 - len(subs))))
        if isinstance(fetch, (list, tuple)):
            subs = [self._compile(graph, f) for f in fetch]
            kind = type(fetch)
            if hasattr(fetch, "_fields"):  # namedtuple
                return lambda vals: kind(*[s(vals) for s in subs])
            if kind in (list, tuple):
                return lambda vals: kind([s(vals) for s in subs])
            return lambda vals: kind([s(vals) for s in subs])
        if isinstance(fetch, collections.abc.Mapping):
            keys = list(fetch.keys())
            subs = [self._compile(graph, fetch[k]) for k in keys]
            kind = type(fetch)

            def build(vals):
                out = kind() if kind is not dict else {}
                for k, s in zip(keys, subs):
                    out[k] = s(vals)
                return out
            return build
        element = _as_fetch_element(graph, fetch)
        i = self._add(element)
        return lambda vals: vals[i]


def _as_fetch_element(graph, fetch):
    if fetch is None:
        raise TypeError(f"Fetch argument None has invalid type {type(None)}")
    try:
        return graph.as_graph_element(fetch, allow_tensor=True, allow_operation=True)
    except TypeError as e:
        raise TypeError(f"Fetch argument {fetch!r} has invalid type {type(fetch)}, must be a string or Tensor. "
                        f"(Can not convert a {type(fetch).__name__} into a Tensor or Operation.)") from e
    except (KeyError, ValueError) as e:
        raise ValueError(f"Fetch argument {fetch!r} cannot be interpreted as a Tensor. "
                         f"({e.args[0] if e.args else e})") from None


def _signature(fetches):
    """A cheap hashable key for the common fetch structures, or None."""
    kind = type(fetches)
    if kind is Tensor or kind is Operation:
        return fetches
    if kind is list or kind is tuple:
        for f in fetches:
            k = type(f)
            if k is not Tensor and k is not Operation:
                return None
        return (kind, tuple(fetches))
    return None


# -- plans ----------------------------------------------------------------------------

class _Plan:
    """Everything a run signature needs, built once."""

    __slots__ = ("feeds", "feed_specs", "fetch_tensors", "targets", "executors", "partition_graphs",
                 "transfers", "placement", "inline", "client_graph")

    def __repr__(self):
        return (f"<Plan feeds={[t.name for t in self.feeds]} fetches={[t.name for t in self.fetch_tensors]} "
                f"partitions={len(self.executors)}>")


class _DeviceAttributes:
    def __init__(self, device):
        self.name = device.name
        self.device_type = device.device_type
        self.memory_limit_bytes = getattr(device, "memory_limit_bytes", 0)
        self.incarnation = device.incarnation

    def __repr__(self):
        return (f"_DeviceAttributes({self.name}, {self.device_type}, {self.memory_limit_bytes}, "
                f"{self.incarnation})")


# -- the session ---------------------------------------------------------------------------

class BaseSession:
    def __init__(self, target="", graph=None, config=None):
        if graph is None:
            graph = get_default_graph()
        from ..framework.graph import Graph
        if not isinstance(graph, Graph):
            raise TypeError(f"graph must be a tf.Graph, but got {type(graph)}")
        if config is not None and not isinstance(config, ConfigProto):
            raise TypeError(f"config must be a tf.ConfigProto, but got {type(config)}")
        self._graph = graph
        self._config = config or ConfigProto()
        self._target = target
        self._closed = False
        self._lock = threading.Lock()
        self._plans = {}
        self._signatures = {}
        self._new_name = partitioner.new_name_counter()
        self._active_steps = weakref.WeakSet()
        self._devices = self._create_devices()
        self._client_device = self._devices[0]
        threads = self._config.inter_op_parallelism_threads or max(2, len(self._devices) + 1)
        self._runner = Runner(threads, name="graphrt-session")
        self._driver = StepDriver(self._runner)

    def _create_devices(self):
        return device_factory.create_local_devices(self._config)

    # -- properties ------------------------------------------------------------------
    @property
    def graph(self):
        return self._graph

    @property
    def graph_def(self):
        return self._graph.as_graph_def()

    @property
    def sess_str(self):
        return self._target

    @property
    def devices(self):
        return list(self._devices)

    def list_devices(self):
        return [_DeviceAttributes(d) for d in self._devices]

    def device(self, name):
        for d in self._devices:
            if d.name == name:
                return d
        raise errors.NotFoundError(f"No device {name} in this session; devices: {[d.name for d in self._devices]}")

    # -- run --------------------------------------------------------------------------
    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Runs the ops and evaluates the tensors in `fetches` (a Tensor, Operation,
        name, or nested list/tuple/dict of them), with `feed_dict` substituted."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        sig = _signature(fetches)
        handler = self._signatures.get(sig) if sig is not None else None
        if handler is None:
            handler = _FetchHandler(self._graph, fetches)
            if sig is not None:
                self._signatures[sig] = handler
        feed_keys, feed_values = self._resolve_feeds(feed_dict)
        fed = dict(zip(feed_keys, range(len(feed_keys))))
        fetch_tensors = handler.tensors if not fed else [t for t in handler.tensors if t not in fed]
        if not fetch_tensors and not handler.targets:
            # Nothing to compute: every fetch is fed (or there are none), as TF's client
            # answers without running a step.
            args = [_convert_feed(t, v, _feed_spec(t)) for t, v in zip(feed_keys, feed_values)]
            return handler.rebuild([_owned_result(args[fed[e]]) for e in handler.elements])
        plan_key = (tuple(fetch_tensors), tuple(handler.targets), tuple(feed_keys))
        plan = self._plans.get(plan_key)
        if plan is None:
            plan = self._build_plan(plan_key, feed_keys, fetch_tensors, handler.targets)
        args = [_convert_feed(t, v, spec) for t, v, spec in zip(plan.feeds, feed_values, plan.feed_specs)]
        retvals = self._execute(plan, args, options, run_metadata)
        results = []
        fetch_index = {t: i for i, t in enumerate(plan.fetch_tensors)} if len(plan.fetch_tensors) > 1 else None
        for element in handler.elements:
            if isinstance(element, Operation):
                results.append(None)
            elif element in fed:
                results.append(_owned_result(args[fed[element]]))
            elif fetch_index is None:
                results.append(_owned_result(retvals[0]))
            else:
                results.append(_owned_result(retvals[fetch_index[element]]))
        return handler.rebuild(results)

    def _resolve_feeds(self, feed_dict):
        if not feed_dict:
            return (), ()
        keys, values = [], []
        for key, value in feed_dict.items():
            if type(key) is not Tensor:
                try:
                    key = self._graph.as_graph_element(key, allow_tensor=True, allow_operation=False)
                except (KeyError, ValueError) as e:
                    raise TypeError(f"Cannot interpret feed_dict key as Tensor: {e.args[0] if e.args else e}") \
                        from None
                except TypeError as e:
                    raise TypeError(f"Cannot interpret feed_dict key as Tensor: {e}") from None
            elif key.graph is not self._graph:
                raise ValueError(f"Cannot feed {key.name}: it is not an element of this session's graph.")
            if isinstance(value, (Tensor, Operation)):
                raise TypeError("The value of a feed cannot be a tf.Tensor object. Acceptable feed values include "
                                "Python scalars, strings, lists, numpy ndarrays, or TensorHandles. For reference, "
                                f"the tensor object was {value} which was passed to the feed with key {key}.")
            if key.dtype.is_ref_dtype:
                key = key.op.outputs[key.value_index]
            keys.append(key)
            values.append(value)
        return keys, values

    def _build_plan(self, plan_key, feeds, fetches, targets):
        with self._lock:
            plan = self._plans.get(plan_key)
            if plan is not None:
                return plan
            plan = self._make_plan(list(feeds), list(fetches), list(targets))
            self._plans[plan_key] = plan
            return plan

    def _make_plan(self, feeds, fetches, targets):
        client = subgraph.build_client_graph(self._graph, feeds, fetches, targets, self._client_device.name)
        placement = placer.place(client.graph_def, self._devices, self._config.allow_soft_placement,
                                 self._config.log_device_placement)
        incarnations = {d.name: d.incarnation for d in self._devices}
        parts = partitioner.partition(client.graph_def, placement, incarnations, self._new_name)
        verifier.verify_partitions(parts)
        by_name = {d.name: d for d in self._devices}
        executors = []
        for device_name in sorted(parts, key=lambda n: (n != self._client_device.name, n)):
            device = by_name.get(device_name)
            if device is None:
                raise errors.InvalidArgumentError(f"Creating a partition for {device_name} which doesn't exist in "
                                                  f"the list of available devices")
            executors.append(GraphExecutor(parts[device_name], device, self._runner, client.debug_info))
        plan = _Plan()
        plan.client_graph = client
        plan.feeds = feeds
        plan.feed_specs = [_feed_spec(t) for t in feeds]
        plan.fetch_tensors = fetches
        plan.targets = targets
        plan.executors = executors
        plan.partition_graphs = [parts[e.device.name] for e in executors]
        plan.transfers = parts.transfers
        plan.placement = placement
        plan.inline = len(executors) == 1 and not executors[0].has_async
        return plan

    def _execute(self, plan, args, options, run_metadata):
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
            self._fill_metadata(plan, options, run_metadata, stats)
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
        deadline = time.monotonic() + timeout_ms / 1000.0 if timeout_ms > 0 else None
        try:
            try:
                self._driver.run(step, [ex.start(step) for ex in plan.executors], deadline,
                                 lambda: _deadline_error(step, rendezvous, timeout_ms))
            except BaseException as exc:  # noqa: BLE001 - Ctrl-C, or a signal handler that raises
                # The caller gets the exception, but only once the step has stopped:
                # nothing of it may run on (or hold the runner) after run() returns.
                step.abort(errors.CancelledError(f"Step {step_id} was interrupted ({type(exc).__name__})"))
                step.wait(_DRAIN_TIMEOUT_S)
                raise
        finally:
            if rendezvous.num_items():
                rendezvous.start_abort(errors.mark_derived(errors.AbortedError(f"Cleanup {step_id}")))
            self._active_steps.discard(step)
        return step

    def _fill_metadata(self, plan, options, run_metadata, stats):
        if options is not None and options.output_partition_graphs:
            run_metadata.partition_graphs = [_copy_graph_def(g) for g in plan.partition_graphs]
        if stats is not None:
            run_metadata.step_stats = stats.finalize()

    # -- inspection -----------------------------------------------------------------------
    def plan_for(self, fetches, feed_dict=None):
        """The cached plan (placement, partitions, transfers) for a run signature, building it if needed."""
        handler = _FetchHandler(self._graph, fetches)
        feed_keys, _ = self._resolve_feeds(feed_dict)
        fed = set(feed_keys)
        fetch_tensors = [t for t in handler.tensors if t not in fed]
        key = (tuple(fetch_tensors), tuple(handler.targets), tuple(feed_keys))
        return self._plans.get(key) or self._build_plan(key, feed_keys, fetch_tensors, handler.targets)

    # -- lifetime ----------------------------------------------------------------------------
    def close(self):
        if self._closed:
            return
        self._closed = True
        for step in list(self._active_steps):
            step.abort(errors.CancelledError("Run call was cancelled: the session was closed."))
        self._runner.shutdown()
        for d in self._devices:
            d.shutdown()
        self._plans.clear()
        self._signatures.clear()

    def as_default(self):
        return session_context(self)

    def __enter__(self):
        self._default_ctx = session_context(self)
        self._graph_ctx = self._graph.as_default()
        self._graph_ctx.__enter__()
        self._default_ctx.__enter__()
        return self

    def __exit__(self, exc_type, exc, tb):
        self._default_ctx.__exit__(exc_type, exc, tb)
        self._graph_ctx.__exit__(exc_type, exc, tb)
        self.close()
        return False

    def __del__(self):
        try:
            if not self._closed:
                self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    def __repr__(self):
        state = "closed" if self._closed else f"{len(self._devices)} devices"
        return f"<tf.Session '{self._target}' {state}>"


class Session(BaseSession):
    """A local session (target ''), or a master over a cluster (target 'zmq://host:port')."""

    def __new__(cls, target="", graph=None, config=None):
        if cls is Session and target:
            from ..distributed.master import MasterSession
            return MasterSession(target, graph, config)
        return super().__new__(cls)


class InteractiveSession(Session):
    """A session that installs itself as the default session."""

    def __init__(self, target="", graph=None, config=None):
        super().__init__(target, graph, config)
        self._default_ctx = session_context(self)
        self._graph_ctx = self._graph.as_default()
        self._graph_ctx.__enter__()
        self._default_ctx.__enter__()

    def close(self):
        was_open = not self._closed
        super().close()
        if was_open:
            try:
                self._default_ctx.__exit__(None, None, None)
                self._graph_ctx.__exit__(None, None, None)
            except (IndexError, RuntimeError):
                pass


# -- feeds and results --------------------------------------------------------------------

def _feed_spec(tensor):
    shape = tensor.shape
    dims = None if shape.ndims is None else tuple(shape.as_list())
    return (tensor.dtype.base_dtype, dims)


def _convert_feed(tensor, value, spec):
    dtype, dims = spec
    if type(value) is np.ndarray and value.dtype == dtype.np:
        arr = value
    else:
        arr = _feed_array(tensor, value, dtype)
    if dims is not None:
        shape = arr.shape
        if len(shape) != len(dims) or any(d is not None and d != s for d, s in zip(dims, shape)):
            raise ValueError(f"Cannot feed value of shape {shape} for Tensor {tensor.name}, which has shape "
                             f"{TensorShape(list(dims))}")
    view = arr.view()
    view.flags.writeable = False  # the runtime never writes into or keeps a user's array
    return view


def _feed_array(tensor, value, dtype):
    if dtype == dtypes.string:
        from ..framework.op_builder import make_ndarray
        return make_ndarray(value, dtypes.string)
    if isinstance(value, (int, float, bool)) and not isinstance(value, np.generic):
        converted = np.asarray(value, dtype=dtype.np)
        # Only a lossy *integer* conversion is refused (TF: 2.5 -> int32); floats round as TF rounds them.
        if (dtype.is_integer or dtype.is_bool) and converted.item() != value:
            raise TypeError(f"Type of feed value {value!r} with type {type(value)} is not compatible with Tensor "
                            f"type {dtype.np}. Try explicitly setting the type of the feed tensor to a larger "
                            f"type (e.g. int64).")
        return converted
    try:
        return np.asarray(value, dtype=dtype.np)
    except (TypeError, ValueError) as e:
        raise ValueError(f"Cannot feed value {value!r} for Tensor '{tensor.name}' of dtype {dtype.name}: {e}") \
            from None


def _owned_result(value):
    """The caller gets an array nobody else holds: views and read-only arrays are
    copied; a 0-d result is a numpy scalar (np.float32), as TF returns it."""
    if type(value) is np.ndarray:
        if value.ndim == 0:
            return value[()]
        if value.base is not None or not value.flags.writeable:
            return value.copy()
    return value


def _copy_graph_def(graph_def):
    from ..framework.graph_def import GraphDef
    return GraphDef([n.copy() for n in graph_def.node], graph_def.versions)


def _deadline_error(step, rendezvous, timeout_ms):
    pending = rendezvous.pending() if rendezvous is not None else []
    lines = [format_pending(pending)] if pending else []
    lines += [f"  {w}" for w in step.waiting_on() if w]  # queue operations
    waiting = "\n".join(lines) or "  (no rendezvous keys pending: a kernel is still running)"
    return errors.DeadlineExceededError(
        f"Timed out after {timeout_ms} ms waiting for step {step.step_id} to finish; still waiting:\n{waiting}")
