"""Partitioned variables beyond the TensorFlow golden case (tests/tf1_programs/cases/
partitioned_variables.py): the container's behaviour, initializers told where their part sits,
placement under replica_device_setter, meta graphs keeping slice info, and initialization from
checkpoints (init_from_checkpoint, warm_start) part by part."""
import numpy as np
import pytest
from tensorboard.compat.proto import variable_pb2

import graphrt as tf
from graphrt.ops.partitioned_variable import PartitionInfo, PartitionedVariable, iter_slices


def test_parts_split_like_tensorflow_first_parts_longer():
    assert list(iter_slices([10, 4], 3, 0)) == [([0, 0], [4, 4]), ([4, 0], [3, 4]), ([7, 0], [3, 4])]
    assert list(iter_slices([2, 5], 2, 1)) == [([0, 0], [2, 3]), ([0, 3], [2, 2])]


def test_container_iterates_converts_and_assigns(graph):
    w = tf.get_variable("w", [5, 2], partitioner=tf.fixed_size_partitioner(2),
                        initializer=tf.constant_initializer(1.0))
    assert isinstance(w, PartitionedVariable) and len(w) == 2
    assert repr(w) == "<PartitionedVariable 'w' shape=(5, 2) dtype=float32 parts=[w/part_0[3, 2], w/part_1[2, 2]]>"
    assert [v.op.name for v in w] == ["w/part_0", "w/part_1"] == [v.op.name for v in w._get_variable_list()]
    assert w._get_partitions() == [2, 1] and w._partition_axes() == [0]
    whole = tf.convert_to_tensor(w)
    assert whole.name == "w:0" and whole.op.inputs[0].op.name == "w/ConcatPartitions/concat"
    with tf.control_dependencies([tf.no_op(name="before")]):
        inside = w.as_tensor()
    assert inside.op.control_inputs == [] and inside.op.inputs[0].op.control_inputs == []  # a read, not ordered
    value = np.arange(10, dtype=np.float32).reshape(5, 2)
    assign = w.assign(value)
    assign_parts = w.assign([np.zeros((3, 2), np.float32), np.ones((2, 2), np.float32)], read_value=False)
    add = w.assign_sub(np.ones((5, 2), np.float32))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(whole), np.ones((5, 2)))
        parts = sess.run(assign)
        np.testing.assert_array_equal(parts[1], value[3:])
        sess.run(assign_parts)
        np.testing.assert_array_equal(np.concatenate(sess.run(add)), [[-1, -1]] * 3 + [[0, 0]] * 2)
    with pytest.raises(ValueError, match="Assigning a list of 3 values to partitioned variable w of 2 parts"):
        w.assign([value, value, value])
    with pytest.raises(NotImplementedError, match="PartitionedVariable doesn't support being used as a reference"):
        tf.convert_to_tensor(w, as_ref=True)
    with pytest.raises(ValueError, match="Incompatible type conversion requested to type 'int32' for variable of "
                                         "type 'float32'"):
        tf.convert_to_tensor(w, dtype=tf.int32)
    with pytest.raises(TypeError):  # no arithmetic of its own, as in TensorFlow
        w + 1.0


def test_container_checks_its_parts(graph):
    v = tf.Variable(np.zeros((2, 2), np.float32), name="loose")
    with pytest.raises(ValueError, match=r"All variables must have a save_slice_info available: \['loose:0'\]"):
        PartitionedVariable("p", [2, 2], tf.float32, [v], [1, 1])
    with pytest.raises(ValueError, match="variable_list may not be empty"):
        PartitionedVariable("p", [2, 2], tf.float32, [], [1, 1])
    with pytest.raises(ValueError, match="partition values must be positive"):
        PartitionedVariable("p", [2, 2], tf.float32, [v], [0, 1])
    v._set_save_slice_info(tf.Variable.SaveSliceInfo("p", [4, 2], [2, 0], [2, 2]))
    with pytest.raises(ValueError, match=r"All variables' full shapes must match shape: \(2, 2\)"):
        PartitionedVariable("p", [2, 2], tf.float32, [v], [2, 1])
    with pytest.raises(ValueError, match=r"Expected 0 <= offset < shape but found offset=\[4, 0\]"):
        PartitionInfo([4, 2], [4, 0])
    info = PartitionInfo([10, 3], [4, 0])
    assert info.single_slice_dim([3, 3]) == 0 and info.single_offset([3, 3]) == 4
    with pytest.raises(ValueError, match="would exceed self.full_shape"):
        info.single_slice_dim([7, 3])


def test_variance_scaling_draws_each_part_with_the_whole_variables_fans(graph):
    tf.set_random_seed(1)
    w = tf.get_variable("w", [1000, 10], partitioner=tf.fixed_size_partitioner(10),
                        initializer=tf.glorot_uniform_initializer())
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        value = sess.run(tf.convert_to_tensor(w))
    limit = np.sqrt(6.0 / (1000 + 10))  # a part alone would draw within sqrt(6 / (100 + 10)) = 0.23
    assert np.abs(value).max() <= limit and np.abs(value).max() > 0.9 * limit


def test_callable_initializers_get_the_parts_offset(graph):
    def rows(shape, dtype=None, partition_info=None):
        start = partition_info.var_offset[0]
        return tf.cast(tf.reshape(tf.range(start, start + shape[0]), [-1, 1]), tf.float32)

    v = tf.get_variable("v", [7, 1], partitioner=tf.fixed_size_partitioner(3), initializer=rows)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(tf.convert_to_tensor(v)).ravel(), np.arange(7))


def test_replica_device_setter_spreads_the_parts_over_ps_tasks(graph):
    with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
        emb = tf.get_variable("emb", [10, 3], partitioner=tf.fixed_size_partitioner(3))
        bias = tf.get_variable("bias", [3])
        rows = tf.nn.embedding_lookup(emb, [1, 5])
    assert [v.device for v in emb] == ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:0"]
    assert bias.device == "/job:ps/task:1"
    gathers = [op for op in graph.get_operations() if op.type == "GatherV2"]
    assert len(gathers) == 3  # one lookup per part, each where its part lives
    assert sorted(op.colocation_groups()[0] for op in gathers) == [f"loc:@emb/part_{i}".encode() for i in range(3)]
    assert rows.shape.as_list() == [2, 3]


def test_meta_graph_keeps_save_slice_info(tmp_path):
    with tf.Graph().as_default():
        tf.get_variable("w", [6, 2], partitioner=tf.fixed_size_partitioner(3), initializer=tf.ones_initializer())
        meta = tf.train.export_meta_graph(str(tmp_path / "m.meta"))
    defs = [variable_pb2.VariableDef.FromString(b) for b in meta.collection_def["variables"].bytes_list.value]
    assert [(d.save_slice_info_def.full_name, list(d.save_slice_info_def.var_offset)) for d in defs] == [
        ("w", [0, 0]), ("w", [2, 0]), ("w", [4, 0])]
    with tf.Graph().as_default():
        tf.train.import_meta_graph(str(tmp_path / "m.meta"), import_scope="copy")
        infos = [v._get_save_slice_info() for v in tf.global_variables()]
        assert [i.full_name for i in infos] == ["copy/w"] * 3
        assert [i.spec for i in infos] == ["6 2 0,2:0,2", "6 2 2,2:0,2", "6 2 4,2:0,2"]
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            prefix = saver.save(sess, str(tmp_path / "ckpt"), write_meta_graph=False)
    assert tf.train.list_variables(prefix) == [("copy/w", [6, 2])]


def _save_table(tmp_path, value):
    with tf.Graph().as_default():
        v = tf.get_variable("old/table", initializer=tf.constant(value), partitioner=tf.fixed_size_partitioner(2))
        b = tf.get_variable("old/b", initializer=tf.constant([1.0, 2.0]))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return tf.train.Saver([v, b]).save(sess, str(tmp_path / "ckpt"), write_meta_graph=False)


def test_init_from_checkpoint_reads_each_part_from_its_slice(tmp_path):
    value = np.arange(14, dtype=np.float32).reshape(7, 2)
    prefix = _save_table(tmp_path, value)
    with tf.Graph().as_default():
        by_name = tf.get_variable("new/table", [7, 2], partitioner=tf.fixed_size_partitioner(3))
        by_scope = tf.get_variable("copy/table", [7, 2], partitioner=tf.fixed_size_partitioner(4))
        tf.get_variable("copy/b", [2])
        direct = tf.get_variable("direct", [7, 2], partitioner=tf.fixed_size_partitioner(2))
        tf.train.init_from_checkpoint(prefix, {"old/table": "new/table", "old/": "copy/"})
        tf.train.init_from_checkpoint(prefix, {"old/table": direct})
        restores = [op for op in tf.get_default_graph().get_operations() if op.type == "RestoreV2"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for v in (by_name, by_scope, direct):
                np.testing.assert_array_equal(sess.run(tf.convert_to_tensor(v)), value)
            specs = sorted(s.decode() for op in restores for s in sess.run(op.inputs[2]))
    assert "7 2 4,3:0,2" in specs and "7 2 6,1:0,2" in specs  # new/table's last part, copy/table's last part
    with tf.Graph().as_default():
        loose = [tf.Variable(np.zeros((7, 2), np.float32), name="loose")]
        with pytest.raises(ValueError, match="Variable loose:0 in a list mapped to checkpoint tensor old/table is not "
                                             "a part of a partitioned variable"):
            tf.train.init_from_checkpoint(prefix, {"old/table": loose})


def test_warm_start_groups_the_parts_of_a_partitioned_variable(tmp_path):
    value = np.arange(14, dtype=np.float32).reshape(7, 2)
    prefix = _save_table(tmp_path, value)
    with tf.Graph().as_default():
        table = tf.get_variable("table", [7, 2], partitioner=tf.fixed_size_partitioner(3))
        tf.train.warm_start(prefix, vars_to_warm_start="table", var_name_to_prev_var_name={"table": "old/table"})
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(tf.convert_to_tensor(table)), value)
