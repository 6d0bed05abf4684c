"""`tf.train.Saver`: variables to and from TensorFlow's V2 checkpoint format.

`save` fetches the values with a session run and writes `<prefix>.index` +
`<prefix>.data-00000-of-00001` on the client (checkpoint_bundle.py: the
bytes TensorFlow's own Saver writes for the same tensors), then the
`checkpoint` state file, and a `<prefix>.meta` MetaGraphDef. `restore`
reads a V2 checkpoint (TF's or ours) or graphrt's older `<prefix>.npz`,
checks every tensor's dtype, shape and checksum, and feeds the values into
`Assign` ops built once with the Saver, so it works the same for local and
distributed sessions. Nothing is unpickled.
"""
import glob
import os
import threading

import numpy as np

from .. import errors
from ..framework.graph import GraphKeys, get_default_graph
from ..ops import array_ops, control_ops
from ..ops import variables as variables_lib
from ..ops.partitioned_variable import PartitionedVariable
from . import checkpoint_bundle, checkpoint_state, tensor_slice
from .checkpoint_reader import CheckpointReader
from .checkpoint_state import checkpoint_exists, get_checkpoint_state, latest_checkpoint  # noqa: F401


class Saver:
    def __init__(self, var_list=None, reshape=False, sharded=False, max_to_keep=5,
                 keep_checkpoint_every_n_hours=10000.0, name=None, restore_sequentially=False, saver_def=None,
                 builder=None, defer_build=False, allow_empty=False, write_version=None, pad_step_number=False,
                 save_relative_paths=False, filename=None):
        self._max_to_keep = max_to_keep
        self._last = []
        self._last_lock = threading.Lock()  # a Supervisor's checkpoint thread saves while the user may too
        self._pad = pad_step_number
        self._sharded = sharded
        self._reshape = reshape
        self._graph = get_default_graph()
        self._saver_def = saver_def if saver_def is not None and saver_def.filename_tensor_name else None
        if self._saver_def is not None:
            # TF's Saver(saver_def=...): save and restore run the graph's own SaveV2/RestoreV2 ops
            # (an imported TensorFlow MetaGraphDef has them), fed the checkpoint prefix.
            self._vars, self._placeholders, self._restore_op = {}, {}, None
            return
        if var_list is None:
            var_list = variables_lib.global_variables()
        named = _saveables_by_name(var_list)
        if not named and not allow_empty:
            raise ValueError("No variables to save")
        self._vars = named  # checkpoint key -> a Variable, or the list of a partitioned variable's parts
        g = self._graph
        self._placeholders = {}  # checkpoint key -> [(variable, its slice or None, placeholder)]
        assigns = []
        with g.name_scope(name or "save"):
            i = 0
            for key, saved in sorted(named.items()):
                feeds = self._placeholders[key] = []
                for var in (saved if isinstance(saved, list) else [saved]):
                    ph = array_ops.placeholder(var.dtype.base_dtype, var.shape, name=f"restore_{i}")
                    i += 1
                    info = var._get_save_slice_info() if isinstance(saved, list) else None
                    feeds.append((var, info, ph))
                    with g.colocate_with(var):
                        assign = var.assign(ph, read_value=False)  # an Assign, or a resource variable's op
                        assigns.append(getattr(assign, "op", assign))
            self._restore_op = control_ops.group(*assigns, name="restore_all") if assigns else None
        g.add_to_collection(GraphKeys.SAVERS, self)

    @property
    def last_checkpoints(self):
        return list(self._last)

    def set_last_checkpoints(self, paths):
        self._last = list(paths)

    def save(self, sess, save_path, global_step=None, latest_filename=None, meta_graph_suffix="meta",
             write_meta_graph=True, write_state=True, strip_default_attrs=False, save_debug_info=False):
        """Writes the V2 checkpoint `<save_path>[-<step>]`; returns that prefix."""
        if global_step is not None:
            step = global_step if isinstance(global_step, (int, np.integer)) else int(sess.run(global_step))
            prefix = f"{save_path}-{step:08d}" if self._pad else f"{save_path}-{step}"
        else:
            prefix = save_path
        directory = os.path.dirname(os.path.abspath(prefix))
        if not os.path.isdir(directory):
            if not os.path.isdir(os.path.dirname(directory)):  # TF's bundle writer makes one level only
                raise ValueError(f"Parent directory of {save_path} doesn't exist, can't save.")
            os.makedirs(directory, exist_ok=True)
        if self._saver_def is not None:
            sess.run(self._saver_def.save_tensor_name, {self._saver_def.filename_tensor_name: prefix})
        else:
            checkpoint_bundle.write_bundle(prefix, *self._fetch(sess))
        if write_meta_graph:
            from .meta_graph import export_meta_graph
            # A SaverDef is written only when it names SaveV2/RestoreV2 ops (one TensorFlow built). Without
            # one, TensorFlow's import_meta_graph builds a Saver over the VariableDefs, so it loads ours too.
            export_meta_graph(f"{prefix}.{meta_graph_suffix}", graph=self._graph, saver_def=self._saver_def,
                              strip_default_attrs=strip_default_attrs)
        with self._last_lock:
            if prefix in self._last:
                self._last.remove(prefix)
            self._last.append(prefix)
            while self._max_to_keep and len(self._last) > self._max_to_keep:
                _delete_checkpoint_files(self._last.pop(0), meta_graph_suffix)
            if write_state:
                checkpoint_state.update_checkpoint_state(directory, prefix, self._last,
                                                         latest_filename=latest_filename)
        return prefix

    def _fetch(self, sess):
        """(tensors, shard_of, num_shards) for write_bundle: the values of one run, a partitioned
        variable's parts as slices of its whole; with `sharded`, one data file per device holding
        variables (TF's sharded save), devices in sorted order."""
        values = sess.run(self._vars) if self._vars else {}
        if self._sharded:
            devices = sorted({_canonical_device(v.device) for v in self._variables()})
            shard = {d: i for i, d in enumerate(devices)}
            num_shards = max(1, len(devices))
        else:
            shard, num_shards = None, 1

        def shard_of(var):
            return shard[_canonical_device(var.device)] if shard else 0

        tensors, shards = {}, {}
        for key, saved in self._vars.items():
            if not isinstance(saved, list):
                tensors[key], shards[key] = np.asarray(values[key]), shard_of(saved)
                continue
            full_shape = saved[0]._get_save_slice_info().full_shape
            parts = []
            for var, value in zip(saved, values[key]):
                _, tslice = tensor_slice.parse_shape_and_slice(var._get_save_slice_info().spec, f"variable {var.name}")
                parts.append((tslice, np.asarray(value), shard_of(var)))
            tensors[key] = checkpoint_bundle.Slices(full_shape, parts)
        return tensors, shards, num_shards

    def _variables(self):
        for saved in self._vars.values():
            yield from saved if isinstance(saved, list) else [saved]

    @property
    def saver_def(self):
        """A SaverDef (TF's saver.proto) naming this Saver's restore op; version V2."""
        from tensorboard.compat.proto import saver_pb2
        if self._saver_def is not None:
            return self._saver_def
        return saver_pb2.SaverDef(restore_op_name=self._restore_op.name if self._restore_op is not None else "",
                                  max_to_keep=self._max_to_keep or 0, sharded=self._sharded,
                                  version=saver_pb2.SaverDef.V2)

    def as_saver_def(self):
        return self.saver_def

    def restore(self, sess, save_path):
        """Restores every variable of this Saver from the checkpoint at `save_path`."""
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        if not (os.path.exists(save_path + ".index") or os.path.exists(save_path + ".npz")
                or (save_path.endswith(".npz") and os.path.exists(save_path))):
            raise ValueError(f"The passed save_path is not a valid checkpoint: {save_path}")
        if self._saver_def is not None:
            sess.run(self._saver_def.restore_op_name, {self._saver_def.filename_tensor_name: save_path})
            return
        if self._restore_op is None:
            return
        reader = CheckpointReader(save_path[:-4] if save_path.endswith(".npz") else save_path)
        feed = {}
        for key, feeds in self._placeholders.items():
            if not reader.has_tensor(key):
                raise errors.NotFoundError(f"Key {key} not found in checkpoint {save_path}")
            for var, info, ph in feeds:
                if info is not None:  # a part of a partitioned variable: its slice, however the whole was saved
                    full_shape, tslice = tensor_slice.parse_shape_and_slice(info.spec, f"variable {var.name}")
                    value = reader.get_slice(key, tslice, full_shape)
                else:
                    value = reader.get_tensor(key)
                value = np.asarray(value, dtype=object if isinstance(value, bytes) else None)
                want = ph.dtype.base_dtype
                if value.dtype != want.np and not (want.name == "string" and value.dtype.kind == "O"):
                    raise errors.InvalidArgumentError(
                        f"tensor_name = {key}; expected dtype {want.name} does not equal original dtype "
                        f"{value.dtype} in checkpoint {save_path}")
                if self._reshape and ph.shape.is_fully_defined() and value.size == ph.shape.num_elements():
                    value = value.reshape(ph.shape.as_list())  # TF's reshape=True: same elements, another shape
                if not ph.shape.is_compatible_with(value.shape):
                    raise errors.InvalidArgumentError(
                        f"Restoring {key} from checkpoint {save_path}: the checkpoint has shape "
                        f"{list(value.shape)} but the variable has shape {ph.shape.as_list()}")
                feed[ph] = value
        sess.run(self._restore_op, feed)


def _saveables_by_name(var_list):
    """{checkpoint key: Variable, or the parts of a partitioned variable in a list} (TF's
    op_list_to_dict for a list, its slice checks for a dict)."""
    named = {}
    if isinstance(var_list, dict):
        seen = set()
        for key in sorted(var_list):
            value = var_list[key]
            if id(value) in seen:
                raise ValueError(f"The same saveable will be restored with two names: {key}")
            seen.add(id(value))
            named[key] = _slices(value) if isinstance(value, (list, tuple, PartitionedVariable)) else value
        return named
    for v in var_list:
        if isinstance(v, PartitionedVariable):
            if v.name in named:
                raise ValueError(f"At least two variables have the same name: {v.name}")
            named[v.name] = list(v)
        elif isinstance(v, variables_lib.Variable) and v._get_save_slice_info() is not None:
            key = v._get_save_slice_info().full_name
            if key in named and not isinstance(named[key], list):
                raise ValueError(f"Mixing slices and non-slices with the same name: {key}")
            named.setdefault(key, []).append(v)
        else:
            key = v.op.name
            if key in named:
                raise ValueError(f"At least two variables have the same name: {key}")
            named[key] = v
    return named


def _slices(value):
    parts = list(value)
    full_name = None
    for v in parts:
        if not isinstance(v, variables_lib.Variable):
            raise ValueError(f"Slices must all be Variables: {v}")
        info = v._get_save_slice_info()
        if info is None:
            raise ValueError(f"Slices must all be slices: {v}")
        if full_name is None:
            full_name = info.full_name
        elif full_name != info.full_name:
            raise ValueError(f"Slices must all be from the same tensor: {full_name} != {info.full_name}")
    return parts


def _canonical_device(device):
    if not device:
        return ""
    from ..framework.device_spec import DeviceSpec
    return DeviceSpec.from_string(device).to_string()


def _delete_checkpoint_files(prefix, meta_graph_suffix="meta"):
    paths = glob.glob(glob.escape(prefix) + ".data-?????-of-?????")
    paths += [prefix + ".index", f"{prefix}.{meta_graph_suffix}", prefix + ".npz"]
    for path in paths:
        if os.path.exists(path):
            os.unlink(path)
