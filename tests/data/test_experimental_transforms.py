"""tf.data.experimental's ignore_errors, take_while, unique, cardinality, assert_cardinality,
dense_to_sparse_batch, CsvDataset and make_csv_dataset beyond the TensorFlow fixture
(cases/experimental_more.py): error classes and messages, the nodes they name, edge cases."""
import gzip
import os

import numpy as np
import pytest

import graphrt as tf
from graphrt.data import resumable_datasets

D, E = tf.data.Dataset, tf.data.experimental


def run_all(ds, limit=100):
    with tf.Session(graph=ds._graph) as sess:
        x = ds.make_one_shot_iterator().get_next()
        out = []
        for _ in range(limit):
            try:
                out.append(sess.run(x))
            except tf.errors.OutOfRangeError:
                return out
        raise AssertionError("no end of sequence")


def failure(ds):
    """The error that ends `ds` after its elements."""
    with tf.Session(graph=ds._graph) as sess:
        x = ds.make_one_shot_iterator().get_next()
        with pytest.raises(tf.errors.OpError) as e:
            for _ in range(100):
                sess.run(x)
    return e.value


def write(tmp_path, name, text, opener=open):
    path = os.path.join(str(tmp_path), name)
    with opener(path, "wt") as f:
        f.write(text)
    return path


def test_ignore_errors_logs_each_dropped_error_when_asked(monkeypatch):
    logged = []
    monkeypatch.setattr(resumable_datasets.logging, "warning", lambda msg, *args: logged.append(msg % args))
    with tf.Graph().as_default():
        ds = D.from_tensor_slices(np.array([1., 0., 2., 0.], np.float32)).map(
            lambda v: tf.debugging.check_numerics(1. / v, "inf!"))
        quiet = ds.apply(E.ignore_errors())
        loud = ds.apply(E.ignore_errors(log_warning=True))
    assert run_all(quiet) == [1.0, 0.5] and logged == []
    assert run_all(loud) == [1.0, 0.5]
    assert len(logged) == 2 and all("inf!" in m for m in logged)
    assert loud._variant_tensor.op.type == "IgnoreErrorsDataset"
    assert loud._variant_tensor.op.get_attr("log_warning") is True


def test_ignore_errors_after_an_unknown_dataset_ends_at_its_first_error():
    # an interleave cannot resume after an error in graphrt: what follows it is lost, not repeated
    with tf.Graph().as_default():
        inner = D.from_tensor_slices(np.array([1., 0., 2.], np.float32)).map(
            lambda v: tf.debugging.check_numerics(1. / v, "x"))
        ds = D.range(2).interleave(lambda _: inner, cycle_length=1).apply(E.ignore_errors())
    assert run_all(ds) == [1.0]


def test_assert_cardinality_errors_are_failed_precondition_naming_the_node():
    with tf.Graph().as_default():
        more = D.range(3).apply(E.assert_cardinality(2))
        fewer = D.range(1).apply(E.assert_cardinality(E.INFINITE_CARDINALITY))
    e = failure(more)
    assert isinstance(e, tf.errors.FailedPreconditionError)
    assert e.message.startswith("Input dataset was expected to contain 2 elements but contained at least 3 elements.")
    assert e.node == more._variant_tensor.op.name
    e = failure(fewer)
    assert "expected to contain an infinite number of elements but contained only 1 element." in e.message


def test_cardinality_needs_a_dataset_and_reads_fed_values():
    with pytest.raises(TypeError, match="Expected a `tf.data.Dataset`"):
        E.cardinality([1, 2])
    with tf.Graph().as_default():
        n = tf.placeholder(tf.int64, [])
        c = E.cardinality(D.range(n).batch(4))
        assert c.dtype == tf.int64 and c.shape.as_list() == []
        with tf.Session() as sess:
            assert sess.run(c, {n: 10}) == 3
            assert sess.run(c, {n: 0}) == 0


def test_take_while_predicate_must_be_a_bool_scalar():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="must return a `tf.bool` scalar tensor but its return type is"):
            D.range(3).apply(E.take_while(lambda v: tf.stack([v > 0, v > 1])))
        limit = tf.constant(2, tf.int64)
        ds = D.range(10).apply(E.take_while(lambda v: v < limit))  # a captured tensor
    assert run_all(ds) == [0, 1]


def test_unique_of_several_components_fails_when_made():
    with tf.Graph().as_default():
        ds = D.from_tensors((1, 2)).apply(E.unique())
    e = failure(ds)
    assert isinstance(e, tf.errors.InvalidArgumentError)
    assert "UniqueDataset only supports inputs with a single component." in e.message


def test_dense_to_sparse_batch_structure_and_initializable_iterator():
    with tf.Graph().as_default():
        ds = D.range(4).map(lambda v: tf.fill([v], v)).apply(E.dense_to_sparse_batch(3, [5]))
        assert repr(ds.element_spec) == "SparseTensorSpec(TensorShape([None, 5]), tf.int64)"
        assert ds.output_classes is tf.SparseTensor and ds.output_shapes.as_list() == [None, 5]
        it = ds.make_initializable_iterator()
        sp = it.get_next()
        assert isinstance(sp, tf.SparseTensor) and sp.shape.as_list() == [None, 5]
        assert sp.indices.shape.as_list() == [None, 2]
        with tf.Session() as sess:
            sess.run(it.initializer)
            first = sess.run(sp)
            np.testing.assert_array_equal(first.indices, [[1, 0], [2, 0], [2, 1]])
            np.testing.assert_array_equal(first.values, [1, 2, 2])
            np.testing.assert_array_equal(first.dense_shape, [3, 5])
            second = sess.run(sp)
            np.testing.assert_array_equal(second.dense_shape, [1, 5])
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run(sp)


def test_dense_to_sparse_batch_larger_element_is_data_loss():
    with tf.Graph().as_default():
        ds = D.from_tensors(tf.zeros([2, 4])).apply(E.dense_to_sparse_batch(2, [2, 3]))
    e = failure(ds)
    assert isinstance(e, tf.errors.DataLossError)
    assert "Input element had shape ([2,4]) that is larger than the row shape ([2,3])." in e.message


def test_csv_reads_gzip_and_reports_a_missing_file(tmp_path):
    path = write(tmp_path, "a.csv.gz", 'x,1\n"y\nz",2\n', gzip.open)
    with tf.Graph().as_default():
        ds = E.CsvDataset(path, [tf.string, tf.int32], compression_type="GZIP")
        missing = E.CsvDataset(os.path.join(str(tmp_path), "nope.csv"), [tf.int32])
    assert run_all(ds) == [(b"x", 1), (b"y\nz", 2)]
    e = failure(missing)
    assert isinstance(e, tf.errors.NotFoundError) and "nope.csv; No such file or directory" in e.message


def test_csv_record_defaults_are_checked_when_built(tmp_path):
    path = write(tmp_path, "a.csv", "1\n")
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Shape of a default must be a length-0 or length-1 vector"):
            E.CsvDataset(path, [tf.constant(["a", "b"])])
        with pytest.raises(TypeError, match="bool"):
            E.CsvDataset(path, [tf.bool])
        ds = E.CsvDataset(path, [tf.int32], select_cols=[-1])
    e = failure(ds)
    assert isinstance(e, tf.errors.InvalidArgumentError) and "select_cols should be non-negative" in e.message


def test_csv_error_messages_name_the_field_and_go_on_with_the_next_record(tmp_path):
    path = write(tmp_path, "a.csv", "1,2\n1,2.5\n,3\n4,5\n")
    with tf.Graph().as_default():
        strict = E.CsvDataset(path, [tf.int64, tf.int64]).skip(1)
        tolerant = E.CsvDataset(path, [tf.int64, tf.int64]).apply(E.ignore_errors())
    e = failure(strict)
    assert "Field 1 in record is not a valid int64: 2.5" in e.message
    assert e.node == "CSVDatasetV2"
    assert run_all(tolerant) == [(1, 2), (4, 5)]


def test_make_csv_dataset_infers_types_as_tensorflow(tmp_path):
    path = write(tmp_path, "a.csv", "i,big,f,wide,nan,empty\n1,1,1.5,1e40,nan,\n2,3000000000,2,3,1,\n")
    with tf.Graph().as_default():
        ds = E.make_csv_dataset(path, batch_size=2, shuffle=False, num_epochs=1)
        types = {k: t.name for k, t in ds.output_types.items()}
    assert types == {"i": "int32", "big": "int64", "f": "float32", "wide": "float64", "nan": "string",
                     "empty": "string"}
    (batch,) = run_all(ds)
    np.testing.assert_array_equal(batch["big"], [1, 3000000000])
    assert list(batch["nan"]) == [b"nan", b"1"] and list(batch["empty"]) == [b"", b""]


def test_make_csv_dataset_shuffles_with_a_seed_repeatably(tmp_path):
    path = write(tmp_path, "a.csv", "n\n" + "".join(f"{i}\n" for i in range(20)))

    def order():
        with tf.Graph().as_default():
            ds = E.make_csv_dataset(path, batch_size=20, shuffle=True, shuffle_seed=5, num_epochs=1)
            (batch,) = run_all(ds)
        return list(batch["n"])
    first = order()
    assert sorted(first) == list(range(20)) and first != list(range(20))
    assert order() == first


def test_make_csv_dataset_header_mismatch(tmp_path):
    write(tmp_path, "a.csv", "x,y\n1,2\n")
    write(tmp_path, "b.csv", "x,z\n1,2\n")
    with pytest.raises(ValueError, match="should have the same column names in the header row"):
        E.make_csv_dataset(os.path.join(str(tmp_path), "*.csv"), batch_size=1)


def test_make_csv_dataset_keeps_the_columns_order(tmp_path):
    """A structure is flattened by sorted key but rebuilt in its own order, as TF's nest does."""
    path = tmp_path / "columns.csv"
    path.write_text("zeta,alpha,mid\n1,2,3\n4,5,6\n")
    with tf.Graph().as_default():
        ds = tf.data.experimental.make_csv_dataset(str(path), batch_size=2, shuffle=False, num_epochs=1)
        features = tf.data.make_one_shot_iterator(ds).get_next()
        assert list(features) == ["zeta", "alpha", "mid"]
        with tf.Session() as sess:
            got = sess.run(features)
    assert list(got) == ["zeta", "alpha", "mid"] and got["alpha"].tolist() == [2, 5]
