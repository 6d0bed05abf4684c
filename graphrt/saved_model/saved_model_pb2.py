"""TensorFlow's `SavedModel` message (tensorflow/core/protobuf/saved_model.proto),
built at import from a FileDescriptorProto written here: tensorboard ships
meta_graph.proto but not this one.

    message SavedModel {
      int64 saved_model_schema_version = 1;
      repeated MetaGraphDef meta_graphs = 2;
    }

Field numbers and types are TF's, so the bytes are TF's. The message lives in
the default pool beside tensorboard's MetaGraphDef, so `meta_graphs` holds the
very MetaGraphDef class the rest of graphrt uses; its package is `graphrt`, so
a process that also loads TensorFlow's generated modules (`tensorflow.SavedModel`)
or a later tensorboard sees no duplicate definition."""
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from tensorboard.compat.proto import meta_graph_pb2

_F = descriptor_pb2.FieldDescriptorProto
_FILE = "graphrt/saved_model/saved_model.proto"


def _saved_model_file():
    fd = descriptor_pb2.FileDescriptorProto(name=_FILE, package="graphrt", syntax="proto3",
                                            dependency=[meta_graph_pb2.DESCRIPTOR.name])
    message = fd.message_type.add(name="SavedModel")
    message.field.add(name="saved_model_schema_version", number=1, type=_F.TYPE_INT64, label=_F.LABEL_OPTIONAL,
                      json_name="savedModelSchemaVersion")
    message.field.add(name="meta_graphs", number=2, type=_F.TYPE_MESSAGE, label=_F.LABEL_REPEATED,
                      type_name="." + meta_graph_pb2.MetaGraphDef.DESCRIPTOR.full_name, json_name="metaGraphs")
    return fd


_POOL = descriptor_pool.Default()
_POOL.Add(_saved_model_file())
SavedModel = message_factory.GetMessageClass(_POOL.FindMessageTypeByName("graphrt.SavedModel"))
