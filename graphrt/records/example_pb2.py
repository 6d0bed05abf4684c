"""TensorFlow's `Example` protos (tensorflow/core/example/feature.proto and
example.proto), built at import from a FileDescriptorProto written here:
tensorboard ships neither file. Package `tensorflow`, TF's message names
and field numbers, proto3 (so the numeric lists are packed), hence the
bytes are TF's. The classes live in a pool of their own, so a process that
also loads TensorFlow's generated modules sees no duplicate definitions."""
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_F = descriptor_pb2.FieldDescriptorProto


def _field(message, name, number, type_, label=_F.LABEL_OPTIONAL, type_name=None, oneof_index=None):
    f = message.field.add(name=name, number=number, type=type_, label=label, json_name=_json_name(name))
    if type_name:
        f.type_name = type_name
    if oneof_index is not None:
        f.oneof_index = oneof_index


def _json_name(name):
    head, *rest = name.split("_")
    return head + "".join(p.capitalize() for p in rest)


def _map(message, name, value_type):
    """A `map<string, value_type> name = 1;` field: a nested *Entry message marked map_entry."""
    entry_name = "".join(p.capitalize() for p in name.split("_")) + "Entry"
    entry = message.nested_type.add(name=entry_name)
    entry.options.map_entry = True
    _field(entry, "key", 1, _F.TYPE_STRING)
    _field(entry, "value", 2, _F.TYPE_MESSAGE, type_name=value_type)
    _field(message, name, 1, _F.TYPE_MESSAGE, _F.LABEL_REPEATED, f".tensorflow.{message.name}.{entry_name}")


def _feature_file():
    fd = descriptor_pb2.FileDescriptorProto(name="tensorflow/core/example/feature.proto", package="tensorflow",
                                            syntax="proto3")
    _field(fd.message_type.add(name="BytesList"), "value", 1, _F.TYPE_BYTES, _F.LABEL_REPEATED)
    _field(fd.message_type.add(name="FloatList"), "value", 1, _F.TYPE_FLOAT, _F.LABEL_REPEATED)
    _field(fd.message_type.add(name="Int64List"), "value", 1, _F.TYPE_INT64, _F.LABEL_REPEATED)
    feature = fd.message_type.add(name="Feature")
    feature.oneof_decl.add(name="kind")
    for number, (name, kind) in enumerate((("bytes_list", "BytesList"), ("float_list", "FloatList"),
                                           ("int64_list", "Int64List")), 1):
        _field(feature, name, number, _F.TYPE_MESSAGE, type_name=f".tensorflow.{kind}", oneof_index=0)
    _map(fd.message_type.add(name="Features"), "feature", ".tensorflow.Feature")
    _field(fd.message_type.add(name="FeatureList"), "feature", 1, _F.TYPE_MESSAGE, _F.LABEL_REPEATED,
           ".tensorflow.Feature")
    _map(fd.message_type.add(name="FeatureLists"), "feature_list", ".tensorflow.FeatureList")
    return fd


def _example_file():
    fd = descriptor_pb2.FileDescriptorProto(name="tensorflow/core/example/example.proto", package="tensorflow",
                                            syntax="proto3", dependency=["tensorflow/core/example/feature.proto"])
    _field(fd.message_type.add(name="Example"), "features", 1, _F.TYPE_MESSAGE, type_name=".tensorflow.Features")
    seq = fd.message_type.add(name="SequenceExample")
    _field(seq, "context", 1, _F.TYPE_MESSAGE, type_name=".tensorflow.Features")
    _field(seq, "feature_lists", 2, _F.TYPE_MESSAGE, type_name=".tensorflow.FeatureLists")
    return fd


_POOL = descriptor_pool.DescriptorPool()
for _fd in (_feature_file(), _example_file()):
    _POOL.Add(_fd)


def _class(name):
    return message_factory.GetMessageClass(_POOL.FindMessageTypeByName(f"tensorflow.{name}"))


BytesList = _class("BytesList")
FloatList = _class("FloatList")
Int64List = _class("Int64List")
Feature = _class("Feature")
Features = _class("Features")
FeatureList = _class("FeatureList")
FeatureLists = _class("FeatureLists")
Example = _class("Example")
SequenceExample = _class("SequenceExample")
