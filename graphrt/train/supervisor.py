"""`tf.train.Supervisor`: TF1's classic training harness.

    sv = tf.train.Supervisor(logdir=logdir, save_model_secs=60)
    with sv.managed_session() as sess:
        while not sv.should_stop():
            sess.run(train_op)

The chief restores the latest checkpoint of `logdir` or runs `init_op`
(with `init_feed_dict`) and `init_fn` (through the SessionManager), writes
`graph.pbtxt` and the graph to the event file, and starts the standard
services: a summary thread and a steps/sec thread every
`save_summaries_secs`, a checkpoint thread every `save_model_secs` (each
LooperThread runs once as it starts, as TF's do), and the graph's queue
runners. All of them run under the Supervisor's Coordinator, so `stop()`
joins them and re-raises the first error any of them (or the `with` block)
reported; OutOfRangeError is a clean stop. As in TF, nothing is saved when
the Supervisor stops: save the last step yourself with `sv.saver`.
"""
import contextlib
import os
import time

from .. import logging
from ..data_flow.coordinator import Coordinator, LooperThread
from ..framework import dtypes
from ..framework.graph import GraphKeys, get_default_graph
from ..ops import control_ops
from ..ops import variables as variables_lib
from . import training_util
from .monitored.scaffold import READY_FOR_LOCAL_INIT_OP, READY_OP, SUMMARY_OP
from .monitored.session_manager import SessionManager


class Supervisor:
    USE_DEFAULT = 0

    def __init__(self, graph=None, ready_op=USE_DEFAULT, ready_for_local_init_op=USE_DEFAULT, is_chief=True,
                 init_op=USE_DEFAULT, init_feed_dict=None, local_init_op=USE_DEFAULT, logdir=None,
                 summary_op=USE_DEFAULT, saver=USE_DEFAULT, global_step=USE_DEFAULT, save_summaries_secs=120,
                 save_model_secs=600, recovery_wait_secs=30, stop_grace_secs=120,
                 checkpoint_basename="model.ckpt", session_manager=None, summary_writer=USE_DEFAULT,
                 init_fn=None, local_init_run_options=None):
        graph = graph if graph is not None else get_default_graph()
        with graph.as_default():
            self._ready_op = _default(ready_op, graph, READY_OP, variables_lib.report_uninitialized_variables)
            self._ready_for_local_init_op = _default(ready_for_local_init_op, graph, READY_FOR_LOCAL_INIT_OP,
                                                     lambda: None)
            self._init_op = _default(init_op, graph, GraphKeys.INIT_OP, variables_lib.global_variables_initializer)
            self._init_feed_dict = init_feed_dict
            self._local_init_op = _default(local_init_op, graph, GraphKeys.LOCAL_INIT_OP,
                                           lambda: _default_local_init_op(graph))
            self._saver = _default(saver, graph, GraphKeys.SAVERS, _default_saver, add=False)
            self._summary_op = _default(summary_op, graph, SUMMARY_OP, _merge_all)
            self._global_step = _default(global_step, graph, GraphKeys.GLOBAL_STEP,
                                         lambda: _default_global_step_tensor(graph))
        self._graph = graph
        self._is_chief = is_chief
        self._coord = Coordinator()
        self._recovery_wait_secs = recovery_wait_secs
        self._stop_grace_secs = stop_grace_secs
        self._init_fn = init_fn
        self._local_init_run_options = local_init_run_options
        self._logdir = None
        self._save_summaries_secs = None
        self._save_model_secs = None
        self._save_path = None
        self._summary_writer = None
        self._graph_added_to_summary = False
        if is_chief:  # only the chief writes: checkpoints, summaries, the graph
            self._logdir = logdir
            self._save_summaries_secs = save_summaries_secs
            self._save_model_secs = save_model_secs
            if logdir:
                self._save_path = os.path.join(logdir, checkpoint_basename)
            if summary_writer is Supervisor.USE_DEFAULT:
                if logdir:
                    from ..summary import FileWriter
                    self._summary_writer = FileWriter(logdir)
            else:
                self._summary_writer = summary_writer
        self._session_manager = session_manager if session_manager is not None else SessionManager(
            local_init_op=self._local_init_op, ready_op=self._ready_op,
            ready_for_local_init_op=self._ready_for_local_init_op, graph=graph,
            recovery_wait_secs=recovery_wait_secs, local_init_run_options=local_init_run_options)
        self._verify_setup()
        graph.finalize()

    def _verify_setup(self):
        # A non-chief shares the chief's variables: each must be placed (on a ps task) explicitly.
        if not self._is_chief:
            for op in self._graph.get_operations():
                if op.type in ("Variable", "VariableV2") and not op.device:
                    raise ValueError(f"When using replicas, all Variables must have their device set: {op}")

    # -- what it was given or made -------------------------------------------------------------
    @property
    def is_chief(self):
        return self._is_chief

    @property
    def session_manager(self):
        return self._session_manager

    @property
    def coord(self):
        return self._coord

    @property
    def init_op(self):
        return self._init_op

    @property
    def init_feed_dict(self):
        return self._init_feed_dict

    @property
    def ready_op(self):
        return self._ready_op

    @property
    def ready_for_local_init_op(self):
        return self._ready_for_local_init_op

    @property
    def summary_writer(self):
        return self._summary_writer

    @property
    def summary_op(self):
        return self._summary_op

    @property
    def save_summaries_secs(self):
        return self._save_summaries_secs

    @property
    def global_step(self):
        return self._global_step

    @property
    def saver(self):
        return self._saver

    @property
    def save_model_secs(self):
        return self._save_model_secs

    @property
    def save_path(self):
        return self._save_path

    # -- sessions --------------------------------------------------------------------------------
    def prepare_or_wait_for_session(self, master="", config=None, wait_for_checkpoint=False, max_wait_secs=7200,
                                    start_standard_services=True):
        """The chief's session restored from `logdir` or initialized; a non-chief's once the chief's
        model is ready. Starts the standard services and the queue runners."""
        self._coord.clear_stop()
        if self._summary_writer:
            self._summary_writer.reopen()
        if self._is_chief:
            sess = self._session_manager.prepare_session(
                master, init_op=self._init_op, saver=self._saver, checkpoint_dir=self._logdir,
                wait_for_checkpoint=wait_for_checkpoint, max_wait_secs=max_wait_secs, config=config,
                init_feed_dict=self._init_feed_dict, init_fn=self._init_fn)
            self._write_graph()
            if start_standard_services:
                logging.info("Starting standard services.")
                self.start_standard_services(sess)
        else:
            sess = self._session_manager.wait_for_session(master, config=config, max_wait_secs=max_wait_secs)
        if start_standard_services:
            logging.info("Starting queue runners.")
            self.start_queue_runners(sess)
        return sess

    @contextlib.contextmanager
    def managed_session(self, master="", config=None, start_standard_services=True, close_summary_writer=True):
        """A session for a `with` block; on leaving it the services stop, the session closes, and an
        error from the block or a service is raised again (OutOfRangeError ends it cleanly)."""
        sess = None
        try:
            sess = self.prepare_or_wait_for_session(master=master, config=config,
                                                    start_standard_services=start_standard_services)
            yield sess
        except Exception as e:  # noqa: BLE001 - recorded, re-raised by stop() unless it is a clean stop
            self.request_stop(e)
        finally:
            try:
                self.stop(close_summary_writer=close_summary_writer)
            finally:
                if sess is not None:
                    try:
                        sess.close()
                    except Exception:  # noqa: BLE001 - as TF: the session is going away anyway
                        pass

    def _write_graph(self):
        if self._logdir:
            from . import write_graph
            write_graph(self._graph, self._logdir, "graph.pbtxt")
        if self._summary_writer and not self._graph_added_to_summary:
            self._summary_writer.add_graph(self._graph)
            self._graph_added_to_summary = True

    # -- services ----------------------------------------------------------------------------------
    def start_standard_services(self, sess):
        """Starts the summary, steps/sec and checkpoint threads that the arguments ask for."""
        if not self._is_chief:
            raise RuntimeError("Only chief supervisor can start standard services. Because only chief supervisors "
                               "can write events.")
        if not self._logdir:
            logging.warning("Standard services need a 'logdir' passed to the SessionManager")
            return None
        from ..summary import SessionLog
        if self._global_step is not None and self._summary_writer:
            current_step = training_util.global_step(sess, self._global_step)
            self._summary_writer.add_session_log(SessionLog(status=SessionLog.START), current_step)
        threads = []
        if self._save_summaries_secs and self._summary_writer:
            if self._summary_op is not None:
                threads.append(SVSummaryThread(self, sess))
            if self._global_step is not None:
                threads.append(SVStepCounterThread(self, sess))
        if self._saver and self._save_model_secs:
            threads.append(SVTimerCheckpointThread(self, sess))
        for t in threads:
            t.start()
        return threads

    def start_queue_runners(self, sess, queue_runners=None):
        """Starts the threads of `queue_runners` (the graph's by default) under the coordinator."""
        if queue_runners is None:
            queue_runners = self._graph.get_collection(GraphKeys.QUEUE_RUNNERS)
        threads = []
        for qr in queue_runners:
            threads.extend(qr.create_threads(sess, coord=self._coord, daemon=True, start=True))
        return threads

    def loop(self, timer_interval_secs, target, args=None, kwargs=None):
        """Starts a LooperThread calling `target` every `timer_interval_secs` (back to back if None)."""
        return LooperThread.loop(self._coord, timer_interval_secs, target, args=args, kwargs=kwargs)

    def stop(self, threads=None, close_summary_writer=True, ignore_live_threads=False):
        """Stops and joins every thread (the session stays open); re-raises a recorded error."""
        self._coord.request_stop()
        try:
            self._coord.join(threads, stop_grace_period_secs=self._stop_grace_secs,
                             ignore_live_threads=ignore_live_threads)
        finally:
            if close_summary_writer and self._summary_writer:
                from ..summary import SessionLog
                self._summary_writer.add_session_log(SessionLog(status=SessionLog.STOP))
                self._summary_writer.close()
                self._graph_added_to_summary = False

    def request_stop(self, ex=None):
        self._coord.request_stop(ex=ex)

    def should_stop(self):
        return self._coord.should_stop()

    def stop_on_exception(self):
        return self._coord.stop_on_exception()

    def wait_for_stop(self):
        self._coord.wait_for_stop()

    def summary_computed(self, sess, summary, global_step=None):
        """Writes `summary` (a Summary or its bytes) at `global_step` (the current one by default)."""
        if not self._summary_writer:
            raise RuntimeError("Writing a summary requires a summary writer.")
        if global_step is None and self._global_step is not None:
            global_step = training_util.global_step(sess, self._global_step)
        self._summary_writer.add_summary(summary, global_step)

    # TF1's CamelCase names.
    PrepareSession = prepare_or_wait_for_session
    StartQueueRunners = start_queue_runners
    StartStandardServices = start_standard_services
    Stop = stop
    RequestStop = request_stop
    Loop = loop
    ShouldStop = should_stop
    StopOnException = stop_on_exception
    WaitForStop = wait_for_stop
    SummaryComputed = summary_computed


class SVSummaryThread(LooperThread):
    """Writes `summary_op` every `save_summaries_secs`."""

    def __init__(self, sv, sess):
        super().__init__(sv.coord, sv.save_summaries_secs)
        self._sv = sv
        self._sess = sess

    def run_loop(self):
        if self._sv.global_step is not None:
            summary_strs, global_step = self._sess.run([self._sv.summary_op, self._sv.global_step])
        else:
            summary_strs, global_step = self._sess.run(self._sv.summary_op), None
        if self._sv.summary_writer:
            logging.info("Recording summary at step %s.", global_step)
            self._sv.summary_writer.add_summary(summary_strs, global_step)


class SVStepCounterThread(LooperThread):
    """Writes `<global_step>/sec` every `save_summaries_secs`."""

    def __init__(self, sv, sess, step_counter=None):
        super().__init__(sv.coord, sv.save_summaries_secs)
        self._sv = sv
        self._sess = sess
        self._last_time = 0.0
        self._last_step = 0
        self._step_counter = sv.global_step if step_counter is None else step_counter
        self._summary_tag = f"{self._step_counter.op.name}/sec"

    def start_loop(self):
        self._last_time = time.time()
        self._last_step = training_util.global_step(self._sess, self._step_counter)

    def run_loop(self):
        from ..summary import Summary
        current_step = training_util.global_step(self._sess, self._step_counter)
        added_steps, self._last_step = current_step - self._last_step, current_step
        now = time.time()
        elapsed, self._last_time = now - self._last_time, now
        steps_per_sec = added_steps / elapsed if elapsed > 0.0 else float("inf")
        if self._sv.summary_writer:
            self._sv.summary_writer.add_summary(
                Summary(value=[Summary.Value(tag=self._summary_tag, simple_value=steps_per_sec)]), current_step)
        logging.info("%s: %g", self._summary_tag, steps_per_sec)


class SVTimerCheckpointThread(LooperThread):
    """Saves `<logdir>/<checkpoint_basename>-<step>` every `save_model_secs`."""

    def __init__(self, sv, sess):
        super().__init__(sv.coord, sv.save_model_secs)
        self._sv = sv
        self._sess = sess

    def run_loop(self):
        from ..summary import SessionLog
        logging.info("Saving checkpoint to path %s", self._sv.save_path)
        self._sv.saver.save(self._sess, self._sv.save_path, global_step=self._sv.global_step)
        if self._sv.summary_writer and self._sv.global_step is not None:
            current_step = training_util.global_step(self._sess, self._sv.global_step)
            self._sv.summary_writer.add_session_log(
                SessionLog(status=SessionLog.CHECKPOINT, checkpoint_path=self._sv.save_path), current_step)


def _default(value, graph, key, make, add=True):
    """TF's USE_DEFAULT: the first item of collection `key`, else `make()` (added to it)."""
    if value is not Supervisor.USE_DEFAULT:
        return value
    found = graph.get_collection(key)
    if len(found) > 1:
        logging.info("Found %d %s operations. Returning the first one.", len(found), key)
    if found:
        return found[0]
    made = make()
    if made is not None and add:
        graph.add_to_collection(key, made)
    return made


def _default_local_init_op(graph):
    # local variables and every lookup table (tables register their initializers in a collection)
    tables = graph.get_collection(GraphKeys.TABLE_INITIALIZERS)
    return control_ops.group(variables_lib.local_variables_initializer(), *tables)


def _default_saver():
    # The Saver adds itself to the SAVERS collection.
    if not variables_lib.global_variables():
        return None
    from .saver import Saver
    return Saver()


def _merge_all():
    from ..summary import merge_all
    return merge_all()


def _default_global_step_tensor(graph):
    try:
        gs = graph.get_tensor_by_name("global_step:0")
    except KeyError:
        return None
    if gs.dtype.base_dtype in (dtypes.int32, dtypes.int64):
        return gs
    logging.warning("Found 'global_step' is not an int type: %s", gs.dtype)
    return None
