"""`tf.initializers`, and the orthogonal initializer (it needs the QR of linear_algebra/,
which ops/variables.py, below it, cannot import)."""
from .framework import dtypes
from .linear_algebra.ops import diag_part, qr
from .ops import array_ops, math_ops
from .ops.variables import Initializer, _dims, float_dtype, random_ops_api
from .ops.variables import (Constant as constant, GlorotNormal as glorot_normal,  # noqa: F401
                            GlorotUniform as glorot_uniform, Identity as identity, Ones as ones,
                            RandomNormal as random_normal, RandomUniform as random_uniform,
                            TruncatedNormal as truncated_normal, UniformUnitScaling as uniform_unit_scaling,
                            VarianceScaling as variance_scaling, Zeros as zeros,
                            he_normal, he_uniform, lecun_normal, lecun_uniform,
                            global_variables_initializer as global_variables,
                            local_variables_initializer as local_variables,
                            variables_initializer as variables)


class Orthogonal(Initializer):
    """gain * an orthogonal matrix (rows or columns orthonormal) reshaped to `shape`: the Q
    of a normal draw's QR, its columns signed by diag(R) so Q is unique (TF's Orthogonal)."""

    def __init__(self, gain=1.0, seed=None, dtype=dtypes.float32):
        super().__init__(float_dtype(dtype))
        self.gain, self.seed = gain, seed

    def get_config(self):
        return {"gain": self.gain, "seed": self.seed, "dtype": self.dtype.name}

    def __call__(self, shape, dtype=None, partition_info=None):
        shape = _dims(shape)
        if len(shape) < 2:
            raise ValueError("The tensor to initialize, specified by argument `shape` must be at least "
                             f"two-dimensional. Received shape={shape}")
        num_rows = 1
        for d in shape[:-1]:
            num_rows *= d
        num_cols = int(shape[-1])
        flat_shape = (num_cols, num_rows) if num_rows < num_cols else (num_rows, num_cols)
        a = random_ops_api().random_normal(flat_shape, dtype=self._dtype(dtype), seed=self.seed)
        q, r = qr(a, full_matrices=False)
        q *= math_ops.sign(diag_part(r))
        if num_rows < num_cols:
            q = array_ops.transpose(q)
        return self.gain * array_ops.reshape(q, shape)


orthogonal = Orthogonal


from .lookup import tables_initializer  # noqa: F401, E402 - tf.initializers.tables_initializer
