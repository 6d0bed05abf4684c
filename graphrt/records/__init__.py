"""Records and parsing for TF1 input pipelines: TensorFlow's `Example` protos
(example_pb2.py), TFRecord files (tfrecord.py: writer, iterator, options)
and their queue-fed reader (reader.py), `tf.parse_example` /
`parse_single_example` (parsing.py), `parse_sequence_example` /
`parse_single_sequence_example` (sequence_parsing.py), and the string decoders (decoding.py:
CSV, raw bytes, TensorProto bytes, base64, compression, JSON Examples).
Importing the package registers the ops and kernels; tf.data's
TFRecordDataset (graphrt/data) reads files with tfrecord.py."""
from . import decoding_kernels  # noqa: F401 - registers the decoders' kernels
from .decoding import (decode_base64, decode_compressed, decode_csv, decode_json_example,  # noqa: F401
                       decode_raw, encode_base64, parse_tensor, serialize_tensor)
from .example_pb2 import (BytesList, Example, Feature, FeatureList, FeatureLists, Features,  # noqa: F401
                          FloatList, Int64List, SequenceExample)
from .parsing import (FixedLenFeature, FixedLenSequenceFeature, VarLenFeature, parse_example,  # noqa: F401
                      parse_single_example)
from .reader import TFRecordReader  # noqa: F401
from .sequence_parsing import parse_sequence_example, parse_single_sequence_example  # noqa: F401
from .tfrecord import TFRecordCompressionType, TFRecordOptions, TFRecordWriter, tf_record_iterator  # noqa: F401
