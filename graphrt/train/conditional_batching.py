"""TF1's conditional batchers: `maybe_batch`, `maybe_batch_join`, `maybe_shuffle_batch`,
`maybe_shuffle_batch_join`. They are `batch` & co. (graphrt/data_flow/input.py) whose
enqueue keeps an element only where `keep_input` is True:

* a scalar `keep_input` wraps the enqueue in a `tf.cond` (decided at build time when it is a
  constant, as TF's smart_cond);
* a vector `keep_input` (with `enqueue_many=True`) selects the kept rows before enqueueing them.
"""
from ..data_flow import input as input_lib
from ..data_flow.queue_runner import QueueRunner, add_queue_runner
from ..data_flow.queues import FIFOQueue, PaddingFIFOQueue, RandomShuffleQueue
from ..framework.constant_value import constant_value
from ..framework.graph import get_default_graph
from ..framework.op_builder import convert_to_tensor
from ..ops import array_ops, control_flow_ops, control_ops


def _validate_keep_input(keep_input, enqueue_many):
    keep_input = convert_to_tensor(keep_input)
    if keep_input.shape.ndims is None:
        raise ValueError("`keep_input` dimensions must be known at graph construction.")
    if not enqueue_many and keep_input.shape.ndims == 1:
        raise ValueError("`keep_input` cannot be a vector when `enqueue_many=False`.")
    if keep_input.shape.ndims > 1:
        raise ValueError("`keep_input` must be 0 or 1 dimensions.")
    return keep_input


def _enqueue_ops(queue, tensor_list_list, enqueue_many, keep_input):
    """One enqueue op per tensor list, each keeping only the elements `keep_input` selects."""
    enqueue_fn = queue.enqueue_many if enqueue_many else queue.enqueue
    if keep_input.shape.ndims == 1:
        return [enqueue_fn([array_ops.boolean_mask(t, keep_input) for t in tl]) for tl in tensor_list_list]
    static = constant_value(keep_input)
    if static is not None:
        return [enqueue_fn(tl) if bool(static) else control_ops.no_op() for tl in tensor_list_list]
    return [control_flow_ops.cond(keep_input, lambda tl=tl: enqueue_fn(tl), control_ops.no_op)
            for tl in tensor_list_list]


def _conditional_batch(tensors_list, join, batch_size, keep_input, capacity, enqueue_many, shapes, dynamic_pad,
                       allow_smaller_final_batch, shared_name, name, default_name, num_threads=1,
                       min_after_dequeue=None, seed=None):
    g = get_default_graph()
    with g.name_scope(name or default_name) as scope:
        if min_after_dequeue is not None and capacity <= min_after_dequeue:
            raise ValueError(f"capacity {capacity} must be bigger than min_after_dequeue {min_after_dequeue}.")
        tensor_list_list = [input_lib._validate(input_lib._as_tensor_list(t)) for t in tensors_list]
        keep_input = _validate_keep_input(keep_input, enqueue_many)
        types = input_lib._dtypes(tensor_list_list)
        shapes = input_lib._shapes(tensor_list_list, shapes, enqueue_many)
        if min_after_dequeue is not None:
            queue = RandomShuffleQueue(capacity=capacity, min_after_dequeue=min_after_dequeue, seed=seed,
                                       dtypes=types, shapes=shapes, shared_name=shared_name)
        else:
            queue_cls = PaddingFIFOQueue if dynamic_pad else FIFOQueue
            queue = queue_cls(capacity=capacity, dtypes=types, shapes=shapes, shared_name=shared_name)
        enqueues = _enqueue_ops(queue, tensor_list_list, enqueue_many, keep_input)
        # batch and shuffle_batch run one op in `num_threads` threads; the joins one thread per list
        add_queue_runner(QueueRunner(queue, enqueues if join else enqueues * num_threads))
        if min_after_dequeue is None:
            input_lib._fraction_full(f"fraction_of_{capacity}_full", queue, capacity)
        else:
            input_lib._fraction_full(f"fraction_over_{min_after_dequeue}_of_{capacity - min_after_dequeue}_full",
                                     queue, capacity, min_after_dequeue)
        dequeued = input_lib._dequeue(queue, batch_size, allow_smaller_final_batch, scope)
        return input_lib._as_original_type(tensors_list[0], dequeued)


def maybe_batch(tensors, keep_input, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None,
                dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    """`tf.train.batch` of the elements for which `keep_input` is True."""
    return _conditional_batch([tensors], False, batch_size, keep_input, capacity, enqueue_many, shapes, dynamic_pad,
                              allow_smaller_final_batch, shared_name, name, "batch", num_threads=num_threads)


def maybe_batch_join(tensors_list, keep_input, batch_size, capacity=32, enqueue_many=False, shapes=None,
                     dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    """`tf.train.batch_join` of the elements for which `keep_input` is True."""
    return _conditional_batch(tensors_list, True, batch_size, keep_input, capacity, enqueue_many, shapes,
                              dynamic_pad, allow_smaller_final_batch, shared_name, name, "batch_join")


def maybe_shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, keep_input, num_threads=1, seed=None,
                        enqueue_many=False, shapes=None, allow_smaller_final_batch=False, shared_name=None,
                        name=None):
    """`tf.train.shuffle_batch` of the elements for which `keep_input` is True."""
    return _conditional_batch([tensors], False, batch_size, keep_input, capacity, enqueue_many, shapes, False,
                              allow_smaller_final_batch, shared_name, name, "shuffle_batch",
                              num_threads=num_threads, min_after_dequeue=min_after_dequeue, seed=seed)


def maybe_shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, keep_input, seed=None,
                             enqueue_many=False, shapes=None, allow_smaller_final_batch=False, shared_name=None,
                             name=None):
    """`tf.train.shuffle_batch_join` of the elements for which `keep_input` is True."""
    return _conditional_batch(tensors_list, True, batch_size, keep_input, capacity, enqueue_many, shapes, False,
                              allow_smaller_final_batch, shared_name, name, "shuffle_batch_join",
                              min_after_dequeue=min_after_dequeue, seed=seed)
