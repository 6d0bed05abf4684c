"""tf.image.extract_glimpse (TF1): windows at offsets centred or not, normalized or in pixels,
over several window sizes, inside and across the image's edges. Pixels outside the image are
random noise in both TensorFlow and graphrt, so they are reported as -1: each glimpse is taken
twice, of the images and of the images + 0.5, and a pixel is the image's where the two differ by
exactly 0.5 (two noise draws almost never do)."""


def run(tf, np):
    out = {}
    image = (np.arange(10)[:, None] * 100 + np.arange(12)[None, :]).astype(np.float32)
    offsets = np.array([[-1.0, -1.0], [-0.55, 0.3], [0.0, 0.0], [0.45, -0.7], [1.0, 1.0], [2.5, 3.7], [7.2, 9.9],
                        [-0.4, 4.6]], np.float32)
    g = tf.Graph()
    with g.as_default():
        images = tf.constant(np.stack([image + 1000 * i for i in range(len(offsets))])[..., None])
        shifted = images + 0.5
        for centered in (True, False):
            for normalized in (True, False):
                for size in ([1, 1], [3, 2], [4, 5]):
                    key = f"c{int(centered)}_n{int(normalized)}_{size[0]}x{size[1]}"
                    out[key] = [tf.image.extract_glimpse(im, size, offsets, centered=centered, normalized=normalized,
                                                         uniform_noise=(size != [3, 2])) for im in (images, shifted)]
        out["static_shape"] = str(out["c1_n1_3x2"][0].shape)
        with tf.Session() as sess:
            for key in [k for k in out if k != "static_shape"]:
                plain, moved = sess.run(out[key])
                out[key] = np.where(moved - plain == 0.5, plain, -1.0).astype(np.float32)
    return out
