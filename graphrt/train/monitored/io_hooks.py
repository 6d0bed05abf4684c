"""The hooks that write files: CheckpointSaverHook (+ CheckpointSaverListener),
StepCounterHook, SummarySaverHook, and `SummaryWriterCache` (one FileWriter
per directory, shared by the hooks writing there)."""
import os
import threading

from ... import logging
from ...framework.graph import get_default_graph
from .basic_hooks import SecondOrStepTimer, _require_global_step
from .session_run_hook import SessionRunArgs, SessionRunHook


class SummaryWriterCache:
    """`tf.train.SummaryWriterCache`: FileWriters by log directory."""

    _lock = threading.Lock()
    _writers = {}

    @staticmethod
    def get(logdir):
        from ...summary import FileWriter
        with SummaryWriterCache._lock:
            writer = SummaryWriterCache._writers.get(logdir)
            if writer is None:
                writer = SummaryWriterCache._writers[logdir] = FileWriter(logdir, graph=get_default_graph())
            return writer

    @staticmethod
    def clear():
        with SummaryWriterCache._lock:
            for writer in SummaryWriterCache._writers.values():
                writer.close()
            SummaryWriterCache._writers = {}


class CheckpointSaverListener:
    """Called around each save of a CheckpointSaverHook; `after_save` returning True stops training."""

    def begin(self):
        pass

    def before_save(self, session, global_step_value):
        pass

    def after_save(self, session, global_step_value):
        pass

    def end(self, session, global_step_value):
        pass


class CheckpointSaverHook(SessionRunHook):
    """Saves `<checkpoint_dir>/model.ckpt-<step>` when the session starts, every N steps
    or seconds, and at the end."""

    def __init__(self, checkpoint_dir, save_secs=None, save_steps=None, saver=None,
                 checkpoint_basename="model.ckpt", scaffold=None, listeners=None, save_graph_def=True):
        logging.info("Create CheckpointSaverHook.")
        if saver is not None and scaffold is not None:
            raise ValueError("You cannot provide both saver and scaffold.")
        self._saver = saver
        self._checkpoint_dir = checkpoint_dir
        self._save_path = os.path.join(checkpoint_dir, checkpoint_basename)
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._listeners = listeners or []
        self._save_graph_def = save_graph_def

    def __repr__(self):
        return f"<CheckpointSaverHook {self._save_path} {self._timer}>"

    def begin(self):
        self._summary_writer = SummaryWriterCache.get(self._checkpoint_dir)
        self._global_step_tensor = _require_global_step("CheckpointSaverHook")
        for listener in self._listeners:
            listener.begin()

    def after_create_session(self, session, coord):
        global_step = int(session.run(self._global_step_tensor))
        if self._save_graph_def:
            from .. import write_graph
            write_graph(get_default_graph(), self._checkpoint_dir, "graph.pbtxt")
        # The checkpoint saved here is the state at step `global_step`.
        self._save(session, global_step)
        self._timer.update_last_triggered_step(global_step)

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        if self._timer.should_trigger_for_step(int(run_values.results) + 1):
            global_step = int(run_context.session.run(self._global_step_tensor))
            if self._timer.should_trigger_for_step(global_step):
                self._timer.update_last_triggered_step(global_step)
                if self._save(run_context.session, global_step):
                    run_context.request_stop()

    def end(self, session):
        last_step = int(session.run(self._global_step_tensor))
        if last_step != self._timer.last_triggered_step():
            self._save(session, last_step)
        for listener in self._listeners:
            listener.end(session, last_step)
        # The writer flushes by itself only every two minutes; the checkpoint events of a
        # finished session should be in the logdir as its checkpoints are.
        self._summary_writer.flush()

    def _save(self, session, step):
        """Saves; True if a listener asks to stop."""
        logging.info("Saving checkpoints for %d into %s.", step, self._save_path)
        for listener in self._listeners:
            listener.before_save(session, step)
        self._get_saver().save(session, self._save_path, global_step=step, write_meta_graph=self._save_graph_def)
        from ...summary import SessionLog
        self._summary_writer.add_session_log(
            SessionLog(status=SessionLog.CHECKPOINT, checkpoint_path=self._save_path), step)
        should_stop = False
        for listener in self._listeners:
            if listener.after_save(session, step):
                logging.info("A CheckpointSaverListener requested that training be stopped. listener: %s",
                             listener)
                should_stop = True
        return should_stop

    def _get_saver(self):
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None:
            return self._scaffold.saver
        from ...framework.graph import GraphKeys
        savers = get_default_graph().get_collection(GraphKeys.SAVERS)
        if not savers:
            raise RuntimeError(f"No items in collection {GraphKeys.SAVERS}. Please add a saver to the collection "
                               f"or provide a saver or scaffold.")
        if len(savers) > 1:
            raise RuntimeError(f"More than one item in collection {GraphKeys.SAVERS}. Please indicate which one to "
                               f"use by passing it to the constructor.")
        self._saver = savers[0]
        return savers[0]


class StepCounterHook(SessionRunHook):
    """Logs and writes (summary `global_step/sec`) the global steps per second."""

    def __init__(self, every_n_steps=100, every_n_secs=None, output_dir=None, summary_writer=None):
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be provided.")
        self._timer = SecondOrStepTimer(every_steps=every_n_steps, every_secs=every_n_secs)
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._last_global_step = None
        self.last_steps_per_sec = None  # the last rate measured (graphrt: for tests and progress lines)

    def begin(self):
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = SummaryWriterCache.get(self._output_dir)
        self._global_step_tensor = _require_global_step("StepCounterHook")
        self._summary_tag = self._global_step_tensor.op.name + "/sec"

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        stale_global_step = int(run_values.results)
        if self._timer.should_trigger_for_step(stale_global_step + 1):
            global_step = int(run_context.session.run(self._global_step_tensor))
            if self._timer.should_trigger_for_step(global_step):
                elapsed_time, elapsed_steps = self._timer.update_last_triggered_step(global_step)
                if elapsed_time is not None and elapsed_time > 0:
                    self._log_and_record(elapsed_steps / elapsed_time, global_step)
        self._last_global_step = stale_global_step

    def end(self, session):
        if self._summary_writer is not None:
            self._summary_writer.flush()  # as CheckpointSaverHook.end: a finished run's rates are on disk

    def _log_and_record(self, steps_per_sec, global_step):
        self.last_steps_per_sec = steps_per_sec
        if self._summary_writer is not None:
            from ...summary import Summary
            summary = Summary(value=[Summary.Value(tag=self._summary_tag, simple_value=steps_per_sec)])
            self._summary_writer.add_summary(summary, global_step)
        logging.info("%s: %g", self._summary_tag, steps_per_sec)


class SummarySaverHook(SessionRunHook):
    """Writes the summaries (`summary_op`, or the scaffold's) every N steps or seconds."""

    def __init__(self, save_steps=None, save_secs=None, output_dir=None, summary_writer=None, scaffold=None,
                 summary_op=None):
        if (scaffold is None) == (summary_op is None):
            raise ValueError("Exactly one of scaffold or summary_op must be provided.")
        self._summary_op = summary_op
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self):
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = SummaryWriterCache.get(self._output_dir)
        self._next_step = None
        self._global_step_tensor = _require_global_step("SummarySaverHook")

    def before_run(self, run_context):
        self._request_summary = self._next_step is None or self._timer.should_trigger_for_step(self._next_step)
        requests = {"global_step": self._global_step_tensor}
        ops = self._get_summary_op()
        if self._request_summary and ops:
            requests["summary"] = ops
        return SessionRunArgs(requests)

    def after_run(self, run_context, run_values):
        if not self._summary_writer:
            return
        global_step = int(run_values.results["global_step"]) + 1
        if self._next_step is None or self._request_summary:
            global_step = int(run_context.session.run(self._global_step_tensor))
        if self._next_step is None:
            from ...summary import SessionLog
            self._summary_writer.add_session_log(SessionLog(status=SessionLog.START), global_step)
        if self._request_summary:
            self._timer.update_last_triggered_step(global_step)
            for summary in run_values.results.get("summary", ()):
                self._summary_writer.add_summary(summary, global_step)
        self._next_step = global_step + 1

    def end(self, session=None):
        if self._summary_writer:
            self._summary_writer.flush()

    def _get_summary_op(self):
        op = self._summary_op if self._summary_op is not None else self._scaffold.summary_op
        if op is None:
            return None
        return list(op) if isinstance(op, (list, tuple)) else [op]
