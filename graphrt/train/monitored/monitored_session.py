"""`tf.train.MonitoredSession`, `SingularMonitoredSession`, `MonitoredTrainingSession`.

A monitored session is a stack of wrappers around a `tf.Session`, as in TF1:

    _RecoverableSession      re-creates the whole stack after AbortedError or
                             UnavailableError (a ps or worker task died and is
                             coming back): the new session restores the last
                             checkpoint (chief) or waits for the chief (others)
    _CoordinatedSession      a Coordinator with the queue runners; its stored
                             exception is raised; close() joins the threads
    _HookedSession           every run: hooks' before_run, one merged
                             Session.run, hooks' after_run, stop requests

Hooks' `begin` runs when the monitored session is made (the graph is
finalized after), `after_create_session` after each (re)creation, `end` on
a normal close. Leaving the `with` block on OutOfRangeError ends training
normally, as in TF.

graphrt extension: re-creation is bounded by `max_recovery_secs` (TF
retries forever); after it the last error is raised, so a task that never
returns does not hang the program.
"""
import time

from ... import errors, logging
from ...framework.graph import get_default_graph
from .scaffold import Scaffold
from .session_manager import SessionManager
from .session_run_hook import SessionRunArgs, SessionRunContext, SessionRunValues

_PREEMPTION_ERRORS = (errors.AbortedError, errors.UnavailableError)
USE_DEFAULT = object()
DEFAULT_MAX_RECOVERY_SECS = 600.0


class SessionCreator:
    """Makes a `tf.Session` (`create_session()`)."""

    def create_session(self):
        raise NotImplementedError("create_session is abstract")


class ChiefSessionCreator(SessionCreator):
    """The chief's session: restores `checkpoint_dir`'s latest checkpoint or initializes the model."""

    def __init__(self, scaffold=None, master="", config=None, checkpoint_dir=None,
                 checkpoint_filename_with_path=None):
        self._checkpoint_dir = checkpoint_dir
        self._checkpoint_filename_with_path = checkpoint_filename_with_path
        self._scaffold = scaffold or Scaffold()
        self._master = master
        self._config = config
        self._session_manager = None

    def _get_session_manager(self):
        if self._session_manager is None:
            self._session_manager = SessionManager(
                local_init_op=self._scaffold.local_init_op, local_init_feed_dict=self._scaffold.local_init_feed_dict,
                ready_op=self._scaffold.ready_op, ready_for_local_init_op=self._scaffold.ready_for_local_init_op,
                graph=get_default_graph())
        return self._session_manager

    def create_session(self):
        self._scaffold.finalize()
        return self._get_session_manager().prepare_session(
            self._master, saver=self._scaffold.saver, checkpoint_dir=self._checkpoint_dir,
            checkpoint_filename_with_path=self._checkpoint_filename_with_path, config=self._config,
            init_op=self._scaffold.init_op, init_feed_dict=self._scaffold.init_feed_dict,
            init_fn=self._scaffold.init_fn)


class WorkerSessionCreator(SessionCreator):
    """A non-chief's session: waits (polling) until the chief has made the model ready."""

    def __init__(self, scaffold=None, master="", config=None, max_wait_secs=30 * 60):
        self._scaffold = scaffold or Scaffold()
        self._master = master
        self._config = config
        self._max_wait_secs = max_wait_secs
        self._session_manager = None

    def create_session(self):
        self._scaffold.finalize()
        if self._session_manager is None:
            self._session_manager = SessionManager(
                local_init_op=self._scaffold.local_init_op, local_init_feed_dict=self._scaffold.local_init_feed_dict,
                ready_op=self._scaffold.ready_op, ready_for_local_init_op=self._scaffold.ready_for_local_init_op,
                graph=get_default_graph())
        return self._session_manager.wait_for_session(self._master, config=self._config,
                                                      max_wait_secs=self._max_wait_secs)


class _MonitoredSession:
    def __init__(self, session_creator, hooks, should_recover, stop_grace_period_secs=120,
                 max_recovery_secs=DEFAULT_MAX_RECOVERY_SECS):
        self._graph = get_default_graph()
        self._graph_was_finalized = self._graph.finalized
        self._hooks = list(hooks or [])
        for h in self._hooks:
            h.begin()
        self._coordinated_creator = _CoordinatedSessionCreator(session_creator or ChiefSessionCreator(),
                                                               self._hooks, stop_grace_period_secs)
        try:
            if should_recover:
                self._sess = _RecoverableSession(self._coordinated_creator, max_recovery_secs)
            else:
                self._sess = self._coordinated_creator.create_session()
        except BaseException:
            # graphrt: a failed start leaves the graph as it found it (TF leaves it finalized)
            if not self._graph_was_finalized:
                self._graph._unsafe_unfinalize()
            raise

    @property
    def graph(self):
        return self._graph

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Session.run with the hooks' additions; raises RuntimeError once closed."""
        if self._sess is None:
            raise RuntimeError("Run called on a closed MonitoredSession.")
        return self._sess.run(fetches, feed_dict=feed_dict, options=options, run_metadata=run_metadata)

    def run_step_fn(self, step_fn):
        """Calls `step_fn(step_context)`; `step_context.run_with_hooks(...)` is `self.run`, and
        `step_context.request_stop()` makes `should_stop()` true."""
        context = StepContext(self._coordinated_creator.tf_sess, self.run)
        try:
            return step_fn(context)
        finally:
            if context.stop_requested and self._sess is not None:
                self._sess.request_stop()

    def should_stop(self):
        return self._sess is None or self._sess.should_stop()

    def close(self):
        self._close_internal()

    def __enter__(self):
        return self

    def __exit__(self, exception_type, exception_value, traceback):
        if exception_type in (errors.OutOfRangeError, StopIteration):
            exception_type = None
        self._close_internal(exception_type)
        return exception_type is None  # suppresses OutOfRange/StopIteration only

    def _close_internal(self, exception_type=None):
        try:
            if not exception_type and self._coordinated_creator.tf_sess is not None:
                for h in self._hooks:
                    h.end(self._coordinated_creator.tf_sess)
        finally:
            try:
                if self._sess is None:
                    raise RuntimeError("Session is already closed.")
                self._sess.close()
            finally:
                self._sess = None
                self._coordinated_creator.tf_sess = None
                self._coordinated_creator.coord = None
                if not self._graph_was_finalized:
                    self._graph._unsafe_unfinalize()

    def _is_closed(self):
        return self._sess is None

    def _tf_sess(self):
        return self._coordinated_creator.tf_sess

    def __repr__(self):
        state = "closed" if self._sess is None else ("stopping" if self.should_stop() else "running")
        return f"<{type(self).__name__} {state}, {len(self._hooks)} hooks>"


class MonitoredSession(_MonitoredSession):
    """A session with hooks that recovers from Aborted/Unavailable errors by re-creating itself."""

    def __init__(self, session_creator=None, hooks=None, stop_grace_period_secs=120,
                 max_recovery_secs=DEFAULT_MAX_RECOVERY_SECS):
        super().__init__(session_creator, hooks, should_recover=True, stop_grace_period_secs=stop_grace_period_secs,
                         max_recovery_secs=max_recovery_secs)


class SingularMonitoredSession(_MonitoredSession):
    """A chief MonitoredSession without recovery; `raw_session()` is the tf.Session."""

    def __init__(self, hooks=None, scaffold=None, master="", config=None, checkpoint_dir=None,
                 stop_grace_period_secs=120, checkpoint_filename_with_path=None):
        creator = ChiefSessionCreator(scaffold=scaffold, master=master, config=config, checkpoint_dir=checkpoint_dir,
                                      checkpoint_filename_with_path=checkpoint_filename_with_path)
        super().__init__(creator, hooks, should_recover=False, stop_grace_period_secs=stop_grace_period_secs)

    def raw_session(self):
        return self._tf_sess()


def MonitoredTrainingSession(master="", is_chief=True, checkpoint_dir=None, scaffold=None, hooks=None,  # noqa: N802
                             chief_only_hooks=None, save_checkpoint_secs=USE_DEFAULT, save_summaries_steps=USE_DEFAULT,
                             save_summaries_secs=USE_DEFAULT, config=None, stop_grace_period_secs=120,
                             log_step_count_steps=100, max_wait_secs=7200, save_checkpoint_steps=USE_DEFAULT,
                             summary_dir=None, save_graph_def=True, max_recovery_secs=DEFAULT_MAX_RECOVERY_SECS):
    """TF1's MonitoredTrainingSession: the chief restores or initializes the model and adds the
    checkpoint, summary and step-counter hooks; the others wait for it (at most `max_wait_secs`)."""
    from .io_hooks import CheckpointSaverHook, StepCounterHook, SummarySaverHook
    if save_summaries_steps is USE_DEFAULT and save_summaries_secs is USE_DEFAULT:
        save_summaries_steps, save_summaries_secs = 100, None
    elif save_summaries_secs is USE_DEFAULT:
        save_summaries_secs = None
    elif save_summaries_steps is USE_DEFAULT:
        save_summaries_steps = None
    if save_checkpoint_steps is USE_DEFAULT and save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_steps, save_checkpoint_secs = None, 600
    elif save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_secs = None
    elif save_checkpoint_steps is USE_DEFAULT:
        save_checkpoint_steps = None
    scaffold = scaffold or Scaffold()
    all_hooks = []
    if is_chief and chief_only_hooks:
        all_hooks.extend(chief_only_hooks)
    if hooks:
        all_hooks.extend(hooks)
    if not is_chief:
        creator = WorkerSessionCreator(scaffold=scaffold, master=master, config=config, max_wait_secs=max_wait_secs)
        return MonitoredSession(session_creator=creator, hooks=all_hooks,
                                stop_grace_period_secs=stop_grace_period_secs, max_recovery_secs=max_recovery_secs)
    summary_dir = summary_dir or checkpoint_dir
    creator = ChiefSessionCreator(scaffold=scaffold, checkpoint_dir=checkpoint_dir, master=master, config=config)
    if summary_dir:
        if log_step_count_steps and log_step_count_steps > 0:
            all_hooks.append(StepCounterHook(output_dir=summary_dir, every_n_steps=log_step_count_steps))
        if (save_summaries_steps and save_summaries_steps > 0) or (save_summaries_secs and save_summaries_secs > 0):
            all_hooks.append(SummarySaverHook(scaffold=scaffold, save_steps=save_summaries_steps,
                                              save_secs=save_summaries_secs, output_dir=summary_dir))
    if checkpoint_dir:
        if (save_checkpoint_secs and save_checkpoint_secs > 0) or (save_checkpoint_steps and save_checkpoint_steps > 0):
            all_hooks.append(CheckpointSaverHook(checkpoint_dir, save_steps=save_checkpoint_steps,
                                                 save_secs=save_checkpoint_secs, scaffold=scaffold,
                                                 save_graph_def=save_graph_def))
    return MonitoredSession(session_creator=creator, hooks=all_hooks, stop_grace_period_secs=stop_grace_period_secs,
                           max_recovery_secs=max_recovery_secs)


class StepContext:
    """What `run_step_fn` passes: the raw `session`, `run_with_hooks`, `request_stop`."""

    def __init__(self, session, run_with_hooks_fn):
        self._session = session
        self._run_with_hooks_fn = run_with_hooks_fn
        self.stop_requested = False

    @property
    def session(self):
        return self._session

    def run_with_hooks(self, *args, **kwargs):
        return self._run_with_hooks_fn(*args, **kwargs)

    def request_stop(self):
        self.stop_requested = True


# -- the wrappers ----------------------------------------------------------------------------------

class _WrappedSession:
    def __init__(self, sess):
        self._sess = sess
        self._stop_requested = False

    @property
    def graph(self):
        return self._sess.graph

    def _check_stop(self):
        return False

    def request_stop(self):
        self._stop_requested = True

    def should_stop(self):
        if self._stop_requested or self._check_stop():
            return True
        if self._sess is not None:
            return self._sess.should_stop() if isinstance(self._sess, _WrappedSession) else False
        return True

    def close(self):
        if self._sess is not None:
            try:
                self._sess.close()
            except _PREEMPTION_ERRORS as e:
                logging.warning("An error occurred when attempting to close the session (it may be a dead task's "
                                "connection): %s", e)
            finally:
                self._sess = None

    def run(self, *args, **kwargs):
        return self._sess.run(*args, **kwargs)


class _CoordinatedSessionCreator:
    def __init__(self, session_creator, hooks, stop_grace_period_secs):
        self._session_creator = session_creator
        self._hooks = hooks
        self._stop_grace_period_secs = stop_grace_period_secs
        self.coord = None
        self.tf_sess = None

    def create_session(self):
        from ...data_flow import Coordinator, start_queue_runners
        from ...data_flow.queue_runner import QUEUE_RUNNERS
        self.tf_sess = self._session_creator.create_session()
        self.coord = Coordinator(clean_stop_exception_types=[])
        if get_default_graph().get_collection(QUEUE_RUNNERS):
            start_queue_runners(sess=self.tf_sess, coord=self.coord)
        for hook in self._hooks:
            hook.after_create_session(self.tf_sess, self.coord)
        return _CoordinatedSession(_HookedSession(self.tf_sess, self._hooks), self.coord,
                                   self._stop_grace_period_secs)


class _RecoverableSession(_WrappedSession):
    def __init__(self, sess_creator, max_recovery_secs):
        self._sess_creator = sess_creator
        self._max_recovery_secs = max_recovery_secs
        super().__init__(self._create_session(None))

    def _create_session(self, first_error):
        deadline = time.monotonic() + self._max_recovery_secs
        interval = 0.05
        while True:
            try:
                return self._sess_creator.create_session()
            except _PREEMPTION_ERRORS as e:
                if time.monotonic() >= deadline:
                    raise type(e)(f"Gave up re-creating the session after {self._max_recovery_secs} secs "
                                  f"(max_recovery_secs): {e.message}"
                                  + (f"; the session failed first with: {first_error}" if first_error else ""),
                                  node=e.node) from e
                logging.info("An error was raised while a session was being created. This may be due to a "
                             "preemption of a connected worker or parameter server. A new session will be "
                             "created. Error: %s", e)
                time.sleep(interval)
                interval = min(interval * 2, 1.0)

    def _check_stop(self):
        return False if self._sess is not None else True

    def should_stop(self):
        if self._stop_requested:
            return True
        if self._sess is None:
            return False  # the next run re-creates it
        try:
            return self._sess.should_stop()
        except _PREEMPTION_ERRORS as e:
            # a queue runner (or the chief's sync loop) lost a task: the next run re-creates the session
            logging.info("An error was raised while considering whether the session is complete. This may be "
                         "due to a preemption in a connected worker or parameter server. The current session "
                         "will be closed and a new session will be created. Error: %s", e)
            self.close()
            self._sess = None
            return False

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        last_error = None
        while True:
            if self._sess is None:
                self._sess = self._create_session(last_error)
            try:
                return self._sess.run(fetches, feed_dict=feed_dict, options=options, run_metadata=run_metadata)
            except _PREEMPTION_ERRORS as e:
                logging.info("An error was raised. This may be due to a preemption in a connected worker or "
                             "parameter server. The current session will be closed and a new session will be "
                             "created. This error may also occur due to a gRPC failure caused by high memory or "
                             "network bandwidth usage in the parameter servers. If this error occurs repeatedly, "
                             "try increasing the number of parameter servers assigned to the job. Error: %s", e)
                last_error = e
                self.close()
                self._sess = None


class _CoordinatedSession(_WrappedSession):
    def __init__(self, sess, coord, stop_grace_period_secs=120):
        super().__init__(sess)
        self._coord = coord
        self._stop_grace_period_secs = stop_grace_period_secs

    def _check_stop(self):
        # A queue-runner thread's error reaches the caller (the run call raises it).
        self._coord.raise_requested_exception()
        return self._coord.should_stop()

    def close(self):
        self._coord.request_stop()
        try:
            self._coord.join(stop_grace_period_secs=self._stop_grace_period_secs, ignore_live_threads=True)
        finally:
            try:
                super().close()
            except Exception:  # noqa: BLE001 - as TF: errors closing a stopped session are ignored
                pass

    def run(self, *args, **kwargs):
        try:
            return self._sess.run(*args, **kwargs)
        except _PREEMPTION_ERRORS:
            raise
        except Exception:
            # A failure in a run may be caused by a queue runner's preemption error: raise that one, so
            # the recoverable session above re-creates the session.
            try:
                self._coord.raise_requested_exception()
            except _PREEMPTION_ERRORS:
                raise
            except Exception:  # noqa: BLE001 - the run's own error is the one to raise
                pass
            raise


class _HookedSession(_WrappedSession):
    def __init__(self, sess, hooks):
        super().__init__(sess)
        self._hooks = hooks
        self._should_stop = False

    def _check_stop(self):
        return self._should_stop

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        if self.should_stop():
            raise RuntimeError("Run called even after should_stop requested.")
        actual_fetches = {"caller": fetches}
        run_context = SessionRunContext(original_args=SessionRunArgs(fetches, feed_dict), session=self._sess)
        hook_feeds = {}
        for hook in self._hooks:
            request = hook.before_run(run_context)
            if request is None:
                continue
            if request.fetches is not None:
                actual_fetches[hook] = request.fetches
            if request.feed_dict:
                _raise_if_feeds_intersect(hook_feeds, request.feed_dict,
                                          "Same tensor is fed by two hooks.")
                hook_feeds.update(request.feed_dict)
            if request.options is not None:
                options = _merge_run_options(options, request.options)
        if feed_dict and hook_feeds:
            _raise_if_feeds_intersect(feed_dict, hook_feeds, "Same tensor is fed by a SessionRunHook and user.")
        feeds = dict(feed_dict or {})
        feeds.update(hook_feeds)
        if options is not None and run_metadata is None:
            from ...client.config import RunMetadata
            run_metadata = RunMetadata()
        outputs = self._sess.run(actual_fetches, feed_dict=feeds or None, options=options, run_metadata=run_metadata)
        for hook in self._hooks:
            hook.after_run(run_context, SessionRunValues(results=outputs.get(hook), options=options,
                                                         run_metadata=run_metadata))
        self._should_stop = self._should_stop or run_context.stop_requested
        return outputs["caller"]


def _raise_if_feeds_intersect(feeds1, feeds2, message):
    common = set(feeds1) & set(feeds2)
    if common:
        raise RuntimeError(f"{message} Conflict(s): {sorted(str(k) for k in common)}")


def _merge_run_options(options, extra):
    """The stricter of two RunOptions (as TF merges a hook's): the higher trace level, the
    shorter timeout, either output_partition_graphs."""
    if options is None:
        return extra
    from ...client.config import RunOptions
    merged = RunOptions(**{k: getattr(options, k) for k in RunOptions._fields})
    merged.trace_level = max(options.trace_level, extra.trace_level)
    if extra.timeout_in_ms:
        merged.timeout_in_ms = min(options.timeout_in_ms or extra.timeout_in_ms, extra.timeout_in_ms)
    merged.output_partition_graphs = options.output_partition_graphs or extra.output_partition_graphs
    return merged
