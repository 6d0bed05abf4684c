"""SaveV2 and RestoreV2: TensorFlow's checkpoint ops, as graph ops with CPU kernels.

TensorFlow's Saver builds these into the graph (`save/SaveV2`,
`save/RestoreV2`, `save/restore_all`), so a `.meta` TensorFlow wrote names
them; with them registered such a MetaGraphDef imports here and its
SaverDef drives save and restore (`import_meta_graph` returns a Saver over
those ops). The kernels read and write the same bundle files as the
Saver (checkpoint_bundle.py), on the host of the device they run on.
"""
import numpy as np

from .. import errors
from ..framework.registry import register_kernel, register_op
from . import checkpoint_bundle

register_op("SaveV2", ["prefix: string", "tensor_names: string", "shape_and_slices: string", "tensors: dtypes"],
            [], is_stateful=True, doc="Writes `tensors` under `tensor_names` as a V2 checkpoint at `prefix`.")
register_op("RestoreV2", ["prefix: string", "tensor_names: string", "shape_and_slices: string"],
            ["tensors: dtypes"], is_stateful=True, doc="Reads `tensor_names` from the V2 checkpoint at `prefix`.")


def _strings(value):
    return [v.decode() if isinstance(v, bytes) else str(v) for v in np.asarray(value, dtype=object).ravel()]


def _check_whole(name, names, slices):
    if len(slices) != len(names):
        raise errors.InvalidArgumentError(f"{name}: {len(names)} tensor names but {len(slices)} shape_and_slices")
    sliced = [n for n, s in zip(names, slices) if s]
    if sliced:
        raise errors.UnimplementedError(f"{name}: saving or restoring slices is not supported (tensor {sliced[0]})")


@register_kernel("SaveV2", "CPU", host_memory=("prefix", "tensor_names", "shape_and_slices", "tensors"))
def _save_v2(ctx):
    name = ctx.name

    def save(prefix, tensor_names, shape_and_slices, *tensors):
        names = _strings(tensor_names)
        _check_whole(name, names, _strings(shape_and_slices))
        if len(names) != len(tensors):
            raise errors.InvalidArgumentError(f"{name}: {len(names)} tensor names but {len(tensors)} tensors")
        checkpoint_bundle.write_bundle(_strings(prefix)[0], dict(zip(names, tensors)))
    return save


@register_kernel("RestoreV2", "CPU", host_memory=("prefix", "tensor_names", "shape_and_slices", "tensors"))
def _restore_v2(ctx):
    name, dtypes = ctx.name, list(ctx.attr("dtypes"))

    def restore(prefix, tensor_names, shape_and_slices):
        names = _strings(tensor_names)
        _check_whole(name, names, _strings(shape_and_slices))
        prefix = _strings(prefix)[0]
        reader = checkpoint_bundle.BundleReader(prefix)
        out = []
        for key, dtype in zip(names, dtypes):
            if reader.dtype(key).base_dtype != dtype.base_dtype:
                raise errors.InvalidArgumentError(
                    f"tensor_name = {key}; expected dtype {dtype.base_dtype.name} does not equal original dtype "
                    f"{reader.dtype(key).name} in checkpoint {prefix}")
            out.append(reader.read(key))
        return out[0] if len(out) == 1 else tuple(out)
    return restore
