"""TF 2.x's stateless random ops, so the graphs TensorFlow 2 writes (dropout in compat.v1 graphs,
`tf.random.stateless_*`) import and run: `StatelessRandomGetKeyCounter` (and `...Alg`,
`StatelessRandomGetAlg`) turn a seed into a key and a counter, and the V2 draws
(`StatelessRandomUniformV2`, `NormalV2`, `TruncatedNormalV2`, `UniformIntV2`, `UniformFullIntV2`)
take them. As graphrt's V1 stateless ops, equal key, counter and algorithm give equal numbers in
any run; TF's Philox numbers are not reproduced (README).
"""
import zlib

import numpy as np

from .. import errors
from ..framework import dtypes
from ..framework.registry import not_differentiable, register_kernel, register_op
from ..framework.tensor_shape import TensorShape
from ..ops.random_ops import _shape_arg, _shape_from_input
from .kernels import _full_int, _normal, _truncated, _uniform, _uniform_int
from .ops import _FLOATS, _SHAPE_TYPES

_U64 = (1 << 64) - 1
_PHILOX = 1  # TF's RNG_ALG_PHILOX, what GetKeyCounterAlg and GetAlg answer on a CPU

register_op("StatelessRandomGetKeyCounter", ["seed: Tseed"], ["key: uint64", "counter: uint64"],
            shape_fn=lambda ctx: [TensorShape([1]), TensorShape([2])], allowed_types={"Tseed": _SHAPE_TYPES})
register_op("StatelessRandomGetKeyCounterAlg", ["seed: Tseed"], ["key: uint64", "counter: uint64", "alg: int32"],
            shape_fn=lambda ctx: [TensorShape([1]), TensorShape([2]), TensorShape([])],
            allowed_types={"Tseed": _SHAPE_TYPES})
register_op("StatelessRandomGetAlg", [], ["alg: int32"], shape_fn=lambda ctx: TensorShape([]))
_V2_INPUTS = ["shape: Tshape", "key: uint64", "counter: uint64", "alg: int32"]
for _name in ("StatelessRandomUniformV2", "StatelessRandomNormalV2", "StatelessTruncatedNormalV2"):
    register_op(_name, _V2_INPUTS, ["output: dtype"], attrs={"dtype": dtypes.float32, "Tshape": dtypes.int32},
                shape_fn=_shape_from_input, allowed_types={"dtype": _FLOATS, "Tshape": _SHAPE_TYPES})
register_op("StatelessRandomUniformIntV2", _V2_INPUTS + ["minval: dtype", "maxval: dtype"], ["output: dtype"],
            attrs={"Tshape": dtypes.int32}, shape_fn=_shape_from_input,
            allowed_types={"dtype": _SHAPE_TYPES + (dtypes.uint32, dtypes.uint64), "Tshape": _SHAPE_TYPES})
register_op("StatelessRandomUniformFullIntV2", _V2_INPUTS, ["output: dtype"],
            attrs={"dtype": dtypes.uint64, "Tshape": dtypes.int32}, shape_fn=_shape_from_input,
            allowed_types={"dtype": _SHAPE_TYPES + (dtypes.uint32, dtypes.uint64), "Tshape": _SHAPE_TYPES})
for _name in ("StatelessRandomGetKeyCounter", "StatelessRandomGetKeyCounterAlg", "StatelessRandomGetAlg",
              "StatelessRandomUniformV2", "StatelessRandomNormalV2", "StatelessTruncatedNormalV2",
              "StatelessRandomUniformIntV2", "StatelessRandomUniformFullIntV2"):
    not_differentiable(_name)


def _key_counter(seed, node):
    seed = np.asarray(seed)
    if seed.shape != (2,):
        raise errors.InvalidArgumentError(f"seed must have shape [2], not {list(seed.shape)}", node=node)
    return np.array([int(seed[0]) & _U64], np.uint64), np.array([0, int(seed[1]) & _U64], np.uint64)


@register_kernel("StatelessRandomGetKeyCounter", ("CPU",), host_memory=("seed", "key", "counter"))
def _get_key_counter(ctx):
    return lambda seed: _key_counter(seed, ctx.name)


@register_kernel("StatelessRandomGetKeyCounterAlg", ("CPU",), host_memory=("seed", "key", "counter", "alg"))
def _get_key_counter_alg(ctx):
    return lambda seed: _key_counter(seed, ctx.name) + (np.array(_PHILOX, np.int32),)


@register_kernel("StatelessRandomGetAlg", ("CPU",), host_memory=("alg",))
def _get_alg(ctx):
    return lambda: np.array(_PHILOX, np.int32)


def _v2_kernel(op_type, draw):
    def factory(ctx):
        dtype, name = ctx.output_dtypes[0].np, ctx.name
        salt = zlib.crc32(op_type.encode())

        def kernel(shape, key, counter, alg, *params):
            key, counter = np.asarray(key).reshape(-1), np.asarray(counter).reshape(-1)
            if key.size != 1 or counter.size < 1:
                raise errors.InvalidArgumentError(f"key must have 1 element and counter at least 1, got "
                                                  f"{key.size} and {counter.size}", node=name)
            gen = np.random.default_rng([int(key[0])] + [int(c) for c in counter] + [int(alg) & _U64, salt])
            with np.errstate(all="ignore"):
                return draw(gen, _shape_arg(shape, name), dtype, name, *params)
        return kernel
    register_kernel(op_type, ("CPU",), host_memory=("shape", "key", "counter", "alg"), fresh_outputs=True)(factory)


_v2_kernel("StatelessRandomUniformV2", _uniform)
_v2_kernel("StatelessRandomNormalV2", _normal)
_v2_kernel("StatelessTruncatedNormalV2", _truncated)
_v2_kernel("StatelessRandomUniformIntV2", _uniform_int)
_v2_kernel("StatelessRandomUniformFullIntV2", _full_int)
