"""The `checkpoint` state file: TF's CheckpointState proto in text format, listing
a directory's most recent checkpoint and the ones kept. Paths are written
relative to the directory when they are inside it (so a directory can move)."""
import os
import time

from google.protobuf import text_format

from .. import errors
from . import checkpoint_bundle
from .checkpoint_protos import CheckpointState

STATE_FILE = "checkpoint"


def _relative(path, directory):
    # a relative prefix is relative to the working directory, like the files the Saver wrote
    path = os.path.abspath(path)
    rel = os.path.relpath(path, os.path.abspath(directory))
    return path if rel.startswith("..") else rel


def update_checkpoint_state(save_dir, model_checkpoint_path, all_model_checkpoint_paths=None,
                            latest_filename=None, all_model_checkpoint_timestamps=None,
                            last_preserved_timestamp=None):
    """Writes the state file atomically (TF's `tf.train.update_checkpoint_state`)."""
    paths = list(all_model_checkpoint_paths or [])
    if not paths or paths[-1] != model_checkpoint_path:
        paths.append(model_checkpoint_path)
    state = CheckpointState(model_checkpoint_path=_relative(model_checkpoint_path, save_dir),
                            all_model_checkpoint_paths=[_relative(p, save_dir) for p in paths])
    if all_model_checkpoint_timestamps is not None:
        state.all_model_checkpoint_timestamps.extend(all_model_checkpoint_timestamps)
    state.last_preserved_timestamp = last_preserved_timestamp if last_preserved_timestamp is not None \
        else time.time()
    path = os.path.join(save_dir, latest_filename or STATE_FILE)
    # A unique temporary name: two Savers (a Supervisor's checkpoint thread and the user's) may write at once.
    checkpoint_bundle._atomic_write(save_dir, path, [text_format.MessageToString(state).encode()])


def get_checkpoint_state(checkpoint_dir, latest_filename=None):
    """The directory's CheckpointState with absolute paths, or None when there is no state file."""
    path = os.path.join(checkpoint_dir, latest_filename or STATE_FILE)
    if not os.path.exists(path):
        return None
    state = CheckpointState()
    try:
        with open(path) as f:
            text_format.Merge(f.read(), state)
    except (text_format.ParseError, UnicodeDecodeError) as e:
        raise errors.DataLossError(f"Checkpoint state file {path} is corrupt: {e}") from None
    if not state.model_checkpoint_path:
        raise ValueError(f"Invalid checkpoint state loaded from {checkpoint_dir}")
    if not os.path.isabs(state.model_checkpoint_path):
        state.model_checkpoint_path = os.path.join(checkpoint_dir, state.model_checkpoint_path)
    for i, p in enumerate(state.all_model_checkpoint_paths):
        if not os.path.isabs(p):
            state.all_model_checkpoint_paths[i] = os.path.join(checkpoint_dir, p)
    return state


def checkpoint_exists(prefix):
    """True for a V2 checkpoint (its .index), an old graphrt .npz checkpoint, or a file."""
    return os.path.exists(prefix + ".index") or os.path.exists(prefix + ".npz") or os.path.exists(prefix)


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state is None:
        return None
    prefix = state.model_checkpoint_path
    return prefix if os.path.exists(prefix + ".index") or os.path.exists(prefix + ".npz") else None
