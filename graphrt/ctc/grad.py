"""Gradients: CTCLoss's is its second output scaled by the loss's gradient,
behind PreventGradient (TF's: no second derivative of the fused op); the
decoders and EditDistance have none, as in TF."""
from ..framework.op_builder import apply_op
from ..framework.registry import not_differentiable, register_gradient
from ..ops import array_ops

for _op in ("CTCGreedyDecoder", "CTCBeamSearchDecoder", "EditDistance"):
    not_differentiable(_op)


@register_gradient("CTCLoss")
def _ctc_loss_grad(op, grad_loss, _):
    grad = apply_op("PreventGradient", [op.outputs[1]], message=(
        "Currently there is no way to take the second  derivative of ctc_loss due to the fused implementation's "
        "interaction  with tf.gradients()")).outputs[0]
    return [array_ops.expand_dims(grad_loss, -1) * grad, None, None, None]


@register_gradient("CTCLossDense")
def _ctc_loss_dense_grad(op, grad_loss, _):
    """TF's custom gradient of ctc_loss_dense: reshape(grad_loss, [1, -1, 1]) * gradient."""
    return [array_ops.reshape(grad_loss, [1, -1, 1]) * op.outputs[1], None, None, None]
