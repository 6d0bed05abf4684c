"""tf.image extras beyond the TensorFlow golden (tests/tf1_programs/cases/image_extras.py):
values against numpy / colorsys references, numerical gradients, run-time errors and their
messages, and edge cases."""
import colorsys
import os

import numpy as np
import pytest

import graphrt as tf
from graphrt import errors
from tests.ops.gradcheck import check_gradients

JPG = open(os.path.join(os.path.dirname(__file__), "fixtures", "test.jpg"), "rb").read()
RNG = np.random.RandomState(3)


def run(fetch, feed=None):
    with tf.Session() as sess:
        return sess.run(fetch, feed)


def test_rgb_to_hsv_and_back_match_colorsys(graph):
    rgb = RNG.uniform(0, 1, (20, 3))
    hsv = run(tf.image.rgb_to_hsv(tf.constant(rgb)))
    np.testing.assert_allclose(hsv, [colorsys.rgb_to_hsv(*p) for p in rgb], atol=1e-12)
    back = run(tf.image.hsv_to_rgb(tf.constant(hsv)))
    np.testing.assert_allclose(back, rgb, atol=1e-12)


@pytest.mark.parametrize("delta", [-0.7, -0.2, 0.0, 0.35, 1.0])
def test_adjust_hue_rotates_hue_and_keeps_saturation_and_value(graph, delta):
    rgb = RNG.uniform(0, 1, (4, 5, 3)).astype(np.float32)
    got = run(tf.image.adjust_hue(rgb, delta))
    want = []
    for p in rgb.reshape(-1, 3):
        h, s, v = colorsys.rgb_to_hsv(*p)
        want.append(colorsys.hsv_to_rgb((h + delta) % 1.0, s, v))
    np.testing.assert_allclose(got.reshape(-1, 3), want, atol=2e-6)


def test_adjust_saturation_scales_saturation_clipped(graph):
    rgb = RNG.uniform(0, 1, (30, 1, 3)).astype(np.float32)
    got = run(tf.image.adjust_saturation(rgb, 1.8))
    want = []
    for p in rgb.reshape(-1, 3):
        h, s, v = colorsys.rgb_to_hsv(*p)
        want.append(colorsys.hsv_to_rgb(h, min(s * 1.8, 1.0), v))
    np.testing.assert_allclose(got.reshape(-1, 3), want, atol=2e-6)


def _patches_reference(x, k, s, r, padding):
    b, rows, cols, d = x.shape
    eff = [k[i] + (k[i] - 1) * (r[i] - 1) for i in (1, 2)]
    if padding == "VALID":
        out = [(n - e) // st + 1 for n, e, st in zip((rows, cols), eff, (s[1], s[2]))]
        pad = [0, 0]
    else:
        out = [-(-n // st) for n, st in zip((rows, cols), (s[1], s[2]))]
        pad = [max((o - 1) * st + e - n, 0) // 2 for o, st, e, n in zip(out, (s[1], s[2]), eff, (rows, cols))]
    res = np.zeros((b, out[0], out[1], k[1] * k[2] * d), x.dtype)
    for i in range(out[0]):
        for j in range(out[1]):
            vals = []
            for a in range(k[1]):
                for c in range(k[2]):
                    y, xx = i * s[1] - pad[0] + a * r[1], j * s[2] - pad[1] + c * r[2]
                    inside = 0 <= y < rows and 0 <= xx < cols
                    vals.append(x[:, y, xx] if inside else np.zeros((b, d), x.dtype))
            res[:, i, j] = np.concatenate(vals, axis=1)
    return res


@pytest.mark.parametrize("k,s,r,padding", [([1, 3, 3, 1], [1, 2, 2, 1], [1, 1, 1, 1], "SAME"),
                                           ([1, 2, 2, 1], [1, 1, 3, 1], [1, 2, 2, 1], "VALID"),
                                           ([1, 2, 4, 1], [1, 3, 1, 1], [1, 3, 1, 1], "SAME"),
                                           ([1, 7, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], "VALID")])
def test_extract_image_patches_matches_a_loop(graph, k, s, r, padding):
    x = RNG.uniform(-1, 1, (2, 7, 8, 3)).astype(np.float32)
    got = run(tf.extract_image_patches(x, k, s, r, padding))
    np.testing.assert_array_equal(got, _patches_reference(x, k, s, r, padding))


def test_extract_image_patches_gradient(graph):
    x = RNG.uniform(-1, 1, (1, 5, 6, 2))
    check_gradients(lambda t: tf.image.extract_patches(t, [1, 2, 3, 1], [1, 2, 1, 1], [1, 2, 1, 1], "SAME"), x)


def test_extract_image_patches_window_larger_than_the_image(graph):
    with pytest.raises(ValueError, match="Computed output size would be negative"):
        tf.extract_image_patches(tf.zeros([2, 7, 8, 3]), [1, 9, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], "VALID")
    images = tf.placeholder(tf.float32, [None, None, None, 3])
    with pytest.raises(errors.InvalidArgumentError, match="Computed output size would be negative"):
        run(tf.extract_image_patches(images, [1, 9, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], "VALID"),
            {images: np.zeros((1, 7, 8, 3))})


def test_extract_image_patches_off_space_is_unimplemented_at_run_time(graph):
    p = tf.extract_image_patches(tf.zeros([2, 4, 4, 1]), [1, 2, 2, 1], [1, 1, 1, 2], [1, 1, 1, 1], "VALID")
    with pytest.raises(errors.UnimplementedError, match="Only support strides across space"):
        run(p)


@pytest.mark.parametrize("method", ["bilinear", "nearest"])
def test_crop_and_resize_gradients_are_numerical(graph, method):
    image = RNG.uniform(0, 1, (2, 6, 7, 2))
    boxes = np.array([[0.13, 0.21, 0.71, 0.93], [0.05, 0.6, 0.37, 0.1]])
    check_gradients(lambda t: tf.cast(tf.image.crop_and_resize(t, boxes, [1, 0], [3, 4], method=method),
                                      tf.float64), image, rtol=1e-3, atol=1e-3, delta=1e-3)
    if method == "bilinear":  # TF's boxes gradient is the bilinear one, away from pixel boundaries
        check_gradients(lambda b: tf.cast(tf.image.crop_and_resize(image, tf.cast(b, tf.float32), [1, 0], [3, 4]),
                                          tf.float64), boxes, rtol=2e-2, atol=2e-3, delta=1e-3)


def test_crop_and_resize_reads_the_box_and_extrapolates(graph):
    image = np.arange(2 * 3 * 4, dtype=np.float32).reshape(1, 3, 4, 2)
    whole = run(tf.image.crop_and_resize(image, [[0, 0, 1, 1]], [0], [3, 4]))
    np.testing.assert_array_equal(whole, image)
    flipped = run(tf.image.crop_and_resize(image, [[1, 1, 0, 0]], [0], [3, 4]))
    np.testing.assert_array_equal(flipped, image[:, ::-1, ::-1])
    outside = run(tf.image.crop_and_resize(image, [[1.5, 0, 2, 1]], [0], [2, 2], extrapolation_value=-7))
    assert np.all(outside == -7)


def test_crop_and_resize_errors(graph):
    x = tf.zeros([1, 3, 3, 1])
    with pytest.raises(errors.OutOfRangeError, match=r"box_index has values outside \[0, batch_size\)"):
        run(tf.image.crop_and_resize(x, [[0, 0, 1, 1]], [-1], [2, 2]))
    with pytest.raises(errors.InvalidArgumentError, match="crop dimensions must be positive"):
        run(tf.image.crop_and_resize(x, [[0, 0, 1, 1]], [0], tf.constant([2, 0])))
    with pytest.raises(ValueError):
        tf.image.crop_and_resize(x, [[0, 0, 1, 1]], [0], [2, 2], method="bicubic")


def test_rgb_to_hsv_gradient_is_numerical_away_from_ties(graph):
    rgb = np.array([[0.2, 0.5, 0.9], [0.8, 0.1, 0.4], [0.3, 0.7, 0.6], [0.6, 0.65, 0.1]])
    check_gradients(tf.image.rgb_to_hsv, rgb, rtol=1e-4, atol=1e-6)


def test_non_max_suppression_breaks_score_ties_by_index(graph):
    boxes = np.array([[0, 0, 1, 1], [0, 2, 1, 3], [0, 0.05, 1, 1.05], [0, 4, 1, 5]], np.float32)
    scores = np.array([0.5, 0.5, 0.5, 0.7], np.float32)
    np.testing.assert_array_equal(run(tf.image.non_max_suppression(boxes, scores, 4)), [3, 0, 1])


def test_soft_nms_decays_scores(graph):
    boxes = np.array([[0, 0, 1, 1], [0, 0.5, 1, 1.5]], np.float32)
    idx, sc = run(tf.image.non_max_suppression_with_scores(boxes, [0.9, 0.8], 2, soft_nms_sigma=0.5))
    iou = 0.5 / 1.5
    np.testing.assert_array_equal(idx, [0, 1])
    np.testing.assert_allclose(sc, [0.9, 0.8 * np.exp(-iou * iou / (2 * 0.5))], rtol=1e-6)


def test_non_max_suppression_errors(graph):
    boxes = tf.placeholder(tf.float32, [None, 4])
    nms = tf.image.non_max_suppression(boxes, tf.constant([0.5, 0.6]), 2)
    with pytest.raises(errors.InvalidArgumentError, match="scores has incompatible shape"):
        run(nms, {boxes: np.zeros((3, 4), np.float32)})


def test_draw_bounding_boxes_outlines_and_errors(graph):
    image = np.zeros((1, 5, 5, 3), np.float32)
    got = run(tf.image.draw_bounding_boxes(image, [[[0.25, 0.25, 0.75, 0.75]]]))[0]
    ring = np.zeros((5, 5), bool)
    ring[1, 1:4] = ring[3, 1:4] = ring[1:4, 1] = ring[1:4, 3] = True
    np.testing.assert_array_equal(got[..., 0] == 1, ring)  # yellow: (1, 1, 0)
    assert np.all(got[..., 2] == 0)
    images = tf.placeholder(tf.float32, [None, None, None, None])
    with pytest.raises(errors.InvalidArgumentError, match="Channel depth should be either 1"):
        run(tf.image.draw_bounding_boxes(images, tf.zeros([1, 1, 4])), {images: np.zeros((1, 2, 2, 2))})


def test_sample_distorted_bounding_box_errors(graph):
    with pytest.raises(errors.InvalidArgumentError, match="No bounding boxes provided"):
        run(tf.image.sample_distorted_bounding_box([10, 10, 3], tf.zeros([1, 0, 4]))[0])
    with pytest.raises(errors.InvalidArgumentError, match=r"must be in \[0.0, 1.0\]"):
        run(tf.image.sample_distorted_bounding_box([10, 10, 3], [[[0, 0, 1.5, 1]]])[0])


def test_sample_distorted_bounding_box_is_seeded(graph):
    boxes = [[[0.1, 0.1, 0.9, 0.9]]]
    a = tf.image.sample_distorted_bounding_box([50, 40, 3], boxes, seed=1, seed2=2)
    b = tf.image.sample_distorted_bounding_box([50, 40, 3], boxes, seed=1, seed2=2)
    va, vb = run([a, b])
    for x, y in zip(va, vb):
        np.testing.assert_array_equal(x, y)


def test_codecs(graph):
    contents = tf.constant([JPG, b"GIF89a", b"\xff\xd8"])
    np.testing.assert_array_equal(run(tf.image.is_jpeg(contents)), [True, False, False])
    np.testing.assert_array_equal(run(tf.image.extract_jpeg_shape(JPG)), [12, 16, 3])
    full = run(tf.image.decode_jpeg(JPG, dct_method="INTEGER_ACCURATE"))
    crop = run(tf.image.decode_and_crop_jpeg(JPG, [4, 8, 8, 8]))
    np.testing.assert_array_equal(crop, full[4:12, 8:16])
    with pytest.raises(errors.InvalidArgumentError, match="Invalid JPEG data or crop window"):
        run(tf.image.decode_and_crop_jpeg(JPG, [10, 0, 3, 1]))
    with pytest.raises(errors.InvalidArgumentError):
        run(tf.image.decode_bmp(b"not a bmp"))


def test_rot90_of_unknown_k(graph):
    k = tf.placeholder(tf.int32, [])
    image = np.arange(6, dtype=np.float32).reshape(2, 3, 1)
    r = tf.image.rot90(image, k)
    assert r.shape.as_list() == [None, None, 1]
    for kv in range(-2, 6):
        np.testing.assert_array_equal(run(r, {k: kv}), np.rot90(image, kv))


def test_ssim_of_identical_images_is_one(graph):
    x = RNG.uniform(0, 1, (2, 12, 12, 3)).astype(np.float32)
    np.testing.assert_allclose(run(tf.image.ssim(x, x, 1.0, filter_size=5)), [1.0, 1.0], rtol=1e-6)
    np.testing.assert_allclose(run(tf.image.ssim_multiscale(x, x, 1.0, power_factors=(0.5, 0.5), filter_size=3)),
                               [1.0, 1.0], rtol=1e-5)
