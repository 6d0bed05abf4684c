"""graphrt: a TensorFlow 1.x style dataflow-graph runtime.

    import graphrt as tf

    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.reduce_sum(x * 2.0)
    with tf.Session() as sess:
        print(sess.run(y, {x: [[1, 2, 3]]}))

The names here are those of `tf.compat.v1`. Importing graphrt registers the
ops, kernels and gradients and does nothing else: no devices, threads or
sockets exist until a Session or Server asks for them.
"""
from . import errors
from .framework import dtypes
from .framework.device_spec import DeviceSpec
from .framework.dtypes import (DType, as_dtype, bool, complex64, complex128, double, float16, float32,  # noqa: A004
                               float32_ref, float64, float64_ref, half, int8, int16, int32, int32_ref, int64,
                               int64_ref, resource, string, uint8, uint16, uint32, uint64, variant)
from .framework.graph import (Graph, GraphKeys, Operation, Tensor, get_default_graph,
                              reset_default_graph)
from .framework.graph_def import import_graph_def
from .framework.graph_proto import AttrValueProto as AttrValue, GraphDefProto as GraphDef, NodeDefProto as NodeDef
from .framework.tensor_util import TensorProto, make_ndarray, make_tensor_proto
from .framework import graph_util
from .framework.op_builder import constant, convert_to_tensor, register_tensor_conversion_function
from .framework.registry import NO_GRADIENT
from .framework.tensor_shape import Dimension, TensorShape
from . import ops as _ops  # noqa: F401 - registers every op, kernel and gradient
from . import runtime as _runtime  # noqa: F401 - registers the transfer kernels
from .ops.array_ops import (boolean_mask, broadcast_to, concat, expand_dims, fill, gather, identity,
                            invert_permutation, newaxis, one_hot, ones, ones_like, pad, placeholder,
                            placeholder_with_default, rank, reshape, reverse, reverse_v2, shape, size, slice,
                            split, squeeze, stack, stop_gradient, strided_slice, tile, transpose,
                            unsorted_segment_sum, unstack, zeros, zeros_like)
from .ops.control_ops import Assert, Print, check_numerics, group, no_op, tuple, with_dependencies  # noqa: A004
from .ops.control_flow_ops import case, cond, while_loop
from .ops.math_ops import (abs, add, add_n, argmax, argmin, cast, ceil, clip_by_value, cos,  # noqa: A004
                           count_nonzero, cumprod, cumsum, div, divide, equal, erf, exp, expm1, floor, floordiv,
                           floormod, greater, greater_equal, less, less_equal, log, log1p, logical_and,
                           logical_not, logical_or, logical_xor, matmul, maximum, minimum, mod, multiply, neg,
                           negative, not_equal, pow, range, realdiv, truncatediv, reciprocal, reduce_all, reduce_any,
                           reduce_logsumexp, reduce_max, reduce_mean, reduce_min, reduce_prod, reduce_sum, round,
                           rsqrt, sigmoid, sign, sin, sqrt, square, squared_difference, sub, subtract, tanh,
                           to_double, to_float, to_int32, to_int64, truediv, where, where_v2)
from .ops.math_ops import (acos, acosh, angle, asin, asinh, atan, atan2, atanh, conj, cosh, erfc,
                           floor_div, imag, log_sigmoid, real, rint, scalar_mul, sinh, tan, truncatemod)
from .ops.random_ops import (multinomial, random_normal, random_shuffle, random_uniform, set_random_seed,
                             truncated_normal)
from .ops.state_ops import assign, assign_add, assign_sub
from .ops.variables import (Variable, all_variables, assert_variables_initialized, constant_initializer,
                            global_variables, global_variables_initializer, glorot_normal_initializer,
                            glorot_uniform_initializer, initialize_all_variables, is_variable_initialized,
                            local_variables, local_variables_initializer, model_variables, ones_initializer,
                            random_normal_initializer, random_uniform_initializer, report_uninitialized_variables,
                            trainable_variables, truncated_normal_initializer, variance_scaling_initializer,
                            variables_initializer, zeros_initializer)
from .ops.clip_ops import clip_by_global_norm, clip_by_norm, global_norm, norm
from .ops.extra_ops import (argsort, assert_equal, assert_greater, assert_greater_equal, assert_less,
                            assert_less_equal, assert_negative, assert_non_negative, assert_non_positive,
                            assert_none_equal, assert_positive, assert_rank, assert_rank_at_least, assert_type,
                            div_no_nan, einsum, eye, gather_nd, identity_n, is_finite, is_inf, is_nan, lin_space,
                            linspace, matrix_diag, matrix_diag_part, matrix_set_diag, py_func, scatter_nd,
                            segment_max, segment_mean, segment_min, segment_sum, sequence_mask, sort, tensordot,
                            unique, unsorted_segment_max, unsorted_segment_min)
from .ops.variable_scope import (AUTO_REUSE, VariableScope, get_local_variable, get_variable,
                                 get_variable_scope, no_regularizer, variable_op_scope, variable_scope)
from .gradients import gradients, hessians
from .framework_api import (custom_gradient, dimension_at_index, dimension_value,
                            executing_eagerly_outside_functions, get_logger, get_static_value, grad_pass_through,
                            init_scope, is_tensor, no_gradient)
from .ops.control_flow_ops import switch_case
from .strings import print_v2 as print  # noqa: A004 - the TF name
from .ops.extra_ops import numpy_function, py_function
from .ops.variable_scope import make_template
from .variable_partitioners import (create_partitioned_variables, fixed_size_partitioner,  # noqa: F401
                                    min_max_variable_partitioner, variable_axis_size_partitioner)
from .summary import Event, SessionLog, Summary, SummaryMetadata
from .summary.encode import HistogramProto
from .ops.array_ops import (batch_to_space, batch_to_space_nd, depth_to_space, meshgrid, repeat, roll,
                             space_to_batch, space_to_batch_nd, space_to_depth)
from .ops.extra_ops import (accumulate_n, bincount, confusion_matrix, is_non_decreasing,
                            is_strictly_increasing, unsorted_segment_mean, unsorted_segment_sqrt_n)
from .recompute import recompute_grad
from .tensor_array import TensorArray
from .functional import foldl, foldr, map_fn, scan
from .data_flow import (FIFOQueue, FixedLengthRecordReader, IdentityReader, PaddingFIFOQueue, PriorityQueue,
                        QueueBase, RandomShuffleQueue, ReaderBase, TextLineReader, WholeFileReader, count_up_to,
                        matching_files, read_file, write_file)
from .data_flow.accumulators import (ConditionalAccumulator, ConditionalAccumulatorBase,  # noqa: F401
                                   SparseConditionalAccumulator)
from .framework.indexed_slices import IndexedSlices
from .ops.sparse_training_ops import scatter_add, scatter_sub, scatter_update
from .rnn import reverse_sequence
from .special_math import betainc, digamma, igamma, igammac, lbeta, lgamma, polygamma, zeta
from .array_extras import (batch_gather, batch_scatter_update, bitcast, ensure_shape, histogram_fixed_width,
                           histogram_fixed_width_bins, parallel_stack, saturate_cast, scatter_div, scatter_max,
                           scatter_min, scatter_mul, scatter_nd_add, scatter_nd_sub, scatter_nd_update, searchsorted,
                           segment_prod, setdiff1d, shape_n, tensor_scatter_add, tensor_scatter_nd_add,
                           tensor_scatter_nd_max, tensor_scatter_nd_min, tensor_scatter_nd_sub,
                           tensor_scatter_nd_update, tensor_scatter_sub, tensor_scatter_update, unique_with_counts,
                           unravel_index, unsorted_segment_prod)
from .records import (FixedLenFeature, FixedLenSequenceFeature, TFRecordReader, VarLenFeature,  # noqa: F401
                      decode_base64, decode_compressed, decode_csv, decode_json_example, decode_raw, encode_base64,
                      parse_example, parse_single_example, parse_single_sequence_example, parse_tensor,
                      serialize_tensor)
from .stateless_random import random_gamma, random_poisson  # noqa: F401
from .image import random_crop  # noqa: F401
from .image import extract_image_patches  # noqa: F401
from .linear_algebra import (cholesky, cholesky_solve, cross, diag, diag_part, matrix_band_part, matrix_determinant,
                             matrix_inverse, matrix_solve, matrix_solve_ls, matrix_square_root, matrix_transpose,
                             matrix_triangular_solve, qr, self_adjoint_eig, self_adjoint_eigvals, svd, trace)
from .sparse import (SparseTensor, SparseTensorValue, convert_to_tensor_or_sparse_tensor, setdiff1d,  # noqa: F401
                     sparse_add, sparse_concat, sparse_fill_empty_rows, sparse_mask, sparse_maximum, sparse_merge,
                     sparse_minimum, sparse_placeholder, sparse_reduce_max, sparse_reduce_max_sparse,
                     sparse_reduce_sum, sparse_reduce_sum_sparse, sparse_reorder, sparse_reset_shape, sparse_reshape,
                     sparse_retain, sparse_segment_mean, sparse_segment_sqrt_n, sparse_segment_sum, sparse_slice,
                     sparse_softmax, sparse_split, sparse_tensor_dense_matmul, sparse_tensor_to_dense,
                     sparse_to_dense, sparse_to_indicator, sparse_transpose)
from . import sparse  # noqa: E402 - the tf.sparse namespace
from .ctc import edit_distance  # noqa: E402
from . import sets  # noqa: E402 - tf.sets
from .sparse import deserialize_many_sparse, serialize_many_sparse, serialize_sparse, sparse_matmul  # noqa: F401, E402
sparse.SparseConditionalAccumulator = SparseConditionalAccumulator
from .client.config import (ConfigProto, GPUOptions, GraphOptions, RunMetadata, RunOptions,
                            SimOptions)
from .client.session import InteractiveSession, Session, get_default_session
from .client import session_backends as _session_backends


def _load_session_backends():
    """Sessions to targets other than '' (zmq://) are served by graphrt.distributed, loaded on first use."""
    from . import distributed  # noqa: F401 - registers its backends


_session_backends.add_loader(_load_session_backends)
from . import resource_variables  # noqa: F401,E402 - TF 2's VarHandleOp variables
from . import queue  # noqa: F401,E402 - tf.queue
from . import control_flow_v2  # noqa: F401,E402 - TF 2's While/If and TensorList ops, for imported graphs
from . import quantization  # noqa: F401,E402 - tf.quantization (fake quantization)
from .quantization import (fake_quant_with_min_max_args, fake_quant_with_min_max_args_gradient,  # noqa: F401,E402
                           fake_quant_with_min_max_vars, fake_quant_with_min_max_vars_gradient,
                           fake_quant_with_min_max_vars_per_channel, fake_quant_with_min_max_vars_per_channel_gradient)
from . import nn, train, initializers, logging, math, random, compat, layers, losses, linalg, debugging  # noqa: F401
from . import manip, test  # noqa: F401, E402 - tf.manip, tf.test
from .initializers import Orthogonal as orthogonal_initializer  # noqa: F401, E402
from .ops.variables import (UniformUnitScaling as uniform_unit_scaling_initializer,  # noqa: F401, E402
                            moving_average_variables)
from . import bitwise  # noqa: F401
from . import contrib, distribute, infeed, memory_stats  # noqa: F401
from . import summary  # noqa: F401 - registers the summary ops
from . import gfile, io  # noqa: F401
from . import python_io  # noqa: F401
from . import data  # noqa: F401
from . import distributions  # noqa: F401
from . import signal  # noqa: F401, E402 - tf.signal
from .signal import fft, fft2d, fft3d, ifft, ifft2d, ifft3d, spectral  # noqa: F401, E402
from . import image  # noqa: F401
from . import strings  # noqa: F401 - tf.strings
from . import lookup  # noqa: F401 - tf.lookup
from . import feature_column  # noqa: F401 - tf.feature_column
from .lookup import initialize_all_tables, tables_initializer
from .strings import as_string, reduce_join, regex_replace, string_split, substr
from .strings import (join as string_join, strip as string_strip, to_hash_bucket as string_to_hash_bucket,
                      to_hash_bucket_fast as string_to_hash_bucket_fast,
                      to_hash_bucket_strong as string_to_hash_bucket_strong, to_number as string_to_number)
from . import metrics  # noqa: F401
from .partition_stitch import dynamic_partition, dynamic_stitch  # noqa: E402
from .array_extras import broadcast_dynamic_shape, guarantee_const  # noqa: E402
from .ops.control_ops import timestamp  # noqa: E402
from .ops.math_ops import complex  # noqa: E402, A004 - the TF name
from . import nest  # noqa: F401, E402 - tf.nest
from .framework_extras import (COMPILER_VERSION, GIT_VERSION, GRAPH_DEF_VERSION,  # noqa: F401, E402
                               GRAPH_DEF_VERSION_MIN_CONSUMER, GRAPH_DEF_VERSION_MIN_PRODUCER, VERSION,
                               AggregationMethod, UnconnectedGradients, add_check_numerics_ops, assert_integer,
                               assert_near, assert_proper_iterable, assert_rank_in, assert_same_float_dtype,
                               assert_scalar, broadcast_static_shape, clip_by_average_norm, container,
                               convert_to_tensor_or_indexed_slices, initialize_local_variables,
                               initialize_variables, is_numeric_tensor, op_scope, required_space_to_batch_paddings,
                               to_complex64, to_complex128, vectorized_map, verify_tensor_all_finite)
from .behavior_switches import (control_flow_v2_enabled, disable_control_flow_v2,  # noqa: F401, E402
                                disable_resource_variables, disable_tensor_equality, disable_v2_tensorshape,
                                enable_control_flow_v2, enable_eager_execution, enable_resource_variables,
                                enable_tensor_equality, enable_v2_behavior, enable_v2_tensorshape,
                                resource_variables_enabled)
from . import saved_model  # noqa: F401 - tf.saved_model

NoGradient = NO_GRADIENT
mul, sub = multiply, subtract  # names from before TF 1.0 that old programs still use


def arg_max(input, dimension, output_type=int64, name=None):  # noqa: A002 - the TF name
    """TF 1.x's `tf.arg_max(input, dimension)`: argmax under its older name."""
    return argmax(input, dimension, output_type=output_type, name=name)


def arg_min(input, dimension, output_type=int64, name=None):  # noqa: A002 - the TF name
    """TF 1.x's `tf.arg_min(input, dimension)`: argmin under its older name."""
    return argmin(input, dimension, output_type=output_type, name=name)

__version__ = "0.1.0"


def name_scope(name, default_name=None, values=None):
    """TF1 `tf.name_scope(name, default_name=None, values=None)`."""
    from .framework.graph import graph_of
    g = graph_of(values or [])
    return _graph_scope(g, g.name_scope, default_name if name is None else name)


def control_dependencies(control_inputs):
    return get_default_graph().control_dependencies(control_inputs)


def device(device_name_or_function):
    return get_default_graph().device(device_name_or_function)


def colocate_with(op, ignore_existing=False):
    return get_default_graph().colocate_with(op, ignore_existing)


def get_collection(key, scope=None):
    return get_default_graph().get_collection(key, scope)


def get_collection_ref(key):
    return get_default_graph().get_collection_ref(key)


def add_to_collection(name, value):
    get_default_graph().add_to_collection(name, value)


def add_to_collections(names, value):
    get_default_graph().add_to_collections(names, value)


def get_seed(op_seed):
    from .ops.random_ops import get_seed as _get_seed
    return _get_seed(op_seed)


def RegisterGradient(op_type):  # noqa: N802 - the TF name
    from .framework.registry import register_gradient
    return register_gradient(op_type)


def NotDifferentiable(op_type):  # noqa: N802 - the TF name
    from .framework.registry import not_differentiable
    not_differentiable(op_type)


def disable_eager_execution():
    """graphrt only has graph mode; accepted for tf.compat.v1 scripts."""


def disable_v2_behavior():
    """graphrt only has TF1 behavior; accepted for tf.compat.v1 scripts."""


def executing_eagerly():
    return False


class _graph_scope:
    """Enters `graph.as_default()` and one of its scopes together (name_scope over values' graph)."""

    def __init__(self, graph, scope_fn, arg):
        self._graph, self._scope_fn, self._arg = graph, scope_fn, arg

    def __enter__(self):
        self._default = self._graph.as_default()
        self._default.__enter__()
        self._scope = self._scope_fn(self._arg)
        return self._scope.__enter__()

    def __exit__(self, *exc):
        self._scope.__exit__(*exc)
        self._default.__exit__(*exc)
        return False


def __getattr__(name):
    # tf.app and tf.flags load absl (~50 ms) only for the scripts that use them
    if name in ("app", "flags"):
        import importlib
        app = importlib.import_module(".app", __name__)
        return app if name == "app" else app.flags
    raise AttributeError(f"module 'graphrt' has no attribute '{name}'")
