"""`tf.train.warm_start` and `VocabInfo`: initialize a new model's variables from another run's
checkpoint, by regex or list of variables, renamed (`var_name_to_prev_var_name`), and with
vocabulary remapping (`var_name_to_vocab_info`).

Plain variables get TF's checkpoint-reading initializers (`init_from_checkpoint`). A variable
with a VocabInfo is remapped as TF's `load_and_remap_matrix` does, but when `warm_start` is
called (the checkpoint and the vocabulary files are read then, not when the initializer runs):
row (axis 0) or column (axis 1) `i` takes the old slice of `new_vocab[i]` if that word is in
`old_vocab` (among its first `old_vocab_size` words, for rows); the missing entries, in row-major order, then
the OOV rows or columns, take values drawn from `backup_initializer` (zeros without one).
"""
import collections

import numpy as np

from .. import logging
from ..framework.graph import GraphKeys, get_default_graph
from ..framework.op_builder import convert_to_tensor
from ..ops import array_ops, extra_ops, state_ops
from ..ops import variables as variables_lib
from .checkpoint_reader import load_checkpoint
from .checkpoint_utils import init_from_checkpoint


class VocabInfo(collections.namedtuple("VocabInfo", ["new_vocab", "new_vocab_size", "num_oov_buckets", "old_vocab",
                                                     "old_vocab_size", "backup_initializer", "axis"])):
    def __new__(cls, new_vocab, new_vocab_size, num_oov_buckets, old_vocab, old_vocab_size=-1,
                backup_initializer=None, axis=0):
        if axis != 0 and axis != 1:
            raise ValueError(f"The only supported values for the axis argument are 0 and 1.  Provided axis: {axis}")
        return super().__new__(cls, new_vocab, new_vocab_size, num_oov_buckets, old_vocab, old_vocab_size,
                               backup_initializer, axis)


def _grouped_variables(vars_to_warm_start):
    graph = get_default_graph()
    if isinstance(vars_to_warm_start, str) or vars_to_warm_start is None:
        found = graph.get_collection(GraphKeys.TRAINABLE_VARIABLES, scope=vars_to_warm_start)
    elif isinstance(vars_to_warm_start, list):
        if all(isinstance(v, str) for v in vars_to_warm_start):
            found = [v for scope in vars_to_warm_start
                     for v in graph.get_collection(GraphKeys.GLOBAL_VARIABLES, scope=scope)]
        elif all(isinstance(v, variables_lib.Variable) for v in vars_to_warm_start):
            found = vars_to_warm_start
        else:
            raise ValueError("If `vars_to_warm_start` is a list, it must be all `Variable` or all `str`.  Given types "
                             f"are {[type(v) for v in vars_to_warm_start]}")
    else:
        raise ValueError(f"`vars_to_warm_start must be a `list` or `str`.  Given type is {type(vars_to_warm_start)}")
    grouped = {}
    for v in found:  # a partitioned variable's parts warm-start together, from slices of one tensor
        info = v._get_save_slice_info()
        if info is None:
            grouped[v.op.name] = v
        else:
            grouped.setdefault(info.full_name, []).append(v)
    return grouped


def warm_start(ckpt_to_initialize_from, vars_to_warm_start=".*", var_name_to_vocab_info=None,
               var_name_to_prev_var_name=None):
    """Replaces the initializers of the chosen variables with values from the checkpoint."""
    logging.info("Warm-starting from: %s", ckpt_to_initialize_from)
    grouped = _grouped_variables(vars_to_warm_start)
    vocab_infos = var_name_to_vocab_info or {}
    prev_names = var_name_to_prev_var_name or {}
    vocabless = {}
    count = 0
    for var_name, var in grouped.items():
        prev_name = prev_names.get(var_name) or var_name
        vocab_info = vocab_infos.get(var_name)
        if vocab_info:
            count += 1
            if isinstance(var, list):
                raise NotImplementedError(f"warm_start with a VocabInfo for partitioned variable {var_name} is not "
                                          f"supported in graphrt; warm-start it without one, or unpartitioned")
            _warm_start_var_with_vocab(var, ckpt_to_initialize_from, prev_name, vocab_info)
        elif vars_to_warm_start:
            count += 1
            if prev_name in vocabless:  # one checkpoint tensor for two variables: one map each
                init_from_checkpoint(ckpt_to_initialize_from, vocabless)
                vocabless = {}
            vocabless[prev_name] = var
    if vocabless:
        init_from_checkpoint(ckpt_to_initialize_from, vocabless)
    logging.info("Warm-started %d variables.", count)
    unused_prev = set(prev_names) - set(grouped)
    if unused_prev:
        raise ValueError(f"You provided the following variables in var_name_to_prev_var_name that were not used: "
                         f"{unused_prev}.  Perhaps you misspelled them?  Here is the list of viable variable names: "
                         f"{grouped.keys()}")
    unused_vocab = set(vocab_infos) - set(grouped)
    if unused_vocab:
        raise ValueError(f"You provided the following variables in var_name_to_vocab_info that were not used: "
                         f"{unused_vocab}.  Perhaps you misspelled them?  Here is the list of viable variable names: "
                         f"{grouped.keys()}")


def _read_vocab(path, size=-1):
    with open(path, encoding="utf-8") as f:
        words = f.read().splitlines()
    return words if size is None or size < 0 else words[:size]


def _warm_start_var_with_vocab(var, ckpt, prev_tensor_name, info):
    if not (info.new_vocab and info.new_vocab_size and ckpt and info.old_vocab):
        raise ValueError("Invalid args: Must provide all of [current_vocab_path, current_vocab_size, prev_ckpt, "
                         "prev_vocab_path}.")
    if info.num_oov_buckets < 0:
        raise ValueError(f"num_row_oov_buckets must be >= 0, but received {info.num_oov_buckets}")
    old = load_checkpoint(ckpt).get_tensor(prev_tensor_name)
    old = old.reshape(old.shape[0], -1) if info.axis == 0 else old
    if info.axis == 1:
        old = old.T  # remap columns as rows, then turn back
    old_index = {}
    # as TF, old_vocab_size limits a row vocabulary only (the column remapping has no such limit)
    for i, word in enumerate(_read_vocab(info.old_vocab, info.old_vocab_size if info.axis == 0 else -1)):
        old_index.setdefault(word, i)
    new_words = _read_vocab(info.new_vocab)[:info.new_vocab_size]
    if len(new_words) < info.new_vocab_size:
        raise ValueError(f"Vocabulary file {info.new_vocab} has {len(new_words)} entries, fewer than "
                         f"new_vocab_size {info.new_vocab_size}")
    rows = [old_index.get(w, -1) for w in new_words]
    present = np.array([r >= 0 for r in rows])
    remapped = np.zeros((len(rows), old.shape[1]), old.dtype)
    remapped[present] = old[[r for r in rows if r >= 0]]
    if info.axis == 1:
        remapped, present_cells = remapped.T, np.broadcast_to(present[None, :], remapped.T.shape)
    else:
        present_cells = np.broadcast_to(present[:, None], remapped.shape)
    shape = var.get_shape().as_list()
    dtype = var.dtype.base_dtype
    g = get_default_graph()
    with g.name_scope(f"{var.op.name}/warm_start"):
        value = convert_to_tensor(remapped, dtype=dtype)
        missing = int((~present_cells).sum())
        if missing:
            # the backup values fill the missing cells in row-major order, as TF's remap kernel does
            drawn = array_ops.reshape(_backup(info.backup_initializer, [missing, 1], dtype), [-1])
            where = convert_to_tensor(np.argwhere(~present_cells).astype(np.int64))
            value = value + extra_ops.scatter_nd(where, drawn, list(remapped.shape))
        if info.num_oov_buckets > 0:
            axis = info.axis
            oov_shape = [info.num_oov_buckets, remapped.shape[1]] if axis == 0 else [remapped.shape[0],
                                                                                      info.num_oov_buckets]
            value = array_ops.concat([value, _backup(info.backup_initializer, oov_shape, dtype)], axis)
        value = array_ops.reshape(value, shape)
    with g.colocate_with(var.op):
        var._initializer_op = state_ops.assign(var, value).op
    var._initial_value = value


def _backup(initializer, shape, dtype):
    if initializer is None:
        return array_ops.zeros(shape, dtype=dtype)
    return convert_to_tensor(initializer(shape, dtype=dtype))
