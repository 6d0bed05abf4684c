"""The protos of TensorFlow's checkpoint index (tensor_bundle.proto), with TF's
field numbers. tensorboard ships TF's other protos but not these two, so they
are declared here as a descriptor and built by protobuf itself (no hand-made
encoding): BundleHeaderProto (the entry under the empty key),
BundleEntryProto (one per tensor: dtype, shape, shard, offset, size, crc32c)
and CheckpointState (the text `checkpoint` file listing recent checkpoints).
"""
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from tensorboard.compat.proto import tensor_shape_pb2, types_pb2, versions_pb2

_F = descriptor_pb2.FieldDescriptorProto


def _build():
    fd = descriptor_pb2.FileDescriptorProto(name="graphrt/tensor_bundle.proto", package="tensorflow",
                                            syntax="proto3")
    fd.dependency.extend([tensor_shape_pb2.DESCRIPTOR.name, types_pb2.DESCRIPTOR.name,
                          versions_pb2.DESCRIPTOR.name])

    def field(msg, name, number, ftype, type_name=None, repeated=False):
        f = msg.field.add(name=name, number=number, type=ftype,
                          label=_F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL)
        if type_name:
            f.type_name = type_name

    slice_msg = fd.message_type.add(name="TensorSliceProto")
    extent = slice_msg.nested_type.add(name="Extent")
    field(extent, "start", 1, _F.TYPE_INT64)
    field(extent, "length", 2, _F.TYPE_INT64)
    extent.oneof_decl.add(name="has_length")
    extent.field[1].oneof_index = 0
    field(slice_msg, "extent", 1, _F.TYPE_MESSAGE, ".tensorflow.TensorSliceProto.Extent", repeated=True)

    header = fd.message_type.add(name="BundleHeaderProto")
    endianness = header.enum_type.add(name="Endianness")
    endianness.value.add(name="LITTLE", number=0)
    endianness.value.add(name="BIG", number=1)
    field(header, "num_shards", 1, _F.TYPE_INT32)
    field(header, "endianness", 2, _F.TYPE_ENUM, ".tensorflow.BundleHeaderProto.Endianness")
    field(header, "version", 3, _F.TYPE_MESSAGE, "." + versions_pb2.VersionDef.DESCRIPTOR.full_name)

    entry = fd.message_type.add(name="BundleEntryProto")
    field(entry, "dtype", 1, _F.TYPE_ENUM, "." + types_pb2.DataType.DESCRIPTOR.full_name)
    field(entry, "shape", 2, _F.TYPE_MESSAGE, "." + tensor_shape_pb2.TensorShapeProto.DESCRIPTOR.full_name)
    field(entry, "shard_id", 3, _F.TYPE_INT32)
    field(entry, "offset", 4, _F.TYPE_INT64)
    field(entry, "size", 5, _F.TYPE_INT64)
    field(entry, "crc32c", 6, _F.TYPE_FIXED32)
    field(entry, "slices", 7, _F.TYPE_MESSAGE, ".tensorflow.TensorSliceProto", repeated=True)

    state = fd.message_type.add(name="CheckpointState")  # checkpoint_state.proto (the `checkpoint` file)
    field(state, "model_checkpoint_path", 1, _F.TYPE_STRING)
    field(state, "all_model_checkpoint_paths", 2, _F.TYPE_STRING, repeated=True)
    field(state, "all_model_checkpoint_timestamps", 3, _F.TYPE_DOUBLE, repeated=True)
    field(state, "last_preserved_timestamp", 4, _F.TYPE_DOUBLE)

    pool = descriptor_pool.Default()
    try:
        file_desc = pool.FindFileByName(fd.name)
    except KeyError:
        pool.Add(fd)
        file_desc = pool.FindFileByName(fd.name)
    return {name: message_factory.GetMessageClass(file_desc.message_types_by_name[name])
            for name in ("TensorSliceProto", "BundleHeaderProto", "BundleEntryProto", "CheckpointState")}


_CLASSES = _build()
TensorSliceProto = _CLASSES["TensorSliceProto"]
BundleHeaderProto = _CLASSES["BundleHeaderProto"]
BundleEntryProto = _CLASSES["BundleEntryProto"]
CheckpointState = _CLASSES["CheckpointState"]
