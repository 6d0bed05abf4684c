"""TF's string ops: `tf.strings` and TF1's top-level names (`tf.string_join`,
`tf.substr`, `tf.string_to_number`, `tf.string_split`, ...).

`ops.py` declares the ops and the TF1 API, `kernels.py` registers their CPU
kernels (hashing with TF's three string hashes in `util/hashing.py`), `formatting.py` how AsString and
StringFormat print. Importing registers them.
"""
from . import kernels as _kernels  # noqa: F401 - registers the kernels
from .printing import print_v2  # noqa: F401
from .ops import (as_string, join, length, lower, reduce_join,  # noqa: F401
                  regex_full_match, regex_replace, split, string_format, string_split, strip, substr, to_hash_bucket,
                  to_hash_bucket_fast, to_hash_bucket_strong, to_number, upper)

from .unicode import (bytes_split, ngrams, unicode_decode, unicode_decode_with_offsets,  # noqa: F401
                      unicode_encode, unicode_script, unicode_split, unicode_transcode, unsorted_segment_join)

format = string_format  # noqa: A001 - the TF name (tf.strings.format)
