"""TensorFlow 2's functional control flow, so the graphs TF 2 writes from compat.v1 code import and run:
`While`/`StatelessWhile` and `If`/`StatelessIf` call their branch and body functions (a GraphDef's
function library) on the host (`functional_ops.py`), and the `TensorList` ops hold the lists a
TF 2 `dynamic_rnn` or `while_loop` keeps its per-step values in (`tensor_list.py`).

graphrt's own `tf.cond` and `tf.while_loop` build TF 1's frames; these ops are for imported graphs.
They run forward only: graphrt builds no gradient of a functional op, and the gradient functions
TF 2 writes for a loop (which add TensorLists) do not import yet.
"""
from . import functional_ops, tensor_list  # noqa: F401 - registers the ops and kernels
