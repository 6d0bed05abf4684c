"""Lookup-table op declarations (TF's `*V2` table ops, which take a `resource` handle).

A table op (HashTableV2, MutableHashTableV2) outputs the handle of a table in
its device's resource manager; every op taking the handle is placed with it.
"""
from ..framework.registry import REQUIRED, not_differentiable, register_op
from ..framework.tensor_shape import TensorShape

_SCALAR = TensorShape([])
_TABLE_ATTRS = {"container": "", "shared_name": "", "use_node_name_sharing": False, "key_dtype": REQUIRED,
                "value_dtype": REQUIRED}


def _find_shape(ctx):
    return ctx.shape(1)


register_op("HashTableV2", [], ["table_handle: resource"], attrs=_TABLE_ATTRS, shape_fn=lambda ctx: _SCALAR,
            is_stateful=True)
register_op("MutableHashTableV2", [], ["table_handle: resource"], attrs=_TABLE_ATTRS,
            shape_fn=lambda ctx: _SCALAR, is_stateful=True)
register_op("LookupTableImportV2", ["table_handle: resource", "keys: Tin", "values: Tout"], [], is_stateful=True)
register_op("LookupTableInsertV2", ["table_handle: resource", "keys: Tin", "values: Tout"], [], is_stateful=True)
register_op("LookupTableRemoveV2", ["table_handle: resource", "keys: Tin"], [], is_stateful=True)
register_op("InitializeTableFromTextFileV2", ["table_handle: resource", "filename: string"], [],
            attrs={"key_index": REQUIRED, "value_index": REQUIRED, "vocab_size": -1, "delimiter": "\t",
                   "offset": 0},
            is_stateful=True)
register_op("LookupTableFindV2", ["table_handle: resource", "keys: Tin", "default_value: Tout"], ["values: Tout"],
            shape_fn=_find_shape, is_stateful=True)
register_op("LookupTableSizeV2", ["table_handle: resource"], ["size: int64"], shape_fn=lambda ctx: _SCALAR,
            is_stateful=True)
register_op("LookupTableExportV2", ["table_handle: resource"], ["keys: Tkeys", "values: Tvalues"],
            shape_fn=lambda ctx: [TensorShape([None]), TensorShape([None])], is_stateful=True)

for _name in ("HashTableV2", "MutableHashTableV2", "LookupTableImportV2", "LookupTableInsertV2",
              "LookupTableRemoveV2", "InitializeTableFromTextFileV2", "LookupTableFindV2", "LookupTableSizeV2",
              "LookupTableExportV2"):
    not_differentiable(_name)
