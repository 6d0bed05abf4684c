"""The BLAS thread policy (ops/blas.py): applied when a session creates its
devices; overridden by ConfigProto.intra_op_parallelism_threads."""
import pytest

import graphrt as tf
from graphrt.ops import blas


def test_policy_shares_cores_between_host_devices():
    assert blas.thread_policy(0, 1, cores=8) == 8
    assert blas.thread_policy(0, 2, cores=8) == 4
    assert blas.thread_policy(0, 3, cores=2) == 1
    assert blas.thread_policy(3, 4, cores=8) == 3  # intra_op_parallelism_threads wins, as in TF
    assert blas.thread_policy(1, 1, cores=8) == 1   # how a shared machine asks for one thread


@pytest.fixture
def openblas(monkeypatch):
    if blas.blas_threads() is None:
        pytest.skip("numpy's BLAS is not an OpenBLAS with a thread setting")
    before = blas.blas_threads()
    yield
    blas.set_blas_threads(before)


def test_session_applies_policy(openblas):
    tf.Session(config=tf.ConfigProto(device_count={"CPU": 1})).close()
    cores = blas.blas_threads()
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 3})):
        assert blas.blas_threads() == max(1, cores // 3)
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 3}, intra_op_parallelism_threads=2)):
        assert blas.blas_threads() == 2
    with tf.Session():
        assert blas.blas_threads() == cores


def test_matmul_values_unchanged_with_one_thread(openblas):
    import numpy as np
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((64, 96)).astype(np.float32), rng.standard_normal((96, 32)).astype(np.float32)
    with tf.Graph().as_default():
        c = tf.matmul(tf.constant(a), tf.constant(b))
        with tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=1)) as sess:
            assert blas.blas_threads() == 1
            got = sess.run(c)
    np.testing.assert_allclose(got, a @ b, rtol=1e-5, atol=1e-5)
