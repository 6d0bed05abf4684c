"""TF1's linear algebra: `tf.matrix_inverse`, `tf.cholesky`, `tf.svd`, `tf.qr`, ... and their
`tf.linalg` names, with TF's ops (MatrixInverse, Cholesky, Svd, Qr, Lu, TridiagonalSolve, ...),
numpy kernels and TF's gradients."""
from . import ops, kernels, grad  # noqa: F401 - registers the ops, kernels and gradients
from . import lu as _lu, logm as _logm, normalize as _normalize, pinv as _pinv, tridiagonal as _tridiagonal
from .ops import (adjoint, cholesky, cholesky_solve, cross, diag, diag_part, expm, log_matrix_determinant,  # noqa: F401
                  logdet, matrix_band_part, matrix_determinant, matrix_inverse, matrix_solve, matrix_solve_ls,
                  matrix_square_root, matrix_transpose, matrix_triangular_solve, matvec, qr, self_adjoint_eig,
                  self_adjoint_eigvals, slogdet, svd, trace)

# The tf.linalg names
band_part = matrix_band_part
det = matrix_determinant
eigh = self_adjoint_eig
eigvalsh = self_adjoint_eigvals
inv = matrix_inverse
lstsq = matrix_solve_ls
solve = matrix_solve
sqrtm = matrix_square_root
tensor_diag = diag
tensor_diag_part = diag_part
triangular_solve = matrix_triangular_solve
lu = _lu.lu
lu_solve = _lu.lu_solve
lu_matrix_inverse = _lu.lu_matrix_inverse
lu_reconstruct = _lu.lu_reconstruct
logm = _logm.logm
normalize = _normalize.normalize
pinv = _pinv.pinv
matrix_rank = _pinv.matrix_rank
tridiagonal_solve = _tridiagonal.tridiagonal_solve
tridiagonal_matmul = _tridiagonal.tridiagonal_matmul

# The TF1 top-level names (`from .linear_algebra import *` in graphrt/__init__.py)
__all__ = ["cholesky", "cholesky_solve", "cross", "diag", "diag_part", "matrix_band_part", "matrix_determinant",
           "matrix_inverse", "matrix_solve", "matrix_solve_ls", "matrix_square_root", "matrix_transpose",
           "matrix_triangular_solve", "qr", "self_adjoint_eig", "self_adjoint_eigvals", "svd", "trace"]
