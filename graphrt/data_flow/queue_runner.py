"""`tf.train.QueueRunner`, `add_queue_runner`, `start_queue_runners`.

A QueueRunner holds a queue and enqueue ops; `create_threads` starts one
thread per enqueue op, each running its op in a loop until:

* the op fails with OutOfRangeError (its input is exhausted: the epochs of
  an input producer ran out, or the queue it reads was closed): the last of
  the threads to finish closes the queue, so consumers drain it and then
  get OutOfRangeError themselves;
* the coordinator is asked to stop: a watcher thread runs the cancel op
  (close with `cancel_pending_enqueues`), which ends a thread waiting on a
  full queue at once;
* any other error: it is reported to the coordinator, which stops the rest;
* its session is closed: it ends quietly (TF prints the CancelledError).

A thread waiting inside `sess.run` holds no executor thread and ends when
the queue is closed, so `coord.join()` returns promptly.
"""
import threading
import weakref

from .. import errors
from .. import logging
from ..framework.default_session import get_default_session
from ..framework.graph import GraphKeys, get_default_graph

QUEUE_RUNNERS = GraphKeys.QUEUE_RUNNERS


class QueueRunner:
    """Runs `enqueue_ops` on threads to keep `queue` filled (see module doc)."""

    def __init__(self, queue=None, enqueue_ops=None, close_op=None, cancel_op=None,
                 queue_closed_exception_types=None, queue_runner_def=None, import_scope=None):
        if queue_runner_def is not None:
            raise ValueError("graphrt has no QueueRunnerDef protos: build QueueRunners from a queue and ops")
        if queue is None or not enqueue_ops:
            raise ValueError("QueueRunner needs a queue and at least one enqueue op")
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        self._close_op = close_op if close_op is not None else queue.close()
        self._cancel_op = cancel_op if cancel_op is not None else queue.close(cancel_pending_enqueues=True)
        self._queue_closed_exception_types = tuple(queue_closed_exception_types or (errors.OutOfRangeError,))
        self._lock = threading.Lock()
        self._runs_per_session = weakref.WeakKeyDictionary()
        self._exceptions_raised = []

    @property
    def queue(self):
        return self._queue

    @property
    def enqueue_ops(self):
        return self._enqueue_ops

    @property
    def close_op(self):
        return self._close_op

    @property
    def cancel_op(self):
        return self._cancel_op

    @property
    def queue_closed_exception_types(self):
        return self._queue_closed_exception_types

    @property
    def exceptions_raised(self):
        """Errors the threads raised when there was no coordinator to report them to."""
        return self._exceptions_raised

    @property
    def name(self):
        return self._queue.name

    def __repr__(self):
        return f"<QueueRunner for {self._queue.name}: {len(self._enqueue_ops)} enqueue ops>"

    def _run(self, sess, enqueue_op, coord=None):
        decremented = False
        try:
            while True:
                if coord is not None and coord.should_stop():
                    break
                try:
                    sess.run(enqueue_op)
                except self._queue_closed_exception_types:
                    with self._lock:
                        self._runs_per_session[sess] -= 1
                        decremented = True
                        if self._runs_per_session[sess] == 0:
                            try:
                                sess.run(self._close_op)
                            except Exception as e:  # noqa: BLE001 - as TF: closing is best effort
                                logging.debug("Ignored exception: %s", e)
                    return
        except Exception as e:  # noqa: BLE001 - reported to the coordinator
            if getattr(sess, "_closed", False) and isinstance(e, (errors.CancelledError, RuntimeError)):
                # The session was closed under the thread (a program that never stops its
                # runners): the thread just ends. TF raises here and prints a traceback.
                logging.debug("QueueRunner thread ended by its session closing: %s", e)
                return
            if coord is not None:
                coord.request_stop(e)
            else:
                logging.error("Exception in QueueRunner: %s", e)
                with self._lock:
                    self._exceptions_raised.append(e)
                raise
        finally:
            if not decremented:
                with self._lock:
                    self._runs_per_session[sess] -= 1

    def _close_on_stop(self, sess, cancel_op, coord):
        coord.wait_for_stop()
        try:
            sess.run(cancel_op)
        except Exception as e:  # noqa: BLE001 - the session may be closed already
            logging.debug("Ignored exception: %s", e)

    def create_threads(self, sess, coord=None, daemon=False, start=False):
        """Threads running the enqueue ops in `sess` (none if they already run there),
        plus, with a coordinator, one that cancels the queue when it stops."""
        with self._lock:
            if self._runs_per_session.get(sess, 0) > 0:
                return []  # already running for this session
            self._runs_per_session[sess] = len(self._enqueue_ops)
            self._exceptions_raised = []
        threads = [threading.Thread(target=self._run, args=(sess, op, coord), daemon=daemon,
                                    name=f"QueueRunnerThread-{self.name}-{op.name}")
                   for op in self._enqueue_ops]
        if coord is not None:
            threads.append(threading.Thread(target=self._close_on_stop, args=(sess, self._cancel_op, coord),
                                            daemon=daemon, name=f"QueueRunnerCancel-{self.name}"))
        for t in threads:
            if coord is not None:
                coord.register_thread(t)
            if start:
                t.start()
        return threads


def add_queue_runner(qr, collection=QUEUE_RUNNERS):
    """Adds `qr` to the graph's queue runners, which `start_queue_runners` starts."""
    get_default_graph().add_to_collection(collection, qr)


def start_queue_runners(sess=None, coord=None, daemon=True, start=True, collection=QUEUE_RUNNERS):
    """Starts the threads of every QueueRunner in the collection; returns them."""
    if sess is None:
        sess = get_default_session()
        if sess is None:
            raise ValueError("Cannot start queue runners: No default session is registered. Use `with "
                             "sess.as_default()` or pass an explicit session to tf.start_queue_runners(sess=sess)")
    if getattr(sess, "_closed", False):
        raise RuntimeError("Attempted to use a closed Session.")
    with sess.graph.as_default():
        threads = []
        for qr in sess.graph.get_collection(collection):
            threads.extend(qr.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads
