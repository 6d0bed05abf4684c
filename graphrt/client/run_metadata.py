"""RunMetadata and StepStats as TensorFlow's protobuf messages (config.proto,
step_stats.proto; TF's field numbers), for FileWriter.add_run_metadata and
anything else that reads TF's bytes.

Session.run fills graphrt's RunMetadata (plain objects the timeline and
`inspect` read); `to_proto` converts it: one DeviceStepStats per device with
every node (`_Send`/`_Recv` included) and its outputs' dtype, shape and
bytes, and the partition graphs as GraphDefs.
"""
import numpy as np
from tensorboard.compat.proto import (allocation_description_pb2, config_pb2, step_stats_pb2,
                                      tensor_description_pb2)

from ..framework import dtypes as dtypes_lib
from ..framework import graph_proto, tensor_util

RunMetadataProto = config_pb2.RunMetadata
StepStatsProto = step_stats_pb2.StepStats


def _dtype_enum(name):
    try:
        return tensor_util.dtype_to_enum(dtypes_lib.as_dtype(np.dtype(name)) if name != "object"
                                         else dtypes_lib.string)
    except TypeError:
        return 0  # DT_INVALID: a value graphrt holds that TF has no type for


def node_stats_to_proto(ns):
    proto = step_stats_pb2.NodeExecStats(
        node_name=ns.node_name, all_start_micros=int(ns.all_start_micros),
        op_start_rel_micros=int(ns.op_start_rel_micros), op_end_rel_micros=int(ns.op_end_rel_micros),
        all_end_rel_micros=int(ns.all_end_rel_micros), timeline_label=ns.timeline_label or "",
        scheduled_micros=int(ns.scheduled_micros or 0), thread_id=int(ns.thread_id or 0) & 0xFFFFFFFF)
    total = 0
    for out in ns.output:
        desc = tensor_description_pb2.TensorDescription(
            dtype=_dtype_enum(out.dtype), shape=tensor_util.shape_to_proto(list(out.shape)),
            allocation_description=allocation_description_pb2.AllocationDescription(
                requested_bytes=out.requested_bytes, allocated_bytes=out.requested_bytes))
        proto.output.add(slot=out.slot, tensor_description=desc)
        total += out.requested_bytes
    if ns.output:  # TensorBoard's graph dashboard sizes nodes' memory from these
        proto.memory.add(allocator_name="graphrt", total_bytes=total, peak_bytes=total)
    for used in getattr(ns, "memory", ()):  # the device allocator when the kernel ended (runtime/memory_stats.py)
        proto.memory.add(allocator_name=used.allocator_name, peak_bytes=int(used.peak_bytes),
                         allocator_bytes_in_use=int(used.allocator_bytes_in_use))
    return proto


def step_stats_to_proto(step_stats):
    if isinstance(step_stats, StepStatsProto):
        return step_stats
    proto = StepStatsProto()
    for dev in step_stats.dev_stats:
        d = proto.dev_stats.add(device=dev.device)
        d.node_stats.extend(node_stats_to_proto(ns) for ns in dev.node_stats)
    return proto


def to_proto(run_metadata):
    """graphrt RunMetadata (or a RunMetadata message, returned as is) -> tf RunMetadata message."""
    if isinstance(run_metadata, RunMetadataProto):
        return run_metadata
    proto = RunMetadataProto()
    proto.step_stats.CopyFrom(step_stats_to_proto(run_metadata.step_stats))
    proto.partition_graphs.extend(graph_proto.to_proto(g) if not isinstance(g, graph_proto.GraphDefProto) else g
                                  for g in run_metadata.partition_graphs)
    return proto
