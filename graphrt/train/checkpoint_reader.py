"""Reading checkpoints without a graph: `tf.train.NewCheckpointReader`,
`load_checkpoint`, `list_variables`, `load_variable`. Reads TensorFlow's V2
checkpoints and graphrt's older `.npz` ones."""
import os
import zipfile
import zlib

import numpy as np

from .. import errors
from ..framework import dtypes as dtypes_lib
from . import checkpoint_bundle, checkpoint_state


class CheckpointReader:
    """TF's CheckpointReader: tensor names, shapes, dtypes and values of one checkpoint."""

    def __init__(self, prefix):
        self._prefix = prefix
        if os.path.exists(checkpoint_bundle.index_path(prefix)):
            self._bundle = checkpoint_bundle.BundleReader(prefix)
            self._npz = None
        elif os.path.exists(prefix + ".npz") or (prefix.endswith(".npz") and os.path.exists(prefix)):
            self._bundle = None
            self._npz = _read_npz(prefix if prefix.endswith(".npz") else prefix + ".npz")
        else:
            raise errors.NotFoundError(f"Unsuccessful TensorSliceReader constructor: Failed to find any "
                                       f"matching files for {prefix}")

    def _names(self):
        return sorted(self._bundle.entries) if self._bundle is not None else sorted(self._npz)

    def has_tensor(self, name):
        return name in (self._bundle.entries if self._bundle is not None else self._npz)

    def get_tensor(self, name):
        """The tensor's value; a scalar as TF returns it (a numpy scalar, or bytes for a string)."""
        if self._bundle is not None:
            value = self._bundle.read(name)
        elif name not in self._npz:
            raise errors.NotFoundError(f"Key {name} not found in checkpoint {self._prefix}")
        else:
            value = self._npz[name]
        return value[()] if value.ndim == 0 else value

    def get_slice(self, name, tslice, full_shape=None):
        """The part `tslice` (a tensor_slice.TensorSlice) of tensor `name`, whether the checkpoint holds
        the whole tensor or slices of it (a partitioned variable restored into other partitions)."""
        if self._bundle is not None:
            value = self._bundle.read_slice(name, tslice, full_shape)
        else:
            whole = self.get_tensor(name)
            whole = np.asarray(whole, dtype=object if isinstance(whole, bytes) else None)
            if full_shape is not None and list(whole.shape) != list(full_shape):
                raise errors.InvalidArgumentError(f"Tensor {name} in checkpoint {self._prefix} has shape "
                                                  f"{list(whole.shape)}; the slice {tslice} asked for expects "
                                                  f"{list(full_shape)}")
            tslice.check_within(whole.shape, f"tensor {name}")
            value = whole[tslice.index(whole.shape)]
        return value

    def get_variable_to_shape_map(self):
        if self._bundle is not None:
            return {n: self._bundle.shape(n) for n in self._names()}
        return {n: list(v.shape) for n, v in sorted(self._npz.items())}

    def get_variable_to_dtype_map(self):
        if self._bundle is not None:
            return {n: self._bundle.dtype(n) for n in self._names()}
        return {n: dtypes_lib.as_dtype(v.dtype) for n, v in sorted(self._npz.items())}

    def debug_string(self):
        shapes, types = self.get_variable_to_shape_map(), self.get_variable_to_dtype_map()
        return "".join(f"{n} ({types[n].name}) {shapes[n]}\n" for n in self._names()).encode()

    def __repr__(self):
        return f"<CheckpointReader {self._prefix}: {len(self._names())} tensors>"


def _read_npz(path):
    try:
        with np.load(path, allow_pickle=False) as archive:
            return {k: archive[k] for k in archive.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as e:
        raise errors.DataLossError(f"Checkpoint {path} is corrupt: {type(e).__name__}: {e}") from None


def NewCheckpointReader(filepattern):  # noqa: N802 - the TF name
    return CheckpointReader(filepattern)


def load_checkpoint(ckpt_dir_or_file):
    """A CheckpointReader for a checkpoint prefix, or for the latest checkpoint of a directory."""
    prefix = ckpt_dir_or_file
    if os.path.isdir(ckpt_dir_or_file):
        prefix = checkpoint_state.latest_checkpoint(ckpt_dir_or_file)
        if prefix is None:
            raise ValueError(f"Couldn't find 'checkpoint' file or checkpoints in given directory "
                             f"{ckpt_dir_or_file}")
    return CheckpointReader(prefix)


def list_variables(ckpt_dir_or_file):
    """[(name, shape)] of every tensor in the checkpoint, sorted by name."""
    shapes = load_checkpoint(ckpt_dir_or_file).get_variable_to_shape_map()
    return [(name, shapes[name]) for name in sorted(shapes)]


def load_variable(ckpt_dir_or_file, name):
    if name.endswith(":0"):
        name = name[:-2]
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)
