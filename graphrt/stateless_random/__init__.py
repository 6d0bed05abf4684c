"""Random ops beyond `ops/random_ops.py`: gamma and Poisson draws (with the
gradient of a gamma draw in its concentration) and TF's stateless random ops,
deterministic in a shape-[2] `seed` tensor. `ops.py` declares them,
`kernels.py` draws with numpy, `grad.py` differentiates gamma draws, `api.py`
is the TF1 API; `v2.py` holds TF 2's key/counter ops (so TF 2's graphs import). Importing registers
everything."""
from . import v2  # noqa: F401 - TF 2's stateless ops
from .api import (fold_in, random_gamma, random_poisson, random_poisson_v2, split,  # noqa: F401
                  stateless_categorical, stateless_multinomial, stateless_random_binomial, stateless_random_gamma,
                  stateless_random_normal, stateless_random_poisson, stateless_random_uniform,
                  stateless_truncated_normal)
