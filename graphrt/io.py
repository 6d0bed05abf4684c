"""`tf.io`: the file side of the API (gfile, write_graph, TFRecord files, Example parsing, decoders)."""
from . import gfile  # noqa: F401
from .records import (FixedLenFeature, FixedLenSequenceFeature, TFRecordCompressionType,  # noqa: F401
                      TFRecordOptions, TFRecordWriter, VarLenFeature, decode_base64, decode_compressed, decode_csv,
                      decode_json_example, decode_raw, encode_base64, parse_example, parse_sequence_example,
                      parse_single_example, parse_single_sequence_example, parse_tensor, serialize_tensor,
                      tf_record_iterator)
from .train import write_graph  # noqa: F401
from .sparse import deserialize_many_sparse, serialize_many_sparse, serialize_sparse  # noqa: F401
from .image import decode_and_crop_jpeg, decode_bmp, extract_jpeg_shape, is_jpeg  # noqa: F401
from .image import decode_gif, decode_image, decode_jpeg, decode_png, encode_jpeg, encode_png  # noqa: F401,E402
from .data_flow import (PaddingFIFOQueue, PriorityQueue, QueueBase, RandomShuffleQueue,  # noqa: F401,E402
                        match_filenames_once, matching_files, read_file, write_file)
