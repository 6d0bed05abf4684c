"""Graph and Session semantics found by the graph/session sweep: autopacking of lists holding
tensors, tf.constant's padding and dtype inference, TensorShape conversion, graph lookups by
name (error classes), control_dependencies by name, collections keys, Graph.container,
import_graph_def into a reused scope, feeds converted as TF's client converts them, and the
op an OpError names."""

def err(fn):
    try:
        fn()
    except Exception as e:
        return type(e).__name__
    return "no error"


def run(tf, np):
    out = {}
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        packed = tf.convert_to_tensor([[1.0, x[0]], [x[1], 2.0]])
        add = tf.add([x[0], 3.0], 1.0)
        cast = tf.convert_to_tensor([tf.constant(1), 2], dtype=tf.float32)
        out["pack_names"] = [packed.name, add.op.inputs[0].name, cast.name] + [t.name for t in packed.op.inputs]
        out["pack_mismatch"] = err(lambda: tf.convert_to_tensor([tf.constant(1), tf.constant(1.0)]))
        padded = tf.constant([1, 2, 3], shape=[2, 2])
        zeros = tf.constant([], shape=[2])
        big = tf.constant(2 ** 31)
        mixed = tf.constant([np.float64(1), 2.0])
        trunc = tf.constant(np.array([1.7, -1.7]), tf.int32)
        shape_t = tf.convert_to_tensor(tf.TensorShape([3, 4]))
        out["const_dtypes"] = [t.dtype.name for t in (padded, zeros, big, mixed, trunc, shape_t)]
        out["const_errors"] = [err(lambda: tf.constant([1, 2, 3, 4, 5], shape=[2, 2])),
                               err(lambda: tf.constant(1, dtype=tf.bool)),
                               err(lambda: tf.convert_to_tensor(None)),
                               err(lambda: tf.convert_to_tensor(tf.TensorShape([1, None])))]
        out["lookup_errors"] = [err(lambda: g.get_tensor_by_name("")), err(lambda: g.get_tensor_by_name("zz")),
                                err(lambda: g.get_tensor_by_name("x:0:0")), err(lambda: g.get_tensor_by_name("zz:0")),
                                err(lambda: g.get_operation_by_name("zz")), err(lambda: g.get_operation_by_name("x:0"))]
        with tf.control_dependencies(["x", "Const:0"]):
            dep = tf.identity(x, name="dep")
        out["dep_controls"] = [op.name for op in dep.op.control_inputs]
        tf.get_collection_ref("made_by_ref")
        tf.add_to_collection("k", x)
        out["keys"] = sorted(g.get_all_collection_keys())
        with g.container("ct"):
            v = tf.Variable(1.0, name="v")
        out["container"] = v.op.get_attr("container")
        out["str"] = [str(x), str(tf.placeholder(tf.float32, name="unknown"))]
        with tf.Session() as sess:
            out["values"] = sess.run([packed, add, cast, padded, zeros, big, mixed, trunc, shape_t], {x: [5.0, 6.0]})
            k = tf.placeholder(tf.int32, [], name="k")
            u = tf.placeholder(tf.uint8, [2], name="u")
            s = tf.placeholder(tf.string, [None], name="s")
            out["feeds"] = sess.run([k + 0, u + 0], {k: 2.7, u: [-1, 300]})
            out["fed_fetch"] = sess.run(s, {s: ["a", b"b"]}).tolist()
            out["feed_errors"] = [err(lambda: sess.run(k + 0, {k: 2 ** 40})), err(lambda: sess.run(k + 0, [(k, 1)])),
                                  err(lambda: sess.run(tf.identity(s), {s: [1, 2]}))]
            try:
                sess.run(tf.identity(x, name="needs_x"))
            except tf.errors.InvalidArgumentError as e:
                out["error_op"] = [e.op.name, e.op.type, e.node_def.name]
    g.finalize()
    with g.as_default():
        out["finalized"] = [err(lambda: g.clear_collection("k")), err(lambda: tf.import_graph_def(tf.Graph().as_graph_def()))]
    src = tf.Graph()
    with src.as_default():
        a = tf.constant(1.0, name="a")
        tf.add(a, a, name="b")
    dst = tf.Graph()
    with dst.as_default():
        tf.import_graph_def(src.as_graph_def(), name="x/")
        b2 = tf.import_graph_def(src.as_graph_def(), name="x/", return_elements=["b:0"])[0]
        out["reimport"] = [op.name for op in dst.get_operations()] + [b2.name]
        with tf.Session() as sess:
            out["reimport_value"] = sess.run(b2)
    return out
