"""`tf.serialize_sparse`, `tf.serialize_many_sparse`, `tf.deserialize_many_sparse` (and the
`tf.io` names): TF's SerializeSparse, SerializeManySparse and DeserializeManySparse with string
output, each SparseTensor as three serialized TensorProtos (indices, values, dense_shape) in
TF's bytes (AsProtoTensorContent). The variant `out_type` is not supported.
"""
import numpy as np

from .. import errors
from ..framework import dtypes
from ..framework.op_builder import apply_op
from ..framework.registry import not_differentiable, register_kernel, register_op
from ..framework.tensor_shape import TensorShape
from ..framework.tensor_util import MakeNdarray, TensorProto, dtype_to_enum, enum_to_dtype
from .sparse_tensor import SparseTensor, convert_to_tensor_or_sparse_tensor


def _serialize_shape(ctx):
    return TensorShape([3])


def _serialize_many_shape(ctx):
    return TensorShape([None, 3])


def _deserialize_shape(ctx):
    return [TensorShape([None, None]), TensorShape([None]), TensorShape([None])]


_SP = ["sparse_indices: int64", "sparse_values: T", "sparse_shape: int64"]
register_op("SerializeSparse", _SP, ["serialized_sparse: out_type"], attrs={"out_type": dtypes.string},
            shape_fn=_serialize_shape, allowed_types={"out_type": (dtypes.string,)})
register_op("SerializeManySparse", _SP, ["serialized_sparse: out_type"], attrs={"out_type": dtypes.string},
            shape_fn=_serialize_many_shape, allowed_types={"out_type": (dtypes.string,)})
register_op("DeserializeManySparse", ["serialized_sparse: string"],
            ["sparse_indices: int64", "sparse_values: dtype", "sparse_shape: int64"], shape_fn=_deserialize_shape)
for _name in ("SerializeSparse", "SerializeManySparse", "DeserializeManySparse"):
    not_differentiable(_name)


def _proto_bytes(value, dtype):
    value = np.asarray(value)
    proto = TensorProto(dtype=dtype_to_enum(dtype))
    proto.tensor_shape.SetInParent()
    for d in value.shape:
        proto.tensor_shape.dim.add(size=d)
    if dtype == dtypes.string:
        # TF's encoded string list: every length as a varint, then every string
        strings = list(value.reshape(-1))
        proto.tensor_content = b"".join(_varint(len(x)) for x in strings) + b"".join(strings)
    elif value.size:
        proto.tensor_content = np.ascontiguousarray(value, dtype=np.dtype(dtype.np).newbyteorder("<")).tobytes()
    return proto.SerializeToString(deterministic=True)


def _varint(n):
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _strings_of(proto):
    """The strings of a TensorProto: in string_val, or TF's encoded list in tensor_content."""
    if not proto.tensor_content:
        return list(proto.string_val)
    data, pos, lengths = proto.tensor_content, 0, []
    count = int(np.prod([d.size for d in proto.tensor_shape.dim]))
    for _ in range(count):
        n, shift = 0, 0
        while True:
            byte = data[pos]
            pos += 1
            n |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                break
        lengths.append(n)
    out = []
    for n in lengths:
        out.append(data[pos:pos + n])
        pos += n
    return out


def _triple(indices, values, shape, dtype):
    return [_proto_bytes(indices, dtypes.int64), _proto_bytes(values, dtype), _proto_bytes(shape, dtypes.int64)]


@register_kernel("SerializeSparse", "CPU", host_only=True, fresh_outputs=True)
def _serialize_sparse(ctx):
    dtype = ctx.attr("T")
    return lambda indices, values, shape: np.array(_triple(indices, values, shape, dtype), dtype=object)


@register_kernel("SerializeManySparse", "CPU", host_only=True, fresh_outputs=True)
def _serialize_many_sparse(ctx):
    node, dtype = ctx.name, ctx.attr("T")

    def run(indices, values, shape):
        if shape.size < 2:
            raise errors.InvalidArgumentError(f"Rank of input SparseTensor should be > 1, but saw rank: "
                                              f"{shape.size}", node=node)
        order = np.lexsort(indices.T[::-1]) if indices.shape[0] else np.arange(0)
        indices, values = indices[order], values[order]
        out = np.empty((int(shape[0]), 3), dtype=object)
        for n in range(out.shape[0]):
            rows = indices[:, 0] == n
            out[n] = _triple(indices[rows][:, 1:], values[rows], shape[1:], dtype)
        return out
    return run


@register_kernel("DeserializeManySparse", "CPU", host_only=True, fresh_outputs=True)
def _deserialize_many_sparse(ctx):
    node, dtype = ctx.name, ctx.attr("dtype")

    def parse(data, want):
        proto = TensorProto.FromString(data)
        got = enum_to_dtype(proto.dtype)
        if got != want:
            raise errors.InvalidArgumentError(f"Requested SparseTensor of type {want.name} but "
                                              f"SparseTensor.values.dtype() == {got.name}", node=node)
        if want == dtypes.string:
            return np.array(_strings_of(proto), dtype=object).reshape([d.size for d in proto.tensor_shape.dim])
        return MakeNdarray(proto)

    def run(serialized):
        serialized = np.asarray(serialized, dtype=object)
        if serialized.ndim != 2 or serialized.shape[1] != 3:
            raise errors.InvalidArgumentError("Serialized sparse should be a matrix with 3 columns but got shape "
                                              "[" + ",".join(map(str, serialized.shape)) + "]", node=node)
        parts = [(parse(i, dtypes.int64), parse(v, dtype), parse(s, dtypes.int64)) for i, v, s in serialized]
        ranks = {p[2].size for p in parts}
        if len(ranks) > 1:
            raise errors.InvalidArgumentError("Inconsistent rank across SparseTensors", node=node)
        rank = ranks.pop() if ranks else 0
        shape = np.max([p[2] for p in parts], axis=0) if parts else np.zeros(rank, np.int64)
        indices = [np.concatenate([np.full((p[0].shape[0], 1), n, np.int64), p[0].reshape(-1, rank)], axis=1)
                   for n, p in enumerate(parts)]
        return (np.concatenate(indices).reshape(-1, rank + 1) if indices else np.zeros((0, rank + 1), np.int64),
                np.concatenate([p[1] for p in parts]).astype(dtype.np) if parts else np.zeros(0, dtype.np),
                np.concatenate([[len(parts)], shape]).astype(np.int64))
    return run


def _check_out_type(out_type):
    if dtypes.as_dtype(out_type) != dtypes.string:
        raise NotImplementedError("serializing a SparseTensor to a variant is not supported by graphrt")


def serialize_sparse(sp_input, name=None, out_type=dtypes.string):
    """A string 3-vector: the TensorProtos of indices, values and dense_shape."""
    _check_out_type(out_type)
    sp_input = convert_to_tensor_or_sparse_tensor(sp_input)
    return apply_op("SerializeSparse", [sp_input.indices, sp_input.values, sp_input.dense_shape],
                    name=name or "SerializeSparse").outputs[0]


def serialize_many_sparse(sp_input, name=None, out_type=dtypes.string):
    """A string [N, 3] matrix: row n serializes the minibatch entry n (rank - 1 dims)."""
    _check_out_type(out_type)
    sp_input = convert_to_tensor_or_sparse_tensor(sp_input)
    return apply_op("SerializeManySparse", [sp_input.indices, sp_input.values, sp_input.dense_shape],
                    name=name or "SerializeManySparse").outputs[0]


def deserialize_many_sparse(serialized_sparse, dtype, rank=None, name=None):
    """One SparseTensor of rank + 1 from N serialized ones: entry n at index n of the first dimension,
    its other dimensions the largest of the N."""
    indices, values, shape = apply_op("DeserializeManySparse", [serialized_sparse], name=name or
                                      "DeserializeManySparse", dtype=dtypes.as_dtype(dtype)).outputs
    indices.set_shape([None, rank])
    shape.set_shape([rank])
    return SparseTensor(indices, values, shape)

