"""tf.image.extract_glimpse (TF1): windows at offsets centred or not, normalized or in pixels,
over several window sizes, inside and across the image's edges. Pixels outside the image are
random noise in both TensorFlow and graphrt, so they are reported as -1 (the image's pixels are
integers; the noise almost never is)."""


def run(tf, np):
    out = {}
    image = (np.arange(10)[:, None] * 100 + np.arange(12)[None, :]).astype(np.float32)
    offsets = np.array([[-1.0, -1.0], [-0.55, 0.3], [0.0, 0.0], [0.45, -0.7], [1.0, 1.0], [2.5, 3.7], [7.2, 9.9],
                        [-0.4, 4.6]], np.float32)
    g = tf.Graph()
    with g.as_default():
        images = tf.constant(np.stack([image + 1000 * i for i in range(len(offsets))])[..., None])
        for centered in (True, False):
            for normalized in (True, False):
                for size in ([1, 1], [3, 2], [4, 5]):
                    key = f"c{int(centered)}_n{int(normalized)}_{size[0]}x{size[1]}"
                    out[key] = tf.image.extract_glimpse(images, size, offsets, centered=centered,
                                                        normalized=normalized, uniform_noise=(size != [3, 2]))
        out["static_shape"] = str(out["c1_n1_3x2"].shape)
        with tf.Session() as sess:
            for key in [k for k in out if k != "static_shape"]:
                value = sess.run(out[key])
                out[key] = np.where(value == np.round(value), value, -1.0).astype(np.float32)
    return out
