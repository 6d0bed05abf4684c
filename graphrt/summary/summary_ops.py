"""`tf.summary` ops: ScalarSummary, HistogramSummary, ImageSummary, AudioSummaryV2,
TensorSummaryV2 (text) and MergeSummary, each producing a serialized Summary
protobuf (a string scalar), with TF's op names, inputs and attrs. CPU kernels
only (as in TF); the bytes are built in encode.py."""
import numpy as np

from .. import errors
from ..framework import dtypes as dtypes_lib
from ..framework.graph import GraphKeys, get_default_graph
from ..framework.op_builder import apply_op
from ..framework.registry import register_kernel, register_op
from ..framework.tensor_shape import TensorShape
from . import encode

_SCALAR = TensorShape([])
_REAL = tuple(dtypes_lib.as_dtype(n) for n in ("float16", "float32", "float64", "int8", "int16", "int32",
                                               "int64", "uint8", "uint16", "uint32", "uint64"))


def _scalar_shape(ctx):
    return _SCALAR


register_op("ScalarSummary", ["tags: string", "values: T"], ["summary: string"], shape_fn=_scalar_shape,
            allowed_types={"T": _REAL})
register_op("HistogramSummary", ["tag: string", "values: T"], ["summary: string"], attrs={"T": dtypes_lib.float32},
            shape_fn=_scalar_shape, allowed_types={"T": _REAL})
register_op("ImageSummary", ["tag: string", "tensor: T"], ["summary: string"],
            attrs={"max_images": 3, "T": dtypes_lib.float32}, shape_fn=_scalar_shape,
            allowed_types={"T": (dtypes_lib.uint8, dtypes_lib.float16, dtypes_lib.float32, dtypes_lib.float64)})
register_op("AudioSummaryV2", ["tag: string", "tensor: float32", "sample_rate: float32"], ["summary: string"],
            attrs={"max_outputs": 3}, shape_fn=_scalar_shape)
register_op("TensorSummaryV2", ["tag: string", "tensor: T", "serialized_summary_metadata: string"],
            ["summary: string"], shape_fn=_scalar_shape)
register_op("MergeSummary", ["inputs: N * string"], ["summary: string"], shape_fn=_scalar_shape)


def _bytes(summary):
    return np.array(summary.SerializeToString(), dtype=object)


def _text(tag):
    tag = tag.item() if isinstance(tag, np.ndarray) else tag
    return tag.decode() if isinstance(tag, bytes) else str(tag)


@register_kernel("ScalarSummary", "CPU")
def _scalar_kernel(ctx):
    def run(tags, values):
        tags, values = np.asarray(tags, dtype=object), np.asarray(values)
        if tags.shape != values.shape:
            raise errors.InvalidArgumentError(f"tags and values are not the same shape: {list(tags.shape)} != "
                                              f"{list(values.shape)} (node {ctx.name})")
        return _bytes(encode.Summary(value=[encode.Summary.Value(tag=_text(t), simple_value=float(v))
                                            for t, v in zip(tags.ravel(), values.ravel())]))
    return run


@register_kernel("HistogramSummary", "CPU")
def _histogram_kernel(ctx):
    def run(tag, values):
        tag = _text(tag)
        return _bytes(encode.Summary(value=[encode.Summary.Value(tag=tag, histo=encode.histogram(values, tag))]))
    return run


@register_kernel("ImageSummary", "CPU")
def _image_kernel(ctx):
    max_images = ctx.attr("max_images")
    return lambda tag, tensor: _bytes(encode.Summary(value=encode.images(_text(tag), tensor, max_images)))


@register_kernel("AudioSummaryV2", "CPU")
def _audio_kernel(ctx):
    max_outputs = ctx.attr("max_outputs")
    return lambda tag, tensor, rate: _bytes(encode.Summary(value=encode.audio(_text(tag), tensor, float(rate),
                                                                              max_outputs)))


@register_kernel("TensorSummaryV2", "CPU")
def _tensor_kernel(ctx):
    def run(tag, tensor, metadata):
        metadata = metadata.item() if isinstance(metadata, np.ndarray) else metadata
        return _bytes(encode.Summary(value=[encode.tensor_value(_text(tag), tensor, metadata)]))
    return run


@register_kernel("MergeSummary", "CPU")
def _merge_kernel(ctx):
    def run(*inputs):
        return _bytes(encode.merge(ctx.name, [i.item() if isinstance(i, np.ndarray) else i for i in inputs]))
    return run


# -- the Python API ---------------------------------------------------------------------

def _clean_tag(name):
    import re
    return re.sub(r"[^-/\w\.]", "_", name).lstrip("/") if name is not None else None


def _summary(op_type, name, family, inputs, collections, **attrs):
    """TF's summary_scope: the op is named by the scope, and its tag is the scope's full
    name (prefixed by `family`, so TensorBoard groups it under that tab)."""
    g = get_default_graph()
    name, family = _clean_tag(name), _clean_tag(family)
    with g.name_scope(name if family is None else f"{family}/{name}") as scope:
        tag = scope.rstrip("/") if family is None else f"{family}/{scope.rstrip('/')}"
        summary = apply_op(op_type, [tag, *inputs], name=scope, **attrs).outputs[0]
    for key in (collections if collections is not None else [GraphKeys.SUMMARIES]):
        g.add_to_collection(key, summary)
    return summary


def scalar(name, tensor, collections=None, family=None):
    """A Summary with one scalar value (TF's `tf.summary.scalar`)."""
    return _summary("ScalarSummary", name, family, [tensor], collections)


def histogram(name, values, collections=None, family=None):
    return _summary("HistogramSummary", name, family, [values], collections)


def image(name, tensor, max_outputs=3, collections=None, family=None):
    return _summary("ImageSummary", name, family, [tensor], collections, max_images=max_outputs)


def audio(name, tensor, sample_rate, max_outputs=3, collections=None, family=None):
    return _summary("AudioSummaryV2", name, family, [tensor, sample_rate], collections, max_outputs=max_outputs)


def text(name, tensor, collections=None):
    """A string tensor shown by TensorBoard's text dashboard (plugin 'text')."""
    metadata = encode.SummaryMetadata(plugin_data=encode.SummaryMetadata.PluginData(plugin_name="text"))
    return _summary("TensorSummaryV2", name, None, [tensor, metadata.SerializeToString()], collections)


def tensor_summary(name, tensor, summary_description=None, collections=None, summary_metadata=None, family=None,
                   display_name=None):
    """A whole tensor in a Summary (TF's `tf.summary.tensor_summary`), with optional metadata."""
    metadata = encode.SummaryMetadata() if summary_metadata is None else summary_metadata
    if summary_description is not None:
        metadata.summary_description = summary_description
    if display_name is not None:
        metadata.display_name = display_name
    return _summary("TensorSummaryV2", name, family, [tensor, metadata.SerializeToString()], collections)


def merge(inputs, collections=None, name=None):
    g = get_default_graph()
    with g.name_scope(name or "Merge"):
        summary = apply_op("MergeSummary", [list(inputs)]).outputs[0]
    for key in collections or []:
        g.add_to_collection(key, summary)
    return summary


def merge_all(key=GraphKeys.SUMMARIES, scope=None, name=None):
    """One MergeSummary of every summary in collection `key`; None when there are none."""
    summaries = get_default_graph().get_collection(key, scope)
    return merge(summaries, name=name) if summaries else None
