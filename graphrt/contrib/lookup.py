"""`tf.contrib.lookup` (TF 1.x): the lookup tables under their contrib names."""
from ..lookup import (HashTable, HasherSpec, FastHashSpec, IdTableWithHashBuckets,  # noqa: F401
                      KeyValueTensorInitializer, MutableHashTable, StrongHashSpec, TextFileIdTableInitializer,
                      TextFileIndex, TextFileInitializer, TextFileStringTableInitializer, index_table_from_file,
                      index_table_from_tensor, index_to_string_table_from_file, index_to_string_table_from_tensor)
