"""`tf.print`: a PrintV2 op that writes a StringFormat of its inputs when it runs (to stderr,
stdout, graphrt's log, or a file named `file://path`), as TF's logging_ops build it. In a graph
it prints only when run, so programs make it a control dependency or run it."""
import sys

from .. import errors
from ..framework.graph import get_default_graph
from ..framework.op_builder import is_tensor_like
from ..framework.registry import not_differentiable, register_kernel, register_op
from ..ops import nest
from .ops import string_format

register_op("PrintV2", ["input: string"], [], attrs={"output_stream": "stderr", "end": "\n"},
            shape_fn=lambda ctx: [], is_stateful=True)
not_differentiable("PrintV2")

_LOG_STREAMS = {"log(info)": "info", "log(warning)": "warning", "log(error)": "error"}


@register_kernel("PrintV2", ("CPU",))
def _print_v2(ctx):
    stream, end, name = ctx.attr("output_stream"), ctx.attr("end"), ctx.name
    if stream not in ("stderr", "stdout") and stream not in _LOG_STREAMS and not stream.startswith("file://"):
        raise errors.InvalidArgumentError(f"{stream} is not a valid output stream; valid ones are stderr, stdout, "
                                          f"log(info), log(warning), log(error) and file://<filename>", node=name)

    def print_v2(text):
        line = bytes(text.item() if hasattr(text, "item") else text).decode("utf-8", "backslashreplace") + end
        if stream == "stderr":
            sys.stderr.write(line)
            sys.stderr.flush()
        elif stream == "stdout":
            sys.stdout.write(line)
            sys.stdout.flush()
        elif stream in _LOG_STREAMS:
            from .. import logging
            getattr(logging, _LOG_STREAMS[stream])(line.rstrip("\n"))
        else:
            with open(stream[len("file://"):], "a", encoding="utf-8") as f:
                f.write(line)
    return print_v2


def _stream_name(output_stream):
    if output_stream is sys.stderr or output_stream == "stderr":
        return "stderr"
    if output_stream is sys.stdout or output_stream == "stdout":
        return "stdout"
    if isinstance(output_stream, str) and (output_stream in _LOG_STREAMS or output_stream.startswith("file://")):
        return output_stream
    from .. import logging
    for level, stream in (("info", "log(info)"), ("warning", "log(warning)"), ("error", "log(error)")):
        if output_stream is getattr(logging, level, None):
            return stream
    raise ValueError(f"Unsupported output stream, logging level, or file.{output_stream}. Supported streams are "
                     f"sys.stdout, sys.stderr, tf.logging.info, tf.logging.warning, tf.logging.error, and "
                     f"'file://<filename>'.")


def print_v2(*inputs, **kwargs):
    """tf.print(*inputs, output_stream=sys.stderr, summarize=3, sep=' ', end='\\n', name=None): the op
    that prints `inputs` (tensors printed as TF prints them, other values with str(), nested
    structures with their tensors in place)."""
    output_stream = kwargs.pop("output_stream", sys.stderr)
    summarize = kwargs.pop("summarize", 3)
    sep = kwargs.pop("sep", " ")
    end = kwargs.pop("end", "\n")
    name = kwargs.pop("name", None)
    if kwargs:
        raise ValueError(f"Unrecognized keyword arguments for tf.print: {sorted(kwargs)}")
    stream = _stream_name(output_stream)
    placeholder = "{}"
    tensors, pieces = [], []
    for value in inputs:
        if is_tensor_like(value):
            tensors.append(value)
            pieces.append(placeholder)
        elif nest.is_sequence(value):
            flat = nest.flatten(value)
            tensors.extend(v for v in flat if is_tensor_like(v))
            marked = [_Raw(placeholder) if is_tensor_like(v) else v for v in flat]
            pieces.append(str(nest.pack_sequence_as(value, marked)))
        else:
            pieces.append(str(value))
    template = sep.join(pieces)
    g = get_default_graph()
    with g.name_scope(name or "PrintV2") as scope:
        text = string_format(template, tensors, placeholder=placeholder, summarize=summarize)
        return g.create_op("PrintV2", [text], {"output_stream": stream, "end": end}, name=scope)


class _Raw:
    """A placeholder inside a printed structure: shown as its text, unquoted."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text
