"""TF1's `tf.distributions` (tensorflow/python/ops/distributions): the
`Distribution` base (`distribution.py`), scalar continuous distributions
(`continuous.py`), class and count distributions (`discrete.py`) and KL
divergences (`kullback_leibler.py`), all built from graphrt ops as TF builds
them; samples come from graphrt's random ops (numpy draws, other numbers
than TF's)."""
from .continuous import Beta, Exponential, Gamma, Laplace, Normal, StudentT, Uniform  # noqa: F401
from .discrete import Bernoulli, Categorical, Dirichlet, DirichletMultinomial, Multinomial  # noqa: F401
from .distribution import (FULLY_REPARAMETERIZED, NOT_REPARAMETERIZED, Distribution,  # noqa: F401
                           ReparameterizationType)
from .kullback_leibler import RegisterKL, kl_divergence  # noqa: F401
