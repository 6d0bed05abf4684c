"""`tf.train.SyncReplicasOptimizer`: synchronous data parallelism across worker processes.

As in TF1: each worker adds its gradients to a shared ConditionalAccumulator
per variable (on the variable's ps task) tagged with its `local_step`; the
chief's sync loop takes `replicas_to_aggregate` gradients from each, applies
their mean with the wrapped optimizer (the global step counts these
aggregated updates), and puts `max(total_num_replicas, replicas_to_aggregate)`
tokens, each the new global step, into the token queue. A worker's train op
waits for a token after applying its gradients and makes it its local step,
so a gradient from before the last update is stale and dropped (with
total_num_replicas > replicas_to_aggregate, the slowest workers are backups).

Not hanging at the end of training (TF does: a worker, or the chief's sync
loop, waits forever for gradients from a worker that has stopped):

* When a worker's monitored session ends normally, the hook's `end` records
  the departure in a shared queue on the ps (`sync_departures_q`); once
  fewer than `replicas_to_aggregate` workers remain, it closes the token
  queue. Every worker waiting for a token then gets OutOfRangeError, which
  ends a MonitoredSession normally (the end hooks run, the chief saves its
  checkpoint), as the end of an input does.
* The chief's sync loop is a thread the coordinator does not wait for: it
  ends when the chief's session closes (closing aborts its waiting step),
  so closing never waits `stop_grace_period_secs` for it.
* Anything else that waits is bounded by the step deadline
  (RunOptions.timeout_in_ms / ConfigProto.operation_timeout_in_ms): a
  worker that dies without coming back fails the others' steps with
  DeadlineExceededError instead of hanging them.
"""
import threading

from .. import errors, logging
from ..framework import dtypes
from ..framework.graph import GraphKeys, get_default_graph
from ..framework.indexed_slices import IndexedSlices
from ..ops import array_ops, control_ops, state_ops
from ..ops import variables as variables_lib
from .monitored.session_run_hook import SessionRunHook
from .optimizer import Optimizer


class SyncReplicasOptimizer(Optimizer):
    def __init__(self, opt, replicas_to_aggregate, total_num_replicas=None, variable_averages=None,
                 variables_to_average=None, use_locking=False, name="sync_replicas"):
        if total_num_replicas is None:
            total_num_replicas = replicas_to_aggregate
        if replicas_to_aggregate < 1 or total_num_replicas < 1:
            raise ValueError(f"replicas_to_aggregate ({replicas_to_aggregate}) and total_num_replicas "
                             f"({total_num_replicas}) must be positive")
        if variable_averages is not None:
            raise NotImplementedError("SyncReplicasOptimizer(variable_averages=...) is not supported by graphrt")
        super().__init__(use_locking, name)
        logging.info("SyncReplicasV2: replicas_to_aggregate=%s; total_num_replicas=%s", replicas_to_aggregate,
                     total_num_replicas)
        self._opt = opt
        self._replicas_to_aggregate = replicas_to_aggregate
        self._total_num_replicas = total_num_replicas
        self._tokens_per_step = max(total_num_replicas, replicas_to_aggregate)
        self._gradients_applied = False
        self._global_step = None
        self._sync_token_queue = None
        self._chief_queue_runner = None
        self._accumulator_list = []

    def __repr__(self):
        return (f"<SyncReplicasOptimizer {self._opt.get_name()} replicas_to_aggregate={self._replicas_to_aggregate} "
                f"total_num_replicas={self._total_num_replicas}>")

    def compute_gradients(self, *args, **kwargs):
        return self._opt.compute_gradients(*args, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """The worker's train op: accumulate the gradients, then wait for a token."""
        from ..data_flow import ConditionalAccumulator, FIFOQueue, QueueRunner, SparseConditionalAccumulator
        grads_and_vars = list(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("Must supply at least one variable")
        if global_step is None:
            raise ValueError("Global step is required to check staleness")
        self._global_step = global_step
        g = get_default_graph()
        train_ops, aggregated_grad, var_list = [], [], []
        local_anchor = self._local_anchor = control_ops.no_op()  # on this worker: the local step lives here
        with g.colocate_with(local_anchor):
            self._local_step = variables_lib.Variable(
                0, trainable=False, collections=[GraphKeys.LOCAL_VARIABLES], dtype=global_step.dtype.base_dtype,
                name="sync_rep_local_step")
        self.local_step_init_op = state_ops.assign(self._local_step, global_step)
        chief_init_ops = [self.local_step_init_op]
        with g.device(None):  # each check runs where its variable is, whatever the caller's device scope
            self.ready_for_local_init_op = variables_lib.report_uninitialized_variables(
                variables_lib.global_variables())
        with g.name_scope(self._name):
            for grad, var in grads_and_vars:
                var_list.append(var)
                with g.device(var.device):
                    if grad is None:
                        aggregated_grad.append(None)
                        continue
                    if isinstance(grad, IndexedSlices):
                        accum = SparseConditionalAccumulator(grad.dtype, shape=(),
                                                             shared_name=var.name + "/grad_accum")
                        train_ops.append(accum.apply_indexed_slices_grad(grad, local_step=self._local_step))
                        aggregated_grad.append(accum.take_indexed_slices_grad(self._replicas_to_aggregate))
                    else:
                        accum = ConditionalAccumulator(grad.dtype, shape=var.get_shape(),
                                                       shared_name=var.name + "/grad_accum")
                        train_ops.append(accum.apply_grad(grad, local_step=self._local_step))
                        aggregated_grad.append(accum.take_grad(self._replicas_to_aggregate))
                    self._accumulator_list.append((accum, var.device))
            with g.device(global_step.device), g.name_scope(None):
                update_op = self._opt.apply_gradients(list(zip(aggregated_grad, var_list)), global_step)
                self._sync_token_queue = FIFOQueue(-1, global_step.dtype.base_dtype, shapes=(),
                                                   name="sync_token_q", shared_name="sync_token_q")
                dummy_queue = FIFOQueue(1, dtypes.int32, shapes=(), name="dummy_queue", shared_name="dummy_queue")
                departures = FIFOQueue(-1, dtypes.int32, shapes=(), name="sync_departures_q",
                                       shared_name="sync_departures_q")
                with g.control_dependencies(train_ops):
                    token = self._sync_token_queue.dequeue()
                with g.colocate_with(self._local_step):
                    train_op = state_ops.assign(self._local_step, token)
                with g.control_dependencies([update_op]):
                    tokens = array_ops.fill([self._tokens_per_step], global_step)
                    self._sync_op = self._on_worker(self._sync_token_queue.enqueue_many((tokens,)))
                self._chief_queue_runner = QueueRunner(dummy_queue, [self._sync_op])
                with g.control_dependencies([departures.enqueue(1)]):
                    self._depart_op = departures.size()
                self._close_tokens_op = self._on_worker(self._sync_token_queue.close(cancel_pending_enqueues=True))
            for accum, device in self._accumulator_list:
                with g.device(device):
                    chief_init_ops.append(accum.set_global_step(global_step, name="SetGlobalStep"))
            self.chief_init_op = control_ops.group(*chief_init_ops)
            self._gradients_applied = True
            return train_op

    def get_chief_queue_runner(self):
        """TF's QueueRunner running the sync op (for programs that start it themselves)."""
        if not self._gradients_applied:
            raise ValueError("Should be called after apply_gradients().")
        return self._chief_queue_runner

    def get_init_tokens_op(self, num_tokens=-1):
        """Puts `num_tokens` (default replicas_to_aggregate) tokens in the queue, so workers can start."""
        if not self._gradients_applied:
            raise ValueError("get_init_tokens_op() should be called after apply_gradients().")
        tokens_needed = self._replicas_to_aggregate - self._total_num_replicas
        if num_tokens == -1:
            num_tokens = self._replicas_to_aggregate
        elif num_tokens < tokens_needed:
            raise ValueError(f"Too few tokens to finish the first step: {num_tokens} (given) vs {tokens_needed} "
                             f"(needed)")
        g = get_default_graph()
        with g.device(self._global_step.device), g.name_scope(None):
            if num_tokens > 0:
                tokens = array_ops.fill([num_tokens], self._global_step)
                return self._on_worker(self._sync_token_queue.enqueue_many((tokens,)))
            return control_ops.no_op(name="no_init_tokens")

    def _on_worker(self, op):
        """`op` (on a ps task) behind a NoOp on this worker: a session runs it from here."""
        g = op.graph
        with g.colocate_with(self._local_anchor):
            return control_ops.group(op, name=op.name.split("/")[-1] + "_from_worker")

    def make_session_run_hook(self, is_chief, num_tokens=-1):
        """The hook that initializes the replica (and, on the chief, runs the sync loop)."""
        return _SyncReplicasOptimizerHook(self, is_chief, num_tokens)

    def get_slot(self, *args, **kwargs):
        return self._opt.get_slot(*args, **kwargs)

    def get_slot_names(self, *args, **kwargs):
        return self._opt.get_slot_names(*args, **kwargs)

    def variables(self):
        return self._opt.variables()


class _SyncReplicasOptimizerHook(SessionRunHook):
    def __init__(self, sync_optimizer, is_chief, num_tokens):
        self._sync_optimizer = sync_optimizer
        self._is_chief = is_chief
        self._num_tokens = num_tokens
        self._thread = None

    def __repr__(self):
        return f"<SyncReplicasOptimizerHook {'chief' if self._is_chief else 'worker'}>"

    def begin(self):
        opt = self._sync_optimizer
        if not opt._gradients_applied:
            raise ValueError("SyncReplicasOptimizer.apply_gradient should be called before using the hook.")
        self._ready_for_local_init_op = opt.ready_for_local_init_op
        if self._is_chief:
            self._local_init_op = opt.chief_init_op
            self._init_tokens_op = opt.get_init_tokens_op(self._num_tokens)
        else:
            self._local_init_op = opt.local_step_init_op
            self._init_tokens_op = None

    def after_create_session(self, session, coord):
        from .monitored.session_manager import _ready
        ok, msg = _ready(self._ready_for_local_init_op, session,
                         "Model is not ready for SyncReplicasOptimizer local init.")
        if not ok:
            raise RuntimeError(f"Init operations did not make model ready for SyncReplicasOptimizer local_init. "
                               f"Init op: {self._local_init_op.name}, error: {msg}")
        session.run(self._local_init_op)
        if self._init_tokens_op is not None:
            session.run(self._init_tokens_op)
        if self._is_chief:
            self._thread = threading.Thread(target=_sync_loop, args=(session, self._sync_optimizer._sync_op, coord),
                                            daemon=True, name="SyncReplicasChiefLoop")
            self._thread.start()

    def end(self, session):
        opt = self._sync_optimizer
        remaining = opt._total_num_replicas - int(session.run(opt._depart_op))
        if remaining < opt._replicas_to_aggregate:
            logging.info("%d of %d replicas remain, fewer than the %d to aggregate: closing the token queue",
                         max(remaining, 0), opt._total_num_replicas, opt._replicas_to_aggregate)
            session.run(opt._close_tokens_op)


def _sync_loop(session, sync_op, coord):
    """The chief's aggregation loop; ends when the session closes or the token queue does."""
    while not coord.should_stop():
        try:
            session.run(sync_op)
        except (errors.CancelledError, errors.OutOfRangeError):
            return  # the session closed under it, or training ended (the token queue closed)
        except RuntimeError:
            return  # the session was closed before the run started
        except Exception as e:  # noqa: BLE001 - reported to the coordinator, which stops training
            if getattr(session, "_closed", False):
                return
            coord.request_stop(e)
            return
