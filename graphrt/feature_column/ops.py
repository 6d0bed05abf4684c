"""Bucketize, the op behind `bucketized_column` (TF's `math_ops._bucketize`): the
index of the first boundary above each value. Its kernel is `kernels.py`; it has no
gradient, as in TF. (Crosses use `sparse/cross.py`'s SparseCross.)
"""
from ..framework import dtypes
from ..framework.op_builder import apply_op
from ..framework.registry import not_differentiable, register_op
from ..ops import shape_fns

register_op("Bucketize", ["input: T"], ["output: int32"], attrs={"boundaries": []}, shape_fn=shape_fns.unchanged,
            allowed_types={"T": (dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64)})
not_differentiable("Bucketize")


def bucketize(input, boundaries, name=None):  # noqa: A002 - the TF name
    return apply_op("Bucketize", [input], name=name or "Bucketize",
                    boundaries=[float(b) for b in boundaries]).outputs[0]
