"""SaveV2 and RestoreV2: TensorFlow's checkpoint ops, as graph ops with CPU kernels.

TensorFlow's Saver builds these into the graph (`save/SaveV2`,
`save/RestoreV2`, `save/restore_all`), so a `.meta` TensorFlow wrote names
them; with them registered such a MetaGraphDef imports here and its
SaverDef drives save and restore (`import_meta_graph` returns a Saver over
those ops). The kernels read and write the same bundle files as the
Saver (checkpoint_bundle.py), on the host of the device they run on.
"""
import os

import numpy as np

from .. import errors
from ..framework.registry import register_kernel, register_op
from ..ops import shape_fns
from . import checkpoint_bundle, tensor_slice

register_op("SaveV2", ["prefix: string", "tensor_names: string", "shape_and_slices: string", "tensors: dtypes"],
            [], is_stateful=True, doc="Writes `tensors` under `tensor_names` as a V2 checkpoint at `prefix`.")
register_op("RestoreV2", ["prefix: string", "tensor_names: string", "shape_and_slices: string"],
            ["tensors: dtypes"], is_stateful=True, doc="Reads `tensor_names` from the V2 checkpoint at `prefix`.")
# TF's sharded Saver (the one SavedModels carry) saves each shard under a temporary prefix named by
# ShardedFilename, then merges them with MergeV2Checkpoints: a SavedModel TensorFlow wrote names both.
register_op("ShardedFilename", ["basename: string", "shard: int32", "num_shards: int32"], ["filename: string"],
            shape_fn=shape_fns.scalar, doc="`<basename>-<shard:05d>-of-<num_shards:05d>`.")
register_op("MergeV2Checkpoints", ["checkpoint_prefixes: string", "destination_prefix: string"], [],
            attrs={"delete_old_dirs": True, "allow_missing_files": False}, is_stateful=True,
            doc="Merges the V2 checkpoints at `checkpoint_prefixes` into one at `destination_prefix`.")


def _strings(value):
    return [v.decode() if isinstance(v, bytes) else str(v) for v in np.asarray(value, dtype=object).ravel()]


def _check_lengths(name, names, slices):
    if len(slices) != len(names):
        raise errors.InvalidArgumentError(f"{name}: {len(names)} tensor names but {len(slices)} shape_and_slices")


@register_kernel("SaveV2", "CPU", host_memory=("prefix", "tensor_names", "shape_and_slices", "tensors"))
def _save_v2(ctx):
    name = ctx.name

    def save(prefix, tensor_names, shape_and_slices, *tensors):
        names, specs = _strings(tensor_names), _strings(shape_and_slices)
        _check_lengths(name, names, specs)
        if len(names) != len(tensors):
            raise errors.InvalidArgumentError(f"{name}: {len(names)} tensor names but {len(tensors)} tensors")
        prefix = _strings(prefix)[0]
        to_write = {}
        for key, spec, value in zip(names, specs, tensors):
            full_shape, tslice = tensor_slice.parse_shape_and_slice(spec, f"tensor {key} in {name}")
            known = to_write.get(key)
            if tslice is None:
                if known is not None:
                    raise errors.InvalidArgumentError(f"{name}: tensor {key} is given twice")
                to_write[key] = value
            elif known is None:
                to_write[key] = checkpoint_bundle.Slices(full_shape, [(tslice, value)])
            elif isinstance(known, checkpoint_bundle.Slices) and known.full_shape == full_shape:
                known.parts.append((tslice, value))
            else:
                raise errors.InvalidArgumentError(f"{name}: tensor {key} is given whole and in slices, or in "
                                                  f"slices of two shapes")
        # TF's BundleWriter makes the prefix's directory (a sharded Saver saves into a fresh temp dir)
        os.makedirs(os.path.dirname(os.path.abspath(prefix)), exist_ok=True)
        try:
            checkpoint_bundle.write_bundle(prefix, to_write)
        except ValueError as e:  # a value whose shape is not its slice's
            raise errors.InvalidArgumentError(f"{name}: {e}") from None
    return save


@register_kernel("RestoreV2", "CPU", host_memory=("prefix", "tensor_names", "shape_and_slices", "tensors"))
def _restore_v2(ctx):
    name, dtypes = ctx.name, list(ctx.attr("dtypes"))

    def restore(prefix, tensor_names, shape_and_slices):
        names, specs = _strings(tensor_names), _strings(shape_and_slices)
        _check_lengths(name, names, specs)
        prefix = _strings(prefix)[0]
        reader = checkpoint_bundle.BundleReader(prefix)
        out = []
        for key, spec, dtype in zip(names, specs, dtypes):
            if reader.dtype(key).base_dtype != dtype.base_dtype:
                raise errors.InvalidArgumentError(
                    f"tensor_name = {key}; expected dtype {dtype.base_dtype.name} does not equal original dtype "
                    f"{reader.dtype(key).name} in checkpoint {prefix}")
            full_shape, tslice = tensor_slice.parse_shape_and_slice(spec, f"tensor {key} in {name}")
            out.append(reader.read(key) if tslice is None else reader.read_slice(key, tslice, full_shape))
        return out[0] if len(out) == 1 else tuple(out)
    return restore


@register_kernel("ShardedFilename", "CPU", host_memory=("basename", "shard", "num_shards", "filename"))
def _sharded_filename(ctx):
    def filename(basename, shard, num_shards):
        return np.array(f"{_strings(basename)[0]}-{int(shard):05d}-of-{int(num_shards):05d}".encode(), dtype=object)
    return filename


@register_kernel("MergeV2Checkpoints", "CPU", host_memory=("checkpoint_prefixes", "destination_prefix"))
def _merge_v2_checkpoints(ctx):
    name, delete_old_dirs = ctx.name, ctx.attr("delete_old_dirs")

    def merge(checkpoint_prefixes, destination_prefix):
        prefixes, destination = _strings(checkpoint_prefixes), _strings(destination_prefix)[0]
        tensors, shard_of = {}, {}
        for shard, prefix in enumerate(prefixes):
            reader = checkpoint_bundle.BundleReader(prefix)
            for key in reader.entries:
                slices, known = reader.slices(key), tensors.get(key)
                if not slices and known is None:
                    tensors[key], shard_of[key] = reader.read(key), shard
                    continue
                parts = [(s, reader.read_slice(key, s), shard) for s in slices]
                if known is None:
                    tensors[key] = checkpoint_bundle.Slices(reader.shape(key), parts)
                elif slices and isinstance(known, checkpoint_bundle.Slices) and known.full_shape == reader.shape(key):
                    known.parts.extend(parts)  # a partitioned variable's parts saved on several devices
                else:
                    raise errors.InvalidArgumentError(f"{name}: duplicate tensor name {key} in {prefix}")
        checkpoint_bundle.write_bundle(destination, tensors, shard_of, max(1, len(prefixes)))
        for prefix in prefixes:
            reader = checkpoint_bundle.BundleReader(prefix)
            paths = [checkpoint_bundle.index_path(prefix)]
            paths += [checkpoint_bundle.data_path(prefix, i, reader.num_shards) for i in range(reader.num_shards)]
            for path in paths:
                os.unlink(path)
            if delete_old_dirs:
                try:
                    os.rmdir(os.path.dirname(os.path.abspath(prefix)))  # TF removes the shard's dir once empty
                except OSError:
                    pass
    return merge
