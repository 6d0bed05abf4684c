"""CPU kernels of the string ops (host only, as TF's): numpy object arrays of bytes,
one Python call per string.

Regular expressions are TF's RE2 run by Python's `re`, on the strings decoded as
UTF-8 (so `.` is one code point, as in RE2) with re.ASCII (RE2's \\w, \\d, \\s and \\b are
ASCII). Where they differ: Python accepts backreferences and lookaround (RE2 rejects
them), RE2's \\pL / \\p{Greek} classes and \\C are not Python's, and `$` without (?m)
also matches before a final newline in Python; error texts after "error:" are Python's.
"""
import re

import numpy as np

from .. import errors
from ..framework.registry import register_kernel
from ..util import hashing
from . import formatting


def _kernel(op_type):
    return register_kernel(op_type, "CPU", host_only=True, fresh_outputs=True)


def _obj(x):
    return np.asarray(x, dtype=object)


def _map(fn, x):
    """fn over each string of x (a 0-d result stays an array)."""
    x = _obj(x)
    out = np.empty(x.shape, dtype=object)
    flat = out.reshape(-1)
    for i, s in enumerate(x.reshape(-1)):
        flat[i] = fn(s)
    return out


def _map_to(fn, x, dtype):
    x = _obj(x)
    return np.fromiter((fn(s) for s in x.reshape(-1)), dtype=dtype, count=x.size).reshape(x.shape)


def _is_continuation(byte):
    return byte & 0xC0 == 0x80


def _utf8_length(s):
    return sum(1 for b in s if not _is_continuation(b))


def _char_offsets(s):
    """Byte offsets of each code point's start, and len(s) at the end."""
    return [i for i, b in enumerate(s) if not _is_continuation(b)] + [len(s)]


# -- elementwise --------------------------------------------------------------------------
@_kernel("StringLength")
def _length(ctx):
    count = _utf8_length if ctx.attr("unit") == "UTF8_CHAR" else len
    return lambda x: _map_to(count, x, np.int32)


@_kernel("StringStrip")
def _strip(ctx):
    return lambda x: _map(bytes.strip, x)


def _case_kernel(ascii_fn, text_fn):
    def factory(ctx):
        if ctx.attr("encoding"):
            return lambda x: _map(lambda s: text_fn(s.decode("utf-8")).encode("utf-8"), x)
        return lambda x: _map(ascii_fn, x)
    return factory


_kernel("StringLower")(_case_kernel(bytes.lower, str.lower))
_kernel("StringUpper")(_case_kernel(bytes.upper, str.upper))


@_kernel("Substr")
def _substr(ctx):
    utf8 = ctx.attr("unit") == "UTF8_CHAR"
    node = ctx.name

    def substr(x, pos, length):
        x, pos, length = np.broadcast_arrays(_obj(x), np.asarray(pos), np.asarray(length))
        out = np.empty(x.shape, dtype=object)
        for i, (s, p, n) in enumerate(zip(x.reshape(-1), pos.reshape(-1), length.reshape(-1))):
            offsets = _char_offsets(s) if utf8 else None
            size = len(offsets) - 1 if utf8 else len(s)
            p, n = int(p), int(n)
            if not -size <= p <= size:
                raise errors.InvalidArgumentError(f"pos {p} out of range for string {s!r} at index {i}",
                                                  node=node)
            if p < 0:
                p += size
            end = p + min(max(n, 0), size - p)
            out.reshape(-1)[i] = s[offsets[p]:offsets[end]] if utf8 else s[p:end]
        return out
    return substr


@_kernel("StringJoin")
def _join(ctx):
    sep = ctx.attr("separator").encode()
    node = ctx.name

    def join(*inputs):
        arrays = [_obj(x) for x in inputs]
        shapes = [a.shape for a in arrays if a.ndim]
        for s in shapes[1:]:
            if s != shapes[0]:
                raise errors.InvalidArgumentError(f"Input shapes do not match: {list(shapes[0])} vs. {list(s)}",
                                                  node=node)
        shape = shapes[0] if shapes else ()
        cols = [np.broadcast_to(a, shape).reshape(-1) for a in arrays]
        flat = np.empty(int(np.prod(shape)), dtype=object)
        for i in range(flat.size):
            flat[i] = sep.join(c[i] for c in cols)
        return flat.reshape(shape)
    return join


@_kernel("ReduceJoin")
def _reduce_join(ctx):
    sep = ctx.attr("separator").encode()
    keep = ctx.attr("keep_dims")
    node = ctx.name

    def reduce_join(x, axes):
        x = _obj(x)
        rank = x.ndim
        reduced = set()
        for a in np.asarray(axes).reshape(-1):
            a = int(a)
            if not -rank <= a < rank:
                raise errors.InvalidArgumentError(f"Invalid reduction dimension {a} for input with {rank} "
                                                  f"dimensions", node=node)
            reduced.add(a % rank)
        kept = [d for d in range(rank) if d not in reduced]
        shape = [x.shape[d] for d in kept]
        n_out = int(np.prod(shape))
        rows = np.transpose(x, kept + sorted(reduced)).reshape(n_out, -1) if n_out else ()
        out = np.empty(n_out, dtype=object)
        for i, row in enumerate(rows):
            out[i] = sep.join(row)
        if keep:
            return out.reshape([1 if d in reduced else x.shape[d] for d in range(rank)])
        return out.reshape(shape)
    return reduce_join


# -- regular expressions ------------------------------------------------------------------
def _compile(pattern, node):
    text = pattern.decode("utf-8") if isinstance(pattern, bytes) else pattern
    try:
        return re.compile(text, re.ASCII)
    except re.error as e:
        raise errors.InvalidArgumentError(f"Invalid pattern: {text}, error: {e}", node=node) from None


def _rewriter(rewrite, node):
    """RE2's rewrite (\\0..\\9 groups, \\\\ a backslash) as a function of a match."""
    text = rewrite.decode("utf-8") if isinstance(rewrite, bytes) else rewrite
    parts = re.split(r"(\\.)", text)
    for p in parts:
        if p.startswith("\\") and len(p) == 2 and not (p[1].isdigit() or p[1] == "\\"):
            raise errors.InvalidArgumentError(f"Invalid rewrite pattern: {text}", node=node)

    def rewrite_match(m):
        return "".join((m.group(int(p[1])) or "") if len(p) == 2 and p[1].isdigit()
                       else "\\" if p == "\\\\" else p for p in parts)
    return rewrite_match


def _decode(s):
    return s.decode("utf-8", "surrogateescape")


def _encode(s):
    return s.encode("utf-8", "surrogateescape")


def _replace(x, regex, rewrite, replace_global):
    count = 0 if replace_global else 1
    return _map(lambda s: _encode(regex.sub(rewrite, _decode(s), count=count)), x)


def _full_match(x, regex):
    return _map_to(lambda s: regex.fullmatch(_decode(s)) is not None, x, bool)


@_kernel("StaticRegexReplace")
def _static_regex_replace(ctx):
    regex = _compile(ctx.attr("pattern"), ctx.name)
    rewrite = _rewriter(ctx.attr("rewrite"), ctx.name)
    replace_global = ctx.attr("replace_global")
    return lambda x: _replace(x, regex, rewrite, replace_global)


@_kernel("RegexReplace")
def _regex_replace(ctx):
    node, replace_global = ctx.name, ctx.attr("replace_global")
    return lambda x, pattern, rewrite: _replace(x, _compile(_obj(pattern).item(), node),
                                                _rewriter(_obj(rewrite).item(), node), replace_global)


@_kernel("StaticRegexFullMatch")
def _static_full_match(ctx):
    regex = _compile(ctx.attr("pattern"), ctx.name)
    return lambda x: _full_match(x, regex)


@_kernel("RegexFullMatch")
def _regex_full_match(ctx):
    node = ctx.name
    return lambda x, pattern: _full_match(x, _compile(_obj(pattern).item(), node))


# -- numbers <-> strings ------------------------------------------------------------------
_FLOAT_RE = re.compile(rb"\s*[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)\s*", re.IGNORECASE)
_INT_RE = re.compile(rb"\s*[+-]?\d+\s*")


@_kernel("StringToNumber")
def _to_number(ctx):
    dtype = ctx.output_dtypes[0].as_numpy_dtype
    node = ctx.name
    is_float = np.issubdtype(dtype, np.floating)
    info = None if is_float else np.iinfo(dtype)

    def parse(s):
        if is_float and _FLOAT_RE.fullmatch(s):
            return float(s)
        if not is_float and _INT_RE.fullmatch(s) and info.min <= int(s) <= info.max:
            return int(s)
        raise errors.InvalidArgumentError(
            f"StringToNumberOp could not correctly convert string: {s.decode('utf-8', 'backslashreplace')}",
            node=node)

    def to_number(x):
        x = _obj(x)
        with np.errstate(over="ignore"):
            return np.array([parse(s) for s in x.reshape(-1)], dtype=dtype).reshape(x.shape)
    return to_number


@_kernel("AsString")
def _as_string(ctx):
    fmt = formatting.as_string_format(ctx.input_dtypes[0], ctx.attr("precision"), ctx.attr("scientific"),
                                      ctx.attr("shortest"), ctx.attr("width"), ctx.attr("fill"), ctx.name)
    return lambda x: _map(fmt, np.asarray(x).astype(object))


@_kernel("StringFormat")
def _string_format(ctx):
    template, placeholder = ctx.attr("template"), ctx.attr("placeholder")
    summarize = ctx.attr("summarize")
    pieces = template.split(placeholder)

    def string_format(*inputs):
        text = pieces[0]
        for value, piece in zip(inputs, pieces[1:]):
            text += formatting.summarize(np.asarray(value), summarize) + piece
        return np.array(text.encode("utf-8"), dtype=object)
    return string_format


# -- hash buckets -------------------------------------------------------------------------
def _bucket_kernel(hash_fn):
    def factory(ctx):
        n = ctx.attr("num_buckets")
        return lambda x: _map_to(lambda s: hash_fn(s) % n, x, np.int64)
    return factory


_kernel("StringToHashBucketFast")(_bucket_kernel(hashing.fingerprint64))
_kernel("StringToHashBucket")(_bucket_kernel(hashing.legacy_hash64))


@_kernel("StringToHashBucketStrong")
def _hash_strong(ctx):
    k0, k1 = (int(k) & hashing.MASK64 for k in ctx.attr("key"))
    n = ctx.attr("num_buckets")
    return lambda x: _map_to(lambda s: hashing.siphash24(k0, k1, s) % n, x, np.int64)


# -- split --------------------------------------------------------------------------------
def _sparse_of(rows):
    """(indices, values, dense_shape) of a list of token lists, as TF's split ops return them."""
    indices = [(r, c) for r, tokens in enumerate(rows) for c in range(len(tokens))]
    values = np.empty(len(indices), dtype=object)
    values[:] = [t for tokens in rows for t in tokens]
    width = max((len(t) for t in rows), default=0)
    return (np.array(indices, dtype=np.int64).reshape(-1, 2), values,
            np.array([len(rows), width], dtype=np.int64))


def _vector(x, node):
    x = _obj(x)
    if x.ndim != 1:
        raise errors.InvalidArgumentError(f"input must be a vector, got shape: {list(x.shape)}", node=node)
    return x


@_kernel("StringSplit")
def _string_split(ctx):
    skip_empty, node = ctx.attr("skip_empty"), ctx.name

    def split_one(s, delims):
        if not s:  # TF: an empty string has no tokens, empty or not
            return []
        if not delims:
            return [s[i:i + 1] for i in range(len(s))]
        tokens = re.split(b"[" + re.escape(delims) + b"]", s)
        return [t for t in tokens if t] if skip_empty else tokens

    def string_split(x, delimiter):
        delims = _obj(delimiter).item()
        return _sparse_of([split_one(s, delims) for s in _vector(x, node)])
    return string_split


@_kernel("StringSplitV2")
def _string_split_v2(ctx):
    maxsplit, node = ctx.attr("maxsplit"), ctx.name

    def string_split_v2(x, sep):
        sep = _obj(sep).item() or None
        return _sparse_of([s.split(sep, maxsplit) for s in _vector(x, node)])
    return string_split_v2
