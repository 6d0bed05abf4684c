"""File ops: `tf.read_file` (ReadFile), `tf.write_file` (WriteFile),
`tf.matching_files` (MatchingFiles) and `tf.train.match_filenames_once`.

Their kernels touch the local file system, so they run on the host CPU
only (`host_only`): pinned to an accelerator they need soft placement.
"""
import glob
import gzip
import os
import zlib

import numpy as np

from .. import errors
from ..framework import dtypes
from ..framework.graph import GraphKeys, get_default_graph
from ..framework.op_builder import apply_op
from ..framework.registry import not_differentiable, register_kernel, register_op
from ..framework.tensor_shape import TensorShape
from ..ops.variables import Variable

register_op("ReadFile", ["filename: string"], ["contents: string"], shape_fn=lambda ctx: TensorShape([]))
register_op("WriteFile", ["filename: string", "contents: string"], [], is_stateful=True)
register_op("MatchingFiles", ["pattern: string"], ["filenames: string"], shape_fn=lambda ctx: TensorShape([None]))
for _name in ("ReadFile", "WriteFile", "MatchingFiles"):
    not_differentiable(_name)


def path_of(value, node, what="filename"):
    """A file name from a string scalar tensor value."""
    value = np.asarray(value)
    if value.ndim != 0:
        raise errors.InvalidArgumentError(f"Input {what} tensor must be scalar, but had shape: {list(value.shape)}",
                                          node=node)
    v = value.item()
    return v.decode() if isinstance(v, bytes) else str(v)


def read_bytes(path, node):
    """The contents of `path`, with TF's errors for a missing file or a directory."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        raise errors.NotFoundError(f"{path}; No such file or directory", node=node) from None
    except IsADirectoryError:
        raise errors.FailedPreconditionError(f"{path}; Is a directory", node=node) from None
    except PermissionError:
        raise errors.PermissionDeniedError(f"{path}; Permission denied", node=node) from None


def decompress(data, compression, path, node):
    """`data` read from `path`, inflated as "GZIP" or "ZLIB" says ("" leaves it); a corrupt
    stream is a DataLossError naming the file."""
    try:
        if compression == "GZIP":
            return gzip.decompress(data)
        if compression == "ZLIB":
            return zlib.decompress(data)
    except (OSError, EOFError, zlib.error) as e:
        raise errors.DataLossError(f"{path}: {compression} data is corrupt: {e}", node=node) from None
    return data


@register_kernel("ReadFile", "CPU", host_only=True)
def _read_file(ctx):
    node = ctx.name
    return lambda filename: np.array(read_bytes(path_of(filename, node), node), dtype=object)


@register_kernel("WriteFile", "CPU", host_only=True)
def _write_file(ctx):
    node = ctx.name

    def write_file(filename, contents):
        path = path_of(filename, node)
        data = np.asarray(contents)
        if data.ndim != 0:
            raise errors.InvalidArgumentError(f"Contents tensor must be scalar, but had shape: {list(data.shape)}",
                                              node=node)
        data = data.item()
        parent = os.path.dirname(path)
        try:
            if parent:
                os.makedirs(parent, exist_ok=True)  # as TF: the directory is created recursively
            with open(path, "wb") as f:
                f.write(data if isinstance(data, bytes) else str(data).encode())
        except OSError as e:
            raise errors.FailedPreconditionError(f"{path}; {e.strerror}", node=node) from None
    return write_file


@register_kernel("MatchingFiles", "CPU", host_only=True)
def _matching_files(ctx):
    def matching_files(pattern):
        patterns = np.asarray(pattern).reshape(-1)
        names = []
        for p in patterns:
            p = p.decode() if isinstance(p, bytes) else str(p)
            names.extend(sorted(glob.glob(p)))
        return np.array([n.encode() for n in names], dtype=object).reshape(-1)
    return matching_files


def read_file(filename, name=None):
    """The whole contents of the file `filename` as a string scalar."""
    return apply_op("ReadFile", [filename], name=name or "ReadFile").outputs[0]


def write_file(filename, contents, name=None):
    """Writes the string `contents` to `filename` (creating its directory); returns the op."""
    return apply_op("WriteFile", [filename, contents], name=name or "WriteFile")


def matching_files(pattern, name=None):
    """The sorted file names matching the glob `pattern` (a string or vector of them)."""
    return apply_op("MatchingFiles", [pattern], name=name or "MatchingFiles").outputs[0]


def match_filenames_once(pattern, name=None):
    """A local variable holding the files matching `pattern`, globbed once when it is
    initialized (`tf.local_variables_initializer()`)."""
    g = get_default_graph()
    with g.name_scope(name or "matching_filenames") as scope:
        return Variable(matching_files(pattern), name=scope, trainable=False,
                        validate_shape=False, collections=[GraphKeys.LOCAL_VARIABLES], dtype=dtypes.string)
