"""FusedBatchNormGrad(V2/V3), the ops TensorFlow's training graphs name, compute what graphrt's
composed gradient of FusedBatchNorm computes: training and inference, NHWC and NCHW."""
import numpy as np
import pytest

import graphrt as tf
from graphrt.framework.op_builder import apply_op


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("op_type", ["FusedBatchNormGrad", "FusedBatchNormGradV2", "FusedBatchNormGradV3"])
def test_gradient_ops_match_the_composed_gradient(graph, op_type, training, data_format):
    rng = np.random.RandomState(1)
    x = tf.constant(rng.randn(2, 3, 4, 5).astype(np.float32))
    channels = 3 if data_format == "NCHW" else 5
    scale = tf.constant(rng.rand(channels).astype(np.float32) + 0.5)
    offset = tf.constant(rng.randn(channels).astype(np.float32))
    mean = tf.constant(rng.randn(channels).astype(np.float32)) if not training else tf.constant([], tf.float32)
    var = tf.constant(rng.rand(channels).astype(np.float32) + 0.1) if not training else tf.constant([], tf.float32)
    forward = apply_op("FusedBatchNormV3", [x, scale, offset, mean, var], epsilon=0.001, is_training=training,
                       data_format=data_format)
    dy = tf.constant(rng.randn(2, 3, 4, 5).astype(np.float32))
    composed = tf.gradients(forward.outputs[0], [x, scale, offset], grad_ys=dy)
    reserve = list(forward.outputs[3:5]) + ([forward.outputs[5]] if op_type.endswith("V3") else [])
    direct = apply_op(op_type, [dy, x, scale] + reserve, epsilon=0.001, is_training=training,
                      data_format=data_format).outputs
    with tf.Session() as sess:
        want, got = sess.run([composed, list(direct[:3])])
    for w, g in zip(want, got):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
