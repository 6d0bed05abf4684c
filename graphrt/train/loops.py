"""Training loops sunk into one `Session.run` (TPU's `iterations_per_loop`,
MindSpore's sink mode): `repeat(step_fn, iterations, inputs)` builds a
`tf.while_loop` whose body is one training step.

    def step(x, y):
        loss = loss_of(x, y)
        return opt.minimize(loss), loss
    losses = tf.train.repeat(step, K, [xs, ys])   # xs: [K, B, ...], the batches of K steps
    sess.run(losses, {xs: ..., ys: ...})          # K steps in one call; the K losses come back together

Step i reads batch i of every input (a gather inside the loop, placed with
the input), so the batches are fed or uploaded once per call. The ops
step_fn returns (the train op) run before the step's tensors are recorded,
and a use of a variable in the loop body reads it after the previous
iteration's update, so K sunk steps give what K separate runs give. The
recorded tensors go to TensorArrays and come back stacked: [K, ...].

With `infeed_queue` (graphrt.infeed.InfeedQueue, TF's tpu.repeat
argument) each step also dequeues one batch from the device's infeed and
passes its tensors to step_fn after the gathered ones. The host puts the
batches with the queue's enqueue op in runs of its own, before the loop
(as many as the infeed holds: 16, unless a loop fed once grew it) or while
it runs (graphrt.infeed.InfeedThread, TPUEstimator's infeed thread).

    q = InfeedQueue(tuple_types=[tf.float32, tf.float32], tuple_shapes=[[32, 4], [32, 1]])
    enqueue, = q.generate_enqueue_ops([[x, y]])
    losses = tf.train.repeat(step, K, infeed_queue=q)

With `infeed=True` the [K, ...] inputs themselves go through the infeed:
one op of the same run puts their K batches (the infeed grows to hold
them) before the loop, which dequeues one per step: fed once per call, as
the gathered inputs are.
"""
from .. import errors
from ..framework import dtypes as dtypes_lib
from ..framework.graph import Operation, Tensor, get_default_graph
from ..framework.op_builder import convert_to_tensor
from ..ops import array_ops, control_flow_ops, control_ops, math_ops, nest
from ..infeed import infeed_ops
from ..infeed.infeed_ops import InfeedQueue
from ..tensor_array import TensorArray


def repeat(step_fn, iterations, inputs=(), dtypes=(dtypes_lib.float32,), infeed_queue=None, infeed=False,
           name="repeat"):
    """Runs `step_fn(*batch_i)` for i = 0 .. iterations-1 inside one while loop.

    Args:
        step_fn: returns the step's train op(s) and the tensors to record, in
            any order, as one value or a list/tuple (e.g. `(train_op, loss)`).
        iterations: K, a Python int or an int32 scalar tensor.
        inputs: a tensor or list of tensors whose axis 0 has K entries.
        dtypes: dtypes of the tensors step_fn records (one float32 scalar,
            the loss, by default; () when it records none).
        infeed_queue: an InfeedQueue whose next batch each step dequeues (on
            the device in scope) and gives step_fn after the inputs' slices.
        infeed: put the K batches of `inputs` into the infeed of the device
            in scope (one op, before the loop) and dequeue one per step,
            instead of gathering them (needs a Python int `iterations`).

    Returns:
        A list with each recorded tensor stacked over the steps ([K, ...]), or
        the single one; with no recorded tensor, an Operation running the K steps.

    Raises:
        InvalidArgumentError: an input whose axis 0 is not K, K < 1, step_fn
            recording other tensors than `dtypes` says.
    """
    g = get_default_graph()
    inputs = [convert_to_tensor(t) for t in nest.flatten(inputs)]
    dtypes = [dtypes_lib.as_dtype(d) for d in dtypes]
    if isinstance(iterations, int):
        if iterations < 1:
            raise errors.InvalidArgumentError(f"repeat: iterations must be >= 1, got {iterations}")
        for t in inputs:
            if t.shape.ndims == 0 or (t.shape.ndims is not None and t.shape[0] is not None and
                                      t.shape[0] != iterations):
                raise errors.InvalidArgumentError(
                    f"repeat: input {t.name} of shape {t.shape} does not hold {iterations} steps on axis 0")
    if infeed and not isinstance(iterations, int):
        raise errors.InvalidArgumentError("repeat: infeed=True needs iterations as a Python int")
    with g.name_scope(name):
        k = convert_to_tensor(iterations, dtype=dtypes_lib.int32, name="iterations")
        shapes = []
        start = convert_to_tensor(0)
        gathered = inputs
        if infeed and inputs:
            fed = InfeedQueue(tuple_types=[t.dtype.base_dtype for t in inputs],
                              tuple_shapes=[t.shape[1:] for t in inputs], name="infeed")
            pieces = [array_ops.unstack(t, num=iterations) for t in inputs]
            put = infeed_ops.enqueue_many([list(b) for b in zip(*pieces)], fed.tuple_shapes, name="infeed_put")
            with g.control_dependencies([put]):
                start = array_ops.identity(start, name="start")  # the loop begins once its batches are queued
            gathered = []

        def body(i, *arrays):
            batch = []
            if infeed and inputs:
                batch.extend(fed.generate_dequeue_op())
            for t in gathered:
                b = array_ops.gather(t, i)
                b.set_shape(t.shape[1:])
                batch.append(b)
            if infeed_queue is not None:
                batch.extend(infeed_queue.generate_dequeue_op())
            ops, tensors = _split_outputs(step_fn(*batch))
            if [t.dtype.base_dtype for t in tensors] != dtypes:
                raise errors.InvalidArgumentError(
                    f"repeat: step_fn records {[t.name for t in tensors]} of dtypes "
                    f"{[t.dtype.base_dtype.name for t in tensors]}, but dtypes={[d.name for d in dtypes]}")
            shapes[:] = [t.shape for t in tensors]
            with g.control_dependencies(ops):
                # The step's updates happen before its results are recorded and before the next step.
                tensors = [array_ops.identity(t) for t in tensors]
                step = math_ops.add(i, 1, name="next")
            return (step,) + tuple(ta.write(i, t) for ta, t in zip(arrays, tensors))

        arrays = [TensorArray(d, size=k) for d in dtypes]
        loop = control_flow_ops.while_loop(lambda i, *a: i < k, body, [start] + arrays,
                                           name="loop")
        loop = list(loop) if isinstance(loop, (list, tuple)) else [loop]
        if not arrays:
            return control_ops.group(loop[0], name="run")
        stacked = [ta.stack(name="recorded") for ta in loop[1:]]
        for t, shape in zip(stacked, shapes):
            t.set_shape([iterations if isinstance(iterations, int) else None] + shape.as_list()
                        if shape.ndims is not None else None)
        return stacked[0] if len(stacked) == 1 else stacked


def _split_outputs(out):
    flat = [out] if isinstance(out, (Tensor, Operation)) else nest.flatten(out)
    ops = [o for o in flat if isinstance(o, Operation)]
    tensors = [convert_to_tensor(o) for o in flat if not isinstance(o, Operation) and o is not None]
    return ops, tensors
