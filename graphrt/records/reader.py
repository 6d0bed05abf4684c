"""`tf.TFRecordReader`: a queue-fed reader (see graphrt/data_flow/readers.py)
whose records are those of TFRecord files; the key is `<file>:<offset>`, the
offset of the record in the (uncompressed) file, as TF's."""
from .. import errors
from ..data_flow.readers import ReaderBase, _make_reader, _reader_factory
from ..framework.registry import not_differentiable, register_kernel, register_op
from ..framework.tensor_shape import TensorShape
from . import tfrecord

register_op("TFRecordReaderV2", [], ["reader_handle: resource"],
            attrs={"container": "", "shared_name": "", "compression_type": ""},
            shape_fn=lambda ctx: TensorShape([]), is_stateful=True)
not_differentiable("TFRecordReaderV2")


def _tf_record_records(compression):
    def records(filename, node):
        try:
            data = tfrecord.read_file(filename, compression)
            return [(f"{filename}:{pos}".encode(), record) for pos, record in tfrecord.records_of(data, filename)]
        except errors.OpError as e:
            raise type(e)(e.message, node=node) from None
    return records


register_kernel("TFRecordReaderV2", "CPU", inexpensive=True, host_only=True)(
    _reader_factory(lambda ctx: _tf_record_records(tfrecord.compression_of(ctx.attr("compression_type")))))


class TFRecordReader(ReaderBase):
    """Each record of the TFRecord files is one record: key `<file>:<offset>`, value its bytes."""

    def __init__(self, name=None, options=None):
        compression = tfrecord.TFRecordOptions.get_compression_type_string(options)
        super().__init__(_make_reader("TFRecordReaderV2", name or "TFRecordReaderV2",
                                      {"compression_type": compression}))
