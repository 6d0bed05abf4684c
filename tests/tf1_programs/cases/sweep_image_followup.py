"""Follow-up sweep of tf.image: 16-bit PNGs of every channel count (encode, decode,
gray from 16-bit colour, decode_image to float32 keeping 16 bits, 8-bit GIF widened
to uint16), resize checks (nearest with align_corners and half_pixel_centers,
resize_area without half_pixel_centers, float sizes, an unknown method when the size
is unchanged), the static size of preserve_aspect_ratio, build-time ValueErrors of
crop_to/pad_to_bounding_box, transpose of an unknown rank, and the names and static
shapes TF gives convert_image_dtype, rgb_to_grayscale, decode_image and
resize_image_with_crop_or_pad."""


def err(fn):
    try:
        fn()
    except Exception as e:
        return type(e).__name__
    return "no error"


def info(t):
    return [t.op.type, t.name, str(t.shape), t.dtype.name]


def run_err(tf, sess, t, feed=None):
    try:
        return sess.run(t, feed_dict=feed)
    except tf.errors.OpError as e:
        return type(e).__name__


def run(tf, np):
    out = {}
    rng = np.random.RandomState(0)
    img = rng.uniform(0, 1, (1, 5, 7, 2)).astype(np.float32)
    img3 = rng.uniform(0, 1, (4, 6, 3)).astype(np.float32)

    with tf.Graph().as_default(), tf.Session() as sess:
        for c in (1, 2, 3, 4):
            a = rng.randint(0, 65536, size=(3, 5, c)).astype(np.uint16)
            enc = tf.image.encode_png(a)
            got = sess.run({"u16": tf.image.decode_png(enc, dtype=tf.uint16),
                            "u8": tf.image.decode_png(enc, channels=3),
                            "gray": tf.image.decode_png(enc, channels=1, dtype=tf.uint16),
                            "alpha": tf.image.decode_png(enc, channels=4, dtype=tf.uint16),
                            "f32": tf.image.decode_image(enc, dtype=tf.float32)})
            out[f"png16_{c}"] = {"same": bool((got["u16"] == a).all()), "u8": got["u8"], "gray": got["gray"],
                                 "alpha": got["alpha"], "f32": got["f32"]}
            out[f"png16_{c}_info"] = info(enc.op.inputs[0])
        gif = tf.image.encode_png(np.arange(24, dtype=np.uint8).reshape(2, 4, 3) * 10)
        out["png8_as_u16"] = sess.run(tf.image.decode_image(gif, dtype=tf.uint16))

    with tf.Graph().as_default(), tf.Session() as sess:
        nn = tf.image.resize_nearest_neighbor(img, [3, 4], align_corners=True, half_pixel_centers=True)
        out["nearest_ac_hp"] = run_err(tf, sess, nn)
        out["area_hp"] = err(lambda: tf.image.resize_area(img, [3, 4], half_pixel_centers=True))
        area = tf.image.resize_area(img, [3, 4], align_corners=True)
        out["area_attrs"] = sorted(area.op.node_def.attr.keys())
        out["area"] = sess.run(area)
        out["float_size"] = err(lambda: tf.image.resize_images(img, (2.0, 3.0)))
        out["bad_method"] = err(lambda: tf.image.resize_images(img, (2, 3), method=7))
        same = tf.image.resize_images(img, (5, 7), method="lanczos3")
        out["bad_method_same_size"] = info(same)
        for size in [(10, 10), (3, 4)]:
            r = tf.image.resize_images(img3, size, preserve_aspect_ratio=True)
            out[f"aspect_{size}"] = info(r) + [sess.run(r)]
        p = tf.placeholder(tf.float32, [None, None, 3])
        r = tf.image.resize_images(p, (10, 10), preserve_aspect_ratio=True)
        out["aspect_placeholder"] = info(r)

    with tf.Graph().as_default():
        for args in [(-1, 0, 2, 2), (0, 0, 0, 3), (0, 0, 5, 6), (3, 4, 2, 2)]:
            out[f"crop_{args}"] = err(lambda: tf.image.crop_to_bounding_box(img3, *args))
        for args in [(-1, 0, 6, 6), (0, 0, 3, 6), (2, 0, 5, 6)]:
            out[f"pad_{args}"] = err(lambda: tf.image.pad_to_bounding_box(img3, *args))
        out["crop_2d"] = err(lambda: tf.image.crop_to_bounding_box(tf.zeros((4, 6)), 0, 0, 2, 2))
        out["crop_or_pad_target0"] = err(lambda: tf.image.resize_image_with_crop_or_pad(img3, 0, 3))

    with tf.Graph().as_default(), tf.Session() as sess:
        p3 = tf.placeholder(tf.float32, [None, None, 3])
        pu = tf.placeholder(tf.float32)
        for name, t in [("crop_or_pad_ph", tf.image.resize_image_with_crop_or_pad(p3, 2, 3)),
                        ("crop_or_pad_3d", tf.image.resize_image_with_crop_or_pad(img3, 6, 9)),
                        ("crop_or_pad_4d", tf.image.resize_image_with_crop_or_pad(img, 2, 3)),
                        ("crop_ph", tf.image.crop_to_bounding_box(p3, 1, 1, 2, 2)),
                        ("pad_ph", tf.image.pad_to_bounding_box(p3, 1, 1, 6, 8))]:
            out[name] = info(t) + [sess.run(t, {p3: img3})]
        tr = tf.image.transpose_image(pu)
        out["transpose_unknown"] = [tr.op.type in ("Identity", "Merge"), str(tr.shape), sess.run(tr, {pu: img3})]

    with tf.Graph().as_default(), tf.Session() as sess:
        f = np.array([-0.5, 0.0, 0.25, 0.999, 1.5], np.float32)
        for dt in (tf.float16, tf.float32):
            for target in (tf.int16, tf.uint8, tf.int8):
                t = tf.image.convert_image_dtype(tf.constant(f, dt), target, saturate=True)
                out[f"convert_{dt.name}_{target.name}"] = info(t) + [sess.run(t)]
        t = tf.image.convert_image_dtype(tf.constant([1, 200], tf.int32), tf.uint8, saturate=True)
        out["convert_i32_u8"] = info(t) + [sess.run(t)]
        t = tf.image.convert_image_dtype(tf.constant([1, 200], tf.uint8), tf.float32)
        out["convert_u8_f32"] = info(t)
        g = tf.image.rgb_to_grayscale(tf.constant((img3 * 255).astype(np.uint8)))
        out["gray"] = info(g) + [sess.run(g)]
        d = tf.image.decode_image(tf.image.encode_png(np.zeros((2, 3, 3), np.uint8)), expand_animations=False)
        d3 = tf.image.decode_image(tf.image.encode_png(np.zeros((2, 3, 3), np.uint8)), channels=3,
                                   expand_animations=False)
        d_any = tf.image.decode_image(tf.image.encode_png(np.zeros((2, 3, 3), np.uint8)))
        out["decode_image"] = [info(d), info(d3), info(d_any), sess.run(d).shape]
    return out
