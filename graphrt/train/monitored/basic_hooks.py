"""The hooks that only read tensors: StopAtStepHook, LoggingTensorHook,
NanTensorHook, FinalOpsHook, FeedFnHook, and the step/seconds timer the
periodic hooks share (TF1's basic_session_run_hooks)."""
import time

import numpy as np

from ... import logging
from ...framework.graph import get_default_graph
from ..training_util import get_global_step
from .session_run_hook import SessionRunArgs, SessionRunHook


class SecondOrStepTimer:
    """Triggers every `every_secs` seconds or every `every_steps` steps (exactly one is given)."""

    def __init__(self, every_secs=None, every_steps=None):
        if (every_secs is None) == (every_steps is None):
            raise ValueError("exactly one of every_secs and every_steps should be provided.")
        self._every_secs = every_secs
        self._every_steps = every_steps
        self.reset()

    def reset(self):
        self._last_triggered_step = None
        self._last_triggered_time = None

    def should_trigger_for_step(self, step):
        if self._last_triggered_step is None:
            return True
        if self._last_triggered_step == step:
            return False
        if self._every_secs is not None and time.time() >= self._last_triggered_time + self._every_secs:
            return True
        return self._every_steps is not None and step >= self._last_triggered_step + self._every_steps

    def update_last_triggered_step(self, step):
        """Returns (seconds, steps) since the previous trigger, (None, None) the first time."""
        now = time.time()
        if self._last_triggered_time is None:
            elapsed = (None, None)
        else:
            elapsed = (now - self._last_triggered_time, step - self._last_triggered_step)
        self._last_triggered_time = now
        self._last_triggered_step = step
        return elapsed

    def last_triggered_step(self):
        return self._last_triggered_step

    def __repr__(self):
        every = f"{self._every_secs} secs" if self._every_secs is not None else f"{self._every_steps} steps"
        return f"<SecondOrStepTimer every {every}>"


def _require_global_step(hook):
    step = get_global_step()
    if step is None:
        raise RuntimeError(f"Global step should be created to use {hook}.")
    return step


class StopAtStepHook(SessionRunHook):
    """Requests a stop once the global step reaches `last_step` (or start + `num_steps`)."""

    def __init__(self, num_steps=None, last_step=None):
        if num_steps is None and last_step is None:
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and last_step is not None:
            raise ValueError("Only one of num_steps or last_step can be specified.")
        self._num_steps = num_steps
        self._last_step = last_step

    def begin(self):
        self._global_step_tensor = _require_global_step("StopAtStepHook")

    def after_create_session(self, session, coord):
        if self._last_step is None:
            self._last_step = int(session.run(self._global_step_tensor)) + self._num_steps

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        # The fetched value is the step before this run's update; read it again to be sure.
        if int(run_values.results) + 1 >= self._last_step:
            if int(run_context.session.run(self._global_step_tensor)) >= self._last_step:
                run_context.request_stop()

    def __repr__(self):
        return f"<StopAtStepHook last_step={self._last_step} num_steps={self._num_steps}>"


class LoggingTensorHook(SessionRunHook):
    """Logs tensors' values every N local steps or seconds (and at the end with `at_end`)."""

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, at_end=False, formatter=None):
        only_log_at_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_log_at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError("either at_end and/or exactly one of every_n_iter and every_n_secs must be provided.")
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError(f"invalid every_n_iter={every_n_iter}.")
        if not isinstance(tensors, dict):
            self._tag_order = list(tensors)
            tensors = {item: item for item in tensors}
        else:
            self._tag_order = sorted(tensors)
        self._tensors = tensors
        self._formatter = formatter
        self._timer = None if only_log_at_end else SecondOrStepTimer(every_secs=every_n_secs,
                                                                     every_steps=every_n_iter)
        self._log_at_end = at_end

    def begin(self):
        if self._timer is not None:
            self._timer.reset()
        self._iter_count = 0
        graph = get_default_graph()
        self._current_tensors = {tag: graph.as_graph_element(t, allow_tensor=True, allow_operation=False)
                                 for tag, t in self._tensors.items()}

    def before_run(self, run_context):
        self._should_trigger = self._timer is not None and self._timer.should_trigger_for_step(self._iter_count)
        return SessionRunArgs(self._current_tensors) if self._should_trigger else None

    def _log_tensors(self, tensor_values):
        if self._formatter:
            logging.info(self._formatter(tensor_values))
        else:
            text = ", ".join(f"{tag} = {tensor_values[tag]}" for tag in self._tag_order)
            logging.info(text)

    def after_run(self, run_context, run_values):
        if self._should_trigger:
            self._timer.update_last_triggered_step(self._iter_count)
            self._log_tensors(run_values.results)
        self._iter_count += 1

    def end(self, session):
        if self._log_at_end:
            self._log_tensors(session.run(self._current_tensors))


class NanLossDuringTrainingError(RuntimeError):
    def __str__(self):
        return "NaN loss during training."


class NanTensorHook(SessionRunHook):
    """Fails (NanLossDuringTrainingError) or stops the loop when the loss is NaN."""

    def __init__(self, loss_tensor, fail_on_nan_loss=True):
        self._loss_tensor = loss_tensor
        self._fail_on_nan_loss = fail_on_nan_loss

    def before_run(self, run_context):
        return SessionRunArgs(self._loss_tensor)

    def after_run(self, run_context, run_values):
        if np.isnan(run_values.results).any():
            failure_message = "Model diverged with loss = NaN."
            if self._fail_on_nan_loss:
                logging.error(failure_message)
                raise NanLossDuringTrainingError
            logging.warning(failure_message)
            run_context.request_stop()


class FinalOpsHook(SessionRunHook):
    """Runs `final_ops` when the session ends; their values are `final_ops_values`."""

    def __init__(self, final_ops, final_ops_feed_dict=None):
        self._final_ops = final_ops
        self._final_ops_feed_dict = final_ops_feed_dict
        self._final_ops_values = None

    @property
    def final_ops_values(self):
        return self._final_ops_values

    def end(self, session):
        if self._final_ops is not None:
            self._final_ops_values = session.run(self._final_ops, feed_dict=self._final_ops_feed_dict)


class FeedFnHook(SessionRunHook):
    """Feeds `feed_fn()` into every run."""

    def __init__(self, feed_fn):
        self.feed_fn = feed_fn

    def before_run(self, run_context):
        return SessionRunArgs(fetches=None, feed_dict=self.feed_fn())
