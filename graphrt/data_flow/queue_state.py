"""The run-time state of a queue: its elements and the operations waiting on it.

A queue lives in its device's resource manager and outlives steps. An
element is a tuple of numpy arrays (one per component). Enqueues and
dequeues that cannot finish at once do not block a thread: they become
*attempts* in a FIFO list, and every change to the queue (an element
added or taken, the queue closed) runs `_flush`, which serves the attempts
in order, as TF's QueueBase does:

* an enqueue attempt moves its elements in while there is room;
* a dequeue attempt takes elements one by one while there are any (more
  than `min_after_dequeue` for a shuffling queue, unless it is closed), so
  a `dequeue_many(n)` larger than the capacity still finishes;
* once the queue is closed and empty, a dequeue attempt fails with
  OutOfRange (its partial elements go back to the front of the queue), or,
  for `dequeue_up_to`, returns what it has.

An attempt ends exactly once: done, failed by close, or cancelled by its
step (deadline, cancellation, a failure elsewhere in the step), in which
case its partial elements go back too, so the queue stays usable. Callbacks
run after the queue's lock is released: they restart executor loops that
may come straight back to this queue.
"""
import collections
import heapq
import itertools
import threading

import numpy as np

from .. import errors
from ..framework.tensor_shape import TensorShape


class _Attempt:
    __slots__ = ("elements", "n", "up_to", "done", "finished", "node", "step", "token")

    def __init__(self, elements, n, up_to, done, node, step):
        self.elements = elements  # an enqueue's elements still to go in; a dequeue's elements taken so far
        self.n = n                # a dequeue's number of elements wanted
        self.up_to = up_to
        self.done = done          # done(err) for an enqueue, done(err, elements) for a dequeue
        self.finished = False
        self.node = node
        self.step = step
        self.token = None         # its step's abort-callback registration, while it waits


class QueueState:
    """A FIFO queue of element tuples (TF's FIFOQueue)."""

    kind = "FIFOQueue"

    def __init__(self, name, component_types, shapes, capacity, min_after_dequeue=0, seed=None):
        self.name = name
        self.component_types = list(component_types)
        self.shapes = [TensorShape(s) if not isinstance(s, TensorShape) else s for s in shapes]
        self.capacity = capacity if capacity is not None and capacity >= 0 else None
        self.min_after_dequeue = min_after_dequeue
        self.closed = False
        self._lock = threading.Lock()
        self._elements = collections.deque()
        self._enqueues = collections.deque()
        self._dequeues = collections.deque()

    def __repr__(self):
        state = "closed" if self.closed else "open"
        return (f"<{self.kind} '{self.name}' {state}: {self.size()} elements, capacity "
                f"{self.capacity if self.capacity is not None else 'unbounded'}>")

    # -- the container (overridden by the shuffling queue) ---------------------------------
    def size(self):
        return len(self._elements)

    def _put(self, element):
        self._elements.append(element)

    def _take(self):
        return self._elements.popleft()

    def _restore(self, elements):
        """Puts a failed dequeue's elements back at the front, in their order."""
        self._elements.extendleft(reversed(elements))

    def _can_take(self):
        return len(self._elements) > (0 if self.closed else self.min_after_dequeue)

    # -- checks ----------------------------------------------------------------------------------
    def check_compatible(self, kind, component_types, shapes, capacity, node):
        """A second node sharing this queue must ask for the same queue."""
        if kind != self.kind:
            raise errors.InvalidArgumentError(f"Shared queue '{self.name}' is a {self.kind}, but {kind} was "
                                              f"requested", node=node)
        if list(component_types) != self.component_types:
            raise errors.InvalidArgumentError(
                f"Shared queue '{self.name}' has component types {_types(self.component_types)} but requested "
                f"component types were {_types(component_types)}", node=node)
        capacity = capacity if capacity is not None and capacity >= 0 else None
        if capacity != self.capacity:
            raise errors.InvalidArgumentError(
                f"Shared queue '{self.name}' has capacity {_cap(self.capacity)} but requested capacity was "
                f"{_cap(capacity)}", node=node)
        shapes = [TensorShape(s) if not isinstance(s, TensorShape) else s for s in shapes]
        if [s.as_list() if s.ndims is not None else None for s in shapes] != \
                [s.as_list() if s.ndims is not None else None for s in self.shapes]:
            raise errors.InvalidArgumentError(
                f"Shared queue '{self.name}' has component shapes {_shapes(self.shapes)} but requested component "
                f"shapes were {_shapes(shapes)}", node=node)

    def check_element(self, values, node, batched=False):
        """Validates one element (or, `batched`, a batch of them) against the queue's types and shapes."""
        if len(values) != len(self.component_types):
            raise errors.InvalidArgumentError(f"{self.kind} '{self.name}' expects {len(self.component_types)} "
                                              f"components, got {len(values)}", node=node)
        for i, (value, shape) in enumerate(zip(values, self.shapes or [None] * len(values))):
            dims = list(np.shape(value))
            if batched:
                if not dims:
                    raise errors.InvalidArgumentError(
                        f"Shape mismatch in tuple component {i}. Expected a batch of at least one dimension, got "
                        f"a scalar.", node=node)
                dims = dims[1:]
            if shape is not None and not self._shape_ok(shape, dims):
                raise errors.InvalidArgumentError(
                    f"Shape mismatch in tuple component {i}. Expected {_dims(shape)}, got {_dims(dims)}", node=node)

    def _shape_ok(self, shape, dims):
        return shape.is_compatible_with(TensorShape(dims)) if shape.ndims is not None else True

    def _batch(self, elements, node):
        """The dequeued elements stacked per component."""
        if not self.shapes or not all(s.is_fully_defined() for s in self.shapes):
            raise errors.InvalidArgumentError(
                f"{self.kind}'s DequeueMany and DequeueUpTo require the components to have specified shapes.",
                node=node)
        return tuple(_stack([e[i] for e in elements], self.shapes[i].as_list(), self.component_types[i])
                     for i in range(len(self.component_types)))

    def validate_batch_dequeue(self, node):
        """DequeueMany/UpTo fail at once, before waiting, when the shapes cannot be batched."""
        if not self.shapes or not all(s.is_fully_defined() for s in self.shapes):
            self._batch([], node)

    # -- operations ------------------------------------------------------------------------------
    def enqueue(self, elements, done, node, step=None):
        """Adds `elements` (a list of tuples), calling `done(err)` when they are all in."""
        attempt = _Attempt(collections.deque(elements), 0, False, done, node, step)
        with self._lock:
            if self.closed:
                attempt.finished = True
                fire = [(done, (errors.CancelledError(f"{self.kind} '{self.name}' is closed.", node=node),))]
            else:
                self._enqueues.append(attempt)
                fire = self._flush()
        self._fire(fire)
        if not attempt.finished:
            self._watch(attempt)

    def dequeue(self, n, up_to, done, node, step=None, batch=True):
        """Takes `n` elements (one element unbatched, with `batch` False), calling
        `done(err, value)`; `up_to` returns fewer once the queue is closed."""
        def finish(err, elements=None):
            if err is not None:
                done(err, None)
            elif not batch:
                done(None, elements[0])
            else:
                try:
                    value = self._batch(elements, node)
                except errors.OpError as e:
                    done(e, None)
                    return
                done(None, value)
        attempt = _Attempt([], n, up_to, finish, node, step)
        with self._lock:
            self._dequeues.append(attempt)
            fire = self._flush()
        self._fire(fire)
        if not attempt.finished:
            self._watch(attempt)

    def close(self, cancel_pending_enqueues=False):
        with self._lock:
            self.closed = True
            fire = []
            if cancel_pending_enqueues:
                while self._enqueues:
                    attempt = self._enqueues.popleft()
                    self._end(attempt, fire, errors.CancelledError(f"{self.kind} '{self.name}' is closed.",
                                                                   node=attempt.node))
            fire.extend(self._flush())
        self._fire(fire)

    # -- the attempts ----------------------------------------------------------------------------
    def _flush(self):
        """Serves waiting attempts in order while any can progress; returns the callbacks to run."""
        fire = []
        progress = True
        while progress:
            progress = False
            while self._enqueues:
                attempt = self._enqueues[0]
                while attempt.elements and (self.capacity is None or self.size() < self.capacity):
                    self._put(attempt.elements.popleft())
                    progress = True
                if attempt.elements:
                    break
                self._enqueues.popleft()
                self._end(attempt, fire, None)
            while self._dequeues:
                attempt = self._dequeues[0]
                while len(attempt.elements) < attempt.n and self._can_take():
                    attempt.elements.append(self._take())
                    progress = True
                if len(attempt.elements) < attempt.n:
                    if not (self.closed and not self._enqueues and not self._can_take()):
                        break
                    self._dequeues.popleft()
                    if attempt.up_to and attempt.elements:
                        self._end(attempt, fire, None, attempt.elements)
                    else:
                        self._end(attempt, fire, self._insufficient(attempt))
                        self._restore(attempt.elements)
                        progress = progress or bool(attempt.elements)
                    continue
                self._dequeues.popleft()
                self._end(attempt, fire, None, attempt.elements)
        return fire

    def _insufficient(self, attempt):
        return errors.OutOfRangeError(
            f"{self.kind} '{self.name}' is closed and has insufficient elements (requested {attempt.n}, current "
            f"size {self.size() + len(attempt.elements)})", node=attempt.node)

    @staticmethod
    def _end(attempt, fire, *args):
        """Marks `attempt` finished (under the lock); its callback and the removal of
        its abort callback go on `fire`, to run once the lock is released."""
        attempt.finished = True
        fire.append((attempt.done, args))
        if attempt.token is not None:
            fire.append((attempt.step.remove_abort_callback, (attempt.token,)))

    def _watch(self, attempt):
        """Ends `attempt` if its step is aborted before it finishes."""
        if attempt.step is None:
            return
        token = attempt.step.add_abort_callback(lambda err: self._cancel(attempt, err),
                                                lambda: self._describe(attempt))
        if token is None:
            return  # the step had failed already: _cancel has run
        with self._lock:
            if not attempt.finished:
                attempt.token = token
                return
        attempt.step.remove_abort_callback(token)

    def _describe(self, attempt):
        if attempt.finished:
            return None
        if attempt.n:
            return (f"{attempt.node}: dequeue of {attempt.n} from {self.kind} '{self.name}' "
                    f"(has {len(attempt.elements)}, {self.size()} in the queue)")
        return (f"{attempt.node}: enqueue of {len(attempt.elements)} to {self.kind} '{self.name}' "
                f"(full: {self.size()} of {self.capacity})")

    def _cancel(self, attempt, err):
        with self._lock:
            if attempt.finished:
                return
            attempt.finished = True
            if attempt in self._enqueues:
                self._enqueues.remove(attempt)
            else:
                self._dequeues.remove(attempt)
                self._restore(attempt.elements)
            fire = [(attempt.done, (err,))]
            fire.extend(self._flush())
        self._fire(fire)

    @staticmethod
    def _fire(callbacks):
        for fn, args in callbacks:
            fn(*args)


class RandomShuffleQueueState(QueueState):
    """Dequeues take a uniformly random element, and leave at least
    `min_after_dequeue` behind until the queue is closed (TF's RandomShuffleQueue)."""

    kind = "RandomShuffleQueue"

    def __init__(self, name, component_types, shapes, capacity, min_after_dequeue=0, seed=None):
        super().__init__(name, component_types, shapes, capacity, min_after_dequeue)
        self._elements = []
        self._rng = np.random.default_rng(seed)

    def _take(self):
        i = int(self._rng.integers(len(self._elements)))
        last = self._elements.pop()
        if i == len(self._elements):
            return last
        element, self._elements[i] = self._elements[i], last
        return element

    def _restore(self, elements):
        self._elements.extend(elements)


class PriorityQueueState(QueueState):
    """Dequeues the element of the lowest priority (its first component, an int64 scalar);
    equal priorities leave in the order they came (TF leaves their order unspecified)."""

    kind = "PriorityQueue"

    def __init__(self, name, component_types, shapes, capacity, min_after_dequeue=0, seed=None):
        super().__init__(name, component_types, shapes, capacity, min_after_dequeue)
        self._elements = []
        self._arrivals = itertools.count()

    def _put(self, element):
        heapq.heappush(self._elements, (int(np.asarray(element[0])), next(self._arrivals), element))

    def _take(self):
        return heapq.heappop(self._elements)[2]

    def _restore(self, elements):
        for element in elements:
            self._put(element)


class PaddingQueueState(QueueState):
    """A FIFO queue whose shapes may leave dimensions open; a batch pads each
    component to the largest element in it (TF's PaddingFIFOQueue)."""

    kind = "PaddingFIFOQueue"

    def _batch(self, elements, node):
        out = []
        for i, dtype in enumerate(self.component_types):
            parts = [e[i] for e in elements]
            shape = self.shapes[i].as_list()
            if parts:
                shape = [max(p.shape[d] for p in parts) if s is None else s for d, s in enumerate(shape)]
            else:
                shape = [0 if s is None else s for s in shape]
            batch = np.full([len(parts)] + shape, b"" if dtype.name == "string" else 0, dtype=dtype.np)
            for k, p in enumerate(parts):
                batch[(k,) + tuple(slice(0, d) for d in p.shape)] = p
            out.append(batch)
        return tuple(out)

    def validate_batch_dequeue(self, node):
        pass  # shapes may be partial: padding is what this queue is for


def _stack(values, shape, dtype):
    if not values:
        return np.zeros([0] + shape, dtype=dtype.np)
    return np.stack(values)


def _types(types):
    return ", ".join(t.name for t in types) if types else "[]"


def _cap(capacity):
    return -1 if capacity is None else capacity


def _dims(shape):
    if isinstance(shape, TensorShape):
        if shape.ndims is None:
            return "<unknown>"
        shape = shape.as_list()
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def _shapes(shapes):
    return "[" + ", ".join(_dims(s) for s in shapes) + "]"
