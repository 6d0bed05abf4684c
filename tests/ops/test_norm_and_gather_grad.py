"""tf.norm of complex tensors and the matrix 2-norm, and gather's gradient for an axis written
negative (values checked against TensorFlow 2.21 by hand-made cases)."""
import numpy as np

import graphrt as tf


def test_complex_euclidean_norm_sums_x_times_its_conjugate(graph):
    x = np.array([[3 + 4j, 1j], [2, 2 - 1j]], np.complex64)
    got = tf.Session().run(tf.norm(tf.constant(x), axis=1))
    np.testing.assert_allclose(got.real, np.sqrt((np.abs(x) ** 2).sum(axis=1)), rtol=1e-6)
    assert got.dtype == np.complex64 and np.all(np.abs(got.imag) < 1e-6)


def test_matrix_2_norm_is_the_largest_singular_value(graph):
    rng = np.random.RandomState(0)
    x = rng.randn(2, 3, 4).astype(np.float32)
    norm = tf.norm(tf.constant(x), ord=2, axis=(0, 2), keepdims=True)
    got = tf.Session().run(norm)
    expected = np.array([np.linalg.svd(x[:, j, :], compute_uv=False).max() for j in range(3)])
    assert got.shape == (1, 3, 1)
    np.testing.assert_allclose(got.ravel(), expected, rtol=1e-5)


def test_gather_axis_written_negative_has_a_dense_gradient(graph):
    params = tf.constant(np.ones((4, 3), np.float32))
    dense = tf.gradients(tf.reduce_sum(tf.gather(params, [2, 0, 2], axis=-2)), params)[0]
    sparse = tf.gradients(tf.reduce_sum(tf.gather(params, [2, 0, 2], axis=0)), params)[0]
    assert isinstance(dense, tf.Tensor) and isinstance(sparse, tf.IndexedSlices)
    np.testing.assert_array_equal(tf.Session().run(dense), [[1] * 3, [0] * 3, [2] * 3, [0] * 3])
