"""`tf.data`: input pipelines as dataset ops in the graph, read through
iterators whose state lives on a device.

    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(100, seed=1).batch(32).repeat()
    features, labels = ds.make_one_shot_iterator().get_next()

Modules: ops and experimental_ops (declarations), datasets, experimental_datasets,
resumable_datasets, csv_dataset and the kernels (what runs), dataset_ops,
iterator_ops, generator, structured_function, experimental, experimental_transforms
and csv_readers (the Python API).
"""
from . import ops, kernels, experimental_ops, experimental_kernels  # noqa: F401 - registers the ops and their kernels
from .dataset_ops import AUTOTUNE, Dataset, FixedLengthRecordDataset, TextLineDataset, TFRecordDataset
from .iterator_ops import Iterator, make_initializable_iterator, make_one_shot_iterator
from . import experimental  # noqa: F401


def get_output_types(dataset_or_iterator):
    """`tf.compat.v1.data.get_output_types`: the element dtypes of a dataset or iterator."""
    return dataset_or_iterator.output_types


def get_output_shapes(dataset_or_iterator):
    return dataset_or_iterator.output_shapes


def get_output_classes(dataset_or_iterator):
    return dataset_or_iterator.output_classes


DatasetV1 = Dataset

__all__ = ["AUTOTUNE", "Dataset", "DatasetV1", "FixedLengthRecordDataset", "Iterator", "TextLineDataset", "TFRecordDataset", "get_output_classes",
           "get_output_shapes", "get_output_types", "make_initializable_iterator", "make_one_shot_iterator"]
