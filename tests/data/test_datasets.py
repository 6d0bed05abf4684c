"""tf.data behaviour beyond the TensorFlow fixtures: seeded shuffles, errors and their
classes, captures in functions, iterator state across runs and devices."""
import numpy as np
import pytest

import graphrt as tf


def drain(sess, element, feed=None, limit=1000):
    out = []
    for _ in range(limit):
        try:
            out.append(sess.run(element, feed))
        except tf.errors.OutOfRangeError:
            return out
    raise AssertionError("no end of sequence")


def elements(ds, feed=None):
    with tf.Session(graph=ds._graph) as sess:
        return drain(sess, ds.make_one_shot_iterator().get_next(), feed)


def test_seeded_shuffle_is_a_permutation_repeatable_and_reshuffled_each_epoch():
    g = tf.Graph()
    with g.as_default():
        ds = tf.data.Dataset.range(50).shuffle(20, seed=7).repeat(3)
        again = tf.data.Dataset.range(50).shuffle(20, seed=7).repeat(3)
        fixed = tf.data.Dataset.range(50).shuffle(20, seed=7, reshuffle_each_iteration=False).repeat(2)
    got = [int(v) for v in elements(ds)]
    epochs = [got[i * 50:(i + 1) * 50] for i in range(3)]
    for e in epochs:
        assert sorted(e) == list(range(50))
    assert epochs[0] != list(range(50))
    assert epochs[0] != epochs[1] != epochs[2]
    assert [int(v) for v in elements(again)] == got  # same seed, same sequence
    f = [int(v) for v in elements(fixed)]
    assert f[:50] == f[50:] and sorted(f[:50]) == list(range(50))


def test_shuffle_buffer_bounds_how_far_an_element_moves():
    g = tf.Graph()
    with g.as_default():
        ds = tf.data.Dataset.range(100).shuffle(5, seed=3)
    got = [int(v) for v in elements(ds)]
    assert sorted(got) == list(range(100))
    # an element is emitted only once it is in the buffer: at most 4 elements ahead
    assert all(v <= i + 4 for i, v in enumerate(got))


def test_graph_seed_makes_shuffle_repeatable():
    def build():
        g = tf.Graph()
        with g.as_default():
            tf.set_random_seed(11)
            ds = tf.data.Dataset.range(30).shuffle(30)
        return [int(v) for v in elements(ds)]
    assert build() == build()


def test_get_next_before_initializer_is_failed_precondition():
    g = tf.Graph()
    with g.as_default():
        it = tf.data.Dataset.range(3).make_initializable_iterator()
        x = it.get_next()
        with tf.Session() as sess:
            with pytest.raises(tf.errors.FailedPreconditionError, match="has not been initialized") as e:
                sess.run(x)
            assert e.value.node == "IteratorGetNext"
            sess.run(it.initializer)
            assert drain(sess, x) == [0, 1, 2]
            with pytest.raises(tf.errors.OutOfRangeError, match="End of sequence"):
                sess.run(x)


def test_batch_of_unequal_shapes_is_invalid_argument():
    g = tf.Graph()
    with g.as_default():
        ds = tf.data.Dataset.range(1, 4).map(lambda n: tf.range(n)).batch(2)
        x = ds.make_one_shot_iterator().get_next()
        assert x.shape.as_list() == [None, None]
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=r"Cannot batch tensors with different shapes in component 0. First element "
                                     r"had shape \[1\] and element 1 had shape \[2\]"):
                sess.run(x)


def test_padded_batch_to_a_smaller_shape_is_data_loss():  # TF's status for it
    g = tf.Graph()
    with g.as_default():
        ds = tf.data.Dataset.range(1, 5).map(lambda n: tf.range(n)).padded_batch(2, padded_shapes=[3])
        x = ds.make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            assert sess.run(x).tolist() == [[0, 0, 0], [0, 1, 0]]
            with pytest.raises(tf.errors.DataLossError, match="pad to a smaller size"):
                sess.run(x)


def test_one_shot_iterator_cannot_capture_a_placeholder():
    g = tf.Graph()
    with g.as_default():
        n = tf.placeholder(tf.int64, [])
        with pytest.raises(ValueError, match=r"Cannot capture a placeholder \(name:Placeholder, "
                                             r"type:Placeholder\) by value"):
            tf.data.Dataset.range(n).make_one_shot_iterator()


def test_make_initializer_checks_the_structure():
    g = tf.Graph()
    with g.as_default():
        it = tf.data.Iterator.from_structure(tf.int64, tf.TensorShape([]))
        with pytest.raises(TypeError, match="Expected output types"):
            it.make_initializer(tf.data.Dataset.from_tensors(1.0))
        with pytest.raises(TypeError, match="Expected output shapes compatible"):
            it.make_initializer(tf.data.Dataset.range(4).batch(2))
        with pytest.raises(ValueError, match="does not have an initializer"):
            it.initializer  # noqa: B018 - the property raises


def test_map_captures_outer_tensors_and_variables():
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(10, dtype=tf.int64, name="v")
        k = tf.placeholder(tf.int64, [], name="k")
        ds = tf.data.Dataset.range(3).map(lambda i: i * k + v).filter(lambda x: x > k)
        it = ds.make_initializable_iterator()
        x = it.get_next()
        with tf.Session() as sess:
            sess.run(v.initializer)
            sess.run(it.initializer, {k: 5})
            assert drain(sess, x) == [10, 15, 20]
            sess.run(tf.assign(v, 0))
            sess.run(it.initializer, {k: 2})  # captured values are taken when the iterator is initialized
            assert drain(sess, x) == [4]


def test_map_function_is_a_graph_function_in_the_op():
    g = tf.Graph()
    with g.as_default():
        ds = tf.data.Dataset.range(4).map(lambda i: tf.square(i) + 1)
        op = ds._variant_tensor.op
        fdef = op.get_attr("f")
        assert op.type == "MapDataset"
        assert [n.op for n in fdef.node].count("_Arg") == 1
        assert "Square" in [n.op for n in fdef.node]
        assert fdef.input_types == [tf.int64] and fdef.output_types == [tf.int64]
        # the function travels with the GraphDef (JSON) and comes back equal
        gd = type(g.as_graph_def()).from_json(g.as_graph_def().to_json())
        assert gd.node_by_name()[op.name].attrs["f"] == fdef


def test_filter_must_return_a_scalar_bool():
    g = tf.Graph()
    with g.as_default():
        with pytest.raises(ValueError, match="must return a `tf.bool` scalar"):
            tf.data.Dataset.range(3).filter(lambda i: i)


def test_from_generator_errors_are_invalid_argument():
    def gen():
        yield [1, 2]
        yield [1, 2, 3]

    g = tf.Graph()
    with g.as_default():
        ds = tf.data.Dataset.from_generator(gen, tf.int32, tf.TensorShape([2]))
        x = ds.make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            assert sess.run(x).tolist() == [1, 2]
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"yielded an element of shape \(3,\)"):
                sess.run(x)


def test_from_generator_restarts_on_each_initialization_with_args():
    calls = []

    def gen(n):
        calls.append(int(n))
        for i in range(int(n)):
            yield i * 1.5

    g = tf.Graph()
    with g.as_default():
        ds = tf.data.Dataset.from_generator(gen, tf.float32, tf.TensorShape([]), args=(3,)).repeat(2)
        it = ds.make_initializable_iterator()
        x = it.get_next()
        with tf.Session() as sess:
            sess.run(it.initializer)
            assert drain(sess, x) == [0.0, 1.5, 3.0] * 2
            sess.run(it.initializer)
            assert drain(sess, x)[:2] == [0.0, 1.5]
    assert calls == [3, 3, 3, 3]


def test_text_line_dataset_missing_file_is_not_found(tmp_path):
    g = tf.Graph()
    with g.as_default():
        x = tf.data.TextLineDataset(str(tmp_path / "missing.txt")).make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            with pytest.raises(tf.errors.NotFoundError, match="missing.txt; No such file or directory"):
                sess.run(x)


def test_cache_runs_its_input_once():
    seen = []

    def note(v):
        seen.append(int(v))
        return v

    g = tf.Graph()
    with g.as_default():
        ds = tf.data.Dataset.range(3).map(lambda i: tf.py_func(note, [i], tf.int64)).cache().repeat(3)
    assert [int(v) for v in elements(ds)] == [0, 1, 2] * 3
    assert seen == [0, 1, 2]


def test_cache_to_a_file_is_read_by_later_sessions(tmp_path):
    seen = []

    def note(v):
        seen.append(int(v))
        return v

    prefix = str(tmp_path / "words")
    for _ in range(2):  # a second program building the same pipeline reads the file
        g = tf.Graph()
        with g.as_default():
            ds = tf.data.Dataset.range(3).map(lambda i: tf.py_func(note, [i], tf.int64))
            words = np.array([b"a", b"b\x00", b""], dtype=object)  # (a trailing NUL survives)
            ds = tf.data.Dataset.zip((ds, tf.data.Dataset.from_tensor_slices(words)))
            ds = ds.cache(prefix).repeat(2)
        got = [(int(a), b) for a, b in elements(ds)]
        assert got == [(0, b"a"), (1, b"b\x00"), (2, b"")] * 2
    assert seen == [0, 1, 2]
    assert (tmp_path / "words.graphrt-cache.npz").exists()


def test_iterators_are_per_session_device_state():
    g = tf.Graph()
    with g.as_default():
        x = tf.data.Dataset.range(4).make_one_shot_iterator().get_next()
    with tf.Session(graph=g) as a, tf.Session(graph=g) as b:
        assert [a.run(x), a.run(x), b.run(x), a.run(x)] == [0, 1, 0, 2]


def test_string_handle_of_another_device_is_invalid_argument():
    g = tf.Graph()
    with g.as_default():
        with tf.device("/cpu:1"):
            it = tf.data.Dataset.range(3).make_one_shot_iterator()
            h = it.string_handle()
        handle = tf.placeholder(tf.string, [])
        with tf.device("/cpu:0"):
            other = tf.data.Iterator.from_string_handle(handle, tf.int64, tf.TensorShape([]))
            x = other.get_next()
        with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
            hv = sess.run(h)
            assert b"CPU:1" in hv
            with pytest.raises(tf.errors.InvalidArgumentError, match="lives on .*CPU:1"):
                sess.run(x, {handle: hv})


def test_dataset_on_one_device_feeds_ops_on_another():
    """The iterator (and every dataset op) sits on /cpu:1; its elements cross to /cpu:0
    through _Send/_Recv as any tensor; the partition graphs show it."""
    g = tf.Graph()
    with g.as_default():
        with tf.device("/cpu:1"):
            ds = tf.data.Dataset.from_tensor_slices(np.arange(12, dtype=np.float32).reshape(6, 2))
            ds = ds.map(lambda r: r * 2.0).batch(2)
            it = ds.make_initializable_iterator()
            batch = it.get_next()
        with tf.device("/cpu:0"):
            total = tf.reduce_sum(batch, axis=1)
    md = tf.RunMetadata()
    with tf.Session(graph=g, config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        sess.run(it.initializer)
        first = sess.run(total, options=tf.RunOptions(output_partition_graphs=True), run_metadata=md)
        rest = drain(sess, total)
    np.testing.assert_allclose(first, [2.0, 10.0])
    np.testing.assert_allclose(np.concatenate(rest), [18.0, 26.0, 34.0, 42.0])
    by_device = {}
    for pg in md.partition_graphs:
        for n in pg.node:
            by_device.setdefault(n.device, []).append(n.op)
    cpu1 = next(ops for d, ops in by_device.items() if d.endswith("CPU:1"))
    cpu0 = next(ops for d, ops in by_device.items() if d.endswith("CPU:0"))
    assert "IteratorGetNext" in cpu1 and "IteratorV2" in cpu1 and "_Send" in cpu1
    assert "Sum" in cpu0 and "_Recv" in cpu0 and "IteratorGetNext" not in cpu0


def test_iterator_colocates_with_its_dataset():
    """A dataset pinned to /cpu:1 pulls its unplaced iterator there (variant and resource edges)."""
    g = tf.Graph()
    with g.as_default():
        with tf.device("/cpu:1"):
            ds = tf.data.Dataset.range(3)
        it = ds.make_initializable_iterator()
        x = it.get_next() * 2
    md = tf.RunMetadata()
    with tf.Session(graph=g, config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        sess.run(it.initializer)
        assert sess.run(x, options=tf.RunOptions(output_partition_graphs=True), run_metadata=md) == 0
    devices = {n.op: n.device for pg in md.partition_graphs for n in pg.node}
    assert devices["IteratorGetNext"].endswith("CPU:1")
    assert devices["IteratorV2"].endswith("CPU:1")


def test_dataset_on_a_remote_worker():
    """The dataset's functions travel to the worker inside the partition GraphDef (JSON);
    the iterator lives there and its batches cross to the other task."""
    from graphrt.distributed.cluster import create_local_cluster
    workers, _ = create_local_cluster(num_workers=2)
    try:
        g = tf.Graph()
        with g.as_default():
            with tf.device("/job:worker/task:1"):
                k = tf.placeholder(tf.float32, [])
                ds = tf.data.Dataset.from_tensor_slices(np.arange(6, dtype=np.float32)).map(lambda v: v * k)
                it = ds.batch(4).make_initializable_iterator()
                batch = it.get_next()
            with tf.device("/job:worker/task:0"):
                total = tf.reduce_sum(batch)
        with tf.Session(workers[0].target, graph=g) as sess:
            sess.run(it.initializer, {k: 2.0})
            assert [sess.run(total), sess.run(total)] == [12.0, 18.0]
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run(total)
    finally:
        for w in workers:
            w.stop()


def test_datasets_stay_on_the_cpu_when_an_accelerator_exists():
    """As in TF (dataset ops have CPU kernels only): unplaced pipelines run on the CPU and
    their elements are copied to the simulated accelerator that consumes them."""
    g = tf.Graph()
    with g.as_default():
        ds = tf.data.Dataset.from_tensor_slices(np.arange(4.0)).map(lambda v: v * 2).batch(2)
        y = ds.make_one_shot_iterator().get_next() + 1
    md = tf.RunMetadata()
    with tf.Session(graph=g, config=tf.ConfigProto(device_count={"CPU": 1, "SIM": 1})) as sess:
        first = sess.run(y, options=tf.RunOptions(output_partition_graphs=True), run_metadata=md)
        second = sess.run(y)
    assert first.tolist() == [1.0, 3.0] and second.tolist() == [5.0, 7.0]
    devices = {n.op: n.device for pg in md.partition_graphs for n in pg.node}
    assert devices["IteratorGetNext"].endswith("CPU:0") and devices["OneShotIterator"].endswith("CPU:0")
    assert devices["AddV2"].endswith("SIM:0")


def test_prefetch_makes_elements_ahead_in_order():
    made = []

    def note(v):
        made.append(int(v))
        return v

    g = tf.Graph()
    with g.as_default():
        ds = tf.data.Dataset.range(10).map(lambda i: tf.py_func(note, [i], tf.int64)).prefetch(3)
        x = ds.make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            assert sess.run(x) == 0
            for _ in range(200):  # the producer fills the buffer (3) plus the one it holds
                if len(made) >= 4:
                    break
                import time
                time.sleep(0.01)
            assert 4 <= len(made) <= 5
            assert drain(sess, x) == list(range(1, 10))
    assert made == list(range(10))


def test_prefetch_passes_errors_on_and_stops_its_thread_when_abandoned():
    import threading
    g = tf.Graph()
    with g.as_default():
        bad = tf.data.Dataset.range(1, 4).map(lambda n: tf.range(n)).batch(2).prefetch(1)
        x = bad.make_one_shot_iterator().get_next()
        endless = tf.data.Dataset.range(5).repeat().prefetch(2).make_initializable_iterator()
        y = endless.get_next()
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot batch tensors"):
                sess.run(x)
            for _ in range(3):
                sess.run(endless.initializer)  # the previous iteration's thread is told to stop
                assert sess.run(y) == 0
    for _ in range(100):
        if not [t for t in threading.enumerate() if t.name.startswith("graphrt-prefetch")]:
            break
        import time
        time.sleep(0.05)
    assert not [t for t in threading.enumerate() if t.name.startswith("graphrt-prefetch")]


def test_experimental_fused_transformations_through_apply():
    g = tf.Graph()
    with g.as_default():
        ds = tf.data.Dataset.range(5).apply(tf.data.experimental.map_and_batch(lambda i: i * 10, 2,
                                                                               drop_remainder=True))
        sr = tf.data.Dataset.range(4).apply(tf.data.experimental.shuffle_and_repeat(4, count=2, seed=5))
        with pytest.raises(TypeError, match="must return a `tf.data.Dataset`"):
            ds.apply(lambda d: 3)
    assert [v.tolist() for v in elements(ds)] == [[0, 10], [20, 30]]
    got = [int(v) for v in elements(sr)]
    assert sorted(got[:4]) == sorted(got[4:]) == [0, 1, 2, 3]


def test_functions_capture_from_every_enclosing_graph_whatever_the_operand_order():
    g = tf.Graph()
    with g.as_default():
        k = tf.constant(100, tf.int64, name="k")
        ds = tf.data.Dataset.range(1, 3).flat_map(
            lambda n: tf.data.Dataset.range(n).map(lambda i: k * n + 10 * i))  # outer, middle, inner
    assert [int(v) for v in elements(ds)] == [100, 200, 210]


def test_concurrent_get_next_hands_out_each_element_once():
    import threading
    g = tf.Graph()
    with g.as_default():
        x = tf.data.Dataset.range(300).map(lambda i: i * 3).prefetch(4).make_one_shot_iterator().get_next()
    got, errors = [], []
    with tf.Session(graph=g) as sess:
        def pull():
            try:
                got.extend(drain(sess, x))
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)
        threads = [threading.Thread(target=pull) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    assert not errors and not any(t.is_alive() for t in threads)
    assert sorted(got) == [3 * i for i in range(300)]


def test_namedtuple_elements_and_compat_v1_helpers():
    import collections
    Pair = collections.namedtuple("Pair", "a b")
    g = tf.Graph()
    with g.as_default():
        ds = tf.data.Dataset.from_tensor_slices(Pair(np.arange(3), np.arange(3) * 1.5))
        ds = ds.map(lambda p: Pair(p.b, p.a + 1))  # a namedtuple is one argument, as in TF
        assert tf.compat.v1.data.get_output_classes(ds) == Pair(tf.Tensor, tf.Tensor)
        assert tf.compat.v1.data.get_output_types(ds) == Pair(tf.float64, tf.int64)
        nxt = tf.compat.v1.data.make_one_shot_iterator(ds).get_next()
        assert isinstance(nxt, Pair)
        with tf.Session() as sess:
            got = drain(sess, nxt)
    assert [(float(p.a), int(p.b)) for p in got] == [(0.0, 1), (1.5, 2), (3.0, 3)]
    assert isinstance(got[0], Pair)


def test_contrib_data_is_tf_data():
    """TF 1.3 programs spell it tf.contrib.data (Dataset, Iterator, TextLineDataset)."""
    assert tf.contrib.data.Dataset is tf.data.Dataset and tf.contrib.data.Iterator is tf.data.Iterator
    with tf.Graph().as_default():
        x = tf.contrib.data.Dataset.from_tensor_slices([1, 2]).make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            assert drain(sess, x) == [1, 2]


def test_a_map_function_waiting_on_a_queue_ends_with_the_step():
    """The step's deadline reaches the function running inside get_next: the dequeue
    in the map function is cancelled and the run fails with DeadlineExceededError."""
    g = tf.Graph()
    with g.as_default():
        q = tf.FIFOQueue(4, tf.int64, shapes=[[]])
        x = tf.data.Dataset.range(3).map(lambda i: i + q.dequeue()).make_one_shot_iterator().get_next()
        fill = q.enqueue(100)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.DeadlineExceededError):
                sess.run(x, options=tf.RunOptions(timeout_in_ms=200))
            sess.run(fill)
            assert sess.run(q.size()) == 1  # the cancelled dequeue took nothing


def test_sample_from_datasets_draws_by_weight_repeatably_and_skips_exhausted_inputs():
    D, E = tf.data.Dataset, tf.data.experimental
    g = tf.Graph()
    with g.as_default():
        zeros_ones = [D.from_tensors(np.int64(0)).repeat(), D.from_tensors(np.int64(1)).repeat()]
        weighted = E.sample_from_datasets(zeros_ones, [0.2, 0.8], seed=3).take(900)
        same_seed = E.sample_from_datasets(zeros_ones, [0.2, 0.8], seed=3).take(900)
        uniform = E.sample_from_datasets(zeros_ones, seed=5).take(900)
        finite = E.sample_from_datasets([D.range(3), D.range(10, 13)], seed=1)
        ended = E.sample_from_datasets([D.range(3), D.range(10, 13)], seed=1, stop_on_empty_dataset=True)
    drawn = np.array([int(v) for v in elements(weighted)])
    assert 0.73 < drawn.mean() < 0.87  # 900 draws: 0.8 within 5 standard deviations
    assert [int(v) for v in elements(same_seed)] == drawn.tolist()
    assert 0.42 < np.mean([int(v) for v in elements(uniform)]) < 0.58
    got = [int(v) for v in elements(finite)]
    assert sorted(got) == [0, 1, 2, 10, 11, 12]  # every element of both, each input in its order
    assert [v for v in got if v < 10] == [0, 1, 2] and [v for v in got if v >= 10] == [10, 11, 12]
    shorter = [int(v) for v in elements(ended)]
    assert len(shorter) < 6 and (shorter[-1] in (2, 12))


def test_sample_from_datasets_checks_its_arguments():
    D, E = tf.data.Dataset, tf.data.experimental
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="should not be empty"):
            E.sample_from_datasets([])
        with pytest.raises(ValueError, match=r"compatible with `\[len\(datasets\)\]`"):
            E.sample_from_datasets([D.range(2), D.range(3)], [0.5, 0.25, 0.25])
        with pytest.raises(TypeError, match="must have compatible element specs"):
            E.sample_from_datasets([D.range(2), D.from_tensors(1.0)])
        with pytest.raises(NotImplementedError, match="not as a dataset of weights"):
            E.sample_from_datasets([D.range(2), D.range(3)], D.from_tensors([0.5, 0.5]).repeat())
        with pytest.raises(TypeError, match="must be scalar `tf.int64`"):
            E.choose_from_datasets([D.range(2)], D.range(2).map(lambda x: tf.cast(x, tf.int32)))


def test_group_by_window_and_bucketing_check_their_arguments():
    D, E = tf.data.Dataset, tf.data.experimental
    with tf.Graph().as_default():
        ds = D.range(6)
        with pytest.raises(ValueError, match="Either the `window_size` argument or the `window_size_func`"):
            ds.apply(E.group_by_window(lambda x: x % 2, lambda k, w: w.batch(2)))
        with pytest.raises(ValueError, match="Either the `window_size` argument"):
            ds.apply(E.group_by_window(lambda x: x % 2, lambda k, w: w.batch(2), 2, lambda k: k))
        with pytest.raises(ValueError, match="`key_func` must return a single tf.int64 scalar tensor"):
            ds.apply(E.group_by_window(lambda x: tf.cast(x % 2, tf.int32), lambda k, w: w.batch(2), 2))
        with pytest.raises(TypeError, match="must return a `tf.data.Dataset`"):
            ds.apply(E.group_by_window(lambda x: x % 2, lambda k, w: k, 2))
        with pytest.raises(ValueError, match=r"len\(bucket_batch_sizes\) must equal len\(bucket_boundaries\) \+ 1"):
            E.bucket_by_sequence_length(lambda s: tf.size(s), [3, 6], [2, 2])


def test_a_window_is_a_dataset_in_functions_and_from_get_next():
    g = tf.Graph()
    with g.as_default():
        windows = tf.data.Dataset.range(5).window(2)
        assert isinstance(windows.output_types, type(tf.variant)) and windows.output_types == tf.variant
        seen = []
        sums = windows.map(lambda w: seen.append(w) or w.reduce(np.int64(0), lambda s, x: s + x))
        assert isinstance(seen[0], tf.data.Dataset) and seen[0].output_shapes.as_list() == []
        window = windows.make_one_shot_iterator().get_next()
        assert isinstance(window, tf.data.Dataset)
    assert [int(v) for v in elements(sums)] == [1, 5, 4]
