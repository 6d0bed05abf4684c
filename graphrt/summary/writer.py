"""`tf.summary.FileWriter`: Event protobufs in a TensorBoard event file, written by
tensorboard's own EventFileWriter (TFRecord framing, masked CRCs, the
`brain.Event:2` version record, a background thread flushing every
`flush_secs`)."""
import time

from tensorboard.compat.proto import event_pb2, summary_pb2
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from ..framework import graph_proto

Event = event_pb2.Event


class FileWriter:
    """Writes summaries, graphs and run metadata to `logdir/events.out.tfevents.*`."""

    def __init__(self, logdir, graph=None, max_queue=10, flush_secs=120, graph_def=None, filename_suffix=None,
                 session=None):
        if session is not None:
            from .. import errors
            raise errors.UnimplementedError("FileWriter(session=...) writes through TF2 summary ops, which "
                                            "graphrt does not have; pass a logdir")
        self._logdir = str(logdir)
        self._writer = EventFileWriter(self._logdir, max_queue_size=max_queue, flush_secs=flush_secs,
                                       filename_suffix=filename_suffix or "")
        self._closed = False
        if graph is not None or graph_def is not None:
            self.add_graph(graph, graph_def=graph_def)

    def get_logdir(self):
        return self._logdir

    def add_event(self, event):
        if self._closed:
            raise RuntimeError(f"FileWriter for {self._logdir} is closed")
        if not event.wall_time:
            event.wall_time = time.time()
        self._writer.add_event(event)

    def add_summary(self, summary, global_step=None):
        """`summary`: a Summary message or its serialized bytes (what a summary op returns)."""
        if isinstance(summary, bytes):
            summary = summary_pb2.Summary.FromString(summary)
        event = Event(summary=summary)
        if global_step is not None:
            event.step = int(global_step)
        self.add_event(event)

    def add_graph(self, graph, global_step=None, graph_def=None):
        """Writes the GraphDef (TensorBoard's graph dashboard draws it, coloured by device)."""
        if graph is not None and graph_def is not None:
            raise ValueError("Please pass only graph, or graph_def (deprecated), but not both.")
        gd = graph.as_graph_def(add_shapes=True) if graph is not None else graph_def
        proto = gd if isinstance(gd, graph_proto.GraphDefProto) else graph_proto.to_proto(graph_proto.as_graph_def(gd))
        event = Event(graph_def=proto.SerializeToString(deterministic=True))
        if global_step is not None:
            event.step = int(global_step)
        self.add_event(event)

    def add_run_metadata(self, run_metadata, tag, global_step=None):
        """Writes a step's RunMetadata (every device's step stats, the partition graphs) under `tag`;
        TensorBoard's graph dashboard then shows per-node compute time and memory for it."""
        from ..client.run_metadata import to_proto
        event = Event(tagged_run_metadata=event_pb2.TaggedRunMetadata(
            tag=tag, run_metadata=to_proto(run_metadata).SerializeToString(deterministic=True)))
        if global_step is not None:
            event.step = int(global_step)
        self.add_event(event)

    def add_session_log(self, session_log, global_step=None):
        event = Event(session_log=session_log)
        if global_step is not None:
            event.step = int(global_step)
        self.add_event(event)

    def flush(self):
        if not self._closed:
            self._writer.flush()

    def close(self):
        if not self._closed:
            self._writer.close()
            self._closed = True

    def reopen(self):
        if self._closed:
            self._writer = EventFileWriter(self._logdir)
            self._closed = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        return f"<FileWriter {self._logdir}{' (closed)' if self._closed else ''}>"
