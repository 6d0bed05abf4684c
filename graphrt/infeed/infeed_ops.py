"""Infeed op declarations and their TF1 API (TF's `tpu_ops`: `infeed_enqueue_tuple`,
`infeed_dequeue_tuple`, ...; `tf.contrib.tpu.InfeedQueue`), and `InfeedThread`,
which keeps an infeed fed from the host while a loop on the device reads it.
"""
import contextlib
import threading

from .. import errors
from ..framework import dtypes as dtypes_lib
from ..framework.graph import get_default_graph
from ..framework.op_builder import convert_to_tensor
from ..framework.registry import REQUIRED, not_differentiable, register_op
from ..framework.tensor_shape import TensorShape

_DEQUEUE_DOC = "Waits for the next batch of the device's infeed (until the step ends)."

register_op("InfeedEnqueue", ["input: dtype"], [],
            attrs={"dtype": REQUIRED, "shape": TensorShape([]), "layout": [], "device_ordinal": -1},
            is_stateful=True, doc="Puts one tensor into the infeed of the device it runs on.")
register_op("InfeedEnqueueTuple", ["inputs: dtypes"], [],
            attrs={"dtypes": REQUIRED, "shapes": REQUIRED, "layouts": [], "device_ordinal": -1},
            is_stateful=True, doc="Puts one batch (a tuple of tensors) into the infeed of the device it runs on.")
register_op("InfeedDequeue", [], ["output: dtype"], attrs={"dtype": REQUIRED, "shape": REQUIRED},
            shape_fn=lambda ctx: [ctx.attr("shape")], is_stateful=True, doc=_DEQUEUE_DOC)
register_op("InfeedDequeueTuple", [], ["outputs: dtypes"], attrs={"dtypes": REQUIRED, "shapes": REQUIRED},
            shape_fn=lambda ctx: list(ctx.attr("shapes")), is_stateful=True, doc=_DEQUEUE_DOC)
# graphrt's own (TF has no such op): the batches of a sunk loop put into the infeed by the loop's own run
register_op("_InfeedEnqueueMany", ["inputs: Tinputs"], [],
            attrs={"Tinputs": REQUIRED, "dtypes": REQUIRED, "shapes": REQUIRED, "num_batches": REQUIRED},
            is_stateful=True,
            doc="Puts num_batches batches (components one batch after the other) into the infeed.")
for _name in ("InfeedEnqueue", "InfeedEnqueueTuple", "InfeedDequeue", "InfeedDequeueTuple", "_InfeedEnqueueMany"):
    not_differentiable(_name)


def _check_layouts(layouts):
    # graphrt's device memory has one (row-major) layout: TF's "-1 = default" is the only choice
    if any(int(v) != -1 for v in layouts or ()):
        raise ValueError(f"layouts {list(layouts)}: graphrt's devices have one layout, give [] or -1s")
    return list(layouts or ())


def _shapes(shapes, n):
    shapes = [TensorShape(s) for s in shapes]
    if len(shapes) != n:
        raise ValueError(f"{n} inputs but {len(shapes)} shapes")
    for s in shapes:
        if not s.is_fully_defined():
            raise ValueError(f"infeed shapes must be fully defined, got {s}")
    return shapes


def infeed_enqueue_tuple(inputs, shapes, layouts=(), device_ordinal=-1, name=None):
    """An op putting `inputs` (one batch) into the infeed of the device it is placed on.

    It waits while the infeed is full (until its step ends). Place it on the
    device it feeds (`tf.device`); `device_ordinal` is -1 or that device's index.

    Raises:
        ValueError: shapes not fully defined, or an input's static shape unlike its shape.
    """
    g = get_default_graph()
    with g.name_scope(name or "InfeedEnqueueTuple") as scope:
        tensors = [convert_to_tensor(t) for t in inputs]
        shapes = _shapes(shapes, len(tensors))
        for t, s in zip(tensors, shapes):
            t.shape.assert_is_compatible_with(s)
        return g.create_op("InfeedEnqueueTuple", tensors,
                           {"dtypes": [t.dtype.base_dtype for t in tensors], "shapes": shapes,
                            "layouts": _check_layouts(layouts), "device_ordinal": int(device_ordinal)}, name=scope)


def infeed_enqueue(input, shape=None, layout=(), device_ordinal=-1, name=None):  # noqa: A002 - the TF name
    """One tensor into the infeed (see infeed_enqueue_tuple); `shape` defaults to the input's static shape."""
    g = get_default_graph()
    with g.name_scope(name or "InfeedEnqueue") as scope:
        t = convert_to_tensor(input)
        shape, = _shapes([t.shape if shape is None else shape], 1)
        t.shape.assert_is_compatible_with(shape)
        return g.create_op("InfeedEnqueue", [t], {"dtype": t.dtype.base_dtype, "shape": shape,
                                                  "layout": _check_layouts(layout),
                                                  "device_ordinal": int(device_ordinal)}, name=scope)


def enqueue_many(batches, shapes, name=None):
    """An op putting `batches` (lists of tensors of `shapes`) into the infeed of the device it is
    placed on, all at once: the infeed grows to hold them (repeat(..., infeed=True))."""
    g = get_default_graph()
    with g.name_scope(name or "InfeedEnqueueMany") as scope:
        tensors = [convert_to_tensor(t) for b in batches for t in b]
        shapes = _shapes(shapes, len(batches[0]))
        n = len(shapes)
        for k, t in enumerate(tensors):
            t.shape.assert_is_compatible_with(shapes[k % n])
        return g.create_op("_InfeedEnqueueMany", tensors,
                           {"Tinputs": [t.dtype.base_dtype for t in tensors],
                            "dtypes": [t.dtype.base_dtype for t in tensors[:n]], "shapes": shapes,
                            "num_batches": len(batches)}, name=scope)


def infeed_dequeue_tuple(dtypes, shapes, name=None):
    """The next batch of the infeed of the device the op is placed on: a list of tensors."""
    g = get_default_graph()
    dtypes = [dtypes_lib.as_dtype(d) for d in dtypes]
    shapes = _shapes(shapes, len(dtypes))
    op = g.create_op("InfeedDequeueTuple", [], {"dtypes": dtypes, "shapes": shapes},
                     name=name or "InfeedDequeueTuple")
    return list(op.outputs)


def infeed_dequeue(dtype, shape, name=None):
    """The next tensor of the infeed (a batch of one component)."""
    g = get_default_graph()
    shape, = _shapes([shape], 1)
    op = g.create_op("InfeedDequeue", [], {"dtype": dtypes_lib.as_dtype(dtype), "shape": shape},
                     name=name or "InfeedDequeue")
    return op.outputs[0]


class InfeedQueue:
    """TF's `tf.contrib.tpu.InfeedQueue`: the types and shapes of an infeed's batches,
    and the ops that enqueue and dequeue them.

    Args:
        number_of_tuple_elements: components per batch (or given by the types/shapes).
        tuple_types, tuple_shapes: the components' dtypes and shapes; unset ones
            are taken from the first `generate_enqueue_ops`.

    Example:
        >>> q = InfeedQueue(tuple_types=[tf.float32, tf.float32], tuple_shapes=[[32, 4], [32, 1]])
        >>> with tf.device("/device:SIM:0"):
        ...     enqueue, = q.generate_enqueue_ops([[x, y]])   # run once per batch (an InfeedThread)
        ...     loss = tf.train.repeat(lambda x, y: step(x, y), 100, infeed_queue=q)
    """

    def __init__(self, number_of_tuple_elements=None, tuple_types=None, tuple_shapes=None, name=None):
        n = number_of_tuple_elements
        for given in (tuple_types, tuple_shapes):
            if given is not None:
                if n is not None and len(given) != n:
                    raise ValueError(f"InfeedQueue: {len(given)} types or shapes for {n} tuple elements")
                n = len(given)
        if n is None:
            raise ValueError("InfeedQueue needs number_of_tuple_elements, tuple_types or tuple_shapes")
        self.number_of_tuple_elements = n
        self.tuple_types = None if tuple_types is None else [dtypes_lib.as_dtype(d) for d in tuple_types]
        self.tuple_shapes = None if tuple_shapes is None else _shapes(tuple_shapes, n)
        self.name = name or "InfeedQueue"

    def set_tuple_types(self, tuple_types):
        self.tuple_types = [dtypes_lib.as_dtype(d) for d in tuple_types]

    def set_tuple_shapes(self, tuple_shapes):
        self.tuple_shapes = _shapes(tuple_shapes, self.number_of_tuple_elements)

    def generate_enqueue_ops(self, sharded_inputs, placement_function=None):
        """One InfeedEnqueueTuple per shard (a list of tensors each), placed by
        `placement_function(shard index)` (a device name) or, for one shard, the
        current device scope."""
        if len(sharded_inputs) != 1 and placement_function is None:
            raise ValueError(f"{len(sharded_inputs)} shards need a placement_function naming their devices")
        g = get_default_graph()
        ops = []
        for i, inputs in enumerate(sharded_inputs):
            tensors = [convert_to_tensor(t) for t in inputs]
            if len(tensors) != self.number_of_tuple_elements:
                raise ValueError(f"{self.name}: shard {i} has {len(tensors)} tensors, the queue's tuples "
                                 f"{self.number_of_tuple_elements}")
            if self.tuple_types is None:
                self.tuple_types = [t.dtype.base_dtype for t in tensors]
            if self.tuple_shapes is None:
                self.set_tuple_shapes([t.shape for t in tensors])
            got = [t.dtype.base_dtype for t in tensors]
            if got != self.tuple_types:
                raise TypeError(f"{self.name}: shard {i} has dtypes {[d.name for d in got]}, the queue's are "
                                f"{[d.name for d in self.tuple_types]}")
            with g.device(placement_function(i)) if placement_function is not None else contextlib.nullcontext():
                ops.append(infeed_enqueue_tuple(tensors, self.tuple_shapes, name=f"{self.name}/enqueue/{i}"))
        return ops

    def generate_dequeue_op(self):
        """The next batch (a list of tensors) of the infeed of the device in scope."""
        if self.tuple_types is None or self.tuple_shapes is None:
            raise ValueError(f"{self.name}: set the tuple types and shapes (or generate the enqueue ops) first")
        return infeed_dequeue_tuple(self.tuple_types, self.tuple_shapes, name=f"{self.name}/dequeue")

    def __repr__(self):
        spec = "?" if self.tuple_types is None or self.tuple_shapes is None else ", ".join(
            f"{d.name}{s}" for d, s in zip(self.tuple_types, self.tuple_shapes))
        return f"<InfeedQueue {self.name}: {spec}>"


class InfeedThread:
    """Feeds an infeed from the host while the device trains: runs
    `sess.run(enqueue_ops, feed_dict)` for each feed dict on a thread of its own
    (TPUEstimator's infeed thread).

    A run that fails ends the thread; `join` re-raises its error. Each run waits
    while the infeed is full, so give the runs a deadline (`options`) or close
    the session to end them.

    Example:
        >>> feeder = InfeedThread(sess, enqueue, ({x: xs[i], y: ys[i]} for i in range(100))).start()
        >>> sess.run(losses)          # the sunk loop dequeues the 100 batches
        >>> feeder.join(timeout=10)
    """

    def __init__(self, sess, enqueue_ops, feed_dicts, options=None):
        self._sess = sess
        self._fetches = enqueue_ops
        self._feeds = feed_dicts
        self._options = options
        self._error = None
        self.batches = 0  # runs completed
        self._thread = threading.Thread(target=self._run, name="graphrt-infeed", daemon=True)

    def start(self):
        self._thread.start()
        return self

    def _run(self):
        try:
            for feed in self._feeds:
                self._sess.run(self._fetches, feed, options=self._options)
                self.batches += 1
        except BaseException as exc:  # noqa: BLE001 - handed to join()
            self._error = exc

    def join(self, timeout=None):
        """Waits for the thread; re-raises its error.

        Raises:
            DeadlineExceededError: still feeding after `timeout` seconds.
        """
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise errors.DeadlineExceededError(
                f"InfeedThread still feeding after {timeout}s ({self.batches} batches put)")
        if self._error is not None:
            raise self._error

    def __repr__(self):
        state = "running" if self._thread.is_alive() else "done"
        return f"<InfeedThread {state}: {self.batches} batches>"
