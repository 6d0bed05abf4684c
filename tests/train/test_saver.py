"""tf.train.Saver: save/restore round trips, max_to_keep, latest_checkpoint, var_list
forms, errors, and old .npz checkpoints that still restore (without pickle)."""
import os

import numpy as np
import pytest

import graphrt as tf


def _model():
    w = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="w")
    b = tf.Variable(np.array([1, 2], np.int64), name="b")
    with tf.name_scope("layer"):
        s = tf.Variable(0.5, dtype=tf.float64, name="scale")
    return w, b, s


def test_save_and_restore_round_trip(graph, tmp_path):
    w, b, s = _model()
    saver = tf.train.Saver()
    prefix = str(tmp_path / "model")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run([w.assign(w * 2.0), b.assign_add([10, 10]), s.assign(-1.25)])
        saved = sess.run([w, b, s])
        assert saver.save(sess, prefix) == prefix
    assert os.path.exists(prefix + ".index") and os.path.exists(prefix + ".data-00000-of-00001")
    with tf.Session() as sess:  # a fresh session: variables start uninitialized
        saver.restore(sess, prefix)
        restored = sess.run([w, b, s])
    for got, want in zip(restored, saved):
        np.testing.assert_array_equal(got, want)
        assert np.asarray(got).dtype == np.asarray(want).dtype


def test_restore_overwrites_changed_values(graph, tmp_path):
    w, b, s = _model()
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "ckpt"))
        sess.run(w.assign(tf.zeros([2, 3])))
        saver.restore(sess, path)
        np.testing.assert_array_equal(sess.run(w), np.arange(6).reshape(2, 3))


def test_restore_into_a_new_graph_by_name(graph, tmp_path):
    _model()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = tf.train.Saver().save(sess, str(tmp_path / "m"))
    g2 = tf.Graph()
    with g2.as_default():
        w2, b2, s2 = _model()
        with tf.Session(graph=g2) as sess:
            tf.train.Saver().restore(sess, path)
            np.testing.assert_array_equal(sess.run(b2), [1, 2])
            assert sess.run(s2) == 0.5


def test_checkpoint_lists_its_variables_with_dtypes(graph, tmp_path):
    w, b, s = _model()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = tf.train.Saver().save(sess, str(tmp_path / "m"))
    assert tf.train.list_variables(path) == [("b", [2]), ("layer/scale", []), ("w", [2, 3])]
    reader = tf.train.NewCheckpointReader(path)
    np.testing.assert_array_equal(reader.get_tensor("w"), np.arange(6).reshape(2, 3))
    assert reader.get_tensor("b").dtype == np.int64
    assert reader.get_variable_to_dtype_map()["layer/scale"] == tf.float64


def test_old_npz_checkpoints_still_restore(graph, tmp_path):
    w, b, s = _model()
    np.savez(str(tmp_path / "old.npz"), **{"w": np.ones((2, 3), np.float32), "b": np.array([5, 6], np.int64),
                                           "layer/scale": np.float64(2.5)})
    with tf.Session() as sess:
        tf.train.Saver().restore(sess, str(tmp_path / "old"))
        np.testing.assert_array_equal(sess.run(b), [5, 6])
        assert sess.run(s) == 2.5
    assert tf.train.load_variable(str(tmp_path / "old"), "w:0").shape == (2, 3)


def test_var_list_as_list_and_dict(graph, tmp_path):
    w, b, s = _model()
    only_w = tf.train.Saver([w])
    renamed = tf.train.Saver({"weights": w, "bias": b})
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        p1 = only_w.save(sess, str(tmp_path / "only_w"))
        p2 = renamed.save(sess, str(tmp_path / "renamed"))
        assert [name for name, _ in tf.train.list_variables(p1)] == ["w"]
        assert [name for name, _ in tf.train.list_variables(p2)] == ["bias", "weights"]
        sess.run(w.assign(tf.zeros([2, 3])))
        sess.run(b.assign([0, 0]))
        only_w.restore(sess, p1)
        np.testing.assert_array_equal(sess.run(b), [0, 0])  # not in this saver
        renamed.restore(sess, p2)
        np.testing.assert_array_equal(sess.run(b), [1, 2])
        np.testing.assert_array_equal(sess.run(w), np.arange(6).reshape(2, 3))


def test_global_step_suffix_max_to_keep_and_latest_checkpoint(graph, tmp_path):
    w, _, _ = _model()
    step = tf.train.get_or_create_global_step()
    inc = step.assign_add(1)
    saver = tf.train.Saver(max_to_keep=2)
    prefix = str(tmp_path / "run" / "model")
    os.makedirs(tmp_path / "run")
    assert tf.train.latest_checkpoint(str(tmp_path / "run")) is None
    paths = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(4):
            sess.run(inc)
            paths.append(saver.save(sess, prefix, global_step=step))
        assert paths == [f"{prefix}-{k}" for k in range(1, 5)]
        assert saver.save(sess, prefix, global_step=7) == f"{prefix}-7"
    kept = sorted(f for f in os.listdir(tmp_path / "run") if f != "checkpoint")
    assert kept == [f"model-{k}{ext}" for k in (4, 7) for ext in (".data-00000-of-00001", ".index", ".meta")]
    assert saver.last_checkpoints == [f"{prefix}-4", f"{prefix}-7"]
    assert tf.train.latest_checkpoint(str(tmp_path / "run")) == f"{prefix}-7"
    assert tf.train.checkpoint_exists(f"{prefix}-7")
    assert not tf.train.checkpoint_exists(f"{prefix}-1")
    state = (tmp_path / "run" / "checkpoint").read_text()
    assert 'model_checkpoint_path: "model-7"' in state
    assert 'all_model_checkpoint_paths: "model-4"' in state


def test_latest_checkpoint_restores_the_last_state(graph, tmp_path):
    v = tf.Variable(0.0, name="v")
    inc = v.assign_add(1.0)
    saver = tf.train.Saver(max_to_keep=3)
    with tf.Session() as sess:
        sess.run(v.initializer)
        for k in range(3):
            sess.run(inc)
            saver.save(sess, str(tmp_path / "m"), global_step=k)
    with tf.Session() as sess:
        saver.restore(sess, tf.train.latest_checkpoint(str(tmp_path)))
        assert sess.run(v) == 3.0


def test_saver_errors(graph, tmp_path):
    w, _, _ = _model()
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(ValueError, match="doesn't exist, can't save"):
            saver.save(sess, str(tmp_path / "missing" / "dir" / "m"))
        assert saver.save(sess, str(tmp_path / "new_dir" / "m")).endswith("m")  # one level is created, as TF
        with pytest.raises(ValueError, match="not a valid checkpoint"):
            saver.restore(sess, str(tmp_path / "nothing_here"))
        with pytest.raises(ValueError, match="Can't load save_path when it is None"):
            saver.restore(sess, None)
        partial = tf.train.Saver([w]).save(sess, str(tmp_path / "partial"))
        with pytest.raises(tf.errors.NotFoundError, match="Key b not found in checkpoint"):
            saver.restore(sess, partial)
    with pytest.raises(ValueError, match="At least two variables have the same name: w"):
        tf.train.Saver([w, w])
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="No variables to save"):
            tf.train.Saver()


def test_restore_checks_shapes(graph, tmp_path):
    v = tf.Variable(np.zeros(3, np.float32), name="v")
    with tf.Session() as sess:
        sess.run(v.initializer)
        path = tf.train.Saver().save(sess, str(tmp_path / "m"))
    g2 = tf.Graph()
    with g2.as_default():
        tf.Variable(np.zeros(4, np.float32), name="v")
        with tf.Session(graph=g2) as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"Restoring v from checkpoint .*m: the "
                               r"checkpoint has shape \[3\] but the variable has shape \[4\]"):
                tf.train.Saver().restore(sess, path)


def test_save_does_not_leave_temporary_files(graph, tmp_path):
    _model()
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        saver.save(sess, str(tmp_path / "m"))
        saver.save(sess, str(tmp_path / "m"))  # overwrite in place
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "m.data-00000-of-00001", "m.index", "m.meta"]


def test_reshape_restores_the_same_elements_in_another_shape(graph, tmp_path):
    v = tf.Variable(np.arange(6, dtype=np.float32), name="v")
    with tf.Session() as sess:
        sess.run(v.initializer)
        path = tf.train.Saver().save(sess, str(tmp_path / "m"))
    with tf.Graph().as_default():
        v2 = tf.Variable(np.zeros((2, 3), np.float32), name="v")
        with tf.Session() as sess:
            tf.train.Saver(reshape=True).restore(sess, path)
            np.testing.assert_array_equal(sess.run(v2), np.arange(6).reshape(2, 3))
            with pytest.raises(tf.errors.InvalidArgumentError, match="checkpoint has shape \\[6\\]"):
                tf.train.Saver().restore(sess, path)
