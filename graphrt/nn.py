"""`tf.nn`: activations, softmax and cross-entropies, convolution and pooling."""
from .ops.math_ops import sigmoid, tanh  # noqa: F401
from .ops.nn_ops import (avg_pool, avg_pool2d, batch_normalization, bias_add, conv1d, conv2d,  # noqa: F401
                         conv2d_backprop_filter, conv2d_backprop_input, conv2d_transpose, dropout, elu,
                         in_top_k, l2_loss, l2_normalize, leaky_relu, log_softmax, max_pool,
                         max_pool2d, moments, relu, relu6, relu_layer, selu, sigmoid_cross_entropy_with_logits,
                         softmax, softmax_cross_entropy_with_logits, softmax_cross_entropy_with_logits_v2,
                         softplus, softsign, sparse_softmax_cross_entropy_with_logits, top_k,
                         weighted_cross_entropy_with_logits, xw_plus_b, zero_fraction)
from .rnn import (bidirectional_dynamic_rnn, dynamic_rnn, raw_rnn, rnn_cell,  # noqa: F401
                  static_bidirectional_rnn, static_rnn)
from .candidate_sampling import (all_candidate_sampler, compute_accidental_hits,  # noqa: F401
                                 fixed_unigram_candidate_sampler, log_uniform_candidate_sampler, nce_loss,
                                 sampled_softmax_loss, uniform_candidate_sampler)
from .depthwise import depthwise_conv2d, depthwise_conv2d_native, separable_conv2d  # noqa: F401,E402
from .ops.nn_ops import (crelu, log_poisson_loss, normalize_moments, silu, sufficient_statistics,  # noqa: F401,E402
                         swish, weighted_moments)
from .ops.array_ops import depth_to_space, space_to_depth  # noqa: F401,E402
from .ops.nn_ops import (atrous_conv2d, atrous_conv2d_transpose, avg_pool1d, convolution,  # noqa: F401,E402
                         fused_batch_norm, local_response_normalization, lrn, max_pool1d, pool)
from .ops.array_ops import space_to_batch  # noqa: F401,E402
from .embedding import embedding_lookup  # noqa: F401,E402
from .sparse import embedding_lookup_sparse, safe_embedding_lookup_sparse  # noqa: F401,E402
from .ctc import (collapse_repeated, ctc_beam_search_decoder, ctc_beam_search_decoder_v2,  # noqa: F401,E402
                  ctc_greedy_decoder, ctc_loss, ctc_loss_v2, ctc_unique_labels)
from .volumetric import (avg_pool3d, conv3d, conv3d_backprop_filter, conv3d_backprop_filter_v2,  # noqa: F401,E402
                         conv3d_transpose, dilation2d, erosion2d, max_pool3d, max_pool_with_argmax)
from .nn_extras import (avg_pool_v2, batch_norm_with_global_normalization, compute_average_loss,  # noqa: F401,E402
                        conv1d_transpose, conv_transpose, depthwise_conv2d_backprop_filter,
                        depthwise_conv2d_backprop_input, depthwise_conv2d_native_backprop_filter,
                        depthwise_conv2d_native_backprop_input, max_pool_v2, scale_regularization_loss)
