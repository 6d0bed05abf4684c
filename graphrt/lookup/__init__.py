"""Lookup tables (`tf.lookup`, `tf.contrib.lookup`, `tf.tables_initializer`).

Tables are device resources (`table_state.py`, kept in `Device.resources` as
queues are): `ops.py` declares TF's table ops, `kernels.py` runs them on the
host, `tables.py` is TF's Python API over them. Importing registers the kernels.
"""
from . import experimental, kernels as _kernels, ops as _ops  # noqa: F401 - registers the ops and kernels
from .tables import (HashTable, HasherSpec, FastHashSpec, IdTableWithHashBuckets,  # noqa: F401
                     KeyValueTensorInitializer, LookupInterface, MutableHashTable, StaticHashTable,
                     StaticVocabularyTable, StrongHashSpec,
                     TableInitializerBase, TextFileIdTableInitializer, TextFileIndex, TextFileInitializer,
                     TextFileStringTableInitializer, index_table_from_file, index_table_from_tensor,
                     index_to_string_table_from_file, index_to_string_table_from_tensor, initialize_all_tables,
                     tables_initializer)
