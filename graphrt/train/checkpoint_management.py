"""TF's checkpoint bookkeeping helpers beyond the Saver: `remove_checkpoint` (a checkpoint's
files, V2 or V1) and `generate_checkpoint_state_proto` (the CheckpointState the Saver writes)."""
import glob
import os
import re

from tensorboard.compat.proto import saver_pb2

from .. import logging
from .checkpoint_protos import CheckpointState


def meta_graph_filename(checkpoint_filename, meta_graph_suffix="meta"):
    # a sharded prefix (model.ckpt-12-00000-of-00002) has one meta graph for all shards
    basename = re.sub(r"-[\d\?]+-of-\d+$", "", checkpoint_filename)
    return f"{basename}.{meta_graph_suffix}"


def remove_checkpoint(checkpoint_prefix, checkpoint_format_version=saver_pb2.SaverDef.V2, meta_graph_suffix="meta"):
    """Deletes the files of the checkpoint `checkpoint_prefix` (missing ones are skipped)."""
    _delete_matching(meta_graph_filename(checkpoint_prefix, meta_graph_suffix))
    if checkpoint_format_version == saver_pb2.SaverDef.V2:
        _delete_matching(checkpoint_prefix + ".index")
        _delete_matching(checkpoint_prefix + ".data-?????-of-?????")
    else:
        _delete_matching(checkpoint_prefix)


def _delete_matching(pattern):
    for path in glob.glob(pattern):
        try:
            os.remove(path)
        except FileNotFoundError:
            logging.warning("Hit NotFoundError when deleting '%s', possibly because another process/thread is also "
                            "deleting/moving the same file", path)


def generate_checkpoint_state_proto(save_dir, model_checkpoint_path, all_model_checkpoint_paths=None,
                                    all_model_checkpoint_timestamps=None, last_preserved_timestamp=None):
    """A CheckpointState; paths are made relative to `save_dir` when `save_dir` is itself relative."""
    paths = list(all_model_checkpoint_paths or [])
    if not paths or paths[-1] != model_checkpoint_path:
        logging.info("%s is not in all_model_checkpoint_paths. Manually adding it.", model_checkpoint_path)
        paths.append(model_checkpoint_path)
    if all_model_checkpoint_timestamps and len(all_model_checkpoint_timestamps) != len(paths):
        raise ValueError(f"Checkpoint timestamps, if provided, must match checkpoint paths (got paths {paths} and "
                         f"timestamps {all_model_checkpoint_timestamps})")
    if not os.path.isabs(save_dir):
        if not os.path.isabs(model_checkpoint_path):
            model_checkpoint_path = os.path.relpath(model_checkpoint_path, save_dir)
        paths = [p if os.path.isabs(p) else os.path.relpath(p, save_dir) for p in paths]
    return CheckpointState(model_checkpoint_path=model_checkpoint_path, all_model_checkpoint_paths=paths,
                           all_model_checkpoint_timestamps=all_model_checkpoint_timestamps,
                           last_preserved_timestamp=last_preserved_timestamp)
