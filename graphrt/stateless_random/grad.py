"""Gradients of gamma draws in their concentration (TF's random_grad.py): the
implicit reparameterization d sample / d alpha (RandomGammaGrad), summed over
the sample dimensions."""
from ..framework.op_builder import apply_op
from ..framework.registry import register_gradient
from ..ops import array_ops, math_ops


def _gamma_grad_alpha(alpha, sample, grad, num_sample_dims):
    """alpha gets `num_sample_dims` leading unit dimensions so it lines up with each sample."""
    new_shape = array_ops.concat([array_ops.fill(array_ops.reshape(num_sample_dims, [1]), 1),
                                  array_ops.shape(alpha)], 0)
    partial_a = apply_op("RandomGammaGrad", [array_ops.reshape(alpha, new_shape), sample]).outputs[0]
    return math_ops.reduce_sum(grad * partial_a, axis=math_ops.range(num_sample_dims))


@register_gradient("RandomGamma")
def _random_gamma_grad(op, grad):
    shape, alpha = op.inputs
    with op.graph.control_dependencies([grad]):
        num = array_ops.shape(shape)[0]
        return [None, _gamma_grad_alpha(alpha, op.outputs[0], grad, num)]


@register_gradient("StatelessRandomGammaV2")
def _stateless_random_gamma_grad(op, grad):
    shape, _, alpha = op.inputs
    with op.graph.control_dependencies([grad]):
        num = array_ops.shape(shape)[0] - array_ops.rank(alpha)
        return [None, None, _gamma_grad_alpha(alpha, op.outputs[0], grad, num)]
