"""`tf.data.experimental.CsvDataset` and `make_csv_dataset` (TF1's names).

CsvDataset is TF's CSVDatasetV2 op: one element per record, a scalar per
column typed by its record default. make_csv_dataset builds TF's pipeline on
it (files, interleave, shuffle and repeat, batch, a map to a dict of
features and the label, prefetch), and, as TF, reads the files while the
graph is built for what the arguments leave open: the header's column names,
and the column types (inferred from the first rows as TF infers them).
"""
import collections
import csv
import glob
import gzip

import numpy as np

from ..framework import dtypes
from ..framework.constant_value import constant_value
from ..framework.graph import Tensor, get_default_graph
from ..framework.op_builder import convert_to_tensor
from .dataset_ops import AUTOTUNE, Dataset, _int64
from .experimental_transforms import ignore_errors as _ignore_errors
from .structure import Spec

_CSV_TYPES = (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64, dtypes.string)
_DEFAULT_BUFFER = 4 * 1024 * 1024


def _is_dtype(x):
    return isinstance(x, dtypes.DType) or (isinstance(x, type) and issubclass(x, np.generic))


class CsvDataset(Dataset):
    """The records of CSV files: tuples of scalars, one per column (or per `select_cols`), typed
    by `record_defaults` (a dtype: a required column; a value or a 1-element list: its default)."""

    def __init__(self, filenames, record_defaults, compression_type=None, buffer_size=None, header=False,
                 field_delim=",", use_quote_delim=True, na_value="", select_cols=None, exclude_cols=None,
                 name=None):
        g = get_default_graph()
        with g.name_scope(name or "CSVDatasetV2") as scope:
            files = convert_to_tensor(filenames, dtype=dtypes.string, name="filenames")
            inputs = [files,
                      convert_to_tensor(compression_type or "", dtype=dtypes.string, name="compression_type"),
                      _int64(_DEFAULT_BUFFER if buffer_size is None else buffer_size, "buffer_size"),
                      convert_to_tensor(header, dtype=dtypes.bool, name="header"),
                      convert_to_tensor(field_delim, dtype=dtypes.string, name="field_delim"),
                      convert_to_tensor(use_quote_delim, dtype=dtypes.bool, name="use_quote_delim"),
                      convert_to_tensor(na_value, dtype=dtypes.string, name="na_value"),
                      convert_to_tensor(np.asarray(select_cols if select_cols is not None else [], np.int64),
                                        name="select_cols")]
            defaults = []
            for i, d in enumerate(record_defaults):
                if not isinstance(d, Tensor) and _is_dtype(d):
                    dtype = dtypes.as_dtype(d)
                    if dtype not in _CSV_TYPES:
                        raise TypeError(f"Failed to convert elements of <dtype: '{dtype.name}'> to Tensor. Consider "
                                        f"casting elements to a supported type.")
                    d = np.zeros([0], dtype=object if dtype == dtypes.string else dtype.np)
                    d = convert_to_tensor(d, dtype=dtype, name="record_defaults")
                elif not isinstance(d, Tensor):
                    d = convert_to_tensor(d, name="record_defaults")
                if d.dtype.base_dtype not in _CSV_TYPES:
                    raise TypeError(f"CsvDataset: record default {i} has type {d.dtype.name}; the column types are "
                                    f"float32, float64, int32, int64 and string")
                if d.shape.ndims is not None and (d.shape.ndims > 1 or d.shape.num_elements() not in (0, 1, None)):
                    raise ValueError(f"Shape of a default must be a length-0 or length-1 vector, or a scalar. "
                                     f"(record default {i} has shape {d.shape})")
                defaults.append(d)
            exclude = convert_to_tensor(np.asarray(exclude_cols if exclude_cols is not None else [], np.int64),
                                        name="exclude_cols")
            if files.shape.ndims not in (None, 0, 1):
                raise ValueError(f"`filenames` must be a `tf.Tensor` of rank 0 or 1, got rank {files.shape.ndims}.")
            specs = tuple(Spec(d.dtype, []) for d in defaults)
            attrs = {"output_types": [s.dtype for s in specs], "output_shapes": [s.shape for s in specs]}
            op = g.create_op("CSVDatasetV2", inputs + defaults + [exclude], attrs, name=scope)  # the scope's name
        super().__init__(op.outputs[0], specs)


def make_csv_dataset(file_pattern, batch_size, column_names=None, column_defaults=None, label_name=None,
                     select_columns=None, field_delim=",", use_quote_delim=True, na_value="", header=True,
                     num_epochs=None, shuffle=True, shuffle_buffer_size=10000, shuffle_seed=None,
                     prefetch_buffer_size=None, num_parallel_reads=None, sloppy=False, num_rows_for_inference=100,
                     compression_type=None, ignore_errors=False, encoding="utf-8"):
    """Batches of CSV records as a dict of features by column name (and the label column apart,
    with `label_name`): TF's pipeline. Files are read one after another (`num_parallel_reads`
    and `sloppy` are accepted); with `shuffle=False` the order is TF's."""
    filenames = _file_names(file_pattern)
    dataset = Dataset.from_tensor_slices(filenames)
    if shuffle:
        dataset = dataset.shuffle(len(filenames), shuffle_seed)
    opener = _opener(compression_type, encoding) if column_names is None or column_defaults is None else None
    if column_names is None:
        if not header:
            raise ValueError("Expected `column_names` or `header` arguments. Neither is provided.")
        column_names = _infer_column_names(filenames, field_delim, use_quote_delim, opener)
    if len(column_names) != len(set(column_names)):
        names = sorted(column_names)
        raise ValueError(f"Either `column_names` argument or CSV header row contains duplicate column names: "
                         f"{set(a for a, b in zip(names, names[1:]) if a == b)}.")
    if select_columns is not None:
        select_columns = _sorted_col_indices(select_columns, column_names)
    if column_defaults is None:
        column_defaults = _infer_column_defaults(filenames, len(column_names), field_delim, use_quote_delim,
                                                 na_value, header, num_rows_for_inference, select_columns, opener)
    if select_columns is not None and len(column_defaults) != len(select_columns):
        raise ValueError(f"If specified, `column_defaults` and `select_columns` must have the same length: "
                         f"`column_defaults` has length {len(column_defaults)}, `select_columns` has length "
                         f"{len(select_columns)}.")
    if select_columns is not None and len(column_names) > len(select_columns):
        column_names = [column_names[i] for i in select_columns]
    if label_name is not None and label_name not in column_names:
        raise ValueError(f"`label_name` provided must be one of the columns: {column_names}. Received: "
                         f"{label_name}.")

    def filename_to_dataset(filename):
        ds = CsvDataset(filename, record_defaults=column_defaults, field_delim=field_delim,
                        use_quote_delim=use_quote_delim, na_value=na_value, select_cols=select_columns,
                        header=header, compression_type=compression_type)
        return ds.apply(_ignore_errors()) if ignore_errors else ds

    def map_fn(*columns):
        features = collections.OrderedDict(zip(column_names, columns))
        if label_name is not None:
            label = features.pop(label_name)
            return features, label
        return features

    reads = 1 if num_parallel_reads is None or num_parallel_reads == AUTOTUNE else num_parallel_reads
    dataset = dataset.interleave(filename_to_dataset, cycle_length=reads, block_length=1)
    if shuffle:
        dataset = dataset.shuffle(shuffle_buffer_size, shuffle_seed)
    if num_epochs != 1:
        dataset = dataset.repeat(num_epochs)
    dataset = dataset.batch(batch_size, drop_remainder=num_epochs is None)
    dataset = dataset.map(map_fn)
    return dataset.prefetch(AUTOTUNE if prefetch_buffer_size is None else prefetch_buffer_size)


# -- what make_csv_dataset reads while the graph is built ------------------------------------------

def _file_names(file_pattern):
    """The files matching the pattern (or list of patterns), sorted (TF's order without shuffle)."""
    if isinstance(file_pattern, list):
        if not file_pattern:
            raise ValueError("Argument `file_pattern` should not be empty.")
        names = [n for p in file_pattern for n in glob.glob(p)]
    else:
        names = glob.glob(file_pattern)
    if not names:
        raise ValueError(f"No files match `file_pattern` {file_pattern}.")
    return sorted(names)


def _opener(compression_type, encoding):
    value = compression_type
    if isinstance(compression_type, Tensor):
        value = constant_value(compression_type)
        if value is None:
            raise ValueError(f"Received unknown `compression_type` {compression_type}. Expected: GZIP, ZLIB or "
                             f"(empty string).")
        value = value.item() if isinstance(value, np.ndarray) else value
    value = value.decode() if isinstance(value, bytes) else (value or "")
    if value == "GZIP":
        return lambda name: gzip.open(name, "rt", encoding=encoding, newline="")
    if value == "ZLIB":
        raise ValueError(f"`compression_type` {compression_type} is not supported for probing columns.")
    if value:
        raise ValueError(f"Received unknown `compression_type` {compression_type}. Expected: GZIP, ZLIB or "
                         f"(empty string).")
    return lambda name: open(name, "r", encoding=encoding, newline="")


def _reader(f, field_delim, use_quote_delim):
    return csv.reader(f, delimiter=field_delim, quoting=csv.QUOTE_MINIMAL if use_quote_delim else csv.QUOTE_NONE)


def _infer_column_names(filenames, field_delim, use_quote_delim, opener):
    """The header row of the first file; every other file's must be the same."""
    names = None
    for name in filenames:
        with opener(name) as f:
            try:
                row = next(_reader(f, field_delim, use_quote_delim))
            except StopIteration:
                raise ValueError(f"Failed when reading the header line of {name}. Is it an empty file?") from None
        if names is None:
            names = row
        elif row != names:
            raise ValueError(f"All input CSV files should have the same column names in the header row. File {name} "
                             f"has different column names.")
    return names


def _sorted_col_indices(select_columns, column_names):
    by_name = {n: i for i, n in enumerate(column_names)}
    out = []
    for v in select_columns:
        if isinstance(v, int):
            if v < 0 or v >= len(column_names):
                raise ValueError(f"Column index {v} specified in `select_columns` should be > 0  and <= "
                                 f"{len(column_names)}, which is the number of columns.")
            out.append(v)
        elif v not in by_name:
            raise ValueError(f"Column {v} specified in `select_columns` must be of one of the columns: "
                             f"{by_name.keys()}.")
        else:
            out.append(by_name[v])
    result = sorted(set(out))
    if len(result) != len(select_columns):
        raise ValueError(f"The `select_columns` argument contains duplicate columns: "
                         f"{set(a for a, b in zip(sorted(out), sorted(out)[1:]) if a == b)}.")
    return result


def _valid_int(text, np_type):
    try:
        return bool(np_type(text) == np.int64(text))
    except (ValueError, OverflowError):
        return False


def _valid_float(text, np_type):
    try:
        with np.errstate(over="ignore"):
            return bool(np_type(text) < np.inf)
    except ValueError:
        return False


# The types tried, least permissive first: a column gets the first that all its values fit.
_INFERENCE = [(dtypes.int32, lambda s: _valid_int(s, np.int32)), (dtypes.int64, lambda s: _valid_int(s, np.int64)),
              (dtypes.float32, lambda s: _valid_float(s, np.float32)),
              (dtypes.float64, lambda s: _valid_float(s, np.float64)), (dtypes.string, lambda s: True)]


def _infer_type(text, na_value, previous):
    if text in ("", na_value):
        return previous
    allowed = [t for t, _ in _INFERENCE]
    for i, (dtype, valid) in enumerate(_INFERENCE):
        if valid(text) and (previous is None or previous in allowed[:i + 1]):
            return dtype
    return dtypes.string


def _infer_column_defaults(filenames, num_cols, field_delim, use_quote_delim, na_value, header, num_rows,
                           select_columns, opener):
    """Defaults (0 or "") of the types TF infers from the first `num_rows` rows of the files."""
    columns = range(num_cols) if select_columns is None else select_columns
    types = [None] * len(columns)
    i = 0
    for name in filenames:
        with opener(name) as f:
            rows = _reader(f, field_delim, use_quote_delim)
            row_num = 1
            if header:
                next(rows, None)
                row_num += 1
            for row in rows:
                if num_rows is not None and i >= num_rows:
                    break
                if len(row) != num_cols:
                    raise ValueError(f"Problem inferring types: CSV row {row_num} has {len(row)} number of fields. "
                                     f"Expected: {num_cols}.")
                row_num += 1
                for j, col in enumerate(columns):
                    types[j] = _infer_type(row[col], na_value, types[j])
                i += 1
        if num_rows is not None and i >= num_rows:
            break
    types = [t or dtypes.string for t in types]
    return [convert_to_tensor(np.array([""], dtype=object) if t == dtypes.string else np.zeros([1], t.np), dtype=t)
            for t in types]
