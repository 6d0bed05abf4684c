"""Declarations and the TF1 API of the string ops (TF's string_ops, parsing_ops'
StringToNumber, and the old top-level aliases), under TF's op names and attrs.

TF picks the Static* regex ops when pattern (and rewrite) are Python strings,
the tensor-taking ones otherwise; so does this module.
"""
from ..framework import dtypes
from ..framework.graph import graph_of
from ..framework.op_builder import apply_op, convert_to_tensor, is_tensor_like
from ..framework.registry import not_differentiable, register_op
from ..framework.tensor_shape import TensorShape
from ..ops import shape_fns

_INTS = (dtypes.int32, dtypes.int64)
_NUMBERS = (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64)
_AS_STRING_TYPES = (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int8, dtypes.int16, dtypes.int32,
                    dtypes.int64, dtypes.uint8, dtypes.uint16, dtypes.uint32, dtypes.uint64, dtypes.bool,
                    dtypes.complex64, dtypes.complex128, dtypes.string)


def _join_shape(ctx):
    """StringJoin: the inputs are scalars or all of one shape."""
    out = TensorShape(None)
    scalars = True
    for i in range(ctx.num_inputs):
        s = ctx.shape(i)
        if s.ndims == 0:
            continue
        scalars = False
        if not out.is_compatible_with(s):
            raise ValueError(f"Shapes must be equal rank, but are {out.short()} and {s.short()}")
        out = out.merge_with(s)
    return TensorShape([]) if scalars and ctx.num_inputs else out


def _substr_shape(ctx):
    pos, length = ctx.shape(1), ctx.shape(2)
    if not pos.is_compatible_with(length):
        raise ValueError(f"Shapes must be equal rank, but are {pos.short()} and {length.short()}")
    return shape_fns.broadcast_shapes(ctx.shape(0), pos.merge_with(length))


def _split_shape(ctx):
    return [TensorShape([None, 2]), TensorShape([None]), TensorShape([2])]


_UNARY = {"StringStrip": {}, "StringLower": {"encoding": ""}, "StringUpper": {"encoding": ""},
          "StaticRegexReplace": {"pattern": "", "rewrite": "", "replace_global": True}}
for _name, _attrs in _UNARY.items():
    register_op(_name, ["input: string"], ["output: string"], attrs=_attrs, shape_fn=shape_fns.unchanged)
register_op("StringLength", ["input: string"], ["output: int32"], attrs={"unit": "BYTE"},
            shape_fn=shape_fns.unchanged)
register_op("Substr", ["input: string", "pos: T", "len: T"], ["output: string"], attrs={"unit": "BYTE"},
            shape_fn=_substr_shape, allowed_types={"T": _INTS})
register_op("StringJoin", ["inputs: N * string"], ["output: string"], attrs={"separator": ""}, shape_fn=_join_shape)
register_op("ReduceJoin", ["inputs: string", "reduction_indices: int32"], ["output: string"],
            attrs={"keep_dims": False, "separator": ""}, shape_fn=shape_fns.reduction)
register_op("RegexReplace", ["input: string", "pattern: string", "rewrite: string"], ["output: string"],
            attrs={"replace_global": True}, shape_fn=shape_fns.unchanged)
register_op("RegexFullMatch", ["input: string", "pattern: string"], ["output: bool"], shape_fn=shape_fns.unchanged)
register_op("StaticRegexFullMatch", ["input: string"], ["output: bool"], attrs={"pattern": ""},
            shape_fn=shape_fns.unchanged)
register_op("StringToNumber", ["string_tensor: string"], ["output: out_type"], attrs={"out_type": dtypes.float32},
            shape_fn=shape_fns.unchanged, allowed_types={"out_type": _NUMBERS})
register_op("AsString", ["input: T"], ["output: string"],
            attrs={"precision": -1, "scientific": False, "shortest": False, "width": -1, "fill": ""},
            shape_fn=shape_fns.unchanged, allowed_types={"T": _AS_STRING_TYPES})
register_op("StringFormat", ["inputs: T"], ["output: string"],
            attrs={"template": "%s", "placeholder": "%s", "summarize": 3}, shape_fn=shape_fns.scalar)
for _name in ("StringToHashBucketFast", "StringToHashBucket"):
    register_op(_name, ["input: string"], ["output: int64"], attrs={"num_buckets": 1}, shape_fn=shape_fns.unchanged)
register_op("StringToHashBucketStrong", ["input: string"], ["output: int64"], attrs={"num_buckets": 1, "key": []},
            shape_fn=shape_fns.unchanged)
register_op("StringSplit", ["input: string", "delimiter: string"],
            ["indices: int64", "values: string", "shape: int64"], attrs={"skip_empty": True}, shape_fn=_split_shape)
register_op("StringSplitV2", ["input: string", "sep: string"], ["indices: int64", "values: string", "shape: int64"],
            attrs={"maxsplit": -1}, shape_fn=_split_shape)
for _name in ("StringStrip", "StringLower", "StringUpper", "StaticRegexReplace", "StringLength", "Substr", "StringJoin", "ReduceJoin", "RegexReplace", "RegexFullMatch",
              "StaticRegexFullMatch", "StringToNumber", "AsString", "StringFormat", "StringToHashBucketFast",
              "StringToHashBucket", "StringToHashBucketStrong", "StringSplit", "StringSplitV2"):
    not_differentiable(_name)


def _op(op_type, inputs, name, **attrs):
    return apply_op(op_type, list(inputs), name=name or op_type, **attrs).outputs[0]


def _strings(x, name="input"):
    """A string tensor (TF's ops reject other dtypes with its TypeError)."""
    return x if is_tensor_like(x) else convert_to_tensor(x, dtype=dtypes.string, name=name)


def _is_text(value):
    return isinstance(value, (str, bytes))


def _text(value):
    return value.decode() if isinstance(value, bytes) else value


# -- elementwise ------------------------------------------------------------------------------
def length(input, name=None, unit="BYTE"):  # noqa: A002 - the TF name
    """The length of each string, in bytes or (unit='UTF8_CHAR') code points (int32)."""
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise ValueError(f"Attr 'unit' of 'StringLength' Op passed string '{unit}' not in: \"BYTE\", \"UTF8_CHAR\".")
    return _op("StringLength", [_strings(input)], name, unit=unit)


def substr(input, pos, len, name=None, unit="BYTE"):  # noqa: A002 - the TF names
    """input[pos:pos + len] of each string; pos may be negative (from the end); out of range is an error."""
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise ValueError(f"Attr 'unit' of 'Substr' Op passed string '{unit}' not in: \"BYTE\", \"UTF8_CHAR\".")
    return _op("Substr", [_strings(input), pos, len], name, unit=unit)


def strip(input, name=None):  # noqa: A002 - the TF name
    """Leading and trailing ASCII whitespace removed."""
    return _op("StringStrip", [_strings(input)], name)


def lower(input, encoding="", name=None):  # noqa: A002 - the TF name
    """Lower case: ASCII letters only, or every letter with encoding='utf-8'."""
    return _op("StringLower", [_strings(input)], name, encoding=encoding)


def upper(input, encoding="", name=None):  # noqa: A002 - the TF name
    """Upper case: ASCII letters only, or every letter with encoding='utf-8'."""
    return _op("StringUpper", [_strings(input)], name, encoding=encoding)


def regex_full_match(input, pattern, name=None):  # noqa: A002 - the TF name
    """Whether each whole string matches `pattern` (bool)."""
    if _is_text(pattern):
        return _op("StaticRegexFullMatch", [_strings(input)], name, pattern=_text(pattern))
    return _op("RegexFullMatch", [_strings(input), pattern], name)


def regex_replace(input, pattern, rewrite, replace_global=True, name=None):  # noqa: A002 - the TF name
    """Matches of `pattern` replaced by `rewrite` (\\1..\\9 are groups, \\0 the match); only the first
    unless replace_global."""
    if _is_text(pattern) and _is_text(rewrite):
        return _op("StaticRegexReplace", [_strings(input)], name, pattern=_text(pattern), rewrite=_text(rewrite),
                   replace_global=bool(replace_global))
    return _op("RegexReplace", [_strings(input), pattern, rewrite], name, replace_global=bool(replace_global))


def join(inputs, separator="", name=None):
    """Elementwise concatenation of string tensors of one shape (or scalars), with `separator`."""
    return _op("StringJoin", [[_strings(x) for x in inputs]], name, separator=separator)


def reduce_join(inputs, axis=None, keep_dims=None, separator="", name=None, reduction_indices=None,
                keepdims=None):
    """Joins the strings along `axis` (every axis when None), in row-major order."""
    if axis is not None and reduction_indices is not None:
        raise ValueError("Cannot specify both 'axis' and 'reduction_indices'.")
    if keepdims is not None and keep_dims is not None:
        raise ValueError("Cannot specify both 'keepdims' and 'keep_dims'.")
    axis = reduction_indices if axis is None else axis
    keep = bool(keepdims if keepdims is not None else keep_dims)
    x = _strings(inputs, "inputs")
    if axis is None:
        # TF's default: every axis, last first
        from ..ops import array_ops, math_ops
        if x.shape.ndims is not None:
            axis = list(range(x.shape.ndims - 1, -1, -1))
        else:
            axis = math_ops.range(array_ops.rank(x) - 1, -1, -1)
    return _op("ReduceJoin", [x, axis], name, keep_dims=keep, separator=separator)


def to_number(string_tensor=None, out_type=dtypes.float32, name=None, input=None):  # noqa: A002 - the TF name
    """Each string parsed as a number of `out_type`; a string that is not one is an InvalidArgumentError."""
    if input is not None:
        string_tensor = input
    return _op("StringToNumber", [_strings(string_tensor, "string_tensor")], name,
               out_type=dtypes.as_dtype(out_type))


def as_string(input, precision=-1, scientific=False, shortest=False, width=-1, fill="", name=None):  # noqa: A002
    """Each number formatted as printf would: %d, %f (or %e scientific, %g shortest), with precision,
    width and fill; bools as true/false."""
    return _op("AsString", [input], name, precision=int(precision), scientific=bool(scientific),
               shortest=bool(shortest), width=int(width), fill=fill)


def string_format(template, inputs, placeholder="{}", summarize=3, name=None):
    """`template` with each `placeholder` replaced by the next tensor, printed as TF prints tensors
    (the first and last `summarize` entries of each dimension; -1 for all)."""
    if is_tensor_like(inputs):
        inputs = [inputs]
    if template.count(placeholder) != len(inputs):
        raise ValueError(f"The template expects {template.count(placeholder)} tensors, but the inputs only has "
                         f"{len(inputs)}. Please ensure the number of placeholders in template matches inputs "
                         f"length.")
    g = graph_of([t for t in inputs if is_tensor_like(t)])
    with g.as_default(), g.name_scope(name or "StringFormat") as scope:
        tensors = [convert_to_tensor(t) for t in inputs]
        # a list(type) input: created directly, as queues create their enqueue ops
        return g.create_op("StringFormat", tensors, {"T": [t.dtype.base_dtype for t in tensors],
                                                     "template": template, "placeholder": placeholder,
                                                     "summarize": int(summarize)}, name=scope).outputs[0]


# -- hashing ----------------------------------------------------------------------------------
def _num_buckets(num_buckets):
    if num_buckets is None or int(num_buckets) < 1:
        raise ValueError(f"Value for attr 'num_buckets' of {num_buckets} must be at least minimum 1")
    return int(num_buckets)


def to_hash_bucket_fast(input, num_buckets, name=None):  # noqa: A002 - the TF name
    """Fingerprint64(string) mod num_buckets (int64): TF's stable fast hash."""
    return _op("StringToHashBucketFast", [_strings(input)], name, num_buckets=_num_buckets(num_buckets))


def to_hash_bucket_strong(input, num_buckets, key, name=None):  # noqa: A002 - the TF name
    """SipHash-2-4 under the 128-bit `key` (two ints) mod num_buckets (int64)."""
    key = list(key)
    if len(key) != 2:
        raise ValueError(f"Key must have 2 elements, received {len(key)}")
    return _op("StringToHashBucketStrong", [_strings(input)], name, num_buckets=_num_buckets(num_buckets),
               key=[int(k) for k in key])


def to_hash_bucket(string_tensor=None, num_buckets=None, name=None, input=None):  # noqa: A002 - the TF name
    """TF's legacy hash (its Hash64) mod num_buckets (int64)."""
    if input is not None:
        string_tensor = input
    return _op("StringToHashBucket", [_strings(string_tensor, "string_tensor")], name,
               num_buckets=_num_buckets(num_buckets))


# -- split ------------------------------------------------------------------------------------
def _sparse(indices, values, shape):
    from ..sparse import SparseTensor
    indices.set_shape([None, 2])
    values.set_shape([None])
    shape.set_shape([2])
    return SparseTensor(indices, values, shape)


def string_split(source, sep=None, skip_empty=True, delimiter=None, result_type="SparseTensor", name=None):
    """TF1's tf.string_split: each string of the vector split at any byte of `sep` (default ' '; ''
    splits into bytes), as a SparseTensor [len(source), max tokens]."""
    if result_type != "SparseTensor":
        raise NotImplementedError("graphrt has no RaggedTensor: string_split returns a SparseTensor")
    if sep is not None and delimiter is not None:
        raise ValueError("Cannot specify both 'sep' and 'delimiter'.")
    sep = delimiter if sep is None else sep
    from ..framework.graph import get_default_graph
    with get_default_graph().name_scope(name or "StringSplit"):
        source = _strings(source, "source")
        sep = convert_to_tensor(" " if sep is None else sep, dtype=dtypes.string)
        op = apply_op("StringSplit", [source, sep], name="StringSplit", skip_empty=bool(skip_empty))
    return _sparse(*op.outputs)


def split(input=None, sep=None, maxsplit=-1, result_type="SparseTensor", source=None, name=None):  # noqa: A002
    """tf.compat.v1.strings.split: Python's str.split on each string (sep None or '': runs of whitespace),
    as a SparseTensor."""
    if result_type != "SparseTensor":
        raise NotImplementedError("graphrt has no RaggedTensor: strings.split returns a SparseTensor")
    input = source if input is None else input  # noqa: A001
    from ..framework.graph import get_default_graph
    from ..ops import array_ops
    with get_default_graph().name_scope(name or "StringSplit"):
        x = _strings(input, "input")
        if x.shape.ndims == 0:
            x = array_ops.expand_dims(x, 0)
        if x.shape.ndims not in (None, 1):
            raise NotImplementedError("graphrt's strings.split takes a scalar or vector (a RaggedTensor result "
                                      "would be needed for more)")
        sep = convert_to_tensor("" if sep is None else sep, dtype=dtypes.string)
        op = apply_op("StringSplitV2", [x, sep], name="StringSplitV2", maxsplit=int(maxsplit))
    return _sparse(*op.outputs)
