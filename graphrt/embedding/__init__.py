"""`tf.nn.embedding_lookup`: rows of one embedding table, or of a table
sharded over several tensors or variables (TF's "mod" and "div" partition
strategies), routed with DynamicPartition and put back in order with
ParallelDynamicStitch, as TF does; each shard's gather sits with the shard,
so a table sharded over parameter servers is read where it lives."""
from .lookup import embedding_lookup  # noqa: F401
