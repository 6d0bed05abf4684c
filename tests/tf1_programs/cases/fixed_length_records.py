"""Binary files of fixed-length records, read the TF1 CIFAR-10 way (FixedLengthRecordReader,
decode_raw, strided_slice, reshape and transpose, tf.train.batch) and with
tf.data.FixedLengthRecordDataset: headers, footers, hop_bytes, GZIP and ZLIB files, a last record
cut short, IdentityReader, and the errors of a body that is not whole records."""
import gzip
import os
import tempfile
import zlib

LABEL, HEIGHT, WIDTH, DEPTH = 1, 2, 2, 3
RECORD = LABEL + HEIGHT * WIDTH * DEPTH


def _plain(value, np):
    """Binary strings as their bytes (uint8), file paths as base names: outputs both sides can compare."""
    if isinstance(value, (list, tuple)):
        return [_plain(v, np) for v in value]
    if isinstance(value, bytes):
        text = value.decode("latin-1")
        return os.path.basename(text) if text.startswith(tempfile.gettempdir()) else np.frombuffer(value, np.uint8)
    if isinstance(value, np.ndarray) and value.dtype == object:
        return [_plain(v, np) for v in value.ravel()]
    return value


def _drain(sess, fetches, limit=50):
    import numpy as np
    out = []
    for _ in range(limit):
        try:
            out.append(_plain(sess.run(fetches), np))
        except Exception as e:  # noqa: BLE001 - the end (or the failure) is part of the output
            out.append(type(e).__name__)
            break
    return out


def _queue_read(tf, files, limit=20, **reader_args):
    g = tf.Graph()
    with g.as_default():
        queue = tf.train.string_input_producer(files, num_epochs=1, shuffle=False)
        reader = tf.FixedLengthRecordReader(**reader_args)
        key, value = reader.read(queue)
        produced = reader.num_records_produced()
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            records = _drain(sess, [key, value], limit)
            count = sess.run(produced)
            coord.request_stop()
            coord.join(threads)
    return records, count


def _dataset(tf, files, **kwargs):
    g = tf.Graph()
    with g.as_default():
        ds = tf.data.FixedLengthRecordDataset(files, **kwargs)
        nxt = tf.data.make_one_shot_iterator(ds).get_next()
        with tf.Session() as sess:
            return [str(nxt.shape), nxt.dtype.name] + _drain(sess, nxt)


def run(tf, np):
    out = {}
    rng = np.random.RandomState(5)
    tmp = tempfile.mkdtemp()
    images = rng.randint(0, 256, size=(7, RECORD)).astype(np.uint8)
    images[:, 0] = np.arange(7) % 10  # labels

    def write(name, data, compression=None):
        path = os.path.join(tmp, name)
        data = gzip.compress(data) if compression == "GZIP" else zlib.compress(data) if compression == "ZLIB" \
            else data
        with open(path, "wb") as f:
            f.write(data)
        return path

    batch1 = write("data_batch_1.bin", images[:4].tobytes())
    batch2 = write("data_batch_2.bin", images[4:].tobytes())

    # the CIFAR-10 input pipeline of TF1's tutorial
    g = tf.Graph()
    with g.as_default():
        queue = tf.train.string_input_producer([batch1, batch2], num_epochs=1, shuffle=False)
        reader = tf.FixedLengthRecordReader(record_bytes=RECORD)
        key, value = reader.read(queue)
        raw = tf.decode_raw(value, tf.uint8)
        label = tf.cast(tf.strided_slice(raw, [0], [LABEL]), tf.int32)
        depth_major = tf.reshape(tf.strided_slice(raw, [LABEL], [RECORD]), [DEPTH, HEIGHT, WIDTH])
        image = tf.cast(tf.transpose(depth_major, [1, 2, 0]), tf.float32)
        label.set_shape([1])  # as the tutorial does: the slice of an unknown length has none
        labels, pictures = tf.train.batch([label, image], batch_size=3, num_threads=1, capacity=10,
                                          allow_smaller_final_batch=True)
        out["cifar_shapes"] = [str(t.shape) for t in (raw, label, image, labels, pictures)]
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            out["cifar_batches"] = _drain(sess, [labels, pictures])
            coord.request_stop()
            coord.join(threads)

    framed = write("framed.bin", b"HDR" + bytes(range(10)) + b"FT")
    short = write("short.bin", b"HDR" + bytes(range(100, 107)) + b"FT")
    gz = write("framed.gz", b"HDR" + bytes(range(200, 206)) + b"FT", "GZIP")
    zl = write("framed.zlib", b"HDR" + bytes(range(50, 56)) + b"FT", "ZLIB")
    out["reader_header_footer"] = _queue_read(tf, [framed, short], record_bytes=3, header_bytes=3, footer_bytes=2)
    out["reader_hop"] = _queue_read(tf, [framed], record_bytes=4, header_bytes=3, footer_bytes=2, hop_bytes=3)
    out["reader_gzip"] = _queue_read(tf, [gz], record_bytes=2, header_bytes=3, footer_bytes=2, encoding="GZIP")
    out["reader_zlib"] = _queue_read(tf, [zl], record_bytes=4, header_bytes=3, footer_bytes=2, encoding="ZLIB")
    out["reader_whole_file"] = _queue_read(tf, [framed], record_bytes=5)

    g = tf.Graph()
    with g.as_default():
        queue = tf.FIFOQueue(5, tf.string)
        fill = queue.enqueue_many([["first", "second"]])
        close = queue.close()
        key, value = tf.IdentityReader().read_up_to(queue, 3)
        with tf.Session() as sess:
            sess.run(fill)
            sess.run(close)
            out["identity"] = _drain(sess, [key, value])

    out["dataset_cifar"] = _dataset(tf, [batch1, batch2], record_bytes=RECORD)
    g = tf.Graph()
    with g.as_default():
        def parse(record):
            raw = tf.decode_raw(record, tf.uint8)
            return tf.cast(raw[0], tf.int64), tf.reshape(raw[1:], [DEPTH, HEIGHT, WIDTH])

        ds = tf.data.FixedLengthRecordDataset([batch1, batch2], RECORD).map(parse).batch(4)
        nxt = tf.data.make_one_shot_iterator(ds).get_next()
        out["dataset_parsed_shapes"] = [str(t.shape) for t in nxt]
        with tf.Session() as sess:
            out["dataset_parsed"] = _drain(sess, nxt)
    out["dataset_framed"] = _dataset(tf, [gz], record_bytes=2, header_bytes=3, footer_bytes=2,
                                     compression_type="GZIP")
    out["dataset_zlib"] = _dataset(tf, zl, record_bytes=3, header_bytes=3, footer_bytes=2, compression_type="ZLIB",
                                   buffer_size=1)
    out["dataset_not_whole"] = _dataset(tf, [batch1, framed], record_bytes=RECORD)
    out["dataset_gzip_not_whole"] = _dataset(tf, [gz], record_bytes=4, header_bytes=3, footer_bytes=2,
                                             compression_type="GZIP")
    out["dataset_missing"] = _dataset(tf, [os.path.join(tmp, "missing.bin")], record_bytes=3)
    for f in os.listdir(tmp):
        os.unlink(os.path.join(tmp, f))
    os.rmdir(tmp)
    return out
