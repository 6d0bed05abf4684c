"""Framework follow-up (from the framework sweep): TensorShape's remaining methods (as_proto,
assert_same_rank, assert_is_fully_defined, with_rank_at_most/at_least,
most_specific_compatible_shape, `+` as concatenation), Dimension ordering (None when unknown) and
its TypeError for floats, lowercase device types in `/device:gpu:0`, `tf.container` setting the
container of stateful ops, `tf.group` over nested structures and its errors, `tf.tuple`'s names,
and `tf.Assert` over data of mixed dtypes."""


def err(fn):
    try:
        fn()
    except Exception as e:
        return type(e).__name__
    return "no error"


def run(tf, np):
    out = {}
    TS, D = tf.TensorShape, tf.Dimension
    out["shape"] = {
        "as_proto": str(TS([2, None]).as_proto()).split(),
        "as_proto_unknown": str(TS(None).as_proto()).split(),
        "same_rank_ok": err(lambda: TS([1, 2]).assert_same_rank(TS([None, 3]))),
        "same_rank_bad": err(lambda: TS([1, 2]).assert_same_rank([3])),
        "same_rank_unknown": err(lambda: TS(None).assert_same_rank([3])),
        "fully_ok": err(lambda: TS([1, 2]).assert_is_fully_defined()),
        "fully_bad": err(lambda: TS([1, None]).assert_is_fully_defined()),
        "fully_unknown": err(lambda: TS(None).assert_is_fully_defined()),
        "at_most_ok": str(TS([1, 2]).with_rank_at_most(2)),
        "at_most_bad": err(lambda: TS([1, 2]).with_rank_at_most(1)),
        "at_most_unknown": str(TS(None).with_rank_at_most(1)),
        "at_least_ok": str(TS([1, 2]).with_rank_at_least(2)),
        "at_least_bad": err(lambda: TS([1, 2]).with_rank_at_least(3)),
        "at_least_unknown": str(TS(None).with_rank_at_least(3)),
        "msc_partial": str(TS([1, 2]).most_specific_compatible_shape(TS([1, 3]))),
        "msc_ranks": str(TS([1, 2]).most_specific_compatible_shape([1])),
        "msc_unknown": str(TS(None).most_specific_compatible_shape([1])),
        "msc_none": str(TS([None, 2]).most_specific_compatible_shape([None, 2])),
        "add_list": str(TS([1]) + [2, 3]),
        "radd_list": str([2, 3] + TS([1])),
        "add_shape": str(TS([1]) + TS([None])),
        "add_unknown": str(TS(None) + [1]),
        "radd_unknown": str([1] + TS(None)),
        "add_int": str(TS([1]) + 2),
    }
    cmp = {}
    for a, b in [(1, 2), (2, 2), (None, 2), (2, None), (3, 1)]:
        cmp[f"{a},{b}"] = [D(a) < D(b), D(a) <= D(b), D(a) > D(b), D(a) >= D(b)]
    cmp["dim_vs_int"] = [D(1) < 2, D(1) <= 2, D(1) > 2, D(1) >= 2]
    out["dim_compare"] = cmp
    out["dim_errors"] = {
        "float": err(lambda: D(2.0)),
        "float_frac": err(lambda: D(2.5)),
        "float_in_shape": err(lambda: TS([2.0, 3])),
        "string": err(lambda: D("3")),
        "numpy_int": repr(D(np.int64(3))),
    }
    devices = {}
    for s in ["/device:gpu:0", "/device:cpu:1", "/device:Gpu:0", "/device:tpu:0", "/gpu:1"]:
        spec = tf.DeviceSpec.from_string(s)
        devices[s] = [spec.device_type, spec.to_string()]
    out["devices"] = devices

    g = tf.Graph()
    with g.as_default():
        with tf.container("abc") as c:
            q = tf.FIFOQueue(3, tf.float32, name="q")
        q2 = tf.FIFOQueue(3, tf.float32, name="q2")
        attr = q.queue_ref.op.get_attr("container")
        attr2 = q2.queue_ref.op.get_attr("container")
        out["container"] = [c, attr.decode() if isinstance(attr, bytes) else attr,
                            attr2.decode() if isinstance(attr2, bytes) else attr2]

    g = tf.Graph()
    with g.as_default():
        a = tf.constant(1.0, name="a")
        b = tf.constant(2, name="b")

        def describe(op):
            return [op.type, op.name, sorted(i.name for i in op.control_inputs)]
        out["group"] = {
            "nested": describe(tf.group([a, [b]])),
            "dict": describe(tf.group({"x": a, "y": [b.op]})),
            "named": describe(tf.group(a, b, name="gg")),
            "none": err(lambda: tf.group(None)),
            "none_among": err(lambda: tf.group(a, None)),
            "bad_keyword": err(lambda: tf.group(a, foo=1)),
        }
        t1 = tf.tuple([a, None, b])
        t2 = tf.tuple([a], name="tt", control_inputs=[b])
        out["tuple"] = {
            "outputs": [None if t is None else [t.name, t.op.type, sorted(i.name for i in t.op.control_inputs)]
                        for t in t1 + t2],
            "gate": describe(g.get_operation_by_name("tt/group_deps")),
            "empty": err(lambda: tf.tuple([None])),
        }
        ok = tf.Assert(tf.constant(True), ["x is", a, b, [True, False]])
        bad = tf.Assert(tf.equal(b, 3), ["b is", b, "a is", a])
        out["assert_errors"] = {"no_data": err(lambda: tf.Assert(tf.constant(True), []))}
        with tf.Session(graph=g) as sess:
            out["tuple_values"] = sess.run([t for t in t1 + t2 if t is not None])
            out["assert_ok"] = err(lambda: sess.run(ok))
            out["assert_bad"] = err(lambda: sess.run(bad))
    return out
