"""GlobalStepWaiterHook (a worker starts once the global step reaches a value) and
ProfilerHook (a Chrome trace of a step every N steps or seconds, with graphrt's timeline)."""
import os
import time

from .. import logging
from .monitored.basic_hooks import SecondOrStepTimer, _require_global_step
from .monitored.io_hooks import SummaryWriterCache
from .monitored.session_run_hook import SessionRunArgs, SessionRunHook

# TF sleeps 0.5 s between reads; the first reads come sooner so a short wait ends promptly.
_FIRST_POLL_SECS = 0.01
_MAX_POLL_SECS = 0.5


class GlobalStepWaiterHook(SessionRunHook):
    """Delays the first run until the global step reaches `wait_until_step`."""

    def __init__(self, wait_until_step):
        self._wait_until_step = wait_until_step

    def begin(self):
        self._worker_is_started = False
        self._global_step_tensor = _require_global_step("_GlobalStepWaiterHook")

    def before_run(self, run_context):
        if self._worker_is_started:
            return None
        if self._wait_until_step <= 0:
            self._worker_is_started = True
            return None
        logging.info("Waiting for global step %d before starting training.", self._wait_until_step)
        last_logged_step, interval = 0, _FIRST_POLL_SECS
        while True:
            current_step = int(run_context.session.run(self._global_step_tensor))
            if current_step >= self._wait_until_step:
                self._worker_is_started = True
                return None
            if current_step - last_logged_step > 1000:
                logging.info("Waiting for global step %d before starting training. Current step is %d.",
                             self._wait_until_step, current_step)
                last_logged_step = current_step
            time.sleep(interval)
            interval = min(interval * 2, _MAX_POLL_SECS)


class ProfilerHook(SessionRunHook):
    """Traces a step every `save_steps` steps or `save_secs` seconds into
    `<output_dir>/timeline-<step>.json` (Chrome trace format) and the run metadata into the
    directory's event file (tag `step_<step>`)."""

    def __init__(self, save_steps=None, save_secs=None, output_dir="", show_dataflow=True, show_memory=False):
        self._output_file = os.path.join(output_dir, "timeline-{}.json")
        self._file_writer = SummaryWriterCache.get(output_dir)
        self._show_dataflow = show_dataflow
        self._show_memory = show_memory
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self):
        self._next_step = None
        self._global_step_tensor = _require_global_step("ProfilerHook")

    def before_run(self, run_context):
        from ..client.config import RunOptions
        # As TF: the first step is never traced (it includes building the plans).
        self._request_summary = self._next_step is not None and self._timer.should_trigger_for_step(self._next_step)
        opts = RunOptions(trace_level=RunOptions.FULL_TRACE) if self._request_summary else None
        return SessionRunArgs({"global_step": self._global_step_tensor}, options=opts)

    def after_run(self, run_context, run_values):
        stale_global_step = int(run_values.results["global_step"])
        if self._next_step is None:
            self._timer.update_last_triggered_step(stale_global_step)
        global_step = stale_global_step + 1
        if self._request_summary:
            global_step = int(run_context.session.run(self._global_step_tensor))
            self._timer.update_last_triggered_step(global_step)
            self._save(global_step, self._output_file.format(global_step), run_values.run_metadata.step_stats)
            self._file_writer.add_run_metadata(run_values.run_metadata, f"step_{global_step}")
        self._next_step = global_step + 1

    def _save(self, step, save_path, step_stats):
        from ..client.timeline import Timeline
        logging.info("Saving timeline for %d into '%s'.", step, save_path)
        trace = Timeline(step_stats).generate_chrome_trace_format(show_dataflow=self._show_dataflow,
                                                                 show_memory=self._show_memory)
        with open(save_path, "w") as f:
            f.write(trace)
