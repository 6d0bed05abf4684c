"""CTC and edit distance: `tf.nn.ctc_loss` (TF's CTCLoss op and its
gradient), `ctc_loss_v2` (dense labels too), the greedy and beam-search
decoders, `collapse_repeated`, `ctc_unique_labels`, and `tf.edit_distance`.

`ops.py` declares the ops, `kernels.py` registers their CPU kernels over
`loss.py` (CTCLoss's forward-backward), `dense.py` (the dense labels' one),
`beam_search.py` and `edit_distance.py`; `grad.py` the gradients; `api.py`
the TF1 functions. Importing registers them.
"""
from . import grad as _grad, kernels as _kernels  # noqa: F401 - registers kernels and gradients
from .api import (collapse_repeated, ctc_beam_search_decoder, ctc_beam_search_decoder_v2,  # noqa: F401
                  ctc_greedy_decoder, ctc_loss, ctc_loss_v2, ctc_unique_labels, edit_distance)
