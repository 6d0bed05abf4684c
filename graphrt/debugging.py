"""`tf.debugging`: asserts and numeric checks."""
from .ops.control_ops import Assert, check_numerics  # noqa: F401
from .ops.extra_ops import (assert_equal, assert_greater, assert_greater_equal, assert_less,  # noqa: F401
                            assert_less_equal, assert_negative, assert_non_negative, assert_non_positive,
                            assert_none_equal, assert_positive, assert_rank, assert_rank_at_least, assert_type,
                            is_finite, is_inf, is_nan)
from .framework_extras import (assert_integer, assert_near, assert_proper_iterable, assert_rank_in,  # noqa: F401, E402
                               assert_same_float_dtype, assert_scalar, is_numeric_tensor)
from .framework_extras import verify_tensor_all_finite as assert_all_finite  # noqa: F401, E402
from .ops.extra_ops import is_non_decreasing, is_strictly_increasing  # noqa: F401, E402
