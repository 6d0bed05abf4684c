"""Declarations of the tf.data ops, with TF's names, inputs and attrs.

A dataset op outputs a `variant`: at run time, a description of the
dataset (datasets.py), cheap to make, that iterators are created from. An
iterator is a `resource` living on its device: IteratorV2 / OneShotIterator
make the handle, MakeIterator points it at a dataset, IteratorGetNext
takes the next element. Dataset ops are CPU ops, as in TF.
"""
from ..framework.registry import REQUIRED, not_differentiable, register_op
from ..framework.tensor_shape import TensorShape
from ..ops import shape_fns

_FUNC_ATTRS = {"Targuments": []}


def _struct(**extra):
    attrs = {"output_types": REQUIRED, "output_shapes": REQUIRED, "metadata": ""}
    attrs.update(extra)
    return attrs


def _get_next_shapes(ctx):
    return [TensorShape(s) if not isinstance(s, TensorShape) else s for s in ctx.attr("output_shapes")]


DATASET_OPS = []


def _dataset_op(name, inputs, attrs=None, stateful=False):
    register_op(name, inputs, ["handle: variant"], attrs=attrs if attrs is not None else _struct(),
                shape_fn=shape_fns.scalar, is_stateful=stateful)
    DATASET_OPS.append(name)


# -- sources -----------------------------------------------------------------------------------
_dataset_op("TensorDataset", ["components: Toutput_types"],
            {"Toutput_types": REQUIRED, "output_shapes": REQUIRED, "metadata": ""})
_dataset_op("TensorSliceDataset", ["components: Toutput_types"],
            {"Toutput_types": REQUIRED, "output_shapes": REQUIRED, "is_files": False, "metadata": "",
             "replicate_on_split": False})
_dataset_op("RangeDataset", ["start: int64", "stop: int64", "step: int64"], _struct(replicate_on_split=False))
_dataset_op("TextLineDataset", ["filenames: string", "compression_type: string", "buffer_size: int64"],
            {"metadata": ""})
_dataset_op("TFRecordDataset", ["filenames: string", "compression_type: string", "buffer_size: int64"],
            {"metadata": ""})
_dataset_op("FixedLengthRecordDatasetV2", ["filenames: string", "header_bytes: int64", "record_bytes: int64",
                                          "footer_bytes: int64", "buffer_size: int64", "compression_type: string"],
            {"metadata": ""})
_dataset_op("GeneratorDataset", ["init_func_other_args: Tinit_func_args",
                                 "next_func_other_args: Tnext_func_args",
                                 "finalize_func_other_args: Tfinalize_func_args"],
            _struct(init_func=REQUIRED, next_func=REQUIRED, finalize_func=REQUIRED,
                    Tinit_func_args=[], Tnext_func_args=[], Tfinalize_func_args=[]), stateful=True)

# -- transformations ---------------------------------------------------------------------------
_dataset_op("ZipDataset", ["input_datasets: N * variant"], _struct(N=REQUIRED))
_dataset_op("ConcatenateDataset", ["input_dataset: variant", "another_dataset: variant"])
_dataset_op("MapDataset", ["input_dataset: variant", "other_arguments: Targuments"],
            _struct(f=REQUIRED, use_inter_op_parallelism=True, preserve_cardinality=False, **_FUNC_ATTRS))
_dataset_op("ParallelMapDatasetV2", ["input_dataset: variant", "other_arguments: Targuments",
                                     "num_parallel_calls: int64"],
            _struct(f=REQUIRED, use_inter_op_parallelism=True, deterministic="default",
                    preserve_cardinality=False, **_FUNC_ATTRS))
_dataset_op("FilterDataset", ["input_dataset: variant", "other_arguments: Targuments"],
            _struct(predicate=REQUIRED, **_FUNC_ATTRS))
_dataset_op("FlatMapDataset", ["input_dataset: variant", "other_arguments: Targuments"],
            _struct(f=REQUIRED, **_FUNC_ATTRS))
_dataset_op("InterleaveDataset", ["input_dataset: variant", "other_arguments: Targuments", "cycle_length: int64",
                                  "block_length: int64"], _struct(f=REQUIRED, **_FUNC_ATTRS))
_dataset_op("BatchDatasetV2", ["input_dataset: variant", "batch_size: int64", "drop_remainder: bool"],
            _struct(parallel_copy=False))
_dataset_op("PaddedBatchDatasetV2", ["input_dataset: variant", "batch_size: int64", "padded_shapes: N * int64",
                                     "padding_values: Toutput_types", "drop_remainder: bool"],
            {"Toutput_types": REQUIRED, "output_shapes": REQUIRED, "N": REQUIRED,
             "parallel_copy": False, "metadata": ""})
_dataset_op("ShuffleDataset", ["input_dataset: variant", "buffer_size: int64", "seed: int64", "seed2: int64"],
            _struct(reshuffle_each_iteration=True))
_dataset_op("RepeatDataset", ["input_dataset: variant", "count: int64"])
_dataset_op("TakeDataset", ["input_dataset: variant", "count: int64"])
_dataset_op("SkipDataset", ["input_dataset: variant", "count: int64"])
_dataset_op("PrefetchDataset", ["input_dataset: variant", "buffer_size: int64"],
            _struct(slack_period=0, legacy_autotune=True, buffer_size_min=0))
_dataset_op("CacheDataset", ["input_dataset: variant", "filename: string"])
_dataset_op("UnbatchDataset", ["input_dataset: variant"])
_dataset_op("ShardDataset", ["input_dataset: variant", "num_shards: int64", "index: int64"],
            _struct(require_non_empty=False))
_dataset_op("ScanDataset", ["input_dataset: variant", "initial_state: Tstate", "other_arguments: Targuments"],
            _struct(f=REQUIRED, Tstate=REQUIRED, preserve_cardinality=False, use_default_device=True,
                    **_FUNC_ATTRS))
_dataset_op("DirectedInterleaveDataset", ["selector_input_dataset: variant", "data_input_datasets: N * variant"],
            _struct(N=REQUIRED, stop_on_empty_dataset=False))
_dataset_op("RandomDataset", ["seed: int64", "seed2: int64"])
_dataset_op("WindowDataset", ["input_dataset: variant", "size: int64", "shift: int64", "stride: int64",
                              "drop_remainder: bool"])
_dataset_op("GroupByWindowDataset", ["input_dataset: variant", "key_func_other_arguments: Tkey_func_other_arguments",
                                     "reduce_func_other_arguments: Treduce_func_other_arguments",
                                     "window_size_func_other_arguments: Twindow_size_func_other_arguments"],
            _struct(key_func=REQUIRED, reduce_func=REQUIRED, window_size_func=REQUIRED,
                    Tkey_func_other_arguments=[], Treduce_func_other_arguments=[],
                    Twindow_size_func_other_arguments=[]))
register_op("DatasetToSingleElement", ["dataset: variant"], ["components: output_types"],
            attrs=_struct(), shape_fn=_get_next_shapes)
register_op("ReduceDataset", ["input_dataset: variant", "initial_state: Tstate", "other_arguments: Targuments"],
            ["components: output_types"],
            attrs=_struct(f=REQUIRED, Tstate=REQUIRED, use_inter_op_parallelism=True, **_FUNC_ATTRS),
            shape_fn=_get_next_shapes)

# -- iterators ---------------------------------------------------------------------------------
register_op("IteratorV2", [], ["handle: resource"],
            attrs={"shared_name": "", "container": "", "output_types": REQUIRED,
                   "output_shapes": REQUIRED},
            shape_fn=shape_fns.scalar, is_stateful=True)
register_op("OneShotIterator", [], ["handle: resource"],
            attrs={"dataset_factory": REQUIRED, "output_types": REQUIRED, "output_shapes": REQUIRED,
                   "container": "", "shared_name": ""},
            shape_fn=shape_fns.scalar, is_stateful=True)
register_op("MakeIterator", ["dataset: variant", "iterator: resource"], [], is_stateful=True)
register_op("IteratorGetNext", ["iterator: resource"], ["components: output_types"],
            attrs={"output_types": REQUIRED, "output_shapes": REQUIRED},
            shape_fn=_get_next_shapes, is_stateful=True)
register_op("IteratorToStringHandle", ["resource_handle: resource"], ["string_handle: string"],
            shape_fn=shape_fns.scalar, is_stateful=True)
register_op("IteratorFromStringHandleV2", ["string_handle: string"], ["resource_handle: resource"],
            attrs={"output_types": [], "output_shapes": []}, shape_fn=shape_fns.scalar, is_stateful=True)

for _name in DATASET_OPS + ["ReduceDataset", "DatasetToSingleElement", "IteratorV2", "OneShotIterator", "MakeIterator", "IteratorGetNext",
                            "IteratorToStringHandle", "IteratorFromStringHandleV2"]:
    not_differentiable(_name)
