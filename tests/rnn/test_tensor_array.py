"""TensorArray rules beyond the TF 2 goldens: reads that leave the value and
writes that replace it, as the TensorList arrays TF 2 builds for compat.v1
graphs (TF 1's V3 arrays refused both), summed gradients of duplicate reads,
errors naming the array and the node, placement next to the first written value."""
import numpy as np
import pytest

import graphrt as tf
from graphrt import errors
from tests.helpers import run


def test_reads_leave_the_value_whatever_clear_after_read_says(graph):
    # TensorFlow 2.21 gave these (its compat.v1 arrays are TensorLists): [2, 4] both times, and a stack
    # after reads of the same elements
    for clear in (True, False):
        ta = tf.TensorArray(tf.float32, size=2, clear_after_read=clear).write(0, [1.0, 2.0]).write(1, [3.0, 4.0])
        first = ta.read(0)
        with tf.control_dependencies([first]):
            again = ta.read(0) + first
        np.testing.assert_allclose(run(again), [2.0, 4.0])
        np.testing.assert_allclose(run([ta.read(1), ta.stack()])[1], [[1.0, 2.0], [3.0, 4.0]])


def test_a_second_write_replaces_and_bad_indices_are_errors_naming_the_node(graph):
    ta = tf.TensorArray(tf.float32, size=2, tensor_array_name="arr").write(0, [1.0]).write(1, [5.0])
    np.testing.assert_allclose(run(ta.write(0, [2.0]).stack()), [[2.0], [5.0]])
    bad = ta.write(3, [1.0])
    with pytest.raises(errors.InvalidArgumentError,
                       match="TensorArray arr: Tried to write to index 3 but array is not resizeable and size is: "
                             "2") as info:
        run(bad.flow)
    assert info.value.node == bad.flow.op.name
    with pytest.raises(errors.InvalidArgumentError, match="Tried to read from index 7 but array size is: 2"):
        run(ta.read(7))


def test_split_may_give_elements_of_different_lengths(graph):
    ta = tf.TensorArray(tf.float32, size=2).split([1.0, 2.0, 3.0], [1, 2])
    second, whole = run([ta.read(1), ta.concat()])
    np.testing.assert_allclose(second, [2.0, 3.0])
    np.testing.assert_allclose(whole, [1.0, 2.0, 3.0])


def test_dtype_and_shape_are_checked_when_the_graph_is_built(graph):
    ta = tf.TensorArray(tf.float32, size=2)
    with pytest.raises(ValueError, match="TensorArray dtype is float32 but Op is trying to write dtype int32"):
        ta.write(0, tf.constant([1, 2]))
    ta = ta.write(0, tf.zeros([2, 3]))
    with pytest.raises(ValueError, match="Inconsistent shapes"):
        ta.write(1, tf.zeros([3, 3]))
    assert ta.read(1).shape.as_list() == [2, 3]
    assert ta.stack().shape.as_list() == [2, 2, 3]  # a fixed-size array: TF knows the length


def test_gradient_of_duplicate_gather_is_summed(graph):
    x = tf.constant(np.arange(6, dtype=np.float32).reshape(3, 2))
    ta = tf.TensorArray(tf.float32, size=3, clear_after_read=False).unstack(x)
    g = tf.gradients(tf.reduce_sum(ta.gather([1, 1, 2]) * 2.0), x)[0]
    np.testing.assert_allclose(run(g), [[0, 0], [4, 4], [2, 2]])


def test_dynamic_size_grows_and_size_reports_it(graph):
    ta = tf.TensorArray(tf.int32, size=0, dynamic_size=True)
    _, ta = tf.while_loop(lambda i, t: i < 4, lambda i, t: (i + 1, t.write(i, i * i)), [0, ta])
    values, size = run([ta.stack(), ta.size()])
    np.testing.assert_array_equal(values, [0, 1, 4, 9])
    assert size == 4


def test_array_sits_with_its_first_written_value(graph):
    with tf.device("/cpu:1"):
        v = tf.constant([1.0, 2.0]) * 3.0
    ta = tf.TensorArray(tf.float32, size=1).write(0, v)
    out = ta.read(0) + 1.0
    md = tf.RunMetadata()
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        np.testing.assert_allclose(sess.run(out, options=tf.RunOptions(output_partition_graphs=True),
                                            run_metadata=md), [4.0, 7.0])
    on_cpu1 = {n.op for pg in md.partition_graphs for n in pg.node if n.device.endswith("CPU:1")}
    assert {"TensorArrayV3", "TensorArrayWriteV3", "TensorArrayReadV3"} <= on_cpu1


def test_repr_and_closed_array(graph):
    ta = tf.TensorArray(tf.float32, size=1, name="arr")
    assert "TensorArray 'arr" in repr(ta)
    ta = ta.write(0, 1.0)
    with tf.control_dependencies([ta.close()]):
        after = tf.identity(ta.flow)
    with pytest.raises(errors.InvalidArgumentError, match="has already been closed"):
        run(tf.TensorArray(tf.float32, handle=ta.handle, flow=after).read(0))
