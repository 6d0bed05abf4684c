"""`tf.data.experimental`: the names TF1 programs use from it. The fused
transformations give the same elements as the plain ones they fuse."""
from .dataset_ops import AUTOTUNE  # noqa: F401


def shuffle_and_repeat(buffer_size, count=None, seed=None):
    """For `Dataset.apply`: shuffle(buffer_size, seed) then repeat(count)."""
    return lambda dataset: dataset.shuffle(buffer_size, seed).repeat(count)


def map_and_batch(map_func, batch_size, num_parallel_batches=None, drop_remainder=False,
                  num_parallel_calls=None):
    """For `Dataset.apply`: map(map_func) then batch(batch_size, drop_remainder)."""
    return lambda dataset: dataset.map(map_func).batch(batch_size, drop_remainder)


def unbatch():
    """For `Dataset.apply`: Dataset.unbatch()."""
    return lambda dataset: dataset.unbatch()
