"""The TF1 image-dataset program shape (slice_input_producer over file names, read_file,
decode_jpeg, resize_images, batch with 4 threads, start_queue_runners without a
coordinator, a small conv net trained a few steps) runs as written."""
import numpy as np

import graphrt as tf


def write_images(tmp_path, n=12):
    """JPEGs whose flat grey level encodes their label, so pairing can be checked after batching."""
    paths, labels = [], []
    with tf.Graph().as_default(), tf.Session() as sess:
        pixels = tf.placeholder(tf.uint8, [None, None, 3])
        encoded = tf.image.encode_jpeg(pixels, quality=100)
        for i in range(n):
            label = i % 3
            h, w = 10 + i, 14 + 2 * i  # every file has its own size: resize_images makes them uniform
            data = sess.run(encoded, {pixels: np.full((h, w, 3), 40 + 80 * label, np.uint8)})
            path = tmp_path / f"img_{i}.jpg"
            path.write_bytes(data)
            paths.append(str(path))
            labels.append(label)
    return paths, labels


def test_image_dataset_program(tmp_path):
    paths, labels = write_images(tmp_path)
    with tf.Graph().as_default():
        imagepaths = tf.convert_to_tensor(paths, dtype=tf.string)
        label_t = tf.convert_to_tensor(labels, dtype=tf.int32)
        image, label = tf.train.slice_input_producer([imagepaths, label_t], shuffle=True)
        image = tf.read_file(image)
        image = tf.image.decode_jpeg(image, channels=3)
        image = tf.image.resize_images(image, [8, 8])
        image = image * 1.0 / 127.5 - 1.0
        X, Y = tf.train.batch([image, label], batch_size=4, capacity=4 * 8, num_threads=4)
        assert X.shape.as_list() == [4, 8, 8, 3]

        conv = tf.layers.conv2d(X, 4, 3, activation=tf.nn.relu)
        logits = tf.layers.dense(tf.layers.flatten(conv), 3)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=Y, logits=logits))
        train_op = tf.train.AdamOptimizer(0.01).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            threads = tf.train.start_queue_runners()  # the default session, no coordinator: as the program does
            assert len(threads) == 5  # 4 batch threads + the producer's
            losses = []
            for _ in range(6):
                xb, yb, l, _ = sess.run([X, Y, loss, train_op], options=tf.RunOptions(timeout_in_ms=20000))
                grey = (xb.mean(axis=(1, 2, 3)) + 1.0) * 127.5
                np.testing.assert_allclose(grey, 40 + 80 * yb, atol=3)  # each image kept its label
                losses.append(l)
            assert np.all(np.isfinite(losses))
        # closing the session ended the runner threads' pending enqueues
        for t in threads:
            t.join(10)
            assert not t.is_alive()
