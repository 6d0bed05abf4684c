"""Infeed ops: batches passed from the host to a device through the device's
infeed queue (TF's TPU infeed: `InfeedEnqueueTuple` / `InfeedDequeueTuple`).

    q = InfeedQueue(tuple_types=[tf.float32, tf.float32], tuple_shapes=[[32, 4], [32, 1]])
    with tf.device("/device:SIM:0"):
        enqueue, = q.generate_enqueue_ops([[x, y]])        # x, y: placeholders, one batch
        losses = tf.train.repeat(step, 100, infeed_queue=q)  # the loop dequeues a batch per step
    feeder = InfeedThread(sess, enqueue, ({x: xs[i], y: ys[i]} for i in range(100))).start()
    sess.run(losses)
    feeder.join(10)

`tf.train.repeat(step, K, [xs, ys], infeed=True)` instead puts the K
batches of its inputs into the infeed with one op of the loop's own run
(`_InfeedEnqueueMany`, graphrt's), before the loop; if that run fails, it
takes back the batches its loop did not take.

The queue is the device's (`Device.infeed()`): on SIM the TransferManager's
InfeedQueue of the device's executor, holding device tensors, on a CPU a
HostInfeedQueue of numpy copies; bounded (16 batches, more once a loop fed
once has grown it), closed with the session. Unlike TF, where InfeedEnqueueTuple runs on the TPU host's CPU and
`device_ordinal` picks the core, both ops run on the device they feed
(`device_ordinal` is -1 or that device's index): a batch fed from the host
is copied to the device on receipt, and the enqueue queues that copy. A
wait (a full infeed, an empty one) ends with the step: its deadline
(RunOptions.timeout_in_ms) gives DeadlineExceededError naming the op and
device, Session.close() CancelledError. GPU devices have no infeed kernels.
On SIM a loop waiting for its infeed holds the device's compute stream (as
a device waits for its infeed): feed host values, not tensors that the same
device's kernels compute, or the enqueue waits for the loop until the
deadline.

    infeed_ops.py       declarations, TF1 API, InfeedQueue, InfeedThread, enqueue_many
    infeed_kernels.py   the CPU and SIM kernels
"""
from . import infeed_kernels  # noqa: F401 - registers the kernels
from .infeed_ops import (InfeedQueue, InfeedThread, infeed_dequeue, infeed_dequeue_tuple, infeed_enqueue,
                         infeed_enqueue_tuple)

__all__ = ["InfeedQueue", "InfeedThread", "infeed_dequeue", "infeed_dequeue_tuple", "infeed_enqueue",
           "infeed_enqueue_tuple"]
