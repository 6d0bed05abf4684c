"""`tf.random`."""
from .ops.random_ops import categorical, set_random_seed, truncated_normal  # noqa: F401
from .ops.random_ops import random_normal as normal, random_shuffle as shuffle  # noqa: F401
from .ops.random_ops import random_uniform as uniform  # noqa: F401
from .ops.random_ops import get_seed, multinomial  # noqa: F401
from .stateless_random import (fold_in, split, stateless_categorical, stateless_multinomial,  # noqa: F401
                               stateless_random_binomial as stateless_binomial,
                               stateless_random_gamma as stateless_gamma, stateless_random_normal as stateless_normal,
                               stateless_random_poisson as stateless_poisson,
                               stateless_random_uniform as stateless_uniform, stateless_truncated_normal)
from .stateless_random import random_gamma as gamma, random_poisson as poisson  # noqa: F401
from .candidate_sampling import (all_candidate_sampler, fixed_unigram_candidate_sampler,  # noqa: F401
                                 log_uniform_candidate_sampler, uniform_candidate_sampler)
