"""TF1 input pipelines (`tf.train.*_input_producer`, `batch`, `shuffle_batch`,
`batch_join`, `shuffle_batch_join`), built as TF builds them: a queue, the
ops that fill it run by a QueueRunner added to the graph, and a dequeue.

    image, label = tf.train.slice_input_producer([images, labels], shuffle=False)
    images_batch, labels_batch = tf.train.batch([image, label], batch_size=32)
    ...
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess, coord)

`num_epochs` counts epochs in a local variable (initialize it with
`tf.local_variables_initializer()`); when they run out the producer's
runner closes its queue and the consumers end with OutOfRangeError.
Each queue also gets TF's "fraction full" scalar summary (in the
SUMMARIES collection, so `tf.summary.merge_all()` reports it).
"""
from ..framework import dtypes
from ..framework.graph import GraphKeys, Tensor, get_default_graph
from ..framework.op_builder import convert_to_tensor
from ..framework.tensor_shape import TensorShape, as_shape
from ..ops import array_ops, control_ops, math_ops, random_ops
from ..ops.variables import Variable
from .count_up_to import count_up_to
from .queue_runner import QueueRunner, add_queue_runner
from .queues import FIFOQueue, PaddingFIFOQueue, RandomShuffleQueue


def limit_epochs(tensor, num_epochs=None, name=None):
    """`tensor`, but only `num_epochs` times: the next evaluation fails with OutOfRangeError."""
    if num_epochs is None:
        return tensor
    if num_epochs <= 0:
        raise ValueError(f"num_epochs must be > 0 not {num_epochs}.")
    g = get_default_graph()
    with g.name_scope(name or "limit_epochs") as scope:
        epochs = Variable(convert_to_tensor(0, dtype=dtypes.int64), name="epochs", trainable=False,
                          collections=[GraphKeys.LOCAL_VARIABLES])
        counter = count_up_to(epochs, num_epochs)
        with g.control_dependencies([counter]):
            return array_ops.identity(tensor, name=scope)


def input_producer(input_tensor, element_shape=None, num_epochs=None, shuffle=True, seed=None, capacity=32,
                   shared_name=None, summary_name=None, name=None, cancel_op=None):
    """A FIFOQueue filled with the rows of `input_tensor` (shuffled each epoch), by a QueueRunner."""
    g = get_default_graph()
    with g.name_scope(name or "input_producer"):
        input_tensor = convert_to_tensor(input_tensor, name="input_tensor")
        rows = input_tensor.shape.with_rank_at_least(1)
        element_shape = TensorShape(rows.dims[1:] if rows.ndims is not None else None).merge_with(
            as_shape(element_shape) if element_shape is not None else TensorShape(None))
        if not element_shape.is_fully_defined():
            raise ValueError("Either `input_tensor` must have a fully defined shape or `element_shape` must be "
                             "specified")
        if shuffle:
            input_tensor = random_ops.random_shuffle(input_tensor, seed=seed)
        input_tensor = limit_epochs(input_tensor, num_epochs)
        q = FIFOQueue(capacity=capacity, dtypes=[input_tensor.dtype.base_dtype], shapes=[element_shape],
                      shared_name=shared_name, name=name or "fifo_queue")
        enq = q.enqueue_many([input_tensor])
        add_queue_runner(QueueRunner(q, [enq], cancel_op=cancel_op))
        if summary_name is not None:
            _fraction_full(summary_name, q, capacity)
        return q


def string_input_producer(string_tensor, num_epochs=None, shuffle=True, seed=None, capacity=32, shared_name=None,
                          name=None, cancel_op=None):
    """A queue of the strings (file names) in `string_tensor`, one epoch after another."""
    not_null_err = "string_input_producer requires a non-null input tensor"
    if not isinstance(string_tensor, Tensor) and not len(string_tensor):
        raise ValueError(not_null_err)
    g = get_default_graph()
    with g.name_scope(name or "input_producer") as scope:
        string_tensor = convert_to_tensor(string_tensor, dtype=dtypes.string)
        check = control_ops.Assert(math_ops.greater(array_ops.size(string_tensor), 0), [not_null_err])
        with g.control_dependencies([check]):
            string_tensor = array_ops.identity(string_tensor)
        return input_producer(string_tensor, [], num_epochs, shuffle, seed, capacity, shared_name,
                              f"fraction_of_{capacity}_full", scope, cancel_op)


def range_input_producer(limit, num_epochs=None, shuffle=True, seed=None, capacity=32, shared_name=None,
                         name=None):
    """A queue of the integers 0 .. limit-1, one epoch after another."""
    g = get_default_graph()
    with g.name_scope(name or "input_producer") as scope:
        range_tensor = math_ops.range(limit)
        return input_producer(range_tensor, [], num_epochs, shuffle, seed, capacity, shared_name,
                              f"fraction_of_{capacity}_full", scope)


def slice_input_producer(tensor_list, num_epochs=None, shuffle=True, seed=None, capacity=32, shared_name=None,
                         name=None):
    """One row of every tensor in `tensor_list` (the same row of each) per evaluation."""
    g = get_default_graph()
    with g.name_scope(name or "input_producer"):
        tensor_list = [convert_to_tensor(t) for t in tensor_list]
        if not tensor_list:
            raise ValueError("Expected at least one tensor in slice_input_producer().")
        range_size = array_ops.shape(tensor_list[0])[0]
        queue = range_input_producer(range_size, num_epochs=num_epochs, shuffle=shuffle, seed=seed,
                                     capacity=capacity, shared_name=shared_name)
        index = queue.dequeue()
        return [array_ops.gather(t, index) for t in tensor_list]


# -- batching --------------------------------------------------------------------------------

def _as_tensor_list(tensors):
    if isinstance(tensors, dict):
        return [tensors[k] for k in sorted(tensors, key=str)]
    return list(tensors) if isinstance(tensors, (list, tuple)) else [tensors]


def _as_original_type(original, dequeued):
    if isinstance(original, dict):
        if len(original) == 1:
            dequeued = [dequeued]  # a one-component queue dequeues a bare tensor
        return {k: dequeued[i] for i, k in enumerate(sorted(original, key=str))}
    return dequeued


def _validate(tensor_list):
    tensor_list = [convert_to_tensor(t) for t in tensor_list]
    if not tensor_list:
        raise ValueError("Expected at least one tensor in batch().")
    return tensor_list


def _shapes(tensor_list_list, shapes, enqueue_many):
    if shapes is not None:
        return [as_shape(s) for s in shapes]
    out = []
    for i in range(len(tensor_list_list[0])):
        merged = TensorShape(None)
        for tl in tensor_list_list:
            shape = tl[i].shape
            if shape.ndims is None:
                raise ValueError(f"Cannot infer Tensor's rank: {tl[i]}")
            if enqueue_many:
                shape = TensorShape(shape.with_rank_at_least(1).dims[1:])
            merged = merged.merge_with(shape)
        out.append(merged)
    return out


def _dtypes(tensor_list_list):
    types = [t.dtype.base_dtype for t in tensor_list_list[0]]
    for other in tensor_list_list[1:]:
        if [t.dtype.base_dtype for t in other] != types:
            raise TypeError(f"Expected types to be {types}, got {[t.dtype.base_dtype for t in other]}")
    return types


def _fraction_full(summary_name, queue, capacity, min_after_dequeue=None):
    """TF's queue-fill summary: size / capacity (above min_after_dequeue for a shuffling queue)."""
    from .. import summary
    if min_after_dequeue is None:
        full = math_ops.cast(queue.size(), dtypes.float32) * (1.0 / capacity)
    else:
        full = math_ops.cast(math_ops.maximum(0, queue.size() - min_after_dequeue), dtypes.float32) * (
            1.0 / (capacity - min_after_dequeue))
    summary.scalar(summary_name, full)


def _dequeue(queue, batch_size, allow_smaller_final_batch, name):
    if allow_smaller_final_batch:
        return queue.dequeue_up_to(batch_size, name=name)
    return queue.dequeue_many(batch_size, name=name)


def _batch(tensors, batch_size, threads, capacity, enqueue_many, shapes, dynamic_pad, allow_smaller_final_batch,
           shared_name, name, default_name):
    g = get_default_graph()
    with g.name_scope(name or default_name) as scope:
        tensor_list = _validate(_as_tensor_list(tensors))
        types = _dtypes([tensor_list])
        shapes = _shapes([tensor_list], shapes, enqueue_many)
        queue_cls = PaddingFIFOQueue if dynamic_pad else FIFOQueue
        queue = queue_cls(capacity=capacity, dtypes=types, shapes=shapes, shared_name=shared_name)
        enqueue = queue.enqueue_many(tensor_list) if enqueue_many else queue.enqueue(tensor_list)
        add_queue_runner(QueueRunner(queue, [enqueue] * threads))
        _fraction_full(f"fraction_of_{capacity}_full", queue, capacity)
        dequeued = _dequeue(queue, batch_size, allow_smaller_final_batch, scope)
        return _as_original_type(tensors, dequeued)


def batch(tensors, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None, dynamic_pad=False,
          allow_smaller_final_batch=False, shared_name=None, name=None):
    """Batches of `batch_size` elements of `tensors`, in order, filled by `num_threads` threads.

    With `dynamic_pad` the shapes may leave dimensions open and each batch is
    zero-padded to its longest element. With `allow_smaller_final_batch` the
    last batch may be smaller once the input ends, instead of being dropped."""
    return _batch(tensors, batch_size, num_threads, capacity, enqueue_many, shapes, dynamic_pad,
                  allow_smaller_final_batch, shared_name, name, "batch")


def batch_join(tensors_list, batch_size, capacity=32, enqueue_many=False, shapes=None, dynamic_pad=False,
               allow_smaller_final_batch=False, shared_name=None, name=None):
    """Batches drawn from several lists of tensors, each enqueued by its own thread."""
    g = get_default_graph()
    with g.name_scope(name or "batch_join") as scope:
        tensor_list_list = [_validate(_as_tensor_list(t)) for t in tensors_list]
        types = _dtypes(tensor_list_list)
        shapes = _shapes(tensor_list_list, shapes, enqueue_many)
        queue_cls = PaddingFIFOQueue if dynamic_pad else FIFOQueue
        queue = queue_cls(capacity=capacity, dtypes=types, shapes=shapes, shared_name=shared_name)
        _enqueue_join(queue, tensor_list_list, enqueue_many)
        _fraction_full(f"fraction_of_{capacity}_full", queue, capacity)
        dequeued = _dequeue(queue, batch_size, allow_smaller_final_batch, scope)
        return _as_original_type(tensors_list[0], dequeued)


def _enqueue_join(queue, tensor_list_list, enqueue_many):
    fn = queue.enqueue_many if enqueue_many else queue.enqueue
    add_queue_runner(QueueRunner(queue, [fn(tl) for tl in tensor_list_list]))


def shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, num_threads=1, seed=None, enqueue_many=False,
                  shapes=None, allow_smaller_final_batch=False, shared_name=None, name=None):
    """Batches of random elements of `tensors`, drawn from a RandomShuffleQueue that keeps
    at least `min_after_dequeue` elements to mix (until the input ends)."""
    g = get_default_graph()
    with g.name_scope(name or "shuffle_batch") as scope:
        tensor_list = _validate(_as_tensor_list(tensors))
        types = _dtypes([tensor_list])
        shapes = _shapes([tensor_list], shapes, enqueue_many)
        queue = RandomShuffleQueue(capacity=capacity, min_after_dequeue=min_after_dequeue, seed=seed, dtypes=types,
                                   shapes=shapes, shared_name=shared_name)
        enqueue = queue.enqueue_many(tensor_list) if enqueue_many else queue.enqueue(tensor_list)
        add_queue_runner(QueueRunner(queue, [enqueue] * num_threads))
        _fraction_full(f"fraction_over_{min_after_dequeue}_of_{capacity - min_after_dequeue}_full", queue, capacity,
                       min_after_dequeue)
        dequeued = _dequeue(queue, batch_size, allow_smaller_final_batch, scope)
        return _as_original_type(tensors, dequeued)


def shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, seed=None, enqueue_many=False,
                       shapes=None, allow_smaller_final_batch=False, shared_name=None, name=None):
    """shuffle_batch over several lists of tensors, each enqueued by its own thread."""
    g = get_default_graph()
    with g.name_scope(name or "shuffle_batch_join") as scope:
        tensor_list_list = [_validate(_as_tensor_list(t)) for t in tensors_list]
        types = _dtypes(tensor_list_list)
        shapes = _shapes(tensor_list_list, shapes, enqueue_many)
        queue = RandomShuffleQueue(capacity=capacity, min_after_dequeue=min_after_dequeue, seed=seed, dtypes=types,
                                   shapes=shapes, shared_name=shared_name)
        _enqueue_join(queue, tensor_list_list, enqueue_many)
        _fraction_full(f"fraction_over_{min_after_dequeue}_of_{capacity - min_after_dequeue}_full", queue, capacity,
                       min_after_dequeue)
        dequeued = _dequeue(queue, batch_size, allow_smaller_final_batch, scope)
        return _as_original_type(tensors_list[0], dequeued)
