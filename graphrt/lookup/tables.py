"""The TF1 Python API of lookup tables (TF's lookup_ops): static hash tables and
their initializers, id tables with OOV hash buckets, the vocabulary helpers, the
mutable hash table and `tf.tables_initializer`."""
import collections
import uuid

from ..framework import dtypes
from ..framework.graph import GraphKeys, get_default_graph, graph_of
from ..framework.op_builder import convert_to_tensor, is_tensor_like
from ..framework.tensor_shape import TensorShape
from ..ops import array_ops, control_ops, math_ops
from .. import strings as string_ops


def _create(op_type, inputs, attrs, scope, colocate=None):
    """An op named `<scope>/<op_type>` (as TF's gen ops under a name_scope), with the table's handle
    first and placed with it; without a handle, the op is named `scope` itself (a table op)."""
    g = colocate.graph if colocate is not None else get_default_graph()
    with g.as_default(), g.name_scope(scope) as name:
        if colocate is None:
            return g.create_op(op_type, list(inputs), attrs, name=name)
        with g.colocate_with(colocate.op), g.name_scope(op_type) as op_name:
            return g.create_op(op_type, [colocate] + list(inputs), attrs, name=op_name)


def tables_initializer(name="init_all_tables"):
    """One op running every table initializer of the graph (collection TABLE_INITIALIZERS)."""
    initializers = get_default_graph().get_collection(GraphKeys.TABLE_INITIALIZERS)
    if initializers:
        return control_ops.group(*initializers, name=name)
    return control_ops.no_op(name=name)


initialize_all_tables = tables_initializer


def check_table_dtypes(table, key_dtype, value_dtype):
    if key_dtype.base_dtype != table.key_dtype:
        raise TypeError(f"Invalid key dtype for table, expected {table.key_dtype} but got {key_dtype}.")
    if value_dtype.base_dtype != table.value_dtype:
        raise TypeError(f"Invalid value dtype for table, expected {table.value_dtype} but got {value_dtype}.")


class LookupInterface:
    def __init__(self, key_dtype, value_dtype):
        self._key_dtype = dtypes.as_dtype(key_dtype)
        self._value_dtype = dtypes.as_dtype(value_dtype)

    key_dtype = property(lambda self: self._key_dtype)
    value_dtype = property(lambda self: self._value_dtype)

    def __getitem__(self, keys):
        return self.lookup(keys)


def _sparse_type():
    from ..sparse import SparseTensor
    return SparseTensor


def _with_values(keys, values):
    """values in the place of a SparseTensor's; else values."""
    if isinstance(keys, _sparse_type()):
        return _sparse_type()(keys.indices, values, keys.dense_shape)
    return values


# -- initializers ---------------------------------------------------------------------------
class TableInitializerBase:
    def __init__(self, key_dtype, value_dtype):
        self._key_dtype = dtypes.as_dtype(key_dtype)
        self._value_dtype = dtypes.as_dtype(value_dtype)

    key_dtype = property(lambda self: self._key_dtype)
    value_dtype = property(lambda self: self._value_dtype)
    _shared_name = property(lambda self: "")


class KeyValueTensorInitializer(TableInitializerBase):
    """Fills a table from a tensor of keys and one of values."""

    def __init__(self, keys, values, key_dtype=None, value_dtype=None, name=None):
        self._keys = convert_to_tensor(keys, dtype=key_dtype, name="keys")
        self._values = convert_to_tensor(values, dtype=value_dtype, name="values")
        self._name = name if name is not None else "key_value_init"
        super().__init__(self._keys.dtype, self._values.dtype)

    def initialize(self, table):
        check_table_dtypes(table, self._keys.dtype, self._values.dtype)
        op = _create("LookupTableImportV2", [self._keys, self._values],
                     {"Tin": self._keys.dtype.base_dtype, "Tout": self._values.dtype.base_dtype}, self._name,
                     colocate=table.resource_handle)
        get_default_graph().add_to_collection(GraphKeys.TABLE_INITIALIZERS, op)
        return op


class TextFileIndex:
    WHOLE_LINE = -2
    LINE_NUMBER = -1


class TextFileInitializer(TableInitializerBase):
    """Fills a table from a text file: keys and values are a column of each line (split at
    `delimiter`), the whole line (WHOLE_LINE) or the line number (LINE_NUMBER)."""

    def __init__(self, filename, key_dtype, key_index, value_dtype, value_index, vocab_size=None, delimiter="\t",
                 name=None, value_index_offset=0):
        if not is_tensor_like(filename) and not filename:
            raise ValueError("`filename` argument required for tf.lookup.TextFileInitializer")
        key_dtype, value_dtype = dtypes.as_dtype(key_dtype), dtypes.as_dtype(value_dtype)
        for what, index, dtype in (("key", key_index, key_dtype), ("value", value_index, value_dtype)):
            if index < -2:
                raise ValueError(f"`{what}_index` should be >= -2, received: {index}.")
            if index == TextFileIndex.LINE_NUMBER and dtype != dtypes.int64:
                raise ValueError(f"`{what}_dtype` must be int64 if `{what}_index` is {TextFileIndex.LINE_NUMBER}, "
                                 f"received: {dtype}")
            if index == TextFileIndex.WHOLE_LINE and not dtype.is_integer and dtype != dtypes.string:
                raise ValueError(f"`{what}_dtype` should be either integer or string for `{what}_index` "
                                 f"{TextFileIndex.WHOLE_LINE}, received: {dtype}")
        if vocab_size is not None and vocab_size <= 0:
            raise ValueError(f"`vocab_size` should be > 0, received: {vocab_size}")
        self._filename = filename
        self._key_index, self._value_index = key_index, value_index
        self._vocab_size, self._delimiter, self._name, self._offset = vocab_size, delimiter, name, value_index_offset
        super().__init__(key_dtype, value_dtype)

    def initialize(self, table):
        check_table_dtypes(table, self.key_dtype, self.value_dtype)
        g = table.resource_handle.graph
        with g.as_default(), g.name_scope(self._name or "text_file_init") as scope:
            filename = convert_to_tensor(self._filename, dtypes.string, name="asset_filepath")
            op = _create("InitializeTableFromTextFileV2", [filename],
                         {"key_index": self._key_index, "value_index": self._value_index,
                          "vocab_size": -1 if self._vocab_size is None else self._vocab_size,
                          "delimiter": self._delimiter, "offset": self._offset},
                         scope, colocate=table.resource_handle)
        g.add_to_collection(GraphKeys.TABLE_INITIALIZERS, op)
        if filename.op.type == "Const":
            g.add_to_collection(GraphKeys.ASSET_FILEPATHS, filename)
        return op

    @property
    def _shared_name(self):
        # TF's: tables of one file, columns and size share one resource
        parts = [self._filename] + ([self._vocab_size] if self._vocab_size else []) + [self._key_index,
                                                                                        self._value_index]
        parts += [self._offset] if self._offset else []
        return "hash_table_" + "_".join(str(p) for p in parts)


class TextFileStringTableInitializer(TextFileInitializer):
    def __init__(self, filename, key_column_index=TextFileIndex.LINE_NUMBER,
                 value_column_index=TextFileIndex.WHOLE_LINE, vocab_size=None, delimiter="\t",
                 name="text_file_string_table_init"):
        super().__init__(filename, dtypes.int64, key_column_index, dtypes.string, value_column_index,
                         vocab_size=vocab_size, delimiter=delimiter, name=name)


class TextFileIdTableInitializer(TextFileInitializer):
    def __init__(self, filename, key_column_index=TextFileIndex.WHOLE_LINE,
                 value_column_index=TextFileIndex.LINE_NUMBER, vocab_size=None, delimiter="\t",
                 name="text_file_id_table_init", key_dtype=dtypes.string):
        super().__init__(filename, key_dtype, key_column_index, dtypes.int64, value_column_index,
                         vocab_size=vocab_size, delimiter=delimiter, name=name)


# -- tables ---------------------------------------------------------------------------------
class StaticHashTable(LookupInterface):
    """An immutable table, filled by its initializer (`table.initializer`, also in
    tf.tables_initializer()); lookups before that fail with "Table not initialized."."""

    def __init__(self, initializer, default_value, name=None):
        self._initializer = initializer
        shared_name = initializer._shared_name or f"hash_table_{uuid.uuid4()}"
        super().__init__(initializer.key_dtype, initializer.value_dtype)
        self._default_value = convert_to_tensor(default_value, dtype=self._value_dtype)
        self._default_value.shape.merge_with(TensorShape([]))
        self._resource_handle = _create("HashTableV2", [], {
            "container": "", "shared_name": shared_name, "use_node_name_sharing": False,
            "key_dtype": self._key_dtype, "value_dtype": self._value_dtype}, name or "hash_table").outputs[0]
        self._table_name = self._resource_handle.op.name.split("/")[-1]
        self._init_op = initializer.initialize(self)

    resource_handle = property(lambda self: self._resource_handle)
    name = property(lambda self: self._table_name)
    default_value = property(lambda self: self._default_value)
    initializer = property(lambda self: self._init_op)

    def size(self, name=None):
        return _create("LookupTableSizeV2", [], {}, name or f"{self.name}_Size",
                       colocate=self._resource_handle).outputs[0]

    def lookup(self, keys, name=None):
        key_tensor = keys.values if isinstance(keys, _sparse_type()) else keys
        if key_tensor.dtype.base_dtype != self._key_dtype:
            raise TypeError(f"Dtype of argument `keys` must be {self._key_dtype}, received: {key_tensor.dtype}")
        values = _create("LookupTableFindV2", [key_tensor, self._default_value],
                         {"Tin": self._key_dtype, "Tout": self._value_dtype}, name or f"{self.name}_Lookup",
                         colocate=self._resource_handle).outputs[0]
        values.set_shape(key_tensor.shape)
        return _with_values(keys, values)

    def export(self, name=None):
        op = _create("LookupTableExportV2", [], {"Tkeys": self._key_dtype, "Tvalues": self._value_dtype},
                     name or f"{self.name}_Export", colocate=self._resource_handle)
        return op.outputs[0], op.outputs[1]


class HashTable(StaticHashTable):
    """TF1's name (tf.contrib.lookup.HashTable), with `init` for `initializer`."""

    init = property(lambda self: self.initializer)


HasherSpec = collections.namedtuple("HasherSpec", ["hasher", "key"])
FastHashSpec = HasherSpec("fasthash", None)


def StrongHashSpec(key):  # noqa: N802 - the TF name
    if len(key) != 2:
        raise ValueError(f"`key` must have size 2, received {len(key)}")
    return HasherSpec("stronghash", tuple(key))


class IdTableWithHashBuckets(LookupInterface):
    """Ids from `table`, and for keys it lacks (or without a table) one of `num_oov_buckets` buckets
    after them, by a hash of the key (as a string)."""

    def __init__(self, table, num_oov_buckets, hasher_spec=FastHashSpec, name=None, key_dtype=None):
        if table is not None:
            key_dtype = table.key_dtype if key_dtype is None else dtypes.as_dtype(key_dtype)
            if table.key_dtype not in (dtypes.int64, dtypes.string):
                raise TypeError(f"Invalid `key_dtype`, expected one of (tf.int64, tf.string), received {key_dtype}.")
            if table.value_dtype != dtypes.int64:
                raise TypeError(f"Invalid `value_dtype`: expected int64 but got {table.value_dtype}.")
            name = name or table.name
        else:
            if num_oov_buckets <= 0:
                raise ValueError("`oov_buckets` must be > 0 if no `table` is supplied.")
            key_dtype = dtypes.string if key_dtype is None else dtypes.as_dtype(key_dtype)
            name = name or "hash_bucket"
        if not isinstance(hasher_spec, HasherSpec):
            raise TypeError(f"`hasher_spec` must be of type HasherSpec, got {type(hasher_spec)}.")
        self._table, self._num_oov_buckets, self._hasher_spec = table, num_oov_buckets, hasher_spec
        self._table_name = name.rstrip("/").split("/")[-1]
        super().__init__(key_dtype, dtypes.int64)

    name = property(lambda self: self._table_name)
    resource_handle = property(lambda self: self._table.resource_handle if self._table else None)

    @property
    def initializer(self):
        if self._table is not None:
            return self._table.initializer
        with get_default_graph().name_scope("init"):
            return control_ops.no_op()

    init = initializer

    def size(self, name=None):
        with get_default_graph().name_scope(name or f"{self.name}_Size"):
            base = self._table.size() if self._table else convert_to_tensor(0, dtype=dtypes.int64)
            return base + self._num_oov_buckets

    def _hash(self, values):
        spec = self._hasher_spec
        strings = values if values.dtype.base_dtype == dtypes.string else string_ops.as_string(values)
        if spec.hasher == "fasthash":
            return string_ops.to_hash_bucket_fast(strings, self._num_oov_buckets, name="hash_bucket")
        if spec.hasher == "legacy":
            return string_ops.to_hash_bucket(strings, self._num_oov_buckets, name="hash_bucket")
        if spec.hasher == "stronghash":
            return string_ops.to_hash_bucket_strong(strings, self._num_oov_buckets, spec.key, name="hash_bucket")
        raise ValueError(f"Found unknown hasher {spec.hasher} in `hasher_spec`")

    def lookup(self, keys, name=None):
        values = keys.values if isinstance(keys, _sparse_type()) else keys
        if values.dtype.base_dtype != self._key_dtype:
            raise TypeError(f"Dtype of argument `keys` must be {self._key_dtype}, received: {values.dtype}")
        if self._table is not None and self._table.key_dtype == dtypes.int64:
            values = math_ops.cast(values, dtypes.int64)
        if self._num_oov_buckets == 0:
            return _with_values(keys, self._table.lookup(values, name=name))
        g = graph_of([values])
        with g.as_default(), g.name_scope(name or f"{self.name}_Lookup"):
            buckets = self._hash(values)
            if self._table is not None:
                ids = self._table.lookup(values)
                buckets = math_ops.add(buckets, self._table.size())
                ids = math_ops.where_v2(math_ops.not_equal(ids, self._table.default_value), ids, buckets)
            else:
                ids = buckets
        return _with_values(keys, ids)


class StaticVocabularyTable(IdTableWithHashBuckets):
    """A vocabulary (`initializer`'s keys -> their int64 ids) with `num_oov_buckets` buckets after
    it for the keys it lacks, chosen by TF's fast string hash of the key (`tf.lookup.StaticVocabularyTable`)."""

    def __init__(self, initializer, num_oov_buckets, lookup_key_dtype=None, name=None,
                 experimental_is_anonymous=False):
        if num_oov_buckets <= 0:
            raise ValueError("`num_oov_buckets` must be > 0; use StaticHashTable.")
        if name:
            name = name.rstrip("/")
        table = None
        if initializer:
            lookup_key_dtype = initializer.key_dtype if lookup_key_dtype is None else dtypes.as_dtype(lookup_key_dtype)
            if initializer.key_dtype not in (dtypes.int64, dtypes.string):
                raise TypeError(f"Invalid `key_dtype`, expected one of (tf.int64, tf.string), but got "
                                f"{initializer.key_dtype}.")
            if initializer.key_dtype.is_integer != lookup_key_dtype.is_integer:
                raise TypeError(f"Invalid `key_dtype`, expected "
                                f"{'integer' if lookup_key_dtype.is_integer else 'non-integer'} but got "
                                f"{initializer.key_dtype}.")
            if initializer.value_dtype != dtypes.int64:
                raise TypeError(f"Invalid `value_dtype`, expected {dtypes.int64} but got {initializer.value_dtype}.")
            table = StaticHashTable(initializer, default_value=-1, name=name)
            name = name or table.name
        else:
            lookup_key_dtype = dtypes.string
            name = name or "hash_bucket"
        if not lookup_key_dtype.is_integer and lookup_key_dtype != dtypes.string:
            raise TypeError(f"Invalid `key_dtype`, expected integer or string, got {lookup_key_dtype}")
        super().__init__(table, num_oov_buckets, FastHashSpec, name=name, key_dtype=lookup_key_dtype)


class MutableHashTable(LookupInterface):
    """A table filled by `insert` (and emptied by `remove`); keys it lacks give `default_value`."""

    def __init__(self, key_dtype, value_dtype, default_value, name="MutableHashTable", checkpoint=True):
        super().__init__(key_dtype, value_dtype)
        self._default_value = convert_to_tensor(default_value, dtype=self._value_dtype)
        if self._default_value.shape.ndims not in (0, None):
            raise NotImplementedError("graphrt's MutableHashTable holds scalar values only")
        self._resource_handle = _create("MutableHashTableV2", [], {
            "container": "", "shared_name": "", "use_node_name_sharing": bool(checkpoint),
            "key_dtype": self._key_dtype, "value_dtype": self._value_dtype}, name).outputs[0]
        self._table_name = self._resource_handle.op.name.split("/")[-1]

    resource_handle = property(lambda self: self._resource_handle)
    name = property(lambda self: self._table_name)

    def size(self, name=None):
        return _create("LookupTableSizeV2", [], {}, name or f"{self.name}_Size",
                       colocate=self._resource_handle).outputs[0]

    def lookup(self, keys, dynamic_default_values=None, name=None):
        keys = convert_to_tensor(keys, dtype=self._key_dtype, name="keys")
        default = self._default_value if dynamic_default_values is None else dynamic_default_values
        return _create("LookupTableFindV2", [keys, default], {"Tin": self._key_dtype, "Tout": self._value_dtype},
                       name or f"{self.name}_lookup_table_find", colocate=self._resource_handle).outputs[0]

    def insert(self, keys, values, name=None):
        keys = convert_to_tensor(keys, dtype=self._key_dtype, name="keys")
        values = convert_to_tensor(values, dtype=self._value_dtype, name="values")
        return _create("LookupTableInsertV2", [keys, values], {"Tin": self._key_dtype, "Tout": self._value_dtype},
                       name or f"{self.name}_lookup_table_insert", colocate=self._resource_handle)

    def remove(self, keys, name=None):
        if keys.dtype.base_dtype != self._key_dtype:
            raise TypeError(f"Dtype of argument `keys` must be {self._key_dtype}, received: {keys.dtype}")
        return _create("LookupTableRemoveV2", [keys], {"Tin": self._key_dtype},
                       name or f"{self.name}_lookup_table_remove", colocate=self._resource_handle)

    def export(self, name=None):
        op = _create("LookupTableExportV2", [], {"Tkeys": self._key_dtype, "Tvalues": self._value_dtype},
                     name or f"{self.name}_lookup_table_export_values", colocate=self._resource_handle)
        return op.outputs[0], op.outputs[1]


# -- vocabularies -----------------------------------------------------------------------------
def _check_oov(num_oov_buckets):
    if num_oov_buckets < 0:
        raise ValueError(f"`num_oov_buckets` must be greater or equal than 0, got {num_oov_buckets}.")


def index_table_from_tensor(vocabulary_list, num_oov_buckets=0, default_value=-1, hasher_spec=FastHashSpec,
                            dtype=dtypes.string, name=None):
    """A table from each key of `vocabulary_list` to its position (int64), with OOV buckets."""
    if vocabulary_list is None:
        raise ValueError("`vocabulary_list` must be specified.")
    _check_oov(num_oov_buckets)
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_integer and dtype != dtypes.string:
        raise TypeError("`dtype` must either be integer or string.")
    g = get_default_graph()
    with g.name_scope(name or "string_to_index"):
        keys = convert_to_tensor(vocabulary_list)
        if keys.dtype.is_integer != dtype.is_integer or (not dtype.is_integer and keys.dtype.base_dtype != dtype):
            raise ValueError(f"Invalid `dtype`: Expected {dtype}, got {keys.dtype}.")
        values = math_ops.cast(math_ops.range(array_ops.size(keys)), dtypes.int64)
        with g.name_scope("hash_table"):
            table_keys = math_ops.cast(keys, dtypes.int64) if keys.dtype.is_integer else keys
            init = KeyValueTensorInitializer(table_keys, values, table_keys.dtype.base_dtype, dtypes.int64,
                                             name="table_init")
            table = StaticHashTable(init, default_value)
        if num_oov_buckets:
            table = IdTableWithHashBuckets(table, num_oov_buckets, hasher_spec=hasher_spec, key_dtype=dtype)
        return table


def index_table_from_file(vocabulary_file=None, num_oov_buckets=0, vocab_size=None, default_value=-1,
                          hasher_spec=FastHashSpec, key_dtype=dtypes.string, name=None,
                          key_column_index=TextFileIndex.WHOLE_LINE, value_column_index=TextFileIndex.LINE_NUMBER,
                          delimiter="\t"):
    """A table from each line (or column) of a vocabulary file to its line number, with OOV buckets."""
    if vocabulary_file is None or (isinstance(vocabulary_file, str) and not vocabulary_file):
        raise ValueError("`vocabulary_file` must be specified and must not be empty.")
    _check_oov(num_oov_buckets)
    if vocab_size is not None and vocab_size < 1:
        raise ValueError(f"`vocab_size` must be greater than 0, got {vocab_size} for vocabulary_file: "
                         f"{vocabulary_file}.")
    key_dtype = dtypes.as_dtype(key_dtype)
    if not key_dtype.is_integer and key_dtype != dtypes.string:
        raise TypeError("Dtype for `keys` should be either integer or string.")
    g = get_default_graph()
    with g.name_scope(name or "string_to_index"):
        with g.name_scope("hash_table"):
            init = TextFileIdTableInitializer(vocabulary_file, vocab_size=vocab_size,
                                              key_dtype=dtypes.int64 if key_dtype.is_integer else key_dtype,
                                              name="table_init", key_column_index=key_column_index,
                                              value_column_index=value_column_index, delimiter=delimiter)
            table = StaticHashTable(init, default_value)
        if num_oov_buckets:
            table = IdTableWithHashBuckets(table, num_oov_buckets, hasher_spec=hasher_spec, key_dtype=key_dtype)
        return table


def index_to_string_table_from_tensor(vocabulary_list, default_value="UNK", name=None):
    """A table from each position (int64) to its string of `vocabulary_list`."""
    if vocabulary_list is None:
        raise ValueError("`vocabulary_list` argument must be specified.")
    with get_default_graph().name_scope(name or "index_to_string"):
        vocabulary_list = convert_to_tensor(vocabulary_list, dtypes.string)
        keys = math_ops.cast(math_ops.range(array_ops.size(vocabulary_list)), dtypes.int64)
        init = KeyValueTensorInitializer(keys, vocabulary_list, dtypes.int64, dtypes.string, name="table_init")
        return StaticHashTable(init, default_value)


def index_to_string_table_from_file(vocabulary_file, vocab_size=None, default_value="UNK", name=None,
                                    key_column_index=TextFileIndex.LINE_NUMBER,
                                    value_column_index=TextFileIndex.WHOLE_LINE, delimiter="\t"):
    """A table from each line number (int64) to its line (or column) of a vocabulary file."""
    if vocabulary_file is None or (isinstance(vocabulary_file, str) and not vocabulary_file):
        raise ValueError("`vocabulary_file` must be specified and must not be empty.")
    if vocab_size is not None and vocab_size < 1:
        raise ValueError(f"`vocab_size` must be greater than 0, got {vocab_size}.")
    with get_default_graph().name_scope(name or "index_to_string"):
        init = TextFileStringTableInitializer(vocabulary_file, vocab_size=vocab_size, name="table_init",
                                              key_column_index=key_column_index,
                                              value_column_index=value_column_index, delimiter=delimiter)
        return StaticHashTable(init, default_value)
