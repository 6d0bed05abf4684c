"""A distributed step leaves no reference cycles behind, on the master or on the workers: the
steps' objects and tensors are freed when each step ends (see tests/runtime/test_step_garbage.py)."""
import graphrt as tf
from graphrt.distributed.channel import stop_serving_in_process
from graphrt.distributed.cluster import create_local_cluster

from ..helpers import graphrt_cycles


def test_a_two_task_step_leaves_no_reference_cycles():
    workers, _ = create_local_cluster(num_workers=2)
    stop_serving_in_process(workers[1].service)  # task 1 is reached through its socket, as another process
    try:
        with tf.Graph().as_default():
            with tf.device("/job:worker/task:1"):
                x = tf.constant(2.0) * 3.0
            with tf.device("/job:worker/task:0"):
                y = x + 1.0
            with tf.Session(workers[0].target) as sess:
                for _ in range(4):  # profiles task 1's kernels: cheap, so its RunGraph runs inline
                    assert sess.run(y) == 7.0
                assert graphrt_cycles(lambda: sess.run(y)) == {}
    finally:
        for w in workers:
            w.stop()
