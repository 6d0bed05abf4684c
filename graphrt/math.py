"""`tf.math`: the math ops under their tf.math names."""
from .ops.math_ops import (abs, add, add_n, argmax, argmin, ceil, cos, count_nonzero, cumprod,  # noqa: F401,A004
                           cumsum, divide, equal, erf, exp, expm1, floor, floordiv, floormod, greater,
                           greater_equal, less, less_equal, log, log1p, logical_and, logical_not, logical_or,
                           logical_xor, maximum, minimum, multiply, negative, not_equal, pow, reciprocal,
                           reduce_all, reduce_any, reduce_logsumexp, reduce_max, reduce_mean, reduce_min,
                           reduce_prod, reduce_sum, round, rsqrt, sigmoid, sign, sin, sqrt, square,
                           squared_difference, subtract, tanh, truediv)
from .ops.math_ops import floormod as mod  # noqa: F401
from .ops.extra_ops import (div_no_nan as divide_no_nan, is_finite, is_inf, is_nan, segment_max,  # noqa: F401
                            segment_mean, segment_min, segment_sum, unsorted_segment_max, unsorted_segment_min)
from .ops.array_ops import unsorted_segment_sum  # noqa: F401
from .array_extras import segment_prod, unsorted_segment_prod  # noqa: F401
from .ops.nn_ops import top_k  # noqa: F401
from .special_math import (bessel_i0, bessel_i0e, bessel_i1, bessel_i1e, betainc, digamma, erfinv,  # noqa: F401
                           igamma, igammac, lbeta, lgamma, ndtri, polygamma, zeta)
from .ops.extra_ops import (accumulate_n, bincount, confusion_matrix, cumulative_logsumexp,  # noqa: F401
                            is_non_decreasing, is_strictly_increasing, polyval, reduce_euclidean_norm, reduce_std,
                            reduce_variance, unsorted_segment_mean, unsorted_segment_sqrt_n)
from .ops.nn_ops import in_top_k, l2_normalize, log_softmax, softmax, zero_fraction  # noqa: F401
from .ops.math_ops import (acos, acosh, angle, asin, asinh, atan, atan2, atanh, conj, cosh, erfc, imag,  # noqa: F401
                           log_sigmoid, multiply_no_nan, nextafter, real, reciprocal_no_nan, rint, scalar_mul, sinh,
                           tan, xdivy, xlog1py, xlogy)
from .ops.nn_ops import softplus, softsign  # noqa: F401
from .ops.array_ops import invert_permutation  # noqa: F401,E402
from .framework_extras import erfcinv  # noqa: F401,E402
