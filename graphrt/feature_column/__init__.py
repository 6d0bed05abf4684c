"""`tf.feature_column` (TF1's, for `input_layer` and `linear_model`): columns that turn a
dict of raw features (Tensors, SparseTensors) into dense model inputs, built from
graphrt's sparse, lookup, strings and records packages as TF's feature_column.py
builds them.

`base.py` the column protocol and the per-call cache of transformed features,
`categorical.py` the id columns (hash, vocabulary, identity, weighted, crossed),
`dense.py` the dense columns (numeric, bucketized, indicator, embeddings),
`models.py` `input_layer`, `linear_model`, `make_parse_example_spec`; `ops.py` and
`kernels.py` the Bucketize op.
"""
from . import kernels as _kernels  # noqa: F401 - registers the Bucketize kernel
from .categorical import (categorical_column_with_hash_bucket, categorical_column_with_identity,  # noqa: F401
                          categorical_column_with_vocabulary_file, categorical_column_with_vocabulary_list,
                          crossed_column, weighted_categorical_column)
from .dense import (bucketized_column, embedding_column, indicator_column, numeric_column,  # noqa: F401
                    shared_embedding_columns)
from .models import input_layer, linear_model, make_parse_example_spec  # noqa: F401
