"""`tf.saved_model.utils`: TensorInfo protos (meta_graph.proto) from tensors and back.

A dense tensor is named by `name`; a SparseTensor by its three component
tensors (`coo_sparse`), as TensorFlow writes them."""
from tensorboard.compat.proto import meta_graph_pb2, types_pb2

from ..framework import tensor_util
from ..framework.graph import get_default_graph
from ..framework.tensor_shape import TensorShape
from ..sparse import SparseTensor

TensorInfo = meta_graph_pb2.TensorInfo


def build_tensor_info(tensor):
    """The TensorInfo of a Tensor or SparseTensor: its name(s), dtype and static shape."""
    dtype = getattr(tensor, "dtype", None)
    if dtype is None or not hasattr(tensor, "get_shape"):
        raise TypeError(f"build_tensor_info expects a Tensor or SparseTensor, got {type(tensor).__name__}: "
                        f"{tensor!r}")
    info = TensorInfo(dtype=tensor_util.dtype_to_enum(dtype.base_dtype),
                      tensor_shape=tensor_util.shape_to_proto(tensor.get_shape()))
    if isinstance(tensor, SparseTensor):
        info.coo_sparse.values_tensor_name = tensor.values.name
        info.coo_sparse.indices_tensor_name = tensor.indices.name
        info.coo_sparse.dense_shape_tensor_name = tensor.dense_shape.name
    else:
        info.name = tensor.name
    return info


def build_tensor_info_from_op(op):
    """A TensorInfo naming an op (dtype DT_INVALID, unknown shape): how init and train ops
    are kept in a SignatureDef."""
    return TensorInfo(dtype=types_pb2.DT_INVALID, tensor_shape=tensor_util.shape_to_proto(TensorShape(None)),
                      name=op.name)


def _scoped(name, import_scope):
    return f"{import_scope}/{name}" if import_scope else name


def get_tensor_from_tensor_info(tensor_info, graph=None, import_scope=None):
    """The Tensor or SparseTensor in `graph` (default graph) that `tensor_info` names."""
    graph = graph or get_default_graph()

    def tensor(name):
        return graph.get_tensor_by_name(_scoped(name, import_scope))

    encoding = tensor_info.WhichOneof("encoding")
    if encoding == "name":
        return tensor(tensor_info.name)
    if encoding == "coo_sparse":
        coo = tensor_info.coo_sparse
        return SparseTensor(tensor(coo.indices_tensor_name), tensor(coo.values_tensor_name),
                            tensor(coo.dense_shape_tensor_name))
    raise ValueError(f"Invalid TensorInfo.encoding: {encoding}. Expected `coo_sparse` or `name` for a dense "
                     "tensor.")


def get_element_from_tensor_info(tensor_info, graph=None, import_scope=None):
    """The Operation or Tensor in `graph` that `tensor_info` names."""
    graph = graph or get_default_graph()
    return graph.as_graph_element(_scoped(tensor_info.name, import_scope))
