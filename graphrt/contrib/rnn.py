"""`tf.contrib.rnn`: the RNN cells and the static rnn functions under their contrib names."""
from ..rnn.cells import (BasicLSTMCell, BasicRNNCell, GRUCell, LSTMCell, LSTMStateTuple,  # noqa: F401
                         MultiRNNCell, RNNCell)
from ..rnn.rnn import static_bidirectional_rnn, static_rnn  # noqa: F401
from ..rnn.wrappers import DeviceWrapper, DropoutWrapper, ResidualWrapper  # noqa: F401
