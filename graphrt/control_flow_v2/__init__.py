"""TensorFlow 2's functional control flow, so the graphs TF 2 writes from compat.v1 code import and run:
`While`/`StatelessWhile` and `If`/`StatelessIf` call their branch and body functions (a GraphDef's
function library) on the host (`functional_ops.py`), and the `TensorList` ops hold the lists a
TF 2 `dynamic_rnn` or `while_loop` keeps its per-step values in (`tensor_list.py`).

graphrt's own `tf.cond` and `tf.while_loop` build TF 1's frames; these ops are for imported graphs.
graphrt builds no gradient of a functional op; a training graph TF 2 wrote carries gradient
functions of its own (While loops that pop, set and add TensorLists), and those run: a TensorList
adds element by element and has zeros, so AddN and ZerosLike take it.
"""
from . import functional_ops, tensor_list  # noqa: F401 - registers the ops and kernels
