"""tf.image against TensorFlow 2.21 (fixtures/images.npz, made by fixtures/make_fixtures.py
from test.jpg, test.png and test.gif): decodes, resizes with every method and
align_corners both ways, resize gradients, and the other image functions."""
import os

import numpy as np
import pytest

import graphrt as tf

HERE = os.path.join(os.path.dirname(__file__), "fixtures")
FIX = np.load(os.path.join(HERE, "images.npz"))
JPG = open(os.path.join(HERE, "test.jpg"), "rb").read()
PNG = open(os.path.join(HERE, "test.png"), "rb").read()
GIF = open(os.path.join(HERE, "test.gif"), "rb").read()
IMG = FIX["jpeg_channels3"]  # TF's decode: the input of every other fixture
METHODS = {"bilinear": tf.image.ResizeMethod.BILINEAR, "nearest": tf.image.ResizeMethod.NEAREST_NEIGHBOR,
           "bicubic": tf.image.ResizeMethod.BICUBIC, "area": tf.image.ResizeMethod.AREA}


def run(fetch):
    with tf.Session() as sess:
        return sess.run(fetch)


@pytest.mark.parametrize("channels", [0, 1, 3])
def test_decode_jpeg_is_bit_exact_with_tf_accurate_dct(graph, channels):
    got = run(tf.image.decode_jpeg(JPG, channels=channels, dct_method="INTEGER_ACCURATE"))
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, FIX[f"jpeg_accurate_channels{channels}"])
    # TF's default DCT is its fast one, which Pillow does not offer: a few levels apart
    default = run(tf.image.decode_jpeg(JPG, channels=channels))
    assert np.abs(default.astype(int) - FIX[f"jpeg_channels{channels}"]).max() <= 4


def test_decode_jpeg_ratio_and_static_shape(graph):
    image = tf.image.decode_jpeg(JPG, ratio=2, dct_method="INTEGER_ACCURATE")
    assert image.shape.as_list() == [None, None, None]
    assert tf.image.decode_jpeg(JPG, channels=3).shape.as_list() == [None, None, 3]
    np.testing.assert_array_equal(run(image), FIX["jpeg_accurate_ratio2"])


@pytest.mark.parametrize("channels", [0, 1, 3, 4])
def test_decode_png_matches_tf(graph, channels):
    np.testing.assert_array_equal(run(tf.image.decode_png(PNG, channels=channels)), FIX[f"png_channels{channels}"])


def test_decode_image_and_gif(graph):
    np.testing.assert_allclose(run(tf.image.decode_image(PNG, dtype=tf.float32)), FIX["decode_image_png_float"],
                               atol=1e-7)
    jpeg = run(tf.image.decode_image(JPG))
    assert jpeg.shape == FIX["decode_image_jpeg"].shape
    gif = run(tf.image.decode_gif(GIF))
    assert gif.shape == (2, 12, 16, 3)
    np.testing.assert_array_equal(gif, FIX["gif"])
    np.testing.assert_array_equal(run(tf.image.decode_image(GIF)), FIX["gif"])


def test_decode_bad_data_is_invalid_argument(graph):
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid JPEG data or crop window, data size 7"):
        run(tf.image.decode_jpeg(b"notjpeg"))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Unknown image file format"):
        run(tf.image.decode_image(b"notjpeg"))


def test_encode_round_trips(graph):
    rgba = FIX["rgba"]
    np.testing.assert_array_equal(run(tf.image.decode_png(tf.image.encode_png(rgba))), rgba)
    back = run(tf.image.decode_jpeg(tf.image.encode_jpeg(IMG, quality=100, chroma_downsampling=False)))
    assert np.abs(back.astype(int) - IMG).mean() < 2.0


@pytest.mark.parametrize("size", [(7, 5), (20, 27)])
@pytest.mark.parametrize("method", sorted(METHODS))
@pytest.mark.parametrize("align_corners", [False, True])
def test_resize_images_matches_tf(graph, size, method, align_corners):
    out = tf.image.resize_images(IMG, size, method=METHODS[method], align_corners=align_corners)
    assert out.shape.as_list() == [size[0], size[1], 3]
    got = run(out)
    want = FIX[f"resize_{method}_{size[0]}x{size[1]}_ac{int(align_corners)}"]
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-3 if method != "nearest" else 0)


@pytest.mark.parametrize("size", [(7, 5), (20, 27)])
def test_half_pixel_centers_match_tf(graph, size):
    batch = IMG[None].astype(np.float32)
    for name, fn in (("bilinear", tf.image.resize_bilinear), ("nearest", tf.image.resize_nearest_neighbor),
                     ("bicubic", tf.image.resize_bicubic)):
        got = run(fn(batch, size, half_pixel_centers=True))[0]
        np.testing.assert_allclose(got, FIX[f"resize_{name}_{size[0]}x{size[1]}_hp"], atol=1e-3)


@pytest.mark.parametrize("size", [(7, 5), (20, 27)])
@pytest.mark.parametrize("method", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_resize_gradients_match_tf(graph, size, method, align_corners):
    fn = {"bilinear": tf.image.resize_bilinear, "nearest": tf.image.resize_nearest_neighbor,
          "bicubic": tf.image.resize_bicubic}[method]
    x = tf.constant(IMG[None, :, :, :2].astype(np.float32) / 255.0)
    y = fn(x, size, align_corners=align_corners)
    grad = tf.gradients(y * FIX[f"grad_upstream_{size[0]}x{size[1]}"], x)[0]
    np.testing.assert_allclose(run(grad)[0], FIX[f"grad_{method}_{size[0]}x{size[1]}_ac{int(align_corners)}"],
                               atol=1e-5)


def test_resize_same_size_is_the_input_and_aspect_ratio_is_kept(graph):
    image = tf.constant(IMG)
    same = tf.image.resize_images(image, [12, 16])
    assert same.dtype == tf.uint8 and not [op for op in graph.get_operations() if op.type.startswith("Resize")]
    np.testing.assert_array_equal(run(same), IMG)
    kept = tf.image.resize_images(image, [6, 100], preserve_aspect_ratio=True)
    assert run(kept).shape == (6, 8, 3)


def test_conversions_and_adjustments_match_tf(graph):
    img = tf.constant(IMG)
    f = tf.constant(IMG.astype(np.float32) / 255.0)
    got = run({"convert_u8_f32": tf.image.convert_image_dtype(img, tf.float32),
               "convert_f32_u8": tf.image.convert_image_dtype(f * 1.2 - 0.1, tf.uint8, saturate=True),
               "convert_u8_i32": tf.image.convert_image_dtype(img, tf.int32),
               "standardized": tf.image.per_image_standardization(img),
               "grayscale": tf.image.rgb_to_grayscale(img),
               "grayscale_f": tf.image.rgb_to_grayscale(f),
               "brightness": tf.image.adjust_brightness(img, 0.2),
               "contrast": tf.image.adjust_contrast(img, 1.7),
               "contrast_f": tf.image.adjust_contrast(f, 0.5),
               "central_crop": tf.image.central_crop(img, 0.6),
               "crop_or_pad_small": tf.image.resize_image_with_crop_or_pad(img, 7, 20),
               "crop_or_pad_big": tf.image.resize_image_with_crop_or_pad(img, 15, 9),
               "flip_lr": tf.image.flip_left_right(img),
               "flip_ud": tf.image.flip_up_down(img)})
    for key, value in got.items():
        want = FIX[key]
        assert value.dtype == want.dtype and value.shape == want.shape, key
        if want.dtype.kind == "f":
            np.testing.assert_allclose(value, want, atol=2e-5, err_msg=key)
        else:
            assert np.abs(value.astype(np.int64) - want).max() <= 1, key  # float rounding at a .5 boundary


def test_random_flips_and_crop(graph):
    img = tf.constant(IMG)
    flipped = tf.image.random_flip_left_right(img, seed=1)
    batch = tf.image.random_flip_up_down(tf.stack([img] * 8), seed=2)
    crop = tf.image.random_crop(img, [5, 6, 3], seed=3)
    with tf.Session() as sess:
        seen = set()
        for _ in range(20):
            out = sess.run(flipped)
            seen.add("same" if np.array_equal(out, IMG) else "flipped")
            assert np.array_equal(out, IMG) or np.array_equal(out, IMG[:, ::-1])
        assert seen == {"same", "flipped"}
        b = sess.run(batch)
        kinds = [np.array_equal(x, IMG) for x in b]
        assert all(k or np.array_equal(x, IMG[::-1]) for k, x in zip(kinds, b))
        c = sess.run(crop)
    assert c.shape == (5, 6, 3)
    windows = [IMG[i:i + 5, j:j + 6] for i in range(8) for j in range(11)]
    assert any(np.array_equal(c, w) for w in windows)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Need value.shape >= size"):
        run(tf.image.random_crop(img, [20, 6, 3]))


def test_codecs_run_on_the_cpu_and_resize_on_the_accelerator(graph):
    with tf.device("/device:SIM:0"):
        image = tf.image.decode_jpeg(JPG, channels=3, name="decode")
        small = tf.image.resize_bilinear(tf.expand_dims(tf.cast(image, tf.float32), 0), [4, 4], name="small")
    config = tf.ConfigProto(device_count={"CPU": 1, "SIM": 1})
    with tf.Session(config=config) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"Cannot assign a device for operation 'decode'.*no supported kernel for SIM"):
            sess.run(small)
    config = tf.ConfigProto(device_count={"CPU": 1, "SIM": 1}, allow_soft_placement=True)
    with tf.Session(config=config) as sess:
        got = sess.run(small)
        placement = sess.plan_for(small).placement
    assert "CPU" in placement["decode"] and "SIM" in placement["small"]
    want = run(tf.image.resize_bilinear(tf.constant(IMG[None].astype(np.float32)), [4, 4]))
    np.testing.assert_allclose(got, want, atol=5)  # TF's default DCT fed the fixture; ours is the accurate one
