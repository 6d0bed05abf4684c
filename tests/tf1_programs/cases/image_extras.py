"""tf.image extras: HSV conversions and hue / saturation / gamma adjustments,
YIQ / YUV, rot90, transpose, resize_image_with_pad, resize_with_crop_or_pad,
crop_and_resize (bilinear, nearest, extrapolation), the non-max-suppression
family, draw_bounding_boxes, total_variation, psnr, ssim, ssim_multiscale,
image_gradients, sobel_edges, extract_image_patches, decode_bmp, is_jpeg,
extract_jpeg_shape, decode_and_crop_jpeg: values, TF's gradients, static
shapes, op names and error classes.

Random draws differ from TensorFlow's (graphrt draws from numpy), so
random_hue, random_saturation and sample_distorted_bounding_box are compared
by invariants: the hue shift stays within max_delta and keeps value and
saturation; the saturation factor stays within its range and keeps hue and
value; the sampled box lies inside the image, covers enough of the given box
and has its area and aspect ratio in range, and begin/size/bboxes agree."""
import os
import struct

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "image",
                        "fixtures")


def err(fn):
    try:
        fn()
    except Exception as e:
        return type(e).__name__
    return "no error"


def run_err(sess, fn):
    try:
        sess.run(fn())
    except Exception as e:
        return type(e).__name__
    return "no error"


def bmp_bytes(np, pixels):
    """A 24-bit bottom-up BMP of uint8 RGB pixels [h, w, 3]."""
    h, w, _ = pixels.shape
    row = (w * 3 + 3) // 4 * 4
    body = b"".join(pixels[y, :, ::-1].tobytes() + b"\0" * (row - w * 3) for y in range(h - 1, -1, -1))
    header = struct.pack("<2sIHHI", b"BM", 54 + len(body), 0, 0, 54)
    info = struct.pack("<IiiHHIIiiII", 40, w, h, 1, 24, 0, len(body), 2835, 2835, 0, 0)
    return header + info + body


def run(tf, np):
    rng = np.random.RandomState(7)
    img = rng.uniform(0.02, 0.98, (2, 5, 6, 3)).astype(np.float32)
    # greys, ties between channels, black and white pixels
    img[0, 0, :5] = [[0.5, 0.5, 0.5], [0.2, 0.2, 0.7], [0.9, 0.9, 0.1], [0.0, 0.0, 0.0], [1.0, 0.3, 1.0]]
    img[1, 4, :3] = [[0.3, 0.8, 0.8], [1.0, 1.0, 1.0], [0.6, 0.1, 0.6]]
    u8 = (img * 255).astype(np.uint8)
    big = rng.uniform(0, 1, (2, 16, 18, 3)).astype(np.float32)
    big2 = np.clip(big + rng.normal(0, 0.1, big.shape), 0, 1).astype(np.float32)
    boxes = np.array([[0.1, 0.2, 0.8, 0.9], [0.5, 0.5, 1.2, 0.7], [-0.2, 0.3, 0.6, 0.3], [0.9, 0.8, 0.1, 0.2]],
                     dtype=np.float32)
    nms_boxes = np.array([[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, -0.1, 1, 0.9], [0, 10, 1, 11], [0, 10.1, 1, 11.1],
                          [0, 100, 1, 101], [1, 1, 0, 0], [5, 5, 5, 6]], dtype=np.float32)
    nms_scores = np.array([0.9, 0.75, 0.6, 0.95, 0.5, 0.3, 0.85, 0.99], dtype=np.float32)
    with open(os.path.join(FIXTURES, "test.jpg"), "rb") as f:
        jpeg = f.read()
    bmp_pixels = (rng.uniform(0, 255, (3, 5, 3))).astype(np.uint8)
    bmp = bmp_bytes(np, bmp_pixels)

    out = {}
    g = tf.Graph()
    with g.as_default():
        x = tf.constant(img)
        xu = tf.constant(u8)
        x3 = tf.constant(img[0])
        b1, b2 = tf.constant(big), tf.constant(big2)
        t = {
            "rgb_to_hsv": tf.image.rgb_to_hsv(x),
            "rgb_to_hsv_f64": tf.image.rgb_to_hsv(tf.constant(img.astype(np.float64))),
            "hsv_to_rgb": tf.image.hsv_to_rgb(x),
            "hsv_roundtrip": tf.image.hsv_to_rgb(tf.image.rgb_to_hsv(x)),
            "adjust_hue": [tf.image.adjust_hue(x, d) for d in (0.2, -0.45, 0.9, -1.0, 0.0, 0.5)],
            "adjust_hue_u8": tf.image.adjust_hue(xu, 0.3),
            "adjust_hue_3d": tf.image.adjust_hue(x3, tf.constant(-0.1)),
            "adjust_saturation": [tf.image.adjust_saturation(x, f) for f in (0.0, 0.5, 1.7, 10.0)],
            "adjust_saturation_u8": tf.image.adjust_saturation(xu, 1.5),
            "adjust_gamma": [tf.image.adjust_gamma(x, 0.5), tf.image.adjust_gamma(x, 2.0, gain=0.8),
                             tf.image.adjust_gamma(xu, 1.5), tf.image.adjust_gamma(x, tf.constant(1.3))],
            "yiq": tf.image.rgb_to_yiq(x), "yiq_back": tf.image.yiq_to_rgb(tf.image.rgb_to_yiq(x)),
            "yuv": tf.image.rgb_to_yuv(x3), "yuv_back": tf.image.yuv_to_rgb(x3),
            "rot90": [tf.image.rot90(x, k) for k in (-1, 0, 1, 2, 3, 5)],
            "rot90_3d": [tf.image.rot90(x3), tf.image.rot90(xu[0], tf.constant(2))],
            "transpose": [tf.image.transpose_image(x), tf.image.transpose(x3)],
            "with_pad": [tf.image.resize_image_with_pad(x, 8, 4), tf.image.resize_image_with_pad(x3, 3, 9),
                         tf.image.resize_image_with_pad(xu, 7, 7, method=tf.image.ResizeMethod.NEAREST_NEIGHBOR)],
            "crop_or_pad": [tf.image.resize_with_crop_or_pad(x, 3, 8),
                            tf.image.resize_image_with_crop_or_pad(x3, 7, 2)],
            "crop_and_resize": [
                tf.image.crop_and_resize(x, boxes, [0, 1, 0, 1], [3, 4]),
                tf.image.crop_and_resize(x, boxes, [1, 0, 1, 1], [4, 2], method="nearest", extrapolation_value=-1.0),
                tf.image.crop_and_resize(xu, boxes, [0, 0, 1, 1], [1, 1]),
                tf.image.crop_and_resize(x, boxes[:2], tf.constant([1, 0]), [1, 3], extrapolation_value=0.5),
            ],
            "draw_boxes": tf.image.draw_bounding_boxes(x, tf.constant(np.stack([boxes, boxes[::-1]]))),
            "draw_boxes_gray": tf.image.draw_bounding_boxes(x[..., :1], tf.constant(np.stack([boxes, boxes]))),
            "draw_boxes_colors": tf.image.draw_bounding_boxes(x, tf.constant(np.stack([boxes, boxes])),
                                                              colors=[[0.1, 0.2, 0.3, 1.0], [1.0, 0.0, 0.5, 1.0]]),
            "total_variation": [tf.image.total_variation(x), tf.image.total_variation(x3)],
            "psnr": [tf.image.psnr(b1, b2, 1.0), tf.image.psnr(tf.constant((big * 255).astype(np.uint8)),
                                                               tf.constant((big2 * 255).astype(np.uint8)), 255)],
            "ssim": [tf.image.ssim(b1, b2, 1.0), tf.image.ssim(b1, b2, 1.0, filter_size=5, filter_sigma=0.8),
                     tf.image.ssim(b1[0], b2[0], max_val=1.0, filter_size=3, k1=0.02)],
            "ssim_multiscale": tf.image.ssim_multiscale(b1, b2, 1.0, power_factors=(0.3, 0.3, 0.4), filter_size=3),
            "image_gradients": tf.image.image_gradients(x),
            "sobel": tf.image.sobel_edges(x),
            "patches": [
                tf.extract_image_patches(x, [1, 2, 3, 1], [1, 1, 2, 1], [1, 1, 1, 1], "VALID"),
                tf.image.extract_image_patches(x, ksizes=[1, 3, 2, 1], strides=[1, 2, 2, 1], rates=[1, 2, 1, 1],
                                               padding="SAME"),
                tf.image.extract_patches(xu, [1, 2, 2, 1], [1, 3, 3, 1], [1, 1, 1, 1], "SAME"),
            ],
            "nms": [tf.image.non_max_suppression(nms_boxes, nms_scores, 10),
                    tf.image.non_max_suppression(nms_boxes, nms_scores, 3, iou_threshold=0.3),
                    tf.image.non_max_suppression(nms_boxes, nms_scores, 10, iou_threshold=0.95, score_threshold=0.55),
                    tf.image.non_max_suppression(nms_boxes, nms_scores, tf.constant(0))],
            "nms_scores": list(tf.image.non_max_suppression_with_scores(nms_boxes, nms_scores, 6)),
            "soft_nms": list(tf.image.non_max_suppression_with_scores(nms_boxes, nms_scores, 8, score_threshold=0.2,
                                                                      soft_nms_sigma=0.5)),
            # boxes TF 2's tiled padded NMS treats as the greedy ops do (see graphrt/image/boxes.py)
            "nms_padded": list(tf.image.non_max_suppression_padded(nms_boxes[:6], nms_scores[:6], 7,
                                                                   pad_to_max_output_size=True)),
            "nms_padded_unpadded": list(tf.image.non_max_suppression_padded(
                tf.constant(nms_boxes[:6]), nms_scores[:6], 3, iou_threshold=0.4)),
            "nms_overlaps": tf.image.non_max_suppression_overlaps(
                tf.constant(rng.uniform(0, 1, (8, 8)).astype(np.float32)), nms_scores, 5, overlap_threshold=0.6),
            "combined_nms": list(tf.image.combined_non_max_suppression(
                tf.constant(np.stack([nms_boxes[:, None, :] / 10, nms_boxes[::-1, None, :] / 10])),
                tf.constant(np.stack([np.stack([nms_scores, nms_scores[::-1] * 0.9], 1),
                                      np.stack([nms_scores * 0.5, nms_scores], 1)])), 3, 5)),
            "decode_bmp": [tf.image.decode_bmp(tf.constant(bmp)), tf.io.decode_bmp(tf.constant(bmp), channels=3)],
            "decode_image_bmp": tf.image.decode_image(tf.constant(bmp)),
            "is_jpeg": [tf.image.is_jpeg(tf.constant(jpeg)), tf.io.is_jpeg(tf.constant(bmp))],
            "jpeg_shape": [tf.image.extract_jpeg_shape(tf.constant(jpeg)),
                           tf.io.extract_jpeg_shape(tf.constant(jpeg), output_type=tf.int64)],
            "crop_jpeg": tf.image.decode_and_crop_jpeg(tf.constant(jpeg), [2, 9, 4, 7], channels=3,
                                                       dct_method="INTEGER_ACCURATE"),
        }
        flat = {}
        for k, v in t.items():
            if isinstance(v, (list, tuple)):
                for i, vi in enumerate(v):
                    flat[f"{k}_{i}"] = vi
            else:
                flat[k] = v
        shapes = {k: v.shape.as_list() if v.shape.ndims is not None else None for k, v in flat.items()}
        dtypes = {k: v.dtype.name for k, v in flat.items()}

        # gradients
        xb = tf.constant(boxes)
        gx = tf.constant(img)
        ones = tf.constant(rng.uniform(0.5, 1.5, (4, 3, 4, 3)).astype(np.float32))
        cr = tf.image.crop_and_resize(gx, xb, [0, 1, 0, 1], [3, 4])
        crn = tf.image.crop_and_resize(gx, xb, [1, 1, 0, 0], [2, 1], method="nearest")
        cr1 = tf.image.crop_and_resize(gx, xb, [0, 1, 0, 1], [1, 1])
        hsv_in = tf.constant(np.clip(img + 0.01 * np.arange(3), 0, 1).astype(np.float32))
        pat_in = tf.constant(big[:, :7, :8])
        grads = {
            "crop_bilinear": tf.gradients(tf.reduce_sum(cr * ones), [gx, xb]),
            "crop_nearest": tf.gradients(tf.reduce_sum(crn * tf.constant(rng.uniform(0, 1, (4, 2, 1, 3)),
                                                                           tf.float32)), [gx, xb]),
            "crop_1x1": tf.gradients(tf.reduce_sum(cr1), [gx, xb]),
            "rgb_to_hsv": tf.gradients(tf.reduce_sum(tf.image.rgb_to_hsv(hsv_in) * [1.0, 2.0, 3.0]), hsv_in),
            "patches_valid": tf.gradients(tf.reduce_sum(tf.square(tf.extract_image_patches(
                pat_in, [1, 2, 3, 1], [1, 2, 1, 1], [1, 1, 2, 1], "VALID"))), pat_in),
            "patches_same": tf.gradients(tf.reduce_sum(tf.extract_image_patches(
                pat_in, [1, 3, 3, 1], [1, 2, 2, 1], [1, 1, 1, 1], "SAME") * 1.5), pat_in),
            "ssim": tf.gradients(tf.reduce_sum(tf.image.ssim(b1, b2, 1.0, filter_size=5)), b1),
            "sobel": tf.gradients(tf.reduce_sum(tf.square(tf.image.sobel_edges(gx))), gx),
            "gamma": tf.gradients(tf.reduce_sum(tf.image.adjust_gamma(gx, 1.7, 0.5)), gx),
            "total_variation": tf.gradients(tf.reduce_sum(tf.image.total_variation(gx)), gx),
            "psnr": tf.gradients(tf.reduce_sum(tf.image.psnr(b1, b2, 1.0)), b1),
            "yuv": tf.gradients(tf.reduce_sum(tf.image.rgb_to_yuv(gx) * [1.0, -2.0, 0.5]), gx),
            "rot90": tf.gradients(tf.reduce_sum(tf.image.rot90(gx, 1) * tf.range(6.0)[:, None, None]), gx),
            "with_pad": tf.gradients(tf.reduce_sum(tf.image.resize_image_with_pad(gx, 8, 4)), gx),
        }

        # random functions: invariants only
        seeds_img = tf.constant(np.clip(img[0], 0.1, 0.9))
        hues = tf.image.random_hue(seeds_img, 0.2, seed=3)
        hsv0, hsv1 = tf.image.rgb_to_hsv(seeds_img), tf.image.rgb_to_hsv(hues)
        sats = tf.image.random_saturation(seeds_img, 0.3, 0.6, seed=4)
        hsv2 = tf.image.rgb_to_hsv(sats)
        ref_box = np.array([[[0.3, 0.2, 0.7, 0.6]]], dtype=np.float32)
        sample = tf.image.sample_distorted_bounding_box([40, 60, 3], ref_box, seed=5, min_object_covered=0.5,
                                                        aspect_ratio_range=[0.5, 2.0], area_range=[0.1, 0.8])
        sample_whole = tf.image.sample_distorted_bounding_box(tf.constant([10, 12, 3], tf.int64),
                                                              tf.zeros([1, 0, 4]), seed2=1, area_range=[0.5, 1.0],
                                                              use_image_if_no_bounding_boxes=True)
        out["random_shapes"] = {"hue": hues.shape.as_list(), "sat": sats.shape.as_list(),
                                "sample": [s.shape.as_list() for s in sample],
                                "sample_dtypes": [s.dtype.name for s in sample + sample_whole]}

        with tf.Session() as sess:
            vals = sess.run(flat)
            gvals = sess.run(grads)
            inv = {"hue": [], "sat": [], "sample": [], "sample_whole": []}
            for _ in range(5):
                a, b, c = sess.run([hsv0, hsv1, hsv2])
                coloured = a[..., 1] > 0.01
                shift = np.mod(b[..., 0][coloured] - a[..., 0][coloured] + 0.5, 1.0) - 0.5
                inv["hue"].append(bool(np.all(np.abs(shift) <= 0.2 + 1e-4) and np.allclose(shift, shift[0], atol=1e-4)
                                       and np.allclose(a[..., 1:], b[..., 1:], atol=1e-4)))
                factor = c[..., 1][coloured] / a[..., 1][coloured]
                inv["sat"].append(bool(np.all((factor >= 0.3 - 1e-4) & (factor <= 0.6 + 1e-4))
                                       and np.allclose(factor, factor[0], atol=1e-4)
                                       and np.allclose(a[..., 2], c[..., 2], atol=1e-5)))
                begin, size, bbox = sess.run(sample)
                y, x0, h, w = begin[0], begin[1], size[0], size[1]
                ok = begin[2] == 0 and size[2] == -1 and y >= 0 and x0 >= 0 and y + h <= 40 and x0 + w <= 60
                ok = ok and 0.1 * 2400 - 1e-6 <= h * w <= 0.8 * 2400 + 1e-6 and 0.5 - 0.05 <= w / h <= 2.0 + 0.05
                ry0, rx0, ry1, rx1 = 12, 12, 28, 36  # the reference box in pixels
                inter = max(min(y + h, ry1) - max(y, ry0), 0) * max(min(x0 + w, rx1) - max(x0, rx0), 0)
                ok = ok and inter / ((ry1 - ry0) * (rx1 - rx0)) >= 0.5
                ok = ok and np.allclose(bbox[0, 0], [y / 40, x0 / 60, (y + h) / 40, (x0 + w) / 60], atol=1e-6)
                inv["sample"].append(bool(ok))
                begin, size, bbox = sess.run(sample_whole)
                inv["sample_whole"].append(bool(begin[0] + size[0] <= 10 and begin[1] + size[1] <= 12
                                                and size[0] * size[1] >= 60 and size[2] == -1))
            out["invariants"] = inv
            run_errors = {
                "crop_box_index": run_err(sess, lambda: tf.image.crop_and_resize(x, boxes[:1], [2], [2, 2])),
                "crop_size_zero": run_err(sess, lambda: tf.image.crop_and_resize(x, boxes[:1], [0],
                                                                                 tf.constant([0, 2]))),
                "nms_iou": run_err(sess, lambda: tf.image.non_max_suppression(nms_boxes, nms_scores, 3,
                                                                              tf.constant(1.5))),
                "hsv_channels": run_err(sess, lambda: tf.image.rgb_to_hsv(tf.placeholder_with_default(
                    img[..., :2], [None, None, None, None]))),
                "bad_bmp": run_err(sess, lambda: tf.image.decode_bmp(tf.constant(b"BMxx"))),
                "bad_jpeg_shape": run_err(sess, lambda: tf.image.extract_jpeg_shape(tf.constant(bmp))),
                "crop_jpeg_window": run_err(sess, lambda: tf.image.decode_and_crop_jpeg(tf.constant(jpeg),
                                                                                        [0, 0, 1000, 2])),
                "draw_depth": run_err(sess, lambda: tf.image.draw_bounding_boxes(x[..., :2], tf.zeros([2, 1, 4]))),
                "sample_no_boxes": run_err(sess, lambda: tf.image.sample_distorted_bounding_box(
                    [10, 10, 3], tf.zeros([1, 0, 4]))[0]),
            }
        out["values"] = vals
        out["grads"] = gvals
        out["shapes"] = shapes
        out["dtypes"] = dtypes
        out["run_errors"] = run_errors
        out["names"] = [t["rgb_to_hsv"].name, t["hsv_to_rgb"].name, t["nms"][0].name, t["crop_and_resize"][0].name,
                        t["patches"][0].name, t["draw_boxes"].name, t["decode_bmp"][0].name, t["is_jpeg"][0].name,
                        t["jpeg_shape"][0].name, t["crop_jpeg"].name, t["transpose"][0].name]
        out["no_grads"] = {
            "hsv_to_rgb": str(tf.gradients(tf.image.hsv_to_rgb(gx), gx)[0]),
            "adjust_hue": err(lambda: tf.gradients(tf.image.adjust_hue(gx, 0.1), gx)),
            "crop_u8_image": str(tf.gradients(tf.image.crop_and_resize(xu, xb, [0, 0, 0, 0], [2, 2]), [xu])[0]),
        }
        out["errors"] = {
            "rot90_rank2": err(lambda: tf.image.rot90(tf.zeros([3, 3]))),
            "rot90_rank5": err(lambda: tf.image.rot90(tf.zeros([1, 1, 3, 3, 1]))),
            "rot90_k_vector": err(lambda: tf.image.rot90(x, [1, 2])),
            "hsv_int": err(lambda: tf.image.rgb_to_hsv(xu)),
            "hsv_channels": err(lambda: tf.image.rgb_to_hsv(x[..., :2])),
            "random_hue_delta": err(lambda: tf.image.random_hue(x, 0.6)),
            "random_hue_negative": err(lambda: tf.image.random_hue(x, -0.1)),
            "random_saturation_order": err(lambda: tf.image.random_saturation(x, 0.5, 0.2)),
            "random_saturation_negative": err(lambda: tf.image.random_saturation(x, -0.5, 0.2)),
            "gamma_negative": err(lambda: tf.image.adjust_gamma(x, -1.0)),
            "with_pad_target": err(lambda: tf.image.resize_image_with_pad(x, 0, 4)),
            "with_pad_rank": err(lambda: tf.image.resize_image_with_pad(tf.zeros([3, 3]), 2, 2)),
            "crop_boxes_shape": err(lambda: tf.image.crop_and_resize(x, tf.zeros([2, 3]), [0, 0], [2, 2])),
            "crop_image_rank": err(lambda: tf.image.crop_and_resize(x3, boxes, [0, 0, 0, 0], [2, 2])),
            "nms_boxes_rank": err(lambda: tf.image.non_max_suppression(tf.zeros([4]), tf.zeros([4]), 2)),
            "patches_batch_ksize": err(lambda: tf.extract_image_patches(x, [2, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1],
                                                                        "VALID")),
            "patches_padding": err(lambda: tf.extract_image_patches(x, [1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1],
                                                                    "FULL")),
            "image_gradients_rank": err(lambda: tf.image.image_gradients(x3)),
            "total_variation_rank": err(lambda: tf.image.total_variation(tf.zeros([3, 3]))),
            "ssim_shapes": err(lambda: tf.image.ssim(b1, x, 1.0)),
            "draw_rank": err(lambda: tf.image.draw_bounding_boxes(x3, tf.zeros([1, 1, 4]))),
        }
    return out
