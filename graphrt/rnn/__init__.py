"""Recurrent networks: the cells of `tf.nn.rnn_cell` and the functions that
run them over sequences (`tf.nn.static_rnn`, `dynamic_rnn`, and their
bidirectional forms; `raw_rnn`, driven by a loop function), plus
`tf.reverse_sequence` they need."""
from . import rnn_cell  # noqa: F401
from .cells import (BasicLSTMCell, BasicRNNCell, GRUCell, LSTMCell, LSTMStateTuple, MultiRNNCell,  # noqa: F401
                    RNNCell)
from .raw_rnn import raw_rnn  # noqa: F401
from .rnn import bidirectional_dynamic_rnn, dynamic_rnn, static_bidirectional_rnn, static_rnn  # noqa: F401
from .sequence_ops import reverse_sequence  # noqa: F401
from .wrappers import DeviceWrapper, DropoutWrapper, ResidualWrapper  # noqa: F401
