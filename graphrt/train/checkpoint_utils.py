"""Checkpoints beyond the Saver (TF's checkpoint_utils, basic_loops):
`init_from_checkpoint` (variables whose initializers read a checkpoint),
`checkpoints_iterator` / `wait_for_new_checkpoint` (follow a training job's
directory), `get_checkpoint_mtimes`, and `basic_train_loop`.
"""
import glob
import os
import time

from .. import errors, logging
from ..framework import dtypes
from ..framework.graph import get_default_graph
from ..framework.op_builder import apply_op, convert_to_tensor
from ..ops import state_ops
from ..ops import variable_scope as vs
from ..ops import variables as variables_lib
from ..ops.partitioned_variable import PartitionedVariable
from .checkpoint_reader import load_checkpoint
from .checkpoint_state import latest_checkpoint


def init_from_checkpoint(ckpt_dir_or_file, assignment_map):
    """Replaces the initializers of the variables `assignment_map` names with reads of the
    checkpoint (TF's RestoreV2), so running them loads the checkpoint's values.

    `assignment_map` maps checkpoint names to variables or their names ("scope/v"), or a
    checkpoint scope ("old/") to a variable scope ("new/", "/" for the root): every variable
    under the scope reads the tensor of the same relative name."""
    ckpt_file = latest_checkpoint(ckpt_dir_or_file) if os.path.isdir(ckpt_dir_or_file) else ckpt_dir_or_file
    variable_map = load_checkpoint(ckpt_dir_or_file).get_variable_to_shape_map()
    items = assignment_map.items() if hasattr(assignment_map, "items") else assignment_map
    store_vars = vs._get_default_variable_store()._vars
    for tensor_name, current in sorted(items, key=lambda pair: pair[0]):
        if isinstance(current, PartitionedVariable):
            current = list(current)
        if isinstance(current, variables_lib.Variable) or (
                isinstance(current, list) and current and all(isinstance(v, variables_lib.Variable) for v in current)):
            var = current
        else:
            var = store_vars.get(current)
            if var is None:
                var = _partitioned_parts(current, store_vars)
        if var is not None:
            if tensor_name not in variable_map:
                raise ValueError(f"Tensor {tensor_name} is not found in {ckpt_dir_or_file} checkpoint {variable_map}")
            if isinstance(var, variables_lib.Variable) and not var.get_shape().is_compatible_with(
                    variable_map[tensor_name]):
                raise ValueError(f"Shape of variable {var.name} ({var.get_shape()}) doesn't match with shape of "
                                 f"tensor {tensor_name} ({variable_map[tensor_name]}) from checkpoint reader.")
            _set_variable_or_list_initializer(var, ckpt_file, tensor_name)
            continue
        scopes = current[:current.rindex("/")] if "/" in current else ""
        if not tensor_name.endswith("/"):
            raise ValueError(f"Assignment map with scope only name {scopes} should map to scope only "
                             f"{tensor_name}. Should be 'scope/': 'other_scope/'.")
        # a partitioned variable's parts read slices of one tensor, named after the whole
        names = sorted({n[:n.index("/part_")] if "/part_" in n else n for n in store_vars})
        for var_name in (n for n in names if not scopes or n.startswith(scopes + "/")):
            full_name = var_name[len(scopes):]
            if current != "/":
                full_name = full_name[1:]
            if tensor_name != "/":
                full_name = tensor_name + full_name
            full_name = full_name.rstrip("/")
            if full_name not in variable_map:
                raise ValueError(f"Tensor {full_name} ({var_name[len(scopes) + 1:]} in {tensor_name}) is not found in "
                                 f"{ckpt_dir_or_file} checkpoint")
            var = store_vars.get(var_name)
            if var is None:
                var = _partitioned_parts(var_name, store_vars)
            _set_variable_or_list_initializer(var, ckpt_file, full_name)


def _partitioned_parts(name, store_vars):
    """The parts `<name>/part_0`, `<name>/part_1`, ... of the store, or None."""
    parts = []
    while f"{name}/part_{len(parts)}" in store_vars:
        parts.append(store_vars[f"{name}/part_{len(parts)}"])
    return parts or None


def _set_variable_or_list_initializer(var, ckpt_file, tensor_name):
    if isinstance(var, variables_lib.Variable):
        _set_checkpoint_initializer(var, ckpt_file, tensor_name)
        return
    full_name = None
    for part in var:
        info = part._get_save_slice_info()
        if info is None:
            raise ValueError(f"Variable {part.name} in a list mapped to checkpoint tensor {tensor_name} is not a "
                             f"part of a partitioned variable")
        if full_name is None:
            full_name = info.full_name
        elif full_name != info.full_name:
            raise ValueError(f"Slices must all be from the same tensor: {full_name} != {info.full_name}")
        _set_checkpoint_initializer(part, ckpt_file, tensor_name, info.spec)


def _set_checkpoint_initializer(variable, ckpt_file, tensor_name, slice_spec="", name="checkpoint_initializer"):
    g = get_default_graph()
    with g.device(variable.device), g.device("/cpu:0"):
        restore = apply_op("RestoreV2", [convert_to_tensor(ckpt_file, dtype=dtypes.string),
                                         convert_to_tensor([tensor_name], dtype=dtypes.string),
                                         convert_to_tensor([slice_spec], dtype=dtypes.string)],
                           name=name, dtypes=[variable.dtype.base_dtype]).outputs[0]
    restore.set_shape(variable.get_shape())
    with g.colocate_with(variable.op):
        variable._initializer_op = state_ops.assign(variable, restore).op
    variable._initial_value = restore


def wait_for_new_checkpoint(checkpoint_dir, last_checkpoint=None, seconds_to_sleep=1, timeout=None):
    """The directory's latest checkpoint once it is not `last_checkpoint`; None after `timeout` seconds."""
    logging.info("Waiting for new checkpoint at %s", checkpoint_dir)
    stop_time = time.time() + timeout if timeout is not None else None
    while True:
        path = latest_checkpoint(checkpoint_dir)
        if path is not None and path != last_checkpoint:
            logging.info("Found new checkpoint at %s", path)
            return path
        if stop_time is not None and time.time() + seconds_to_sleep > stop_time:
            return None
        time.sleep(seconds_to_sleep)


def checkpoints_iterator(checkpoint_dir, min_interval_secs=0, timeout=None, timeout_fn=None):
    """Yields each new checkpoint of `checkpoint_dir`, at most one per `min_interval_secs`;
    ends when none comes within `timeout` (unless `timeout_fn` says to keep waiting)."""
    checkpoint_path = None
    while True:
        new_path = wait_for_new_checkpoint(checkpoint_dir, checkpoint_path, timeout=timeout)
        if new_path:
            start = time.time()
            checkpoint_path = new_path
            yield checkpoint_path
            time_to_next = start + min_interval_secs - time.time()
            if time_to_next > 0:
                time.sleep(time_to_next)
        elif timeout_fn is None:
            logging.info("Timed-out waiting for a checkpoint (without timeout_fn).")
            return
        if timeout_fn is not None and timeout_fn():
            logging.info("Done. No new checkpoints will be generated.")
            return


def get_checkpoint_mtimes(checkpoint_prefixes):
    """The modification times (seconds) of the checkpoints with these prefixes (their
    `.index` file; the prefix itself for a V1 file); missing checkpoints are skipped."""
    mtimes = []
    for prefix in checkpoint_prefixes:
        for pattern in (prefix + ".index", prefix):
            found = glob.glob(pattern)
            if found:
                mtimes.append(os.stat(found[0]).st_mtime_ns / 1e9)
                break
    return mtimes


def basic_train_loop(supervisor, train_step_fn, args=None, kwargs=None, master=""):
    """Calls train_step_fn(sess, *args, **kwargs) until the supervisor says stop, in a
    `supervisor.managed_session(master)`; an AbortedError starts a new session."""
    args = [] if args is None else args
    kwargs = {} if kwargs is None else kwargs
    should_retry = True
    while should_retry:
        try:
            should_retry = False
            with supervisor.managed_session(master) as sess:
                while not supervisor.should_stop():
                    train_step_fn(sess, *args, **kwargs)
        except errors.AbortedError:
            should_retry = True
