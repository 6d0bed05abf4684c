"""`tf.linalg.normalize`: (tensor / norm, norm) with `tf.norm`'s norm kept in the reduced
dimensions, as TF's Python builds it (a complex tensor's norm is complex, as in TF)."""
from ..framework.graph import get_default_graph
from ..framework.op_builder import convert_to_tensor
from ..ops import clip_ops, math_ops


def normalize(tensor, ord="euclidean", axis=None, name=None):  # noqa: A002
    """(tensor / norm, norm): the norm over `axis` (None: all elements), the reduced dims kept."""
    with get_default_graph().name_scope(name or "normalize"):
        tensor = convert_to_tensor(tensor)
        norm = math_ops.cast(clip_ops.norm(tensor, ord, axis, keepdims=True), tensor.dtype)
        return tensor / norm, norm
