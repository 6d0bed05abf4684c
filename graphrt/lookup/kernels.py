"""Lookup-table kernels (host CPU only, as TF's).

The table op looks its table up in the device's resource manager (making it
on first use) under `shared_name` when given, so every node and session on
the device naming it shares one table, or else under the node's name.
"""
import numpy as np

from .. import errors
from ..framework.registry import register_kernel
from .table_state import TableState

_WHOLE_LINE, _LINE_NUMBER = -2, -1


def _kernel(op_type, **kw):
    return register_kernel(op_type, "CPU", inexpensive=True, host_only=True, **kw)


def _table_factory(static):
    def factory(ctx):
        key_dtype, value_dtype = ctx.attr("key_dtype"), ctx.attr("value_dtype")
        shared = ctx.attr("shared_name")
        container = ctx.attr("container")
        key = shared or ctx.name
        resources, node = ctx.device.resources, ctx.name

        def table():
            state = resources.lookup_or_create(container, key, lambda: TableState(key_dtype, value_dtype, static))
            state.check_types(key_dtype, value_dtype, node)
            return state
        return table
    return factory


_kernel("HashTableV2")(_table_factory(True))
_kernel("MutableHashTableV2")(_table_factory(False))


def _check_key_value_shapes(keys, values, node):
    if np.shape(keys) != np.shape(values):
        raise errors.InvalidArgumentError(f"Expected shape {list(np.shape(keys))} for value, got "
                                          f"{list(np.shape(values))}", node=node)


@_kernel("LookupTableImportV2")
def _import(ctx):
    node = ctx.name

    def import_(table, keys, values):
        _check_key_value_shapes(keys, values, node)
        k, v = np.asarray(keys).reshape(-1), np.asarray(values).reshape(-1)
        if table.static:
            table.initialize(zip(k.tolist() if k.dtype != object else k, v.tolist() if v.dtype != object else v),
                             node)
        else:
            table.replace(k, v)
    return import_


@_kernel("LookupTableInsertV2")
def _insert(ctx):
    node = ctx.name

    def insert(table, keys, values):
        _check_key_value_shapes(keys, values, node)
        table.insert(keys, values, node)
    return insert


@_kernel("LookupTableRemoveV2")
def _remove(ctx):
    return lambda table, keys: table.remove(keys)


@_kernel("LookupTableFindV2")
def _find(ctx):
    node = ctx.name

    def find(table, keys, default):
        default = np.asarray(default)
        if default.ndim != 0:
            raise errors.InvalidArgumentError(f"Expected default_value to be a scalar, got shape "
                                              f"{list(default.shape)}", node=node)
        return table.find(keys, default.item() if default.dtype != object else default[()], node)
    return find


@_kernel("LookupTableSizeV2")
def _size(ctx):
    return lambda table: table.size()


@_kernel("LookupTableExportV2")
def _export(ctx):
    return lambda table: table.export()


def _column(line, index, line_number, dtype, delimiter, filename, node):
    if index == _LINE_NUMBER:
        return line_number
    if index == _WHOLE_LINE:
        text = line
    else:
        parts = line.split(delimiter) if delimiter else line.split()
        if index >= len(parts):
            raise errors.InvalidArgumentError(
                f"Invalid number of columns in {filename} line {line_number} ({line.decode(errors='replace')}) : "
                f"expected {index + 1} got {len(parts)}", node=node)
        text = parts[index]
    if dtype.name == "string":
        return text
    try:
        return float(text) if dtype.is_floating else int(text)
    except ValueError:
        raise errors.InvalidArgumentError(f"Field {text.decode(errors='replace')} in line {line_number} is not a "
                                          f"valid {dtype.name}.", node=node) from None


@_kernel("InitializeTableFromTextFileV2")
def _init_from_file(ctx):
    key_index, value_index = ctx.attr("key_index"), ctx.attr("value_index")
    vocab_size, offset = ctx.attr("vocab_size"), ctx.attr("offset")
    delimiter = ctx.attr("delimiter").encode()
    node = ctx.name

    def init(table, filename):
        name = np.asarray(filename, dtype=object).item()
        name = name.decode() if isinstance(name, bytes) else name
        try:
            with open(name, "rb") as f:
                lines = f.read().split(b"\n")
        except OSError as e:
            raise errors.NotFoundError(f"{name}; {e.strerror}", node=node) from None
        if lines and lines[-1] == b"":
            lines.pop()
        lines = [ln[:-1] if ln.endswith(b"\r") else ln for ln in lines]
        if vocab_size > 0:
            if len(lines) < vocab_size:
                raise errors.InvalidArgumentError(f"Invalid vocab_size in {name}: expected {vocab_size} but got "
                                                  f"{len(lines)}", node=node)
            lines = lines[:vocab_size]
        pairs = []
        for i, line in enumerate(lines):
            k = _column(line, key_index, i, table.key_dtype, delimiter, name, node)
            v = _column(line, value_index, i, table.value_dtype, delimiter, name, node)
            pairs.append((k, v + offset if value_index == _LINE_NUMBER else v))
        table.initialize(pairs, node)
    return init
