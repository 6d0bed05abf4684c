"""`graphrt.train.StalenessBoundHook`: stale-synchronous parallel (SSP) training.

A graphrt extension (TensorFlow has no SSP). Asynchronous workers share the
parameters on the ps; each also has a *clock* (the number of steps it has
run) in one int64 vector `ssp_clocks` on the ps, next to the global step.
Before each run a worker compares its clock with the slowest worker's: if
it is more than `staleness` steps ahead it waits (polling the clocks, first
after 1 ms, then up to every 50 ms) until the slowest catches up. Its run
then ticks its clock in the same step as the training op. So a worker
never starts a step more than `staleness` steps ahead of the slowest:
`staleness=0` is bulk-synchronous, `staleness=None` is plain asynchronous
training (the hook only counts).

A worker whose session ends normally sets its clock to a very large value,
so it no longer holds the others back. A worker that waits longer than
`max_wait_secs` (the slowest died and did not come back) raises
DeadlineExceededError naming the worker it waited for.

    hook = graphrt.train.StalenessBoundHook(staleness=3, worker_index=task, num_workers=2)
    with tf.train.MonitoredTrainingSession(..., hooks=[hook, stop_hook]) as sess: ...
    hook.max_gap   # the largest clock lead this worker started a step with (<= 3)
"""
import time

import numpy as np

from .. import errors
from ..framework import dtypes
from ..framework.graph import get_default_graph
from .monitored.session_run_hook import SessionRunArgs, SessionRunHook
from .training_util import get_global_step

_DEPARTED = np.int64(1) << 60


class StalenessBoundHook(SessionRunHook):
    def __init__(self, staleness, worker_index, num_workers, max_wait_secs=300.0, name="ssp_clocks"):
        if staleness is not None and (staleness < 0 or staleness != int(staleness)) and staleness != float("inf"):
            raise ValueError(f"staleness must be a non-negative integer, inf or None, got {staleness!r}")
        if not 0 <= worker_index < num_workers:
            raise ValueError(f"worker_index {worker_index} is out of range for num_workers={num_workers}")
        self._staleness = None if staleness in (None, float("inf")) else int(staleness)
        self._index = int(worker_index)
        self._num_workers = int(num_workers)
        self._max_wait_secs = max_wait_secs
        self._name = name
        self.max_gap = 0          # the largest lead over the slowest worker at the start of a step
        self.waits = 0            # how many steps had to wait
        self.gaps = []            # the lead at the start of every step

    def __repr__(self):
        return (f"<StalenessBoundHook staleness={self._staleness} worker {self._index} of {self._num_workers}, "
                f"max_gap={self.max_gap}>")

    def begin(self):
        from ..ops import sparse_training_ops
        from ..ops.variables import Variable
        g = get_default_graph()
        step = get_global_step()
        device = step.device if step is not None else ""
        with g.device(None), g.device(device), g.name_scope(None):
            # In no collection: not checkpointed (a restored "departed" clock would block a restarted
            # worker) and not initialized by the chief's init op; the first worker to start initializes it.
            self._clocks = Variable(np.zeros(self._num_workers, np.int64), trainable=False, dtype=dtypes.int64,
                                    name=self._name, collections=[])
            from ..ops.state_ops import is_variable_initialized
            self._initialized = is_variable_initialized(self._clocks)
            self._read = self._clocks.read_value() if hasattr(self._clocks, "read_value") else \
                self._clocks.value()
            self._tick = sparse_training_ops.scatter_add(self._clocks, [self._index], np.array([1], np.int64))
            depart = sparse_training_ops.scatter_update(self._clocks, [self._index],
                                                        np.array([_DEPARTED], np.int64))
        from ..ops import control_ops
        with g.device(None):  # device-less NoOps run on the session's own task: a run must touch it
            self._depart = control_ops.group(depart, name=f"{self._name}_depart")
            self._init = control_ops.group(self._clocks.initializer, name=f"{self._name}_init")

    def after_create_session(self, session, coord):
        if not session.run(self._initialized):
            session.run(self._init)

    def before_run(self, run_context):
        clocks = run_context.session.run(self._read)
        if self._staleness is not None:
            clocks = self._wait(run_context.session, clocks)
        gap = int(clocks[self._index] - clocks.min())
        self.gaps.append(gap)
        self.max_gap = max(self.max_gap, gap)
        return SessionRunArgs(self._tick)

    def _wait(self, session, clocks):
        deadline = time.monotonic() + self._max_wait_secs
        interval = 0.001
        waited = False
        while clocks[self._index] - clocks.min() > self._staleness:
            waited = True
            if time.monotonic() >= deadline:
                slowest = int(np.argmin(clocks))
                raise errors.DeadlineExceededError(
                    f"StalenessBoundHook: worker {self._index} at clock {clocks[self._index]} waited "
                    f"{self._max_wait_secs} secs for worker {slowest} (clock {clocks[slowest]}) to come within "
                    f"staleness {self._staleness}")
            time.sleep(interval)
            interval = min(interval * 2, 0.05)
            clocks = session.run(self._read)
        self.waits += waited
        return clocks

    def end(self, session):
        session.run(self._depart)
