"""The run-time state of a (sparse) conditional accumulator (TF's ConditionalAccumulatorBase).

An accumulator sums gradients whose `local_step` is not older than its
global step; a gradient computed from older parameters is *stale* and is
dropped (silently, as TF does: the replica only wasted its work). A
`take_grad(n)` waits until n gradients are in, then returns their mean
(reduction "MEAN") or sum ("SUM"), resets the sum and advances the global
step by one, so every gradient still on its way from the step just taken
is stale. `set_global_step` moves the step explicitly.

A waiting take_grad holds no thread: like a queue's dequeue it is an
*attempt* served when a gradient arrives, and ended by its step's abort
(deadline, cancellation, failure elsewhere) with the step's error.
Callbacks run after the lock is released.
"""
import collections
import threading

import numpy as np

from .. import errors, logging
from ..framework.tensor_shape import TensorShape



class _Attempt:
    __slots__ = ("n", "done", "node", "finished")

    def __init__(self, n, done, node):
        self.n, self.done, self.node, self.finished = n, done, node, False


class AccumulatorState:
    """Dense gradients: their sum and count."""

    kind = "ConditionalAccumulator"

    def __init__(self, name, dtype, shape, reduction_type="MEAN"):
        if reduction_type not in ("MEAN", "SUM"):
            raise errors.InvalidArgumentError(f"reduction_type must be MEAN or SUM, got {reduction_type!r}")
        self.name = name
        self.dtype = dtype
        self.shape = shape if isinstance(shape, TensorShape) else TensorShape(shape)
        self.reduction_type = reduction_type
        self.global_step = 0
        self.counter = 0
        self._lock = threading.Lock()
        self._waiting = collections.deque()
        self._reset()

    def __repr__(self):
        return (f"<{self.kind} '{self.name}' {self.dtype.name}{_dims(self.shape)} global_step={self.global_step} "
                f"accumulated={self.counter}>")

    def check_compatible(self, kind, dtype, shape, reduction_type, node):
        if kind != self.kind or dtype != self.dtype or reduction_type != self.reduction_type or \
                _dims(TensorShape(shape)) != _dims(self.shape):
            raise errors.InvalidArgumentError(
                f"Shared accumulator '{self.name}' is a {self.kind} of {self.dtype.name}{_dims(self.shape)} "
                f"({self.reduction_type}), but a {kind} of {dtype.name}{_dims(TensorShape(shape))} "
                f"({reduction_type}) was requested", node=node)

    # -- the sum (overridden by the sparse accumulator) ----------------------------------------
    def _reset(self):
        self._sum = None

    def _check_shape(self, shape, what, node):
        if not self.shape.is_compatible_with(TensorShape(list(shape))):
            raise errors.InvalidArgumentError(f"Shape mismatch: {self.kind} '{self.name}' expects {what} of shape "
                                              f"{_dims(self.shape)}, got {_dims(list(shape))}", node=node)

    def _add(self, grad, node):
        grad = np.asarray(grad, dtype=self.dtype.np)
        self._check_shape(grad.shape, "gradients", node)
        if self._sum is not None and self._sum.shape != grad.shape:
            raise errors.InvalidArgumentError(
                f"Shape mismatch: {self.kind} '{self.name}' holds gradients of shape {_dims(list(self._sum.shape))}"
                f", got {_dims(list(grad.shape))}", node=node)
        self._sum = grad.copy() if self._sum is None else self._sum + grad

    def _result(self):
        out = self._sum / self.counter if self.reduction_type == "MEAN" else self._sum
        return out.astype(self.dtype.np, copy=False)

    # -- operations --------------------------------------------------------------------------------
    def apply_grad(self, local_step, grad, node):
        """Adds `grad` unless `local_step` is older than the global step; True if it was added."""
        with self._lock:
            if local_step < self.global_step:
                logging.debug("Stale gradient for %s '%s': local_step %d < global_step %d, dropped", self.kind,
                              self.name, local_step, self.global_step)
                return False
            self._add(grad, node)
            self.counter += 1
            fire = self._flush()
        _fire(fire)
        return True

    def take_grad(self, n, done, node, step=None):
        """Calls `done(err, value)` once `n` gradients are in (at once if they already are)."""
        if n < 1:
            raise errors.InvalidArgumentError(f"Argument num_required must be positive, but was {n}", node=node)
        attempt = _Attempt(n, done, node)
        with self._lock:
            self._waiting.append(attempt)
            fire = self._flush()
        _fire(fire)
        if not attempt.finished and step is not None:
            step.add_abort_callback(lambda err: self._cancel(attempt, err))

    def set_global_step(self, new_global_step):
        with self._lock:
            if new_global_step < self.global_step:
                logging.warning("Attempting to set the global step of %s '%s' to %d, lower than its current %d",
                                self.kind, self.name, new_global_step, self.global_step)
            self.global_step = int(new_global_step)

    def _flush(self):
        fire = []
        while self._waiting and self.counter >= self._waiting[0].n:
            attempt = self._waiting.popleft()
            attempt.finished = True
            self.global_step += 1  # TF: taking the gradient implicitly advances the step
            value = self._result()
            self.counter = 0
            self._reset()
            fire.append((attempt.done, (None, value)))
        return fire

    def _cancel(self, attempt, err):
        with self._lock:
            if attempt.finished:
                return
            attempt.finished = True
            self._waiting.remove(attempt)
        attempt.done(err, None)


class SparseAccumulatorState(AccumulatorState):
    """IndexedSlices gradients: per-row sums; the mean divides each row by the number of
    gradients that had it (TF's SparseConditionalAccumulator). Rows come out sorted."""

    kind = "SparseConditionalAccumulator"

    def _reset(self):
        self._rows = {}
        self._counts = {}
        self._dense_shape = None

    def _add(self, grad, node):
        indices, values, dense_shape = grad
        indices = np.asarray(indices, dtype=np.int64).reshape(-1)
        values = np.asarray(values, dtype=self.dtype.np)
        if values.ndim < 1 or values.shape[0] != indices.shape[0]:
            raise errors.InvalidArgumentError(
                f"Shape mismatch: {self.kind} '{self.name}' got {indices.shape[0]} indices but values of shape "
                f"{_dims(list(values.shape))}", node=node)
        if dense_shape is not None:
            dense_shape = [int(d) for d in np.asarray(dense_shape).reshape(-1)]
            self._check_shape(dense_shape, "gradients", node)
            if self._dense_shape is not None and dense_shape != self._dense_shape:
                raise errors.InvalidArgumentError(
                    f"Shape mismatch: {self.kind} '{self.name}' holds gradients of shape {_dims(self._dense_shape)}"
                    f", got {_dims(dense_shape)}", node=node)
            self._dense_shape = dense_shape
        if self.shape.ndims is not None:
            self._check_shape([None] + list(values.shape[1:]), "gradient rows", node)
        if self._rows:
            row_shape = next(iter(self._rows.values())).shape
            if values.shape[1:] != row_shape:
                raise errors.InvalidArgumentError(
                    f"Shape mismatch: {self.kind} '{self.name}' holds rows of shape {_dims(list(row_shape))}, got "
                    f"{_dims(list(values.shape[1:]))}", node=node)
        for i, row in zip(indices.tolist(), values):
            if i in self._rows:
                self._rows[i] = self._rows[i] + row
                self._counts[i] += 1
            else:
                self._rows[i] = row.copy()
                self._counts[i] = 1

    def _result(self):
        order = sorted(self._rows)
        indices = np.array(order, dtype=np.int64)
        if order:
            values = np.stack([self._rows[i] / self._counts[i] if self.reduction_type == "MEAN" else self._rows[i]
                               for i in order]).astype(self.dtype.np, copy=False)
        else:
            values = np.zeros([0] + [d or 0 for d in (self.shape.as_list()[1:] if self.shape.ndims else [])],
                              self.dtype.np)
        if self._dense_shape is not None:
            shape = np.array(self._dense_shape, dtype=np.int64)
        elif self.shape.ndims is not None:
            shape = np.array([-1 if d is None else d for d in self.shape.as_list()], dtype=np.int64)
        else:
            shape = np.array([-1] + list(values.shape[1:]), dtype=np.int64)
        return indices, values, shape


def _fire(callbacks):
    for fn, args in callbacks:
        fn(*args)


def _dims(shape):
    if isinstance(shape, TensorShape):
        if shape.ndims is None:
            return "<unknown>"
        shape = shape.as_list()
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"
