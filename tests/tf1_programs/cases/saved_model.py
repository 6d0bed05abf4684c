"""tf.saved_model: a model built, saved with Builder (two meta graphs, a main op, an
asset-backed table) and with simple_save, each loaded into a fresh graph and its
signature run; SignatureDef helpers, TensorInfo protos (dense and sparse), the loaded
tensors' static shapes, the files written, and the errors of builder and loader (as
class names). Files go to a fresh temporary directory; only values come back."""
import os
import tempfile


def err(fn):
    try:
        fn()
    except Exception as e:
        return type(e).__name__
    return "no error"


def info(i):
    return {"name": i.name, "dtype": int(i.dtype), "shape": [d.size for d in i.tensor_shape.dim],
            "encoding": i.WhichOneof("encoding")}


def run(tf, np):
    d = tempfile.mkdtemp()
    sm = tf.saved_model
    out = {}
    vocab = os.path.join(d, "vocab.txt")
    with open(vocab, "w") as f:
        f.write("red\ngreen\nblue\n")
    xs = np.array([[1.0, -2.0, 0.5], [0.25, 0.5, 2.0]], np.float32)
    words = np.array([b"blue", b"pink", b"red"], object)

    export = os.path.join(d, "model")
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w1 = tf.Variable(np.linspace(-1.0, 1.0, 12).reshape(3, 4).astype(np.float32), name="dense/w")
        b1 = tf.Variable(np.array([0.1, -0.1, 0.2, 0.0], np.float32), name="dense/b")
        w2 = tf.Variable(np.linspace(0.5, -0.5, 8).reshape(4, 2).astype(np.float32), name="out/w")
        hidden = tf.nn.relu(tf.matmul(x, w1) + b1)
        logits = tf.matmul(hidden, w2, name="logits")
        probs = tf.nn.softmax(logits, name="probs")
        word = tf.placeholder(tf.string, [None], name="word")
        table = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
            vocab, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER), -1)
        ids = tf.identity(table.lookup(word), name="ids")
        examples = tf.placeholder(tf.string, [None], name="examples")
        sess.run(tf.global_variables_initializer())
        out["before"] = sess.run(probs, {x: xs})
        predict = sm.predict_signature_def({"x": x, "word": word}, {"probs": probs, "ids": ids})
        classify = sm.classification_signature_def(examples, None, probs)
        regress = sm.regression_signature_def(examples, probs)
        out["signatures"] = {
            "predict": {"method": predict.method_name, "inputs": {k: info(v) for k, v in predict.inputs.items()},
                        "outputs": {k: info(v) for k, v in predict.outputs.items()}},
            "classify": {"method": classify.method_name, "outputs": sorted(classify.outputs)},
            "valid": [sm.is_valid_signature(s) for s in (predict, classify, regress)],
            "invalid": sm.is_valid_signature(sm.build_signature_def({}, {}, sm.PREDICT_METHOD_NAME)),
        }
        sp = tf.SparseTensor(tf.constant([[0, 0]], tf.int64, name="si"), tf.constant([1.0], name="sv"),
                             tf.constant([2, 2], tf.int64, name="ss"))
        out["sparse_info"] = {k: getattr(sm.build_tensor_info(sp).coo_sparse, k)
                              for k in ("indices_tensor_name", "values_tensor_name", "dense_shape_tensor_name")}
        out["errors"] = {
            "predict_empty": err(lambda: sm.predict_signature_def({}, {"p": probs})),
            "regress_int_input": err(lambda: sm.regression_signature_def(x, probs)),
            "classify_none": err(lambda: sm.classification_signature_def(examples, None, None)),
        }
        builder = sm.builder.SavedModelBuilder(export)
        out["errors"]["meta_graph_first"] = err(lambda: builder.add_meta_graph(["serve"]))
        out["errors"]["reserved_key"] = err(lambda: builder.add_meta_graph_and_variables(
            sess, ["serve"], signature_def_map={"__saved_model_init_op": predict}))
        builder.add_meta_graph_and_variables(
            sess, [sm.tag_constants.SERVING], signature_def_map={"serving_default": predict, "classify": classify},
            assets_collection=tf.get_collection(tf.GraphKeys.ASSET_FILEPATHS), main_op=tf.tables_initializer())
        out["errors"]["twice"] = err(lambda: builder.add_meta_graph_and_variables(sess, ["serve"]))
        builder.add_meta_graph([sm.tag_constants.TRAINING, sm.tag_constants.GPU])
        out["save_path"] = os.path.basename(builder.save())
    out["errors"]["non_empty_dir"] = err(lambda: sm.Builder(export))
    os.remove(vocab)  # the loaded model reads its copy in assets/
    out["files"] = {"top": sorted(os.listdir(export)), "variables": sorted(os.listdir(os.path.join(export, "variables"))),
                    "assets": sorted(os.listdir(os.path.join(export, "assets")))}
    out["contains"] = [sm.contains_saved_model(export), sm.maybe_saved_model_directory(d)]

    with tf.Graph().as_default() as g, tf.Session() as sess:
        meta = sm.loader.load(sess, [sm.SERVING], export)
        sig = meta.signature_def[sm.DEFAULT_SERVING_SIGNATURE_DEF_KEY]
        out["tags"] = list(meta.meta_info_def.tags)
        out["loaded"] = sess.run({k: sig.outputs[k].name for k in sig.outputs},
                                 {sig.inputs["x"].name: xs, sig.inputs["word"].name: words})
        t = sm.utils.get_tensor_from_tensor_info(sig.outputs["probs"], graph=g)
        out["loaded_shape"] = str(t.shape)
        out["loaded_trainable"] = sorted(v.op.name for v in tf.trainable_variables())
    with tf.Graph().as_default(), tf.Session() as sess:
        sm.load(sess, ["gpu", "train"], export, import_scope="t")
        out["second_graph"] = sess.run("t/probs:0", {"t/x:0": xs})
    with tf.Graph().as_default(), tf.Session() as sess:
        out["errors"]["bad_tags"] = err(lambda: sm.load(sess, ["eval"], export))
        out["errors"]["no_model"] = err(lambda: sm.load(sess, ["serve"], d))

    simple = os.path.join(d, "simple")
    with tf.Graph().as_default(), tf.Session() as sess:
        a = tf.placeholder(tf.float32, [2], name="a")
        v = tf.Variable([2.0, 3.0], name="v")
        prod = tf.multiply(a, v, name="prod")
        sess.run(tf.global_variables_initializer())
        sess.run(v.assign([4.0, 5.0]))
        sm.simple_save(sess, simple, {"a": a}, {"prod": prod})
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = sm.load(sess, ["serve"], simple)
        sig = meta.signature_def["serving_default"]
        out["simple"] = {"method": sig.method_name, "value": sess.run(sig.outputs["prod"].name,
                                                                       {sig.inputs["a"].name: [1.0, 2.0]})}
    return out
