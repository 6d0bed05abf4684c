"""`tf.train.SessionManager`: make a session whose model is ready to run.

The chief *prepares* the session: it restores the latest checkpoint of
`checkpoint_dir` if there is one, otherwise runs `init_op` and `init_fn`;
then the local init op. A non-chief *waits* for the session: it opens a
session, and once `ready_for_local_init_op` says the chief has initialized
the global variables it runs its local init and checks `ready_op`.

Where TF sleeps `recovery_wait_secs` (30 s) between checks, graphrt polls
quickly: the first retry after 20 ms, the interval doubling up to
`recovery_wait_secs` (1 s by default). A model still not ready after
`max_wait_secs` raises DeadlineExceededError naming what was missing, and a
task that cannot be reached yet (UnavailableError, AbortedError while the
cluster starts) counts as "not ready" until then.
"""
import time

from ... import errors, logging
from ...framework.graph import get_default_graph
from .. import checkpoint_state

_FIRST_POLL_SECS = 0.02
_RETRIABLE = (errors.UnavailableError, errors.AbortedError)


class SessionManager:
    def __init__(self, local_init_op=None, ready_op=None, ready_for_local_init_op=None, graph=None,
                 recovery_wait_secs=1.0, local_init_run_options=None, local_init_feed_dict=None):
        self._local_init_op = local_init_op
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._graph = graph if graph is not None else get_default_graph()
        self._recovery_wait_secs = recovery_wait_secs
        self._local_init_run_options = local_init_run_options
        self._local_init_feed_dict = local_init_feed_dict
        if ready_for_local_init_op is not None and local_init_op is None:
            raise ValueError("If you pass a ready_for_local_init_op you must also pass a local_init_op , "
                             f"ready_for_local_init_op [{ready_for_local_init_op}]")

    def __repr__(self):
        return f"<SessionManager recovery_wait_secs={self._recovery_wait_secs}>"

    # -- the chief ---------------------------------------------------------------------------
    def prepare_session(self, master, init_op=None, saver=None, checkpoint_dir=None,
                        checkpoint_filename_with_path=None, wait_for_checkpoint=False, max_wait_secs=7200,
                        config=None, init_feed_dict=None, init_fn=None):
        """A session with the model restored or initialized; RuntimeError if it is still not ready."""
        sess, is_loaded = self._restore_checkpoint(master, saver, checkpoint_dir, checkpoint_filename_with_path,
                                                   wait_for_checkpoint, max_wait_secs, config)
        if not is_loaded:
            if init_op is None and not init_fn and self._local_init_op is None:
                raise RuntimeError("Model is not initialized and no init_op or init_fn or local_init_op was "
                                   "given")
            if init_op is not None:
                sess.run(init_op, feed_dict=init_feed_dict)
            if init_fn:
                init_fn(sess)
        ok, msg = self._try_run_local_init_op(sess)
        if not ok:
            raise RuntimeError(f"Init operations did not make model ready for local_init.  Init op: "
                               f"{_name(init_op)}, init fn: {init_fn}, error: {msg}")
        ok, msg = self._model_ready(sess)
        if not ok:
            raise RuntimeError(f"Init operations did not make model ready.  Init op: {_name(init_op)}, init fn: "
                               f"{init_fn}, local_init_op: {_name(self._local_init_op)}, error: {msg}")
        return sess

    def recover_session(self, master, saver=None, checkpoint_dir=None, checkpoint_filename_with_path=None,
                        wait_for_checkpoint=False, max_wait_secs=7200, config=None):
        """(session, initialized): the model restored from a checkpoint if there is one."""
        sess, is_loaded = self._restore_checkpoint(master, saver, checkpoint_dir, checkpoint_filename_with_path,
                                                   wait_for_checkpoint, max_wait_secs, config)
        ok, _ = self._try_run_local_init_op(sess)
        if not is_loaded or not ok:
            return sess, False
        ok, msg = self._model_ready(sess)
        if not ok:
            logging.info("Restoring model from %s did not make model ready for local init: %s", checkpoint_dir,
                         msg)
            return sess, False
        return sess, True

    def _restore_checkpoint(self, master, saver, checkpoint_dir, checkpoint_filename_with_path,
                            wait_for_checkpoint, max_wait_secs, config):
        sess = self._new_session(master, config)
        if checkpoint_dir and checkpoint_filename_with_path:
            raise ValueError("Can not provide both checkpoint_dir and checkpoint_filename_with_path.")
        if not saver or not (checkpoint_dir or checkpoint_filename_with_path):
            return sess, False
        if checkpoint_filename_with_path:
            saver.restore(sess, checkpoint_filename_with_path)
            return sess, True
        deadline = time.monotonic() + max_wait_secs
        interval = _FIRST_POLL_SECS
        while True:
            state = checkpoint_state.get_checkpoint_state(checkpoint_dir)
            if state is not None and state.model_checkpoint_path:
                break
            if not wait_for_checkpoint or time.monotonic() >= deadline:
                return sess, False
            time.sleep(interval)
            interval = min(interval * 2, self._recovery_wait_secs)
        saver.restore(sess, state.model_checkpoint_path)
        if hasattr(saver, "set_last_checkpoints"):  # so max_to_keep also deletes the earlier run's files
            saver.set_last_checkpoints(list(state.all_model_checkpoint_paths))
        logging.info("Restored the model from %s", state.model_checkpoint_path)
        return sess, True

    # -- a non-chief --------------------------------------------------------------------------
    def wait_for_session(self, master, config=None, max_wait_secs=float("inf")):
        """A session once the chief has made the model ready; DeadlineExceededError after `max_wait_secs`."""
        deadline = time.monotonic() + max_wait_secs
        interval = _FIRST_POLL_SECS
        while True:
            sess, msg = None, None
            try:
                sess = self._new_session(master, config)
                ok, msg = self._try_run_local_init_op(sess)
                if ok:
                    ok, msg = self._model_ready(sess)
                    if ok:
                        return sess
            except _RETRIABLE as e:
                msg = f"{type(e).__name__}: {e.message}"
            if sess is not None:
                _close_quietly(sess)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise errors.DeadlineExceededError(
                    f"Session was not ready after waiting {max_wait_secs} secs: {msg} (a non-chief worker waits "
                    f"for the chief to initialize the model; is the chief running?)")
            logging.info("Waiting for model to be ready.  Ready_for_local_init_op:  %s, ready: %s",
                         _name(self._ready_for_local_init_op), msg)
            time.sleep(min(interval, remaining))
            interval = min(interval * 2, self._recovery_wait_secs)

    # -- checks -----------------------------------------------------------------------------------
    def _new_session(self, master, config):
        from ...client.session import Session
        return Session(master, graph=self._graph, config=config)

    def _try_run_local_init_op(self, sess):
        if self._local_init_op is None:
            return True, None
        ok, msg = _ready(self._ready_for_local_init_op, sess, "Model not ready for local init")
        if not ok:
            return False, msg
        sess.run(self._local_init_op, feed_dict=self._local_init_feed_dict, options=self._local_init_run_options)
        return True, None

    def _model_ready(self, sess):
        return _ready(self._ready_op, sess, "Model not ready")

    def _model_ready_for_local_init(self, sess):
        return _ready(self._ready_for_local_init_op, sess, "Model not ready for local init")


def _ready(op, sess, what):
    """(True, None) if `op` (a vector of uninitialized names) is empty, else (False, message)."""
    if op is None:
        return True, None
    names = sess.run(op)
    if getattr(names, "size", 0) == 0:
        return True, None
    listed = ", ".join(n.decode() if isinstance(n, bytes) else str(n) for n in names.ravel())
    return False, f"{what}: variables not initialized: {listed}"


def _name(op):
    return getattr(op, "name", op)


def _close_quietly(sess):
    try:
        sess.close()
    except Exception:  # noqa: BLE001 - the session is being dropped; its errors do not matter
        pass
