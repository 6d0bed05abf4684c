"""`tf.quantization`'s fake quantization: the ops quantization-aware training inserts.

Each maps a float tensor onto the 2^num_bits levels of [min, max] and back
(`fake_quant.py`): min and max are first nudged so that 0.0 is exactly a
level (TF's Nudge), values are clamped to the nudged range and rounded to
the nearest level. The gradient passes straight through inside the range;
the `vars` forms also give min and max the gradients of the clamped values
below and above it. Same ops, attrs, values and gradients as TensorFlow's.
"""
from .fake_quant import (fake_quant_with_min_max_args, fake_quant_with_min_max_args_gradient,  # noqa: F401
                         fake_quant_with_min_max_vars, fake_quant_with_min_max_vars_gradient,
                         fake_quant_with_min_max_vars_per_channel,
                         fake_quant_with_min_max_vars_per_channel_gradient)
