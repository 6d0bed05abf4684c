"""extract_glimpse's noise and checks (positions are the TF golden case
tests/tf1_programs/cases/extract_glimpse.py)."""
import numpy as np
import pytest

import graphrt as tf


def test_noise_outside_the_image_stays_in_the_images_range_or_its_statistics(graph):
    image = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1)
    uniform = tf.image.extract_glimpse(image, [8, 8], [[0.0, 0.0]])
    gaussian = tf.image.extract_glimpse(image, [8, 8], [[0.0, 0.0]], uniform_noise=False)
    with tf.Session() as sess:
        u, n = sess.run([uniform, gaussian])
    np.testing.assert_array_equal(u[0, 2:6, 2:6, 0], image[0, :, :, 0])  # the image sits in the middle
    outside = np.ones((8, 8), bool)
    outside[2:6, 2:6] = False
    assert u[0, outside, 0].min() >= 0 and u[0, outside, 0].max() <= 15
    assert abs(n[0, outside, 0].mean() - 7.5) < 3  # normal around the image's mean (std 4.6)


def test_bad_shapes_are_invalid_argument(graph):
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"offsets must have shape \[2, 2\]"):
            sess.run(tf.image.extract_glimpse(tf.zeros([2, 4, 4, 1]), [2, 2], [[0.0, 0.0]]))
    with pytest.raises(ValueError, match="Shape must be rank 4 but is rank 3"):
        tf.image.extract_glimpse(tf.zeros([4, 4, 1]), [2, 2], [[0.0, 0.0]])
