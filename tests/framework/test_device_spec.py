"""DeviceSpec parsing/printing/merging and the graph's device scopes (TF1 semantics)."""
import pytest

import graphrt as tf

DS = tf.DeviceSpec


@pytest.mark.parametrize("text, expected", [
    ("/job:worker/replica:1/task:2/device:GPU:3", "/job:worker/replica:1/task:2/device:GPU:3"),
    ("/cpu:0", "/device:CPU:0"),
    ("/CPU:0", "/device:CPU:0"),
    ("/gpu:1", "/device:GPU:1"),
    ("gpu:1", "/device:GPU:1"),
    ("/sim:2", "/device:SIM:2"),
    ("/device:CPU:*", "/device:CPU:*"),
    ("/cpu:*", "/device:CPU:*"),
    ("/job:ps", "/job:ps"),
    ("/task:1/cpu:0", "/task:1/device:CPU:0"),
    ("/device:XLA_GPU:0", "/device:XLA_GPU:0"),
    ("/job:a/job:b", "/job:b"),
    ("", ""),
])
def test_from_string_to_string(text, expected):
    assert DS.from_string(text).to_string() == expected
    assert str(DS.from_string(expected)) == expected  # canonical form is a fixed point


def test_fields_after_parsing():
    spec = DS.from_string("/job:worker/replica:1/task:2/gpu:3")
    assert (spec.job, spec.replica, spec.task, spec.device_type, spec.device_index) == ("worker", 1, 2, "GPU", 3)
    partial = DS.from_string("/task:7")
    assert (partial.job, partial.task, partial.device_type, partial.device_index) == (None, 7, None, None)
    assert DS.from_string("/device:GPU:*").device_index is None


@pytest.mark.parametrize("text, message", [
    ("/cpu:0/gpu:0", "multiple device types"),
    ("/device:GPU:0/cpu:1", "multiple device types"),
    ("/foo:1", "Unknown attribute: 'foo'"),
    ("/device:GPU", "Unknown attribute: 'device'"),
    ("/job:w/replica:x", "Invalid replica 'x'"),
    ("/task:one", "Invalid task 'one'"),
    ("/cpu:zero", "Invalid device index 'zero'"),
])
def test_bad_strings_raise_value_error(text, message):
    with pytest.raises(ValueError, match=f"(?i){message}"):
        DS.from_string(text)


def test_constructor_and_lowercase_device_type():
    assert DS(job="ps", task=0, device_type="CPU", device_index=1).to_string() == "/job:ps/task:0/device:CPU:1"
    assert DS(device_type="gpu", device_index=0).to_string() == "/device:GPU:0"  # TF upper-cases cpu/gpu
    assert DS(device_type="GPU").to_string() == "/device:GPU:*"
    assert DS().to_string() == ""


def test_make_merged_spec_other_wins_field_by_field():
    base = DS(job="ps", task=1, device_type="CPU")
    other = DS.from_string("/job:worker/device:GPU:0")
    merged = base.make_merged_spec(other)
    assert merged.to_string() == "/job:worker/task:1/device:GPU:0"
    assert base.to_string() == "/job:ps/task:1/device:CPU:*"  # unchanged
    assert other.to_string() == "/job:worker/device:GPU:0"


def test_merge_from_is_in_place():
    spec = DS.from_string("/job:ps/task:1")
    spec.merge_from(DS.from_string("/replica:2/cpu:3"))
    assert spec.to_string() == "/job:ps/replica:2/task:1/device:CPU:3"
    spec.merge_from(DS())  # an empty spec changes nothing
    assert spec.to_string() == "/job:ps/replica:2/task:1/device:CPU:3"


def test_parse_from_string_replaces_every_field_in_place():
    spec = DS.from_string("/job:ps/task:1/cpu:0")
    same = spec.parse_from_string("/gpu:2")
    assert same is spec
    assert spec.to_string() == "/device:GPU:2"


def test_replace_and_equality():
    spec = DS.from_string("/job:w/task:0/gpu:1")
    assert spec.replace(device_type="cpu").to_string() == "/job:w/task:0/device:CPU:1"
    assert spec.replace(task=None).to_string() == "/job:w/device:GPU:1"
    assert spec == DS.from_string("/job:w/task:0/device:GPU:1")
    assert hash(spec) == hash(DS.from_string("/job:w/task:0/device:GPU:1"))
    assert spec != DS.from_string("/job:w/task:0/device:GPU:2")


def test_matches_partial_against_full():
    full = "/job:localhost/replica:0/task:0/device:CPU:1"
    assert DS.from_string("/cpu:1").matches(full)
    assert DS.from_string("/job:localhost").matches(full)
    assert DS().matches(full)
    assert not DS.from_string("/cpu:0").matches(full)
    assert not DS.from_string("/gpu:1").matches(full)


# -- device scopes on the graph -------------------------------------------------------

def test_nested_device_scopes_merge_inner_wins(graph):
    with tf.device("/job:worker/task:1"):
        a = tf.constant(1.0, name="a")
        with tf.device("/device:GPU:0"):
            b = tf.constant(1.0, name="b")
            with tf.device("/job:ps"):
                c = tf.constant(1.0, name="c")
            with tf.device("/cpu:2"):
                d = tf.constant(1.0, name="d")
        e = tf.constant(1.0, name="e")
    f = tf.constant(1.0, name="f")
    assert a.device == "/job:worker/task:1"
    assert b.device == "/job:worker/task:1/device:GPU:0"
    assert c.device == "/job:ps/task:1/device:GPU:0"
    assert d.device == "/job:worker/task:1/device:CPU:2"
    assert e.device == "/job:worker/task:1"
    assert f.device == ""


def test_device_none_ignores_outer_scopes(graph):
    with tf.device("/job:worker/gpu:0"):
        with tf.device(None):
            a = tf.constant(1.0)
            with tf.device("/cpu:1"):
                b = tf.constant(1.0)
        c = tf.constant(1.0)
    assert a.device == ""
    assert b.device == "/device:CPU:1"
    assert c.device == "/job:worker/device:GPU:0"


def test_device_empty_string_inherits(graph):
    with tf.device("/job:worker/gpu:0"):
        with tf.device(""):
            a = tf.constant(1.0)
    assert a.device == "/job:worker/device:GPU:0"


def test_device_accepts_device_spec(graph):
    with tf.device(DS(job="ps", device_type="CPU", device_index=0)):
        a = tf.constant(1.0)
    assert a.device == "/job:ps/device:CPU:0"


def test_device_function_sees_op_and_outer_specs_fill_in(graph):
    seen = []

    def by_type(op):
        seen.append((op.type, op.device))
        return "/cpu:3" if op.type == "Const" else ""

    with tf.device("/job:worker/task:1"):
        with tf.device("/gpu:0"):
            with tf.device(by_type):
                c = tf.constant(1.0, name="c")
                i = tf.identity(c, name="i")
    assert c.device == "/job:worker/task:1/device:CPU:3"  # function result, outer fields merged in
    assert i.device == "/job:worker/task:1/device:GPU:0"  # "" from the function: outer scopes decide
    assert seen == [("Const", ""), ("Identity", "")]


def test_device_function_inside_a_spec_scope(graph):
    with tf.device("/cpu:0"):
        with tf.device(lambda op: "/job:x"):
            k = tf.constant(1.0)
    assert k.device == "/job:x/device:CPU:0"


def test_device_function_returning_device_spec(graph):
    with tf.device(lambda op: DS(device_type="GPU", device_index=1)):
        k = tf.constant(1.0)
    assert k.device == "/device:GPU:1"


def test_device_scope_restored_after_exception(graph):
    with pytest.raises(RuntimeError):
        with tf.device("/gpu:0"):
            raise RuntimeError("x")
    assert tf.constant(1.0).device == ""


def test_invalid_device_string_fails_at_scope_entry(graph):
    with pytest.raises(ValueError, match="Unknown attribute"):
        with tf.device("/bogus:0"):
            pass


def test_colocate_with_takes_group_and_device(graph):
    with tf.device("/job:worker/task:1"):
        a = tf.constant(1.0, name="a")
    with tf.device("/gpu:0"):
        with tf.colocate_with(a):
            b = tf.constant(1.0, name="b")
            with tf.device("/gpu:2"):
                c = tf.constant(1.0, name="c")
    assert b.device == "/job:worker/task:1"  # the colocated op's device wins over device scopes
    assert c.device == "/job:worker/task:1"
    assert b.op.get_attr("_class") == ["loc:@a"]
    assert c.op.colocation_groups() == [b"loc:@a"]
    assert a.op.colocation_groups() == [b"loc:@a"]


def test_colocate_with_op_without_device_ignores_outer_scope(graph):
    a = tf.constant(1.0, name="a")
    with tf.device("/gpu:0"):
        with tf.colocate_with(a.op):
            b = tf.constant(1.0, name="b")
            with tf.device("/cpu:1"):
                c = tf.constant(1.0, name="c")
    assert b.device == ""
    assert c.device == "/device:CPU:1"  # a device scope inside colocate_with applies
    assert b.op.get_attr("_class") == ["loc:@a"]


def test_nested_colocation_accumulates_groups_and_ignore_existing(graph):
    a = tf.constant(1.0, name="a")
    b = tf.constant(1.0, name="b")
    with tf.colocate_with(a):
        with tf.colocate_with(b):
            c = tf.constant(1.0, name="c")
        with tf.colocate_with(b, ignore_existing=True):
            d = tf.constant(1.0, name="d")
        with tf.colocate_with(None, ignore_existing=True):
            e = tf.constant(1.0, name="e")
    assert c.op.get_attr("_class") == ["loc:@a", "loc:@b"]
    assert d.op.get_attr("_class") == ["loc:@b"]
    assert "_class" not in e.op.attrs


def test_colocate_with_none_requires_ignore_existing(graph):
    with pytest.raises(ValueError, match="ignore_existing"):
        with tf.colocate_with(None):
            pass


def test_variable_ops_are_colocated(graph):
    with tf.device("/cpu:1"):
        v = tf.Variable(1.0, name="v")
    assert v.device == "/device:CPU:1"
    assert v.initializer.device == "/device:CPU:1"
    assert v.initializer.get_attr("_class") == ["loc:@v"]
    assert v.value().device == "/device:CPU:1"
