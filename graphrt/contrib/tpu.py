"""`tf.contrib.tpu`: the parts graphrt has, the infeed ops and InfeedQueue (graphrt/infeed/),
which run on any CPU or SIM device."""
from ..infeed import (InfeedQueue, infeed_dequeue, infeed_dequeue_tuple, infeed_enqueue,  # noqa: F401
                      infeed_enqueue_tuple)
