"""Declarations of the random ops beyond `ops/random_ops.py`: gamma and
Poisson draws (seeded like TF1's stateful ops), the gradient of a gamma draw
in its concentration, and the stateless ops, whose `seed` is an input (a
shape-[2] integer tensor) rather than an attr.

The stateless ops are TF's V1 ops (`StatelessRandomUniform`, ...); TF 2.x's
`StatelessRandomGetKeyCounter` and V2 ops are in `v2.py`; numbers differ from
TF's Philox either way.
"""
from ..framework import dtypes
from ..framework.registry import not_differentiable, register_op
from ..framework.tensor_shape import TensorShape
from ..ops import shape_fns
from ..ops.random_ops import _shape_from_input

_SHAPE_TYPES = (dtypes.int32, dtypes.int64)
_FLOATS = (dtypes.float16, dtypes.float32, dtypes.float64)
_NUMBERS = _FLOATS + _SHAPE_TYPES
_SEEDS = {"seed": 0, "seed2": 0}


def _sample_shape_then(param):
    """Output shape: the `shape` input followed by the shape of input `param` (TF's RandomGamma/Poisson)."""
    def shape_fn(ctx):
        return _shape_from_input(ctx).concatenate(ctx.shape(param))
    return shape_fn


register_op("RandomGamma", ["shape: S", "alpha: T"], ["output: T"], attrs=dict(_SEEDS),
            shape_fn=_sample_shape_then(1), is_stateful=True, allowed_types={"S": _SHAPE_TYPES, "T": _FLOATS})
register_op("RandomGammaGrad", ["alpha: T", "sample: T"], ["output: T"], shape_fn=shape_fns.broadcast,
            allowed_types={"T": (dtypes.float32, dtypes.float64)})
register_op("RandomPoissonV2", ["shape: S", "rate: R"], ["output: dtype"],
            attrs={**_SEEDS, "dtype": dtypes.int64}, shape_fn=_sample_shape_then(1), is_stateful=True,
            allowed_types={"S": _SHAPE_TYPES, "R": _NUMBERS, "dtype": _NUMBERS})
not_differentiable("RandomPoissonV2")
not_differentiable("RandomGammaGrad")


def _seed_shape(ctx, i):
    s = ctx.shape(i)
    if s.ndims is not None and s.ndims != 1:
        raise ValueError(f"Shape must be rank 1 but is rank {s.ndims} for '{ctx.name}' (seed)")
    n = s.as_list()[0] if s.ndims == 1 else None
    if n is not None and n != 2:
        raise ValueError(f"Dimension must be 2 but is {n} for '{ctx.name}' (seed)")


def _stateless_shape(seed_index, param=None):
    def shape_fn(ctx):
        _seed_shape(ctx, seed_index)
        out = _shape_from_input(ctx)
        return out if param is None else out.concatenate(ctx.shape(param))
    return shape_fn


def _stateless(name, inputs, out_type, attrs, allowed, param=None):
    register_op(name, ["shape: T", "seed: Tseed"] + inputs, [f"output: {out_type}"], attrs=attrs,
                shape_fn=_stateless_shape(1, param), allowed_types={"T": _SHAPE_TYPES, "Tseed": _SHAPE_TYPES,
                                                                    **allowed})
    not_differentiable(name)


for _name in ("StatelessRandomUniform", "StatelessRandomNormal", "StatelessTruncatedNormal"):
    _stateless(_name, [], "dtype", {"dtype": dtypes.float32}, {"dtype": _FLOATS})
_stateless("StatelessRandomUniformInt", ["minval: dtype", "maxval: dtype"], "dtype", {}, {"dtype": _SHAPE_TYPES})
_stateless("StatelessRandomUniformFullInt", [], "dtype", {"dtype": dtypes.uint64},
           {"dtype": _SHAPE_TYPES + (dtypes.uint32, dtypes.uint64)})
_stateless("StatelessRandomBinomial", ["counts: dtype_in", "probs: dtype_in"], "dtype",
           {"dtype": dtypes.int64}, {"dtype_in": _FLOATS, "dtype": _NUMBERS})
_stateless("StatelessRandomPoisson", ["lam: Rtype"], "dtype", {}, {"Rtype": _FLOATS, "dtype": _NUMBERS})
# differentiable in alpha (grad.py), so registered without _stateless's not_differentiable
register_op("StatelessRandomGammaV2", ["shape: T", "seed: Tseed", "alpha: dtype"], ["output: dtype"],
            shape_fn=_stateless_shape(1), allowed_types={"T": _SHAPE_TYPES, "Tseed": _SHAPE_TYPES,
                                                         "dtype": _FLOATS})


def _stateless_multinomial_shape(ctx):
    _seed_shape(ctx, 2)
    logits = ctx.shape(0)
    if logits.ndims is not None and logits.ndims != 2:
        raise ValueError(f"Shape must be rank 2 but is rank {logits.ndims}")
    n = ctx.constant(1)
    return TensorShape([logits[0] if logits.ndims is not None else None, None if n is None else int(n)])


register_op("StatelessMultinomial", ["logits: T", "num_samples: int32", "seed: Tseed"], ["output: output_dtype"],
            attrs={"output_dtype": dtypes.int64}, shape_fn=_stateless_multinomial_shape,
            allowed_types={"T": _FLOATS, "Tseed": _SHAPE_TYPES, "output_dtype": _SHAPE_TYPES})
not_differentiable("StatelessMultinomial")
