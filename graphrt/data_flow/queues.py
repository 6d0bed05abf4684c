"""`tf.QueueBase`, `tf.FIFOQueue`, `tf.RandomShuffleQueue`, `tf.PaddingFIFOQueue`.

A queue object holds the handle tensor of its queue op; its methods build
the enqueue/dequeue ops, colocated with the queue. An element is a tuple
of tensors, or a dict when the queue was given `names`.

    q = tf.FIFOQueue(10, [tf.float32], shapes=[[2]])
    enqueue = q.enqueue_many([[[1., 2.], [3., 4.]]])
    x = q.dequeue()
"""
from ..framework import dtypes as dtypes_lib
from ..framework.graph import get_default_graph
from ..framework.op_builder import convert_to_tensor
from ..framework.tensor_shape import TensorShape, as_shape, unknown_shape
from ..ops.random_ops import get_seed


def _as_type_list(dtypes):
    if isinstance(dtypes, (list, tuple)):
        return [dtypes_lib.as_dtype(d).base_dtype for d in dtypes]
    return [dtypes_lib.as_dtype(dtypes).base_dtype]


def _as_shape_list(shapes, dtypes, unknown_dim_allowed=False):
    """TF's rules: None (no shapes), one shape, or one shape per component."""
    if shapes is None:
        return None
    if isinstance(shapes, TensorShape):
        shapes = [shapes]
    if not isinstance(shapes, (list, tuple)):
        raise TypeError("shapes must be a TensorShape or a list or tuple of TensorShapes.")
    if all(s is None or isinstance(s, int) for s in shapes):
        shapes = [shapes]  # a single shape
    shapes = [as_shape(s) for s in shapes]
    if len(shapes) != len(dtypes):
        raise ValueError(f"shapes must have the same length as dtypes ({len(shapes)} vs {len(dtypes)})")
    if not unknown_dim_allowed and any(not s.is_fully_defined() for s in shapes):
        raise ValueError(f"All shapes must be fully defined: {shapes}")
    return shapes


class QueueBase:
    """A queue of tensor tuples (TF1's `tf.QueueBase`): wraps an existing queue handle."""

    def __init__(self, dtypes, shapes, names, queue_ref):
        self._dtypes = dtypes
        self._shapes = shapes if shapes is not None else [unknown_shape() for _ in dtypes]
        if names is not None:
            if len(names) != len(dtypes):
                raise ValueError("Queue names must have the same length as dtypes")
            self._names = list(names)
        else:
            self._names = None
        self._queue_ref = queue_ref
        self._name = queue_ref.op.name.split("/")[-1]

    @property
    def queue_ref(self):
        return self._queue_ref

    @property
    def name(self):
        return self._queue_ref.op.name

    @property
    def dtypes(self):
        return self._dtypes

    @property
    def shapes(self):
        return self._shapes

    @property
    def names(self):
        return self._names

    def __repr__(self):
        return f"<{type(self).__name__} '{self.name}' dtypes={[d.name for d in self._dtypes]}>"

    # -- element structure -------------------------------------------------------------
    def _check_enqueue_dtypes(self, vals):
        """`vals` as a list of tensors in component order (from a tuple, a single value or a dict)."""
        if isinstance(vals, dict):
            if not self._names:
                raise ValueError("Queue must have names to enqueue a dictionary")
            if sorted(self._names) != sorted(vals.keys()):
                raise ValueError(f"Keys in dictionary to enqueue do not match names of Queue.  Dictionary: "
                                 f"{sorted(vals.keys())}, Queue: {sorted(self._names)}")
            vals = [vals[k] for k in self._names]
        else:
            if self._names:
                raise ValueError("You must enqueue a dictionary in a Queue with names")
            if not isinstance(vals, (list, tuple)):
                vals = [vals]
        if len(vals) != len(self._dtypes):
            raise ValueError(f"Expected {len(self._dtypes)} components to enqueue, got {len(vals)}")
        tensors = []
        for i, (val, dtype) in enumerate(zip(vals, self._dtypes)):
            tensors.append(convert_to_tensor(val, dtype=dtype, name=f"component_{i}"))
        return tensors

    def _dequeue_return_value(self, tensors):
        if self._names:
            return {n: t for n, t in zip(self._names, tensors)}
        if len(tensors) == 1:
            return tensors[0]
        return tensors

    def _op(self, op_type, inputs, name, attrs):
        g = self._queue_ref.graph
        with g.as_default(), g.colocate_with(self._queue_ref.op), g.name_scope(name) as scope:
            return g.create_op(op_type, [self._queue_ref] + list(inputs), attrs, name=scope)

    # -- operations -----------------------------------------------------------------------
    def enqueue(self, vals, name=None):
        """Enqueues one element; the op waits while the queue is full."""
        g = self._queue_ref.graph
        with g.as_default(), g.name_scope(name or f"{self._name}_enqueue") as scope:
            tensors = self._check_enqueue_dtypes(vals)
            for t, shape in zip(tensors, self._shapes):
                t.shape.assert_is_compatible_with(shape)
            with g.colocate_with(self._queue_ref.op):
                return g.create_op("QueueEnqueueV2", [self._queue_ref] + tensors,
                                   {"Tcomponents": [t.dtype.base_dtype for t in tensors], "timeout_ms": -1},
                                   name=scope)

    def enqueue_many(self, vals, name=None):
        """Enqueues the slices of `vals` along their first dimension, as one atomic op."""
        g = self._queue_ref.graph
        with g.as_default(), g.name_scope(name or f"{self._name}_EnqueueMany") as scope:
            tensors = self._check_enqueue_dtypes(vals)
            batch = tensors[0].shape.with_rank_at_least(1)[0] if tensors[0].shape.ndims is not None else None
            for t, shape in zip(tensors, self._shapes):
                t.shape.with_rank_at_least(1)
                TensorShape(t.shape.dims[1:] if t.shape.ndims is not None else None).assert_is_compatible_with(
                    shape)
                if t.shape.ndims is not None and batch is not None and t.shape[0] is not None and t.shape[0] != batch:
                    raise ValueError(f"Shapes of the components of enqueue_many differ in their first dimension: "
                                     f"{tensors[0].shape} vs {t.shape}")
            with g.colocate_with(self._queue_ref.op):
                return g.create_op("QueueEnqueueManyV2", [self._queue_ref] + tensors,
                                   {"Tcomponents": [t.dtype.base_dtype for t in tensors], "timeout_ms": -1},
                                   name=scope)

    def dequeue(self, name=None):
        """Dequeues one element; the op waits while the queue is empty (until it is closed)."""
        op = self._op("QueueDequeueV2", [], name or f"{self._name}_Dequeue",
                      {"component_types": list(self._dtypes), "timeout_ms": -1})
        for t, shape in zip(op.outputs, self._shapes):
            t.set_shape(shape)
        return self._dequeue_return_value(op.outputs)

    def dequeue_many(self, n, name=None):
        """Dequeues `n` elements, concatenated along a new first dimension."""
        return self._dequeue_batch("QueueDequeueManyV2", n, name or f"{self._name}_DequeueMany", known_n=True)

    def dequeue_up_to(self, n, name=None):
        """As dequeue_many, but once the queue is closed returns the fewer than `n` elements left."""
        return self._dequeue_batch("QueueDequeueUpToV2", n, name or f"{self._name}_DequeueUpTo", known_n=False)

    def _dequeue_batch(self, op_type, n, name, known_n):
        g = self._queue_ref.graph
        with g.as_default(), g.name_scope(name) as scope:
            n = convert_to_tensor(n, dtype=dtypes_lib.int32, name="n")
            with g.colocate_with(self._queue_ref.op):
                op = g.create_op(op_type, [self._queue_ref, n],
                                 {"component_types": list(self._dtypes), "timeout_ms": -1}, name=scope)
        from ..framework.constant_value import constant_value
        value = constant_value(n) if known_n else None
        batch = TensorShape([None if value is None else int(value)])
        for t, shape in zip(op.outputs, self._shapes):
            t.set_shape(batch.concatenate(shape))
        return self._dequeue_return_value(op.outputs)

    def close(self, cancel_pending_enqueues=False, name=None):
        """Closes the queue: later enqueues fail, dequeues drain what is left, then fail with OutOfRange."""
        return self._op("QueueCloseV2", [], name or f"{self._name}_Close",
                        {"cancel_pending_enqueues": bool(cancel_pending_enqueues)})

    def is_closed(self, name=None):
        return self._op("QueueIsClosedV2", [], name or f"{self._name}_IsClosed", {}).outputs[0]

    def size(self, name=None):
        """The number of elements in the queue (an int32 scalar)."""
        return self._op("QueueSizeV2", [], name or f"{self._name}_Size", {}).outputs[0]


def _make_queue(op_type, name, attrs):
    g = get_default_graph()
    with g.name_scope(name) as scope:
        return g.create_op(op_type, [], attrs, name=scope).outputs[0]


def _queue_attrs(dtypes, shapes, capacity, shared_name):
    return {"component_types": dtypes, "shapes": list(shapes or []), "capacity": int(capacity),
            "container": "", "shared_name": shared_name or ""}


class FIFOQueue(QueueBase):
    """A queue that dequeues elements in the order they were enqueued."""

    def __init__(self, capacity, dtypes, shapes=None, names=None, shared_name=None, name="fifo_queue"):
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes, dtypes)
        ref = _make_queue("FIFOQueueV2", name, _queue_attrs(dtypes, shapes, capacity, shared_name))
        super().__init__(dtypes, shapes, names, ref)


class PriorityQueue(QueueBase):
    """A queue that dequeues the element of lowest priority first. Each element starts with its
    priority, an int64 scalar: `enqueue((priority, x, ...))`; dequeues give it back first too."""

    def __init__(self, capacity, types, shapes=None, names=None, shared_name=None, name="priority_queue"):
        types = _as_type_list(types)
        shapes = _as_shape_list(shapes, types)
        ref = _make_queue("PriorityQueueV2", name, _queue_attrs(types, shapes, capacity, shared_name))
        priority_types = [dtypes_lib.int64] + types
        priority_shapes = [TensorShape([])] + shapes if shapes else shapes
        super().__init__(priority_types, priority_shapes, names, ref)


class PaddingFIFOQueue(QueueBase):
    """A FIFO queue whose shapes may have unknown (None) dimensions; dequeue_many
    pads every component to the largest element of the batch with zeros."""

    def __init__(self, capacity, dtypes, shapes, names=None, shared_name=None, name="padding_fifo_queue"):
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes, dtypes, unknown_dim_allowed=True)
        if len(dtypes) != len(shapes):
            raise ValueError(f"Shapes must be provided for all components, but received {len(dtypes)} dtypes "
                             f"and {len(shapes)} shapes.")
        ref = _make_queue("PaddingFIFOQueueV2", name, _queue_attrs(dtypes, shapes, capacity, shared_name))
        super().__init__(dtypes, shapes, names, ref)


class RandomShuffleQueue(QueueBase):
    """A queue that dequeues a random element, keeping at least `min_after_dequeue`
    elements until it is closed (so batches are well mixed)."""

    def __init__(self, capacity, min_after_dequeue, dtypes, shapes=None, names=None, seed=None, shared_name=None,
                 name="random_shuffle_queue"):
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes, dtypes)
        seed1, seed2 = get_seed(seed)
        if seed1 is None and seed2 is None:
            seed1, seed2 = 0, 0
        elif seed is None and shared_name is not None:
            seed2 = 0  # as TF: a shared queue's seed must not depend on the graph's op count
        attrs = _queue_attrs(dtypes, shapes, capacity, shared_name)
        attrs.update(min_after_dequeue=int(min_after_dequeue), seed=seed1, seed2=seed2)
        ref = _make_queue("RandomShuffleQueueV2", name, attrs)
        super().__init__(dtypes, shapes, names, ref)
