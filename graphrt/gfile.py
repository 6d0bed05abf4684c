"""`tf.gfile` / `tf.io.gfile`: TensorFlow's file API on the local file system, as TF1
programs use it to read and write GraphDefs and checkpoints:

    with tf.gfile.GFile("frozen.pb", "rb") as f:
        graph_def = tf.GraphDef.FromString(f.read())

Only local paths: a URL scheme (gs://, hdfs://, s3://) is an UnimplementedError.
"""
import glob as _glob
import os
import shutil

from . import errors


def _local(path):
    path = os.fspath(path)
    if isinstance(path, bytes):
        path = path.decode()
    if "://" in path and not path.startswith("file://"):
        raise errors.UnimplementedError(f"File system scheme '{path.split('://')[0]}' not implemented "
                                        f"(file: '{path}')")
    return path[len("file://"):] if path.startswith("file://") else path


class GFile:
    """A file object (`read`, `write`, `readline`, iteration, `size`); a missing file is NotFoundError."""

    def __init__(self, name, mode="r"):
        self.name, self.mode = _local(name), mode
        try:
            self._f = open(self.name, mode)
        except FileNotFoundError:
            raise errors.NotFoundError(f"{self.name}; No such file or directory") from None
        except IsADirectoryError:
            raise errors.FailedPreconditionError(f"{self.name}; Is a directory") from None

    def read(self, n=-1):
        return self._f.read(n)

    def readline(self):
        return self._f.readline()

    def readlines(self):
        return self._f.readlines()

    def write(self, data):
        self._f.write(data)

    def flush(self):
        self._f.flush()

    def seek(self, offset, whence=0):
        return self._f.seek(offset, whence)

    def tell(self):
        return self._f.tell()

    def size(self):
        return os.path.getsize(self.name)

    def close(self):
        self._f.close()

    def __iter__(self):
        return iter(self._f)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        return f"<GFile {self.name!r} mode={self.mode!r}>"


Open = FastGFile = GFile


def exists(path):
    return os.path.exists(_local(path))


def isdir(path):
    return os.path.isdir(_local(path))


def listdir(path):
    if not isdir(path):
        raise errors.NotFoundError(f"Could not find directory {path}")
    return sorted(os.listdir(_local(path)))


def makedirs(path):
    os.makedirs(_local(path), exist_ok=True)


def mkdir(path):
    try:
        os.mkdir(_local(path))
    except FileExistsError:
        raise errors.AlreadyExistsError(f"{path}; File exists") from None


def glob(pattern):
    return sorted(_glob.glob(_local(pattern)))


def remove(path):
    try:
        os.remove(_local(path))
    except FileNotFoundError:
        raise errors.NotFoundError(f"{path}; No such file or directory") from None


def rmtree(path):
    if not exists(path):
        raise errors.NotFoundError(f"{path}; No such file or directory")
    shutil.rmtree(_local(path))


def rename(src, dst, overwrite=False):
    if not overwrite and exists(dst):
        raise errors.AlreadyExistsError(f"{dst}; File exists")
    os.replace(_local(src), _local(dst))


def copy(src, dst, overwrite=False):
    if not overwrite and exists(dst):
        raise errors.AlreadyExistsError(f"{dst}; File exists")
    shutil.copyfile(_local(src), _local(dst))


def walk(top, topdown=True, onerror=None):
    return os.walk(_local(top), topdown=topdown, onerror=onerror)


class FileStatistics:
    """What `stat` returns: TF's FileStatistics fields."""

    def __init__(self, length, mtime_nsec, is_directory):
        self.length, self.mtime_nsec, self.is_directory = length, mtime_nsec, is_directory


def stat(path):
    """Size, modification time (ns) and kind of a file; a missing one is NotFoundError."""
    path = _local(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise errors.NotFoundError(f"{path}; No such file or directory") from None
    return FileStatistics(st.st_size, st.st_mtime_ns, os.path.isdir(path))


# TF 1.x spellings (tf.gfile.Exists, ...)
Exists, IsDirectory, ListDirectory, MakeDirs, MkDir, Glob = exists, isdir, listdir, makedirs, mkdir, glob
Remove, DeleteRecursively, Rename, Copy, Walk, Stat = remove, rmtree, rename, copy, walk, stat
