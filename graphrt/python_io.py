"""`tf.python_io`: TFRecord files (graphrt/records/tfrecord.py)."""
from .records.tfrecord import (TFRecordCompressionType, TFRecordOptions, TFRecordWriter,  # noqa: F401
                               tf_record_iterator)
