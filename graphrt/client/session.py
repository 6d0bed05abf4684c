"""`Session`: the front end of every session kind (TF's Session and SessionFactory).

It owns what a user sees: the fetch structure and its rebuilding, feeds and
their conversion, the plan cache keyed by run signature, `plan_for`, the
default-session contexts and `close`. What runs a plan comes from a
*backend* chosen by the target's scheme from `session_backends` (the local
devices for '', a ZeroMQ cluster for 'zmq://host:port'). `run` is built for
repetition: the first call with a given signature (the fetch structure and
the feed keys) asks the backend for a plan; later calls look the plan up
and only convert feeds, run a step and collect the fetches.
"""
import collections

import numpy as np

from .. import errors
from ..framework import dtypes
from ..framework.default_session import get_default_session, session_context  # noqa: F401 - tf.get_default_session
from ..framework.graph import Operation, Tensor, get_default_graph
from ..framework.indexed_slices import IndexedSlices, IndexedSlicesValue
from ..framework.session_run_conversions import feed_function, fetch_function
from ..framework.tensor_shape import TensorShape
from . import local_backend  # noqa: F401 - registers the backend of the empty target
from . import session_backends
from .config import ConfigProto


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
        expand = fetch_function(fetch)
        if expand is not None:  # a registered composite (SparseTensor): its tensors, contracted back
            parts, contract = expand(fetch)
            subs = [self._compile(graph, p) for p in parts]
            return lambda vals: contract([s(vals) for s in subs])
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


_NO_FEEDS = ((), ())
_MAX_RESOLVED_FEEDS = 64  # distinct sets of feed keys whose checks a session remembers


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


# -- devices ---------------------------------------------------------------------------

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
        self._closed = True   # until the backend is up: nothing to close before
        self._plans = session_backends.PlanCache()
        self._signatures = {}
        self._resolved_feeds = {}  # a feed_dict's tuple of Tensor keys -> the keys its step feeds
        self._backend = session_backends.factory_for(target)(target, self._config, self._plans)
        self._closed = False

    def __getattr__(self, name):
        # Only for names not found on the session: the backend's own public API (a cluster's status()).
        backend = self.__dict__.get("_backend")
        if backend is not None and name in backend.session_attributes:
            return getattr(backend, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

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
        return list(self._backend.devices)

    def list_devices(self):
        return [_DeviceAttributes(d) for d in self._backend.devices]

    def device(self, name):
        devices = self._backend.devices
        for d in devices:
            if d.name == name:
                return d
        raise errors.NotFoundError(f"No device {name} in this session; devices: {[d.name for d in devices]}")

    # -- run --------------------------------------------------------------------------
    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Runs the ops and evaluates the tensors in `fetches` (a Tensor, Operation,
        name, or nested list/tuple/dict of them), with `feed_dict` substituted."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        sig = _signature(fetches)
        handler = self._signatures.get(sig) if sig is not None else None
        if handler is None:
            if not self._graph.get_operations():
                raise RuntimeError("The Session graph is empty. Add operations to the graph before calling run().")
            handler = _FetchHandler(self._graph, fetches)
            if sig is not None:
                self._signatures[sig] = handler
        # A run without feeds (most of a training loop's) skips the feeds' calls and comprehensions.
        feed_keys, feed_values = self._resolve_feeds(feed_dict) if feed_dict else _NO_FEEDS
        fed = dict(zip(feed_keys, range(len(feed_keys)))) if feed_keys else {}
        fetch_tensors = handler.tensors if not fed or not handler.tensors else [
            t for t in handler.tensors if t not in fed]
        if not fetch_tensors and not handler.targets:
            # Nothing to compute: every fetch is fed (or there are none), as TF's client
            # answers without running a step.
            converted = [_convert_feed(t, v, _feed_spec(t)) for t, v in zip(feed_keys, feed_values)]
            return handler.rebuild([_fed_result(converted[fed[e]][0]) for e in handler.elements])
        plan_key = (tuple(fetch_tensors), tuple(handler.targets), tuple(feed_keys))
        plan = self._plans.get(plan_key)
        if plan is None:
            plan = self._build_plan(plan_key, feed_keys, fetch_tensors, handler.targets, options)
        args = []
        if feed_values:
            converted = []  # (a loop, not comprehensions: each of those is a call)
            for t, v, spec in zip(plan.feeds, feed_values, plan.feed_specs):
                pair = _convert_feed(t, v, spec)
                converted.append(pair)
                args.append(pair[1])
        try:
            retvals = self._backend.execute(plan, args, options, run_metadata)
        except errors.OpError as e:
            if e.op is None and e.node is not None:  # as TF's: the error names the graph's op
                e.op = self._graph._by_name.get(e.node)
                e.node_def = e.op.node_def if e.op is not None else None
            raise
        results = []
        fetch_index = {t: i for i, t in enumerate(plan.fetch_tensors)} if len(plan.fetch_tensors) > 1 else None
        for element in handler.elements:
            if isinstance(element, Operation):
                results.append(None)
            elif element in fed:
                results.append(_fed_result(converted[fed[element]][0]))
            elif fetch_index is None:
                results.append(_owned_result(retvals[0]))
            else:
                results.append(_owned_result(retvals[fetch_index[element]]))
        return handler.rebuild(results)

    def _resolve_feeds(self, feed_dict):
        if not feed_dict:
            return (), ()
        plain = type(feed_dict) is dict
        if plain:
            # A training loop feeds the same keys every step: their checks are done once.
            known = self._resolved_feeds.get(tuple(feed_dict))
            if known is not None:
                values = list(feed_dict.values())
                for value in values:
                    if isinstance(value, (Tensor, Operation)):
                        break  # the checks below raise
                else:
                    return known, values
        elif not isinstance(feed_dict, collections.abc.Mapping):
            raise TypeError("input must be a dictionary")
        keys, values = [], []
        for key, value in _expand_feeds(feed_dict):
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
        if plain and all(type(key) is Tensor and feed_function(key) is None for key in feed_dict):
            if len(self._resolved_feeds) >= _MAX_RESOLVED_FEEDS:
                self._resolved_feeds.clear()
            self._resolved_feeds[tuple(feed_dict)] = keys
        return keys, values

    def _build_plan(self, plan_key, feeds, fetches, targets, options=None):
        def make():
            plan = self._backend.make_plan(self._graph, list(feeds), list(fetches), list(targets), options)
            plan.key = plan_key
            plan.feed_specs = [_feed_spec(t) for t in plan.feeds]
            return plan
        return self._plans.build(plan_key, make)

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
        self._backend.close()
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
            if not self.__dict__.get("_closed", True):
                self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    def __repr__(self):
        backend = self.__dict__.get("_backend")
        kind = f"{backend.kind} " if getattr(backend, "kind", "") else ""
        state = "not connected" if backend is None else "closed" if self._closed else backend.describe()
        return f"<tf.Session '{self._target}' {kind}{state}>"


class Session(BaseSession):
    """A local session (target ''), or a master over a cluster (target 'zmq://host:port')."""


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

def _expand_feeds(feed_dict):
    """The feed's (key, value) pairs, a registered composite key (SparseTensor) split into its tensors."""
    for key, value in feed_dict.items():
        expand = feed_function(key)
        if expand is None:
            yield key, value
        else:
            yield from expand(key, value)


def _feed_spec(tensor):
    """What a feed of `tensor` is checked and converted against: (dtype, dims or None, numpy
    dtype, whether every dim is known, whether it is a string)."""
    shape = tensor.shape
    dims = None if shape.ndims is None else tuple(shape.as_list())
    dtype = tensor.dtype.base_dtype
    return (dtype, dims, dtype.np, dims is not None and None not in dims, dtype == dtypes.string)


def _convert_feed(tensor, value, spec):
    """(the array TF's client makes of the feed, which a fetch of the fed tensor returns as is;
    the read-only array the step gets)."""
    dtype, dims, np_dtype, fully_known, is_string = spec
    if type(value) is np.ndarray and value.dtype == np_dtype:
        arr = value
    else:
        arr = _feed_array(value, dtype)
    if dims is not None:
        shape = arr.shape
        if shape != dims and _shape_differs(shape, dims, fully_known):
            raise ValueError(f"Cannot feed value of shape {shape} for Tensor {tensor.name}, which has shape "
                             f"{TensorShape(list(dims))}")
    view = _string_feed(arr) if is_string else arr.view()
    view.flags.writeable = False  # the runtime never writes into or keeps a user's array
    return arr, view


def _shape_differs(shape, dims, fully_known):
    """Whether `shape` is not a shape of `dims` (None: any size), knowing that they differ as tuples."""
    if fully_known or len(shape) != len(dims):
        return True
    for d, s in zip(dims, shape):
        if d is not None and d != s:
            return True
    return False


def _feed_array(value, dtype):
    """As TF's session: a Python int the dtype cannot hold is a TypeError; numeric feeds are cast
    as numpy casts (floats truncate, integers wrap), others converted by np.asarray."""
    np_dtype = np.dtype(dtype.np)
    if isinstance(value, int):
        held = str(value) if np_dtype.kind == "O" else np_dtype.type(np.array(value).astype(np_dtype))
        if held != value:
            raise TypeError(f"Type of feed value {value} with type {type(value)} is not compatible with Tensor "
                            f"type {np_dtype}. Try explicitly setting the type of the feed tensor to a larger "
                            f"type (e.g. int64).")
    if np.issubdtype(np_dtype, np.number):
        return np.asarray(value).astype(np_dtype, copy=False)
    return np.asarray(value, dtype=np_dtype)


def _string_feed(arr):
    """The bytes array a string feed gives the step; an element neither str nor bytes fails
    the step, as TF's conversion of the feed does."""
    out = np.empty(arr.shape, dtype=object)
    for index, item in np.ndenumerate(arr):
        if isinstance(item, str):
            item = item.encode()
        elif not isinstance(item, bytes):
            raise errors.InternalError("Unable to get element as bytes.")
        out[index] = item
    return out


def _fed_result(arr):
    """A fetch of a fed tensor: the array TF's client made of the feed (a 0-d array for a
    scalar, str elements of a string feed kept), copied so the caller's array is never shared."""
    return arr.copy()


def _owned_result(value):
    """The caller gets an array nobody else holds: views and read-only arrays are
    copied; a 0-d result is a numpy scalar (np.float32), as TF returns it."""
    if type(value) is np.ndarray:
        if value.ndim == 0:
            return value[()]
        if value.base is not None or not value.flags.writeable:
            return value.copy()
    return value
