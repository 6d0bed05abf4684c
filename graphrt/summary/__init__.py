"""`tf.summary`: summary ops and FileWriter, in TensorFlow's formats, for TensorBoard.

    loss_summary = tf.summary.scalar("loss", loss)
    merged = tf.summary.merge_all()
    writer = tf.summary.FileWriter("out/logs", sess.graph)
    writer.add_summary(sess.run(merged, feed), global_step=step)
    writer.add_run_metadata(run_metadata, "step100")   # per-device step stats
"""
from tensorboard.compat.proto.event_pb2 import Event, SessionLog, TaggedRunMetadata  # noqa: F401
from tensorboard.compat.proto.summary_pb2 import Summary, SummaryDescription, SummaryMetadata  # noqa: F401

from .summary_ops import audio, histogram, image, merge, merge_all, scalar, tensor_summary, text  # noqa: F401
from .writer import FileWriter  # noqa: F401

