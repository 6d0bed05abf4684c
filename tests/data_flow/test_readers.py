"""File ops and readers: read_file/write_file/matching_files, WholeFileReader and
TextLineReader fed by string_input_producer, host-only placement."""
import pytest

import graphrt as tf


@pytest.fixture
def files(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"header\nalpha\nbeta\n")
    (tmp_path / "b.txt").write_bytes(b"header\ngamma\r\ndelta")
    return [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]


def run_pipeline(fetch, n=None):
    out = []
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        try:
            while n is None or len(out) < n:
                out.append(sess.run(fetch, options=tf.RunOptions(timeout_in_ms=20000)))
        except tf.errors.OutOfRangeError:
            pass
        finally:
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
    return out


def test_read_write_and_match_files(graph, tmp_path):
    path = str(tmp_path / "sub" / "out.bin")
    write = tf.write_file(path, tf.constant(b"\x00bytes\xff"))
    read = tf.read_file(path)
    matched = tf.train.match_filenames_once(str(tmp_path / "sub" / "*.bin"))
    with tf.Session() as sess:
        sess.run(write)
        assert sess.run(read) == b"\x00bytes\xff"
        sess.run(tf.local_variables_initializer())
        assert [m.decode() for m in sess.run(matched)] == [path]
        with pytest.raises(tf.errors.NotFoundError, match="No such file or directory"):
            sess.run(tf.read_file(str(tmp_path / "missing")))


def test_text_line_reader_keys_values_and_header_skip(graph, files):
    q = tf.train.string_input_producer(files, shuffle=False, num_epochs=1)
    key, value = tf.TextLineReader(skip_header_lines=1).read(q)
    got = run_pipeline([key, value])
    assert [(k.decode(), v) for k, v in got] == [
        (f"{files[0]}:2", b"alpha"), (f"{files[0]}:3", b"beta"), (f"{files[1]}:2", b"gamma"),
        (f"{files[1]}:3", b"delta")]


def test_read_up_to_stops_at_the_end_of_each_file_as_tensorflow(graph, files):
    """TF's ReaderBase returns a batch at the end of the work unit that gave it records: read_up_to
    never mixes two files, and the last batch of each may be short."""
    q = tf.train.string_input_producer(files, shuffle=False, num_epochs=1)
    reader = tf.TextLineReader()
    keys, values = reader.read_up_to(q, 4)
    produced = reader.num_records_produced()
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        first = sess.run(values, options=tf.RunOptions(timeout_in_ms=20000))
        second = sess.run(values, options=tf.RunOptions(timeout_in_ms=20000))
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(values, options=tf.RunOptions(timeout_in_ms=20000))
        assert sess.run(produced) == 6
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=10)
    assert list(first) == [b"header", b"alpha", b"beta"]
    assert list(second) == [b"header", b"gamma", b"delta"]


def test_whole_file_reader(graph, files):
    q = tf.train.string_input_producer(files, shuffle=False, num_epochs=1)
    key, value = tf.WholeFileReader().read(q)
    got = run_pipeline([key, value])
    assert [(k.decode(), v) for k, v in got] == [(f, open(f, "rb").read()) for f in files]


def test_reader_on_an_empty_open_queue_ends_at_the_deadline(graph):
    q = tf.FIFOQueue(2, [tf.string], shapes=[[]])
    key, _ = tf.WholeFileReader().read(q)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(key, options=tf.RunOptions(timeout_in_ms=100))


def test_missing_file_is_not_found_naming_it(graph, tmp_path):
    q = tf.FIFOQueue(2, [tf.string], shapes=[[]])
    enq = q.enqueue(str(tmp_path / "nope.txt"))
    _, value = tf.TextLineReader().read(q)
    with tf.Session() as sess:
        sess.run(enq)
        with pytest.raises(tf.errors.NotFoundError, match="nope.txt"):
            sess.run(value)


def test_file_ops_are_host_only(graph, tmp_path):
    path = str(tmp_path / "x")
    with open(path, "wb") as f:
        f.write(b"x")
    with tf.device("/device:SIM:0"):
        read = tf.read_file(path, name="pinned_read")
    config = tf.ConfigProto(device_count={"CPU": 1, "SIM": 1})
    with tf.Session(config=config) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"Cannot assign a device for operation 'pinned_read'.*no supported kernel for SIM"):
            sess.run(read)
    config = tf.ConfigProto(device_count={"CPU": 1, "SIM": 1}, allow_soft_placement=True)
    with tf.Session(config=config) as sess:
        assert sess.run(read) == b"x"
        assert "CPU" in sess.plan_for(read).placement["pinned_read"]


def test_a_file_is_finished_when_a_read_finds_it_empty_as_tensorflow(graph, files):
    """num_work_units_completed counts a text file once a read runs past its last line; a whole
    file (one record) is finished with that record."""
    q = tf.FIFOQueue(4, tf.string)
    lines, whole = tf.TextLineReader(), tf.WholeFileReader()
    with tf.Session() as sess:
        sess.run(q.enqueue_many([files + files]))
        for expected in (0, 0, 0, 1):  # three lines of a.txt, then b.txt's first: a.txt is done
            sess.run(lines.read(q))
            assert sess.run(lines.num_work_units_completed()) == expected
        sess.run(whole.read(q))
        assert sess.run(whole.num_work_units_completed()) == 1


def test_fixed_length_record_reader_checks_its_attributes_and_compressed_files(graph, tmp_path):
    path = tmp_path / "bad.gz"
    path.write_bytes(b"not gzip at all")
    q = tf.FIFOQueue(2, tf.string)
    bad_size = tf.FixedLengthRecordReader(record_bytes=0).read(q)
    corrupt = tf.FixedLengthRecordReader(record_bytes=2, encoding="GZIP").read(q)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="record_bytes must be positive"):
            sess.run(bad_size)
        sess.run(q.enqueue(str(path)))
        with pytest.raises(tf.errors.DataLossError, match=r"bad.gz: GZIP data is corrupt"):
            sess.run(corrupt)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Unsupported encoding 'LZ4'"):
        with tf.Session() as sess:
            sess.run(tf.FixedLengthRecordReader(record_bytes=2, encoding="LZ4").read(q))


def test_fixed_length_record_dataset_checks_sizes(graph, tmp_path):
    path = tmp_path / "six.bin"
    path.write_bytes(bytes(range(6)))
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"`record_bytes` must be > 0"):
            sess.run(tf.data.make_one_shot_iterator(tf.data.FixedLengthRecordDataset(str(path), 0)).get_next())
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"`header_bytes` must be >= 0"):
            sess.run(tf.data.make_one_shot_iterator(
                tf.data.FixedLengthRecordDataset(str(path), 2, header_bytes=-1)).get_next())
        halves = tf.data.make_one_shot_iterator(tf.data.FixedLengthRecordDataset(str(path), 3)).get_next()
        assert [sess.run(halves), sess.run(halves)] == [b"\x00\x01\x02", b"\x03\x04\x05"]
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(halves)
    with pytest.raises(ValueError, match="num_parallel_reads"):
        tf.data.FixedLengthRecordDataset(str(path), 3, num_parallel_reads=4)
