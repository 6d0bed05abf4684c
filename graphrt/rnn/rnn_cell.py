"""`tf.nn.rnn_cell`: the cell classes under their TF1 names."""
from .cells import (BasicLSTMCell, BasicRNNCell, GRUCell, LSTMCell, LSTMStateTuple, MultiRNNCell,  # noqa: F401
                    RNNCell)
from .wrappers import DeviceWrapper, DropoutWrapper, ResidualWrapper  # noqa: F401
