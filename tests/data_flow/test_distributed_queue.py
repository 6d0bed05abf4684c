"""A queue on a ps task is shared by name between sessions (as between-graph
replicas share one); a dequeue waiting on it across processes ends at the step
deadline and the queue serves the next step."""
import pytest

import graphrt as tf
from graphrt.distributed.cluster import create_local_cluster


def build():
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:ps/task:0"):
            q = tf.FIFOQueue(5, [tf.float32], shapes=[[]], shared_name="shared_q")
        with tf.device("/job:worker/task:0"):
            v = tf.placeholder(tf.float32, [])
            enq = q.enqueue(v * 2)
            out = q.dequeue() + 1
        size = q.size()
    return g, v, enq, out, size


def test_shared_queue_on_a_ps_task():
    workers, ps = create_local_cluster(num_workers=1, num_ps=1)
    try:
        g1, v1, enq1, _, size1 = build()
        g2, _, _, out2, _ = build()
        with tf.Session(workers[0].target, graph=g1) as s1, tf.Session(workers[0].target, graph=g2) as s2:
            s1.run(enq1, {v1: 3.0})
            assert s2.run(out2) == 7.0
            with pytest.raises(tf.errors.DeadlineExceededError):
                s2.run(out2, options=tf.RunOptions(timeout_in_ms=300))
            s1.run(enq1, {v1: 5.0})
            assert s2.run(out2) == 11.0
            assert s1.run(size1) == 0
            placement = s1.plan_for(size1).placement
            assert "/job:ps/" in placement["fifo_queue"] and "/job:ps/" in placement["fifo_queue_Size"]
    finally:
        for server in workers + ps:
            server.stop()
