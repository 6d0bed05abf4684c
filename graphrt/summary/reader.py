"""Reading event files back: `tf.train.summary_iterator(path)` yields their Event
protobufs. Records are TFRecords (length, masked crc32c of the length, data,
masked crc32c of the data); a truncated or damaged record is a DataLossError
naming the file and the record's offset."""
import struct

from tensorboard.compat.proto import event_pb2

from .. import errors
from ..util import crc32c


def tf_record_iterator(path):
    """The raw records of a TFRecord file, checksums verified."""
    with open(path, "rb") as f:
        data = f.read()
    pos = 0
    while pos < len(data):
        if pos + 12 > len(data):
            raise errors.DataLossError(f"Truncated record header at offset {pos} in {path}")
        header = data[pos:pos + 8]
        (length,) = struct.unpack("<Q", header)
        (header_crc,) = struct.unpack("<I", data[pos + 8:pos + 12])
        if crc32c.unmask(header_crc) != crc32c.crc32c(header):
            raise errors.DataLossError(f"Corrupted record length at offset {pos} in {path}")
        end = pos + 12 + length
        if end + 4 > len(data):
            raise errors.DataLossError(f"Truncated record at offset {pos} in {path}")
        record = data[pos + 12:end]
        (data_crc,) = struct.unpack("<I", data[end:end + 4])
        if crc32c.unmask(data_crc) != crc32c.crc32c(record):
            raise errors.DataLossError(f"Corrupted record at offset {pos} in {path}")
        yield record
        pos = end + 4


def summary_iterator(path):
    """TF's `tf.compat.v1.train.summary_iterator`: the Events of an event file, in order."""
    for record in tf_record_iterator(path):
        yield event_pb2.Event.FromString(record)
