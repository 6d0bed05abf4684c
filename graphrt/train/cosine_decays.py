"""The cosine learning-rate schedules beyond `cosine_decay` (TF1 `tf.train.*`), built as
TF's learning_rate_schedule builds them:

    cosine_decay_restarts      SGDR: the i-th period lasts first_decay_steps * t_mul^i steps and starts
                               at m_mul^i; within it lr * ((1 - alpha) * 0.5 * m_mul^i * (1 + cos(pi * f)) + alpha)
    linear_cosine_decay        lr * ((alpha + (ds - s) / ds) * 0.5 * (1 + cos(2 pi num_periods s / ds)) + beta),
                               s = min(step, ds)
    noisy_linear_cosine_decay  the same with normal noise of variance initial_variance / (1 + s)^variance_decay
                               added to the linear term (drawn each run)

pi is a float32 constant, as in TF, so a float64 learning rate is a TypeError there too.
"""
import math

from ..framework.graph import get_default_graph
from ..framework.op_builder import convert_to_tensor
from ..ops import control_flow_ops, math_ops, random_ops
from .learning_rate_decay import _require_step


def cosine_decay_restarts(learning_rate, global_step, first_decay_steps, t_mul=2.0, m_mul=1.0, alpha=0.0,
                          name=None):
    _require_step(global_step, "cosine_decay_restarts")
    g = get_default_graph()
    with g.name_scope(name or "SGDRDecay") as scope:
        lr = convert_to_tensor(learning_rate, name="initial_learning_rate")
        dtype = lr.dtype.base_dtype
        first = math_ops.cast(first_decay_steps, dtype)
        alpha = math_ops.cast(alpha, dtype)
        t_mul = math_ops.cast(t_mul, dtype)
        m_mul = math_ops.cast(m_mul, dtype)
        completed = math_ops.cast(global_step, dtype) / first

        def compute_step(completed, geometric):
            if geometric:  # periods grow by t_mul: invert their geometric sum
                i_restart = math_ops.floor(math_ops.log(1.0 - completed * (1.0 - t_mul)) / math_ops.log(t_mul))
                sum_r = (1.0 - t_mul ** i_restart) / (1.0 - t_mul)
                return i_restart, (completed - sum_r) / t_mul ** i_restart
            i_restart = math_ops.floor(completed)
            return i_restart, completed - i_restart

        i_restart, completed = control_flow_ops.cond(math_ops.equal(t_mul, 1.0),
                                                     lambda: compute_step(completed, False),
                                                     lambda: compute_step(completed, True))
        m_fac = m_mul ** i_restart
        cosine = 0.5 * m_fac * (1.0 + math_ops.cos(convert_to_tensor(math.pi) * completed))
        decayed = (1 - alpha) * cosine + alpha
        return math_ops.multiply(lr, decayed, name=scope)


def _linear_and_cosine(global_step, decay_steps, num_periods, dtype):
    """(s, (ds - s) / ds, 0.5 * (1 + cos(2 pi num_periods s / ds))) with s = min(step, ds)."""
    steps = math_ops.cast(decay_steps, dtype)
    num_periods = math_ops.cast(num_periods, dtype)
    step = math_ops.minimum(math_ops.cast(global_step, dtype), steps)
    linear = (steps - step) / steps
    fraction = 2.0 * num_periods * (step / steps)
    cosine = 0.5 * (1.0 + math_ops.cos(convert_to_tensor(math.pi) * fraction))
    return step, linear, cosine


def linear_cosine_decay(learning_rate, global_step, decay_steps, num_periods=0.5, alpha=0.0, beta=0.001, name=None):
    _require_step(global_step, "linear_cosine_decay")
    g = get_default_graph()
    with g.name_scope(name or "LinearCosineDecay") as scope:
        lr = convert_to_tensor(learning_rate, name="initial_learning_rate")
        dtype = lr.dtype.base_dtype
        alpha, beta = math_ops.cast(alpha, dtype), math_ops.cast(beta, dtype)
        _, linear, cosine = _linear_and_cosine(global_step, decay_steps, num_periods, dtype)
        return math_ops.multiply(lr, (alpha + linear) * cosine + beta, name=scope)


def noisy_linear_cosine_decay(learning_rate, global_step, decay_steps, initial_variance=1.0, variance_decay=0.55,
                              num_periods=0.5, alpha=0.0, beta=0.001, name=None):
    _require_step(global_step, "noisy_linear_cosine_decay")
    g = get_default_graph()
    with g.name_scope(name or "NoisyLinearCosineDecay") as scope:
        lr = convert_to_tensor(learning_rate, name="initial_learning_rate")
        dtype = lr.dtype.base_dtype
        initial_variance = math_ops.cast(initial_variance, dtype)
        variance_decay = math_ops.cast(variance_decay, dtype)
        alpha, beta = math_ops.cast(alpha, dtype), math_ops.cast(beta, dtype)
        step, linear, cosine = _linear_and_cosine(global_step, decay_steps, num_periods, dtype)
        std = math_ops.sqrt(initial_variance / math_ops.pow(1.0 + step, variance_decay))
        noisy_linear = linear + random_ops.random_normal(linear.shape, stddev=std)
        return math_ops.multiply(lr, (alpha + noisy_linear) * cosine + beta, name=scope)
