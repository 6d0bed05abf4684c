"""`tf.linalg`: the linear-algebra names graphrt has."""
from .ops.clip_ops import norm  # noqa: F401
from .ops.extra_ops import einsum, eye, tensordot  # noqa: F401
from .ops.extra_ops import matrix_diag as diag, matrix_diag_part as diag_part, matrix_set_diag as set_diag  # noqa: F401
from .ops.math_ops import matmul  # noqa: F401
from .ops.clip_ops import global_norm  # noqa: F401
from .ops.nn_ops import l2_normalize  # noqa: F401
from .linear_algebra import (adjoint, band_part, cholesky, cholesky_solve, cross, det, eigh,  # noqa: F401
                             eigvalsh, expm, inv, logdet, lstsq, matrix_transpose, matvec, qr, slogdet, solve,
                             sqrtm, svd, tensor_diag, tensor_diag_part, trace, triangular_solve)
from .linear_algebra import (logm, lu, lu_matrix_inverse, lu_reconstruct, lu_solve, matrix_rank,  # noqa: F401
                             normalize, pinv, tridiagonal_matmul, tridiagonal_solve)
from .linear_algebra import matrix_transpose as transpose  # noqa: F401 - TF's tf.linalg.transpose
