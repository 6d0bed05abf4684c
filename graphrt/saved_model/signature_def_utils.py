"""`tf.saved_model.signature_def_utils`: SignatureDef protos, TensorFlow Serving's three
kinds (predict, classify, regress), and the check TF Serving applies to them."""
from tensorboard.compat.proto import meta_graph_pb2, types_pb2

from .. import errors
from ..framework import tensor_util
from ..framework.graph import Tensor
from . import signature_constants as sc
from .utils import build_tensor_info, build_tensor_info_from_op, get_element_from_tensor_info

SignatureDef = meta_graph_pb2.SignatureDef


def build_signature_def(inputs=None, outputs=None, method_name=None, defaults=None):
    """A SignatureDef from maps of names to TensorInfo protos, a method name, and default
    values (constant tensors) of inputs."""
    signature_def = SignatureDef()
    for key in inputs or {}:
        signature_def.inputs[key].CopyFrom(inputs[key])
    for key in outputs or {}:
        signature_def.outputs[key].CopyFrom(outputs[key])
    if method_name is not None:
        signature_def.method_name = method_name
    for arg_name, default in (defaults or {}).items():
        if not (isinstance(default, Tensor) and default.op.type == "Const"):
            raise ValueError(f"Unable to convert object {default} of type {type(default)} to TensorProto.")
        value = default.op.get_attr("value")
        signature_def.defaults[arg_name].CopyFrom(tensor_util.make_tensor_proto(value, dtype=default.dtype))
    return signature_def


def predict_signature_def(inputs, outputs):
    """A `tensorflow/serving/predict` signature over dicts of names to tensors."""
    if not inputs:
        raise ValueError("Prediction `inputs` cannot be None or empty.")
    if not outputs:
        raise ValueError("Prediction `outputs` cannot be None or empty.")
    return build_signature_def({k: build_tensor_info(t) for k, t in inputs.items()},
                               {k: build_tensor_info(t) for k, t in outputs.items()}, sc.PREDICT_METHOD_NAME)


def regression_signature_def(examples, predictions):
    """A `tensorflow/serving/regress` signature: serialized tf.Examples (string) in,
    float predictions out."""
    if examples is None:
        raise ValueError("Regression `examples` cannot be None.")
    if not isinstance(examples, Tensor):
        raise ValueError(f"Expected regression `examples` to be of type Tensor. Found `examples` of type "
                         f"{type(examples)}.")
    if predictions is None:
        raise ValueError("Regression `predictions` cannot be None.")
    inputs = build_tensor_info(examples)
    if inputs.dtype != types_pb2.DT_STRING:
        raise ValueError(f"Regression input tensors must be of type string. Found tensors with type "
                         f"{inputs.dtype}.")
    outputs = build_tensor_info(predictions)
    if outputs.dtype != types_pb2.DT_FLOAT:
        raise ValueError(f"Regression output tensors must be of type float. Found tensors with type "
                         f"{outputs.dtype}.")
    return build_signature_def({sc.REGRESS_INPUTS: inputs}, {sc.REGRESS_OUTPUTS: outputs}, sc.REGRESS_METHOD_NAME)


def classification_signature_def(examples, classes, scores):
    """A `tensorflow/serving/classify` signature: serialized tf.Examples in, string classes
    and/or float scores out."""
    if examples is None:
        raise ValueError("Classification `examples` cannot be None.")
    if not isinstance(examples, Tensor):
        raise ValueError(f"Classification `examples` must be a string Tensor. Found `examples` of type "
                         f"{type(examples)}.")
    if classes is None and scores is None:
        raise ValueError("Classification `classes` and `scores` cannot both be None.")
    inputs = build_tensor_info(examples)
    if inputs.dtype != types_pb2.DT_STRING:
        raise ValueError(f"Classification input tensors must be of type string. Found tensors of type "
                         f"{inputs.dtype}")
    outputs = {}
    if classes is not None:
        outputs[sc.CLASSIFY_OUTPUT_CLASSES] = build_tensor_info(classes)
        if outputs[sc.CLASSIFY_OUTPUT_CLASSES].dtype != types_pb2.DT_STRING:
            raise ValueError(f"Classification classes must be of type string Tensor. Found tensors of type "
                             f"{outputs[sc.CLASSIFY_OUTPUT_CLASSES].dtype}.`")
    if scores is not None:
        outputs[sc.CLASSIFY_OUTPUT_SCORES] = build_tensor_info(scores)
        if outputs[sc.CLASSIFY_OUTPUT_SCORES].dtype != types_pb2.DT_FLOAT:
            raise ValueError("Classification scores must be a float Tensor.")
    return build_signature_def({sc.CLASSIFY_INPUTS: inputs}, outputs, sc.CLASSIFY_METHOD_NAME)


def is_valid_signature(signature_def):
    """Whether TensorFlow Serving can serve `signature_def` (a well-formed classify,
    regress or predict signature)."""
    if signature_def is None:
        return False
    return (_valid_classification(signature_def) or _valid_regression(signature_def)
            or _valid_predict(signature_def))


def _valid_predict(sig):
    return sig.method_name == sc.PREDICT_METHOD_NAME and bool(sig.inputs) and bool(sig.outputs)


def _valid_regression(sig):
    return (sig.method_name == sc.REGRESS_METHOD_NAME and set(sig.inputs) == {sc.REGRESS_INPUTS}
            and sig.inputs[sc.REGRESS_INPUTS].dtype == types_pb2.DT_STRING
            and set(sig.outputs) == {sc.REGRESS_OUTPUTS}
            and sig.outputs[sc.REGRESS_OUTPUTS].dtype == types_pb2.DT_FLOAT)


def _valid_classification(sig):
    want = {sc.CLASSIFY_OUTPUT_CLASSES: types_pb2.DT_STRING, sc.CLASSIFY_OUTPUT_SCORES: types_pb2.DT_FLOAT}
    return (sig.method_name == sc.CLASSIFY_METHOD_NAME and set(sig.inputs) == {sc.CLASSIFY_INPUTS}
            and sig.inputs[sc.CLASSIFY_INPUTS].dtype == types_pb2.DT_STRING
            and bool(sig.outputs) and set(sig.outputs) <= set(want)
            and all(sig.outputs[k].dtype == want[k] for k in sig.outputs))


def op_signature_def(op, key):
    """A signature whose one output names `op` (how init and train ops are stored)."""
    return build_signature_def(outputs={key: build_tensor_info_from_op(op)})


def load_op_from_signature_def(signature_def, key, import_scope=None):
    """The op an `op_signature_def` named, in the default graph."""
    try:
        return get_element_from_tensor_info(signature_def.outputs[key], import_scope=import_scope)
    except KeyError:
        raise errors.NotFoundError(
            None, None, f'The key "{key}" could not be found in the graph. Please make sure the SavedModel was '
            "created by the internal _SavedModelBuilder. If you are using the public API, please make sure the "
            f'SignatureDef in the SavedModel does not contain the key "{key}".') from None
