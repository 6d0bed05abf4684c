"""What TF1 scripts and test files reach for beyond graphs: tf.app.run with
tf.flags, tf.test (TestCase, gradient checks, GPU questions), tf.logging's
counted logs, and the tf.manip / tf.debugging / tf.compat names."""
import logging
import os
import subprocess
import sys
import textwrap
import unittest

import numpy as np
import pytest

import graphrt as tf

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_app_run_parses_flags_and_exits_with_main(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent("""
        import graphrt as tf
        tf.app.flags.DEFINE_integer("steps", 3, "how many steps")
        tf.flags.DEFINE_string("name", "x", "a name")
        FLAGS = tf.flags.FLAGS

        def main(argv):
            print("steps", FLAGS.steps, "name", FLAGS.name, "rest", argv[1:])
            return 7

        if __name__ == "__main__":
            tf.app.run()
    """))
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, str(script), "--steps=5", "--unknown_flag=1", "extra"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 7, done.stderr
    assert "steps 5 name x rest ['--unknown_flag=1', 'extra']" in done.stdout


def test_test_case_gives_each_test_a_fresh_graph_sessions_and_asserts():
    record = {}

    class Case(tf.test.TestCase):
        def test_a(self):
            record["a_ops"] = len(tf.get_default_graph().get_operations())
            x = tf.constant([1.0, 2.0])
            with self.cached_session() as sess:
                self.assertAllClose(sess.run(x * 2), [2.0, 4.0])
                self.assertIs(sess, tf.get_default_session())
            with self.cached_session() as again, self.test_session() as old_name:
                self.assertIs(again, sess)
                self.assertIs(old_name, sess)
            self.assertAllEqual(self.evaluate(x), [1.0, 2.0])
            self.assertAllInRange(x, 1.0, 2.0)
            self.assertAllClose({"k": x}, {"k": np.array([1.0, 2.0 + 1e-7])})
            self.assertDTypeEqual(self.evaluate(x), tf.float32)
            self.assertShapeEqual(np.zeros(2), x)
            with self.assertRaisesOpError("Integer division by zero|division"):
                self.evaluate(tf.constant(1) // tf.constant(0))
            record["temp"] = self.get_temp_dir()

        def test_b(self):
            record["b_ops"] = len(tf.get_default_graph().get_operations())
            with self.session() as sess:
                record["b_value"] = sess.run(tf.constant(3) + 4)

        def test_c_fails(self):
            self.assertAllClose([1.0, 2.0], [1.0, 2.5])

    result = unittest.TestResult()
    unittest.defaultTestLoader.loadTestsFromTestCase(Case).run(result)
    assert not result.errors, result.errors
    assert result.testsRun == 3  # test_a, test_b, test_c_fails: `test_session` is not a test
    assert [t.id().rsplit(".", 1)[1] for t, _ in result.failures] == ["test_c_fails"]
    assert record["a_ops"] == 0 and record["b_ops"] == 0 and record["b_value"] == 7
    assert os.path.isdir(record["temp"])


def test_gradient_checks_agree_for_smooth_functions_and_catch_a_wrong_gradient():
    with tf.Graph().as_default(), tf.Session():
        x = tf.placeholder(tf.float64, [2, 3])
        y = tf.reduce_sum(tf.sin(x) * x, axis=1)
        theoretical, numerical = tf.test.compute_gradient(x, [2, 3], y, [2], x_init_value=np.ones((2, 3)))
        assert theoretical.shape == numerical.shape == (6, 2)
        np.testing.assert_allclose(theoretical, numerical, atol=1e-6)
        assert tf.test.compute_gradient_error(x, [2, 3], y, [2]) < 1e-6
        w = tf.placeholder(tf.float64, [3])
        wrong = tf.identity(w) * 1.0
        with tf.get_default_graph().gradient_override_map({"Identity": "StopGradient"}):
            stopped = tf.identity(w)
        assert tf.test.compute_gradient_error(w, [3], stopped + wrong, [3]) > 0.5


def test_gpu_questions_answer_for_the_cuda_platform():
    from graphrt.executor.platform import get_platform
    cuda = get_platform("cuda")
    visible = cuda.unavailable_reason() is None and cuda.device_count() > 0
    assert tf.test.is_gpu_available() == visible
    assert tf.test.gpu_device_name() == ("/device:GPU:0" if visible else "")
    assert tf.test.is_built_with_rocm() is False and tf.test.is_built_with_xla() is False


def test_counted_logs_count_per_call_site(caplog):
    caplog.set_level(logging.INFO, logger="graphrt")
    for i in range(7):
        tf.logging.log_every_n(tf.logging.INFO, "every %d", 3, i)
        tf.logging.log_first_n(tf.logging.INFO, "first %d", 2, i)
    tf.logging.log_if(tf.logging.INFO, "never", False)
    tf.logging.log_if(tf.logging.INFO, "yes", True)
    messages = [r.getMessage() for r in caplog.records]
    assert [m for m in messages if m.startswith("every")] == ["every 0", "every 3", "every 6"]
    assert [m for m in messages if m.startswith("first")] == ["first 0", "first 1"]
    assert "yes" in messages and "never" not in messages


def test_namespaces_reach_the_same_functions():
    assert tf.manip.roll is tf.roll and tf.manip.gather_nd is tf.gather_nd and tf.manip.tile is tf.tile
    assert tf.debugging.assert_scalar is tf.assert_scalar and tf.debugging.is_non_decreasing is tf.is_non_decreasing
    assert isinstance(np.float32(1), tf.compat.real_types) and isinstance(np.int8(1), tf.compat.integral_types)
    assert tf.compat.as_str_any(b"ab") == "ab" and tf.compat.as_str_any(3) == "3"
    with tf.Graph().as_default(), tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="bad values"):
            sess.run(tf.debugging.assert_all_finite(tf.constant([1.0, np.inf]), "bad values"))
