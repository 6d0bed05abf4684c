"""A lookup table living in a device's resource manager: a dict of scalar keys to
scalar values, under a lock (lookups and inserts may run from several steps at once).

A static table (HashTableV2) is filled once by its initializer; an initializer run
again with the same data is a no-op, with other data an error (TF's
InitializableLookupTable). A mutable table (MutableHashTableV2) is always ready.
"""
import threading

import numpy as np

from .. import errors


class TableState:
    def __init__(self, key_dtype, value_dtype, static):
        self.key_dtype, self.value_dtype = key_dtype, value_dtype
        self.static = static
        self._initialized = not static
        self._data = {}
        self._lock = threading.Lock()

    def check_types(self, key_dtype, value_dtype, node):
        if key_dtype.base_dtype != self.key_dtype or value_dtype.base_dtype != self.value_dtype:
            raise errors.InvalidArgumentError(
                f"Conflicting key/value dtypes {key_dtype.base_dtype.name}->{value_dtype.base_dtype.name} with "
                f"{self.key_dtype.name}-{self.value_dtype.name}", node=node)

    def initialize(self, pairs, node):
        """Fills a static table from (key, value) pairs, once."""
        data = {}
        for k, v in pairs:
            if k in data and data[k] != v:
                raise errors.FailedPreconditionError(
                    f"HashTable has different value for same key. Key {_show(k)} has {_show(data[k])} and trying "
                    f"to add value {_show(v)}", node=node)
            data[k] = v
        with self._lock:
            if self._initialized:
                if data != self._data:
                    raise errors.FailedPreconditionError("Table was already initialized with different data.",
                                                         node=node)
                return
            self._data, self._initialized = data, True

    def _check_ready(self, node):
        if not self._initialized:
            raise errors.FailedPreconditionError("Table not initialized.", node=node)

    def find(self, keys, default, node):
        with self._lock:
            self._check_ready(node)
            data = self._data
            flat = [data.get(k, default) for k in _keys(keys)]
        return _array(flat, self.value_dtype).reshape(np.shape(keys))

    def insert(self, keys, values, node):
        keys, values = _keys(keys), _keys(values)
        if len(keys) != len(values):
            raise errors.InvalidArgumentError(f"Expected shape [{len(keys)}] for value, got [{len(values)}]",
                                              node=node)
        with self._lock:
            self._data.update(zip(keys, values))

    def replace(self, keys, values):
        """A mutable table's whole content, from an import (a restore)."""
        with self._lock:
            self._data = dict(zip(_keys(keys), _keys(values)))

    def remove(self, keys):
        with self._lock:
            for k in _keys(keys):
                self._data.pop(k, None)

    def size(self):
        with self._lock:
            return np.int64(len(self._data) if self._initialized else 0)

    def export(self):
        with self._lock:
            items = list(self._data.items())
        return (_array([k for k, _ in items], self.key_dtype), _array([v for _, v in items], self.value_dtype))


def _keys(x):
    """The scalars of an array as hashable Python values (bytes, int, float, bool)."""
    x = np.asarray(x)
    return list(x.reshape(-1)) if x.dtype == object else x.reshape(-1).tolist()


def _array(values, dtype):
    out = np.empty(len(values), dtype=dtype.as_numpy_dtype)
    out[:] = values
    return out


def _show(v):
    return v.decode("utf-8", "backslashreplace") if isinstance(v, bytes) else v
