"""Gradients of the TensorArray ops (TF1's tensor_array_grad).

The gradient of an array is another array, made at run time by
TensorArrayGradV3 next to the forward one and found again by its
*source*: the name scope of the `gradients()` call ("gradients",
"gradients_1", ...), so two gradient computations over one array never
share a gradient array. Each op's gradient is the mirror op on it: a read's
gradient writes the incoming gradient at the same index (writes to one
index are summed), a write's gradient reads it back, gather <-> scatter,
concat <-> split.
"""
from ..framework.registry import register_gradient
from ..ops import array_ops
from .tensor_array import TensorArray


def _grad_source(tensor):
    """The `gradients` name scope `tensor` was made in: "gradients" for
    "gradients/rnn/while/..._grad/...:0"."""
    tokens = tensor.name.split("/")
    positions = [i for i, t in enumerate(tokens) if t.startswith("gradients")]
    if not positions:
        raise ValueError(f"Expected op/tensor name to start with gradients (excluding scope), got: {tensor.name}")
    return "/".join(tokens[:positions[-1] + 1])


def _gradient_array(op, dtype, flow, grad_tensor):
    forward = TensorArray(dtype=dtype, handle=op.inputs[0], flow=flow, colocate_with_first_write_call=False)
    return forward.grad(source=_grad_source(grad_tensor), flow=flow)


@register_gradient("TensorArrayReadV3")
def _read_grad(op, grad):
    index, flow = op.inputs[1], op.inputs[2]
    g = _gradient_array(op, op.get_attr("dtype"), flow, grad)
    return [None, None, g.write(index, grad).flow]


@register_gradient("TensorArrayWriteV3")
def _write_grad(op, flow):
    index = op.inputs[1]
    flow_out = array_ops.identity(op.outputs[0], name="flow_out")
    # The gradient array must not be made before the last forward write has run.
    with op.graph.control_dependencies([flow_out]):
        flow = array_ops.identity(flow, name="write_barrier")
    g = _gradient_array(op, op.get_attr("T"), flow, flow)
    return [None, None, g.read(index), flow]


@register_gradient("TensorArrayGatherV3")
def _gather_grad(op, grad):
    indices, flow = op.inputs[1], op.inputs[2]
    g = _gradient_array(op, op.get_attr("dtype"), flow, grad)
    return [None, None, g.scatter(indices, grad).flow]


@register_gradient("TensorArrayScatterV3")
def _scatter_grad(op, flow):
    indices = op.inputs[1]
    flow_out = array_ops.identity(op.outputs[0], name="flow_out")
    with op.graph.control_dependencies([flow_out]):
        flow = array_ops.identity(flow, name="write_barrier")
    g = _gradient_array(op, op.get_attr("T"), flow, flow)
    return [None, None, g.gather(indices), flow]


@register_gradient("TensorArrayConcatV3")
def _concat_grad(op, grad, unused_lengths_grad):
    flow = op.inputs[1]
    lengths = op.outputs[1]
    g = _gradient_array(op, op.get_attr("dtype"), flow, grad)
    return [None, g.split(grad, lengths=lengths).flow]


@register_gradient("TensorArraySplitV3")
def _split_grad(op, flow):
    flow_out = array_ops.identity(op.outputs[0], name="flow_out")
    with op.graph.control_dependencies([flow_out]):
        flow = array_ops.identity(flow, name="write_barrier")
    g = _gradient_array(op, op.get_attr("T"), flow, flow)
    return [None, g.concat(), None, flow]
