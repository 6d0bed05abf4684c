"""TF's Unicode string ops (UnicodeDecode(WithOffsets), UnicodeEncode, UnicodeTranscode,
UnicodeScript, StringNGrams, UnsortedSegmentJoin), their CPU kernels and TF1 API.

graphrt has no RaggedTensor: where TF returns one (decoding or splitting a batch of strings),
these functions raise NotImplementedError naming it. What TF returns dense is here: a scalar
string decodes or splits to a vector; `unicode_encode` takes dense code points of rank >= 1
(rows of equal length); `ngrams` takes dense tokens and returns dense n-grams, as TF does.
"""
import numpy as np

from .. import errors
from ..framework import dtypes
from ..framework.graph import get_default_graph
from ..framework.op_builder import apply_op, convert_to_tensor
from ..framework.registry import not_differentiable, register_kernel, register_op
from ..framework.tensor_shape import TensorShape
from ..ops import array_ops, math_ops, shape_fns
from . import ops as string_ops, unicode_codecs as codecs
from .scripts import script

_ERRORS = ("strict", "replace", "ignore")
_INDEX = (dtypes.int32, dtypes.int64)
_DECODE_ATTRS = {"input_encoding": "", "errors": "replace", "replacement_char": 65533,
                 "replace_control_characters": False, "Tsplits": dtypes.int64}


def _decode_shape(ctx):
    return [TensorShape([None]), TensorShape([None])]


def _encode_shape(ctx):
    splits = ctx.shape(1)
    n = splits[0] if splits.ndims == 1 else None
    return TensorShape([None if n is None else n - 1])


def _ngrams_shape(ctx):
    return [TensorShape([None]), ctx.shape(1)]


def _segment_join_shape(ctx):
    data, ids = ctx.shape(0), ctx.shape(1)
    if data.ndims is None or ids.ndims is None:
        return TensorShape(None)
    num = ctx.constant(2)
    return TensorShape([None if num is None else int(num)] + data.as_list()[ids.ndims:])


register_op("UnicodeDecode", ["input: string"], ["row_splits: Tsplits", "char_values: int32"],
            attrs=_DECODE_ATTRS, shape_fn=lambda ctx: _decode_shape(ctx), allowed_types={"Tsplits": _INDEX})
register_op("UnicodeDecodeWithOffsets", ["input: string"],
            ["row_splits: Tsplits", "char_values: int32", "char_to_byte_starts: int64"], attrs=_DECODE_ATTRS,
            shape_fn=lambda ctx: _decode_shape(ctx) + [TensorShape([None])], allowed_types={"Tsplits": _INDEX})
register_op("UnicodeEncode", ["input_values: int32", "input_splits: Tsplits"], ["output: string"],
            attrs={"errors": "replace", "output_encoding": "", "replacement_char": 65533, "Tsplits": dtypes.int64},
            shape_fn=_encode_shape, allowed_types={"Tsplits": _INDEX})
register_op("UnicodeTranscode", ["input: string"], ["output: string"],
            attrs={"input_encoding": "", "output_encoding": "", "errors": "replace", "replacement_char": 65533,
                   "replace_control_characters": False}, shape_fn=shape_fns.unchanged)
register_op("UnicodeScript", ["input: int32"], ["output: int32"], shape_fn=shape_fns.unchanged)
register_op("StringNGrams", ["data: string", "data_splits: Tsplits"], ["ngrams: string", "ngrams_splits: Tsplits"],
            attrs={"separator": " ", "ngram_widths": [], "left_pad": "", "right_pad": "", "pad_width": 0,
                   "preserve_short_sequences": False, "Tsplits": dtypes.int64},
            shape_fn=_ngrams_shape, allowed_types={"Tsplits": _INDEX})
register_op("UnsortedSegmentJoin", ["inputs: string", "segment_ids: Tindices", "num_segments: Tnumsegments"],
            ["output: string"], attrs={"separator": "", "Tindices": dtypes.int32, "Tnumsegments": dtypes.int32},
            shape_fn=_segment_join_shape, allowed_types={"Tindices": _INDEX, "Tnumsegments": _INDEX})
for _name in ("UnicodeDecode", "UnicodeDecodeWithOffsets", "UnicodeEncode", "UnicodeTranscode", "UnicodeScript",
              "StringNGrams", "UnsortedSegmentJoin"):
    not_differentiable(_name)


# -- kernels ---------------------------------------------------------------------------------

def _kernel(op_type):
    return register_kernel(op_type, "CPU", host_only=True, fresh_outputs=True)


def _decoder(ctx):
    """bytes -> [(code point, byte offset)] under the op's encoding and error attrs."""
    node, encoding, mode = ctx.name, ctx.attr("input_encoding"), ctx.attr("errors")
    replacement, controls = ctx.attr("replacement_char"), ctx.attr("replace_control_characters")

    def decode(s):
        if encoding not in codecs.ENCODINGS:
            raise errors.InvalidArgumentError(f"Could not create converter for input encoding: {encoding}",
                                              node=node)
        out = []
        for cp, offset, ok in codecs.decode(s, encoding):
            if not ok:
                if mode == "strict":
                    raise errors.InvalidArgumentError("Invalid formatting on input string", node=node)
                if mode == "ignore":
                    continue
                cp = replacement
            elif controls and cp < 0x20:
                cp = replacement
            out.append((cp, offset))
        return out
    return decode


def _decode_kernel(with_offsets):
    def factory(ctx):
        decode, split_type = _decoder(ctx), ctx.attr("Tsplits").np

        def run(x):
            rows = [decode(s) for s in np.asarray(x, dtype=object).reshape(-1)]
            splits = np.cumsum([0] + [len(r) for r in rows]).astype(split_type)
            chars = [c for r in rows for c in r]
            values = np.array([c for c, _ in chars], np.int32)
            if not with_offsets:
                return splits, values
            return splits, values, np.array([o for _, o in chars], np.int64)
        return run
    return factory


_kernel("UnicodeDecode")(_decode_kernel(False))
_kernel("UnicodeDecodeWithOffsets")(_decode_kernel(True))


def _encoder(node, encoding, mode, replacement):
    def encode(code_points):
        if encoding not in codecs.ENCODINGS:
            raise errors.InvalidArgumentError(f"Could not create converter for output encoding: {encoding}",
                                              node=node)
        kept = []
        for cp in code_points:
            if not codecs.is_valid(cp):
                if mode == "strict":
                    raise errors.InvalidArgumentError(f"Invalid code point {cp} in input", node=node)
                if mode == "ignore":
                    continue
                if not codecs.is_valid(replacement):
                    raise errors.InvalidArgumentError(f"Invalid replacement character {replacement}", node=node)
                cp = replacement
            kept.append(cp)
        return codecs.encode(kept, encoding)
    return encode


@_kernel("UnicodeEncode")
def _unicode_encode(ctx):
    encode = _encoder(ctx.name, ctx.attr("output_encoding"), ctx.attr("errors"), ctx.attr("replacement_char"))

    def run(values, splits):
        values = [int(v) for v in np.asarray(values).reshape(-1)]
        bounds = [int(s) for s in np.asarray(splits).reshape(-1)]
        out = np.empty(max(len(bounds) - 1, 0), dtype=object)
        for i in range(out.size):
            out[i] = encode(values[bounds[i]:bounds[i + 1]])
        return out
    return run


@_kernel("UnicodeTranscode")
def _unicode_transcode(ctx):
    decode = _decoder(ctx)
    encode = _encoder(ctx.name, ctx.attr("output_encoding"), ctx.attr("errors"), ctx.attr("replacement_char"))

    def run(x):
        x = np.asarray(x, dtype=object)
        out = np.empty(x.shape, dtype=object)
        for i, s in enumerate(x.reshape(-1)):
            out.reshape(-1)[i] = encode([cp for cp, _ in decode(s)])
        return out
    return run


@_kernel("UnicodeScript")
def _unicode_script(ctx):
    return lambda x: np.vectorize(script, otypes=[np.int32])(np.asarray(x, np.int64)) if np.size(x) else \
        np.zeros(np.shape(x), np.int32)


def _ngrams_of(tokens, width, sep, left, right, pad):
    """TF's CreateNgrams: the n-grams of width `width` with `pad` pads on each side."""
    num = max(0, len(tokens) + 2 * pad - width + 1)
    out = []
    for k in range(num):
        left_n = max(0, pad - k)
        right_n = max(0, pad - (num - (k + 1)))
        count = width - left_n - right_n
        start = 0 if left_n > 0 else k - pad
        out.append(sep.join([left] * left_n + list(tokens[start:start + max(count, 0)]) + [right] * right_n))
    return out


@_kernel("StringNGrams")
def _string_ngrams(ctx):
    sep, widths = ctx.attr("separator").encode(), ctx.attr("ngram_widths")
    left, right = ctx.attr("left_pad").encode(), ctx.attr("right_pad").encode()
    pad_attr, preserve = ctx.attr("pad_width"), ctx.attr("preserve_short_sequences")

    def pad_of(width):
        return min(width - 1 if pad_attr < 0 else pad_attr, width - 1)

    def run(data, splits):
        data = np.asarray(data, dtype=object).reshape(-1)
        bounds = [int(s) for s in np.asarray(splits).reshape(-1)]
        out, out_splits = [], [0]
        for i in range(len(bounds) - 1):
            tokens = data[bounds[i]:bounds[i + 1]]
            row = [g for w in widths for g in _ngrams_of(tokens, w, sep, left, right, pad_of(w))]
            if preserve and not row and len(tokens):
                width = len(tokens) + 2 * pad_attr
                row = _ngrams_of(tokens, width, sep, left, right, pad_of(width))[:1]
            out.extend(row)
            out_splits.append(len(out))
        return np.array(out, dtype=object).reshape(-1), np.asarray(out_splits, dtype=np.asarray(splits).dtype)
    return run


@_kernel("UnsortedSegmentJoin")
def _unsorted_segment_join(ctx):
    node, sep = ctx.name, ctx.attr("separator").encode()

    def run(inputs, segment_ids, num_segments):
        inputs, ids = np.asarray(inputs, dtype=object), np.asarray(segment_ids, np.int64)
        num = int(num_segments)
        if inputs.shape[:ids.ndim] != ids.shape:
            raise errors.InvalidArgumentError("data.shape = [" + ",".join(map(str, inputs.shape)) + "] does not "
                                              "start with segment_ids.shape = [" + ",".join(map(str, ids.shape))
                                              + "]", node=node)
        inner = inputs.shape[ids.ndim:]
        rows = inputs.reshape((ids.size,) + inner)
        parts = [[[] for _ in range(int(np.prod(inner)))] for _ in range(num)]
        for i, seg in enumerate(ids.reshape(-1)):
            if not 0 <= seg < num:
                raise errors.InvalidArgumentError("segment_ids are not allowed to exceed num_segments or be "
                                                  "negative.", node=node)
            for j, s in enumerate(np.asarray(rows[i], dtype=object).reshape(-1)):
                parts[seg][j].append(s)
        out = np.empty((num,) + inner, dtype=object)
        flat = out.reshape(num, -1)
        for k in range(num):
            for j, strings in enumerate(parts[k]):
                flat[k, j] = sep.join(strings)
        return out
    return run


# -- API ---------------------------------------------------------------------------------------

def _no_ragged(what, input_):
    rank = input_.shape.ndims
    if rank is None:
        raise ValueError("Rank of `input` must be statically known.")
    if rank != 0:
        raise NotImplementedError(f"{what} of a rank-{rank} input returns a RaggedTensor, which graphrt does not "
                                  "have; pass one string (a scalar) at a time.")


def _check_errors(op, mode):
    if mode not in _ERRORS:
        raise ValueError(f"Attr 'errors' of '{op}' Op passed string '{mode}' not in: \"strict\", \"replace\", "
                         "\"ignore\".")


def _decode(input_, encoding, errors_, replacement_char, replace_control_characters, with_offsets, what):
    input_ = convert_to_tensor(input_, dtype=dtypes.string, name="input")
    _no_ragged(what, input_)
    op_type = "UnicodeDecodeWithOffsets" if with_offsets else "UnicodeDecode"
    _check_errors(op_type, errors_)
    flat = array_ops.reshape(input_, [-1])
    outputs = apply_op(op_type, [flat], name=op_type, input_encoding=encoding, errors=errors_,
                       replacement_char=int(replacement_char),
                       replace_control_characters=bool(replace_control_characters)).outputs
    return (outputs[1], outputs[2]) if with_offsets else outputs[1]


def unicode_decode(input, input_encoding, errors="replace", replacement_char=0xFFFD,  # noqa: A002 - TF's names
                   replace_control_characters=False, name=None):
    """The code points (int32 vector) of one string."""
    with get_default_graph().name_scope(name or "UnicodeDecode"):
        return _decode(input, input_encoding, errors, replacement_char, replace_control_characters, False,
                       "unicode_decode")


def unicode_decode_with_offsets(input, input_encoding, errors="replace", replacement_char=0xFFFD,  # noqa: A002
                                replace_control_characters=False, name=None):
    """The code points of one string and the byte offset where each starts (int64)."""
    with get_default_graph().name_scope(name or "UnicodeDecodeWithOffsets"):
        return _decode(input, input_encoding, errors, replacement_char, replace_control_characters, True,
                       "unicode_decode_with_offsets")


def _encode_rows(rows, output_encoding, errors_, replacement_char):
    """UnicodeEncode of a dense [n, m] matrix: n strings."""
    shape = array_ops.shape(rows, out_type=dtypes.int64)
    splits = math_ops.range(shape[0] + 1, dtype=dtypes.int64) * shape[1]
    out = apply_op("UnicodeEncode", [array_ops.reshape(rows, [-1]), splits], name="UnicodeEncode",
                   output_encoding=output_encoding, errors=errors_, replacement_char=int(replacement_char)).outputs[0]
    out.set_shape(rows.shape[:1])  # TF's shape inference folds the constant splits to this
    return out


def unicode_encode(input, output_encoding, errors="replace", replacement_char=65533, name=None):  # noqa: A002
    """Strings encoded from dense code points: the last dimension is one string."""
    with get_default_graph().name_scope(name or "UnicodeEncode"):
        input_ = convert_to_tensor(input, dtype=dtypes.int32)
        _check_errors("UnicodeEncode", errors)
        rank = input_.shape.ndims
        if rank is None:
            raise ValueError("Rank of input_tensor must be statically known.")
        if rank == 0:
            raise ValueError("input_tensor's rank must be at least 1.")
        if rank == 1:
            return array_ops.reshape(_encode_rows(array_ops.expand_dims(input_, 0), output_encoding, errors,
                                                  replacement_char), [])
        if rank == 2:
            return _encode_rows(input_, output_encoding, errors, replacement_char)
        flat = array_ops.reshape(input_, array_ops.stack([-1, array_ops.shape(input_)[-1]]))
        out = _encode_rows(flat, output_encoding, errors, replacement_char)
        return array_ops.reshape(out, array_ops.shape(input_)[:-1]) if not input_.shape[:-1].is_fully_defined() \
            else array_ops.reshape(out, input_.shape[:-1].as_list())


def unicode_split(input, input_encoding, errors="replace", replacement_char=0xFFFD, name=None):  # noqa: A002
    """The characters of one string, each re-encoded (a malformed one becomes replacement_char)."""
    with get_default_graph().name_scope(name or "UnicodeSplit"):
        codepoints = _decode(input, input_encoding, errors, replacement_char, False, False, "unicode_split")
        return _encode_rows(array_ops.expand_dims(codepoints, -1), input_encoding, errors, replacement_char)


def unicode_transcode(input, input_encoding, output_encoding, errors="replace", replacement_char=65533,  # noqa: A002
                      replace_control_characters=False, name=None):
    """Each string decoded from input_encoding and encoded to output_encoding."""
    _check_errors("UnicodeTranscode", errors)
    return apply_op("UnicodeTranscode", [string_ops._strings(input)], name=name or "UnicodeTranscode",
                    input_encoding=input_encoding, output_encoding=output_encoding, errors=errors,
                    replacement_char=int(replacement_char),
                    replace_control_characters=bool(replace_control_characters)).outputs[0]


def unicode_script(input, name=None):  # noqa: A002 - the TF name
    """The ICU script code of each int32 code point (see scripts.py for the scripts covered)."""
    return apply_op("UnicodeScript", [convert_to_tensor(input, dtype=dtypes.int32)],
                    name=name or "UnicodeScript").outputs[0]


def bytes_split(input, name=None):  # noqa: A002 - the TF name
    """The bytes of one string, each a string."""
    with get_default_graph().name_scope(name or "StringsByteSplit"):
        input_ = convert_to_tensor(input, dtype=dtypes.string, name="input")
        _no_ragged("bytes_split", input_)
        return string_ops.string_split(array_ops.stack([input_]), delimiter="", skip_empty=False).values


def _pads(pad_values, padding_width):
    if pad_values is None:
        left = right = ""
    elif isinstance(pad_values, (list, tuple)):
        if not all(isinstance(p, (str, bytes)) for p in pad_values[:2]):
            raise TypeError("pad_values must be a string, tuple of strings, or None.")
        left, right = pad_values[0], pad_values[1]
    elif isinstance(pad_values, (str, bytes)):
        left = right = pad_values
    else:
        raise TypeError("pad_values must be a string, tuple of strings, or None.")
    if padding_width is not None and padding_width < 1:
        raise ValueError("padding_width must be greater than 0.")
    if padding_width is not None and pad_values is None:
        raise ValueError("pad_values must be provided if padding_width is set.")
    pad = 0 if pad_values is None else (-1 if padding_width is None else padding_width)
    decode = lambda v: v.decode() if isinstance(v, bytes) else v  # noqa: E731
    return decode(left), decode(right), pad


def ngrams(data, ngram_width, separator=" ", pad_values=None, padding_width=None, preserve_short_sequences=False,
           name=None):
    """The n-grams of each row (last dimension) of dense string tokens, dense as TF returns them."""
    with get_default_graph().name_scope(name or "StringNGrams"):
        left, right, pad = _pads(pad_values, padding_width)
        data = convert_to_tensor(data, dtype=dtypes.string, name="data")
        rank = data.shape.ndims
        if rank is None:
            raise ValueError("Rank of data must be known.")
        if rank == 0:
            raise ValueError("Data must have rank>0")
        widths = list(ngram_width) if isinstance(ngram_width, (list, tuple)) else [ngram_width]
        for width in widths:
            if width < 1:
                raise ValueError(f"All ngram_widths must be greater than 0. Got {ngram_width}")
        rows = data if rank == 2 else array_ops.reshape(data, array_ops.stack([-1, array_ops.shape(data)[-1]])) \
            if rank > 2 else array_ops.expand_dims(data, 0)
        shape = array_ops.shape(rows, out_type=dtypes.int64)
        splits = math_ops.range(shape[0] + 1, dtype=dtypes.int64) * shape[1]
        out = apply_op("StringNGrams", [array_ops.reshape(rows, [-1]), splits], name="StringNGrams",
                       separator=separator, ngram_widths=[int(w) for w in widths], left_pad=left, right_pad=right,
                       pad_width=pad, preserve_short_sequences=bool(preserve_short_sequences)).outputs[0]
        if rank == 1:
            return out
        out = array_ops.reshape(out, array_ops.concat([array_ops.shape(data)[:-1], [-1]], axis=0))
        out.set_shape(data.shape[:-1].concatenate([None]))
        return out


def unsorted_segment_join(inputs, segment_ids, num_segments, separator="", name=None):
    """The strings of each segment joined with `separator` in order ('' for an empty segment)."""
    return apply_op("UnsortedSegmentJoin", [string_ops._strings(inputs, "inputs"), segment_ids, num_segments],
                    name=name or "UnsortedSegmentJoin", separator=separator).outputs[0]
