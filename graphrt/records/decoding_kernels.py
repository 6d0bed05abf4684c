"""CPU kernels of the decoders in decoding.py, with TF's error messages."""
import base64
import binascii
import re
import zlib

import numpy as np
from google.protobuf import json_format
from google.protobuf.message import DecodeError

from .. import errors
from ..framework import dtypes
from ..framework.registry import register_kernel
from ..framework.tensor_util import MakeNdarray, TensorProto, dtype_to_enum, enum_to_dtype
from .example_pb2 import Example

# TF's DataTypeString, which its messages use.
_TF_TYPE_NAME = {"float32": "float", "float64": "double", "float16": "half"}


def _tf_name(dtype):
    return _TF_TYPE_NAME.get(dtype.name, dtype.name)


def _strings(x):
    return np.asarray(x, dtype=object)


def _map_strings(x, fn):
    x = _strings(x)
    out = np.empty(x.shape, dtype=object)
    for idx, s in np.ndenumerate(x):
        out[idx] = fn(s if isinstance(s, bytes) else str(s).encode())
    return out


# -- DecodeCSV ---------------------------------------------------------------------------------

def _csv_fields(record, delim, quoted):
    """The fields of one record, split as TF's DecodeCSV splits them."""
    fields, i, n = [], 0, len(record)
    while i < n:
        field = bytearray()
        if quoted and record[i:i + 1] == b'"':
            i += 1
            while True:
                if i >= n:
                    raise errors.InvalidArgumentError("Quoted field has to end with quote followed by delim or end")
                c = record[i:i + 1]
                if c != b'"':
                    field += c
                    i += 1
                    continue
                nxt = record[i + 1:i + 2]
                if nxt == b'"':  # "" stands for one quote
                    field += b'"'
                    i += 2
                elif nxt in (b"", delim):
                    i += 2
                    break
                else:
                    raise errors.InvalidArgumentError("Quoted field has to end with quote followed by delim or end")
        else:
            while i < n and record[i:i + 1] != delim:
                c = record[i:i + 1]
                if (quoted and c == b'"') or c in (b"\n", b"\r"):
                    raise errors.InvalidArgumentError("Unquoted fields cannot have quotes/CRLFs inside")
                field += c
                i += 1
            i += 1
        fields.append(bytes(field))
    if record.endswith(delim):
        fields.append(b"")
    return fields


_INT_RE = re.compile(rb"^\s*[+-]?\d+\s*$")
_INT_RANGE = {"int32": (-2 ** 31, 2 ** 31 - 1), "int64": (-2 ** 63, 2 ** 63 - 1)}


def _csv_value(field, dtype, col, rec):
    name = dtype.name
    if dtype == dtypes.string:
        return field
    if name in _INT_RANGE:
        lo, hi = _INT_RANGE[name]
        if _INT_RE.match(field) and lo <= int(field) <= hi:
            return int(field)
    else:
        try:
            if b"_" not in field:
                return float(field)
        except ValueError:
            pass
    raise errors.InvalidArgumentError(f"Field {col} in record {rec} is not a valid {_tf_name(dtype)}: "
                                      f"{field.decode(errors='replace')}")


@register_kernel("DecodeCSV", "CPU", host_only=True)
def _decode_csv(ctx):
    node, types = ctx.name, ctx.attr("OUT_TYPE")
    delim_text, quoted = ctx.attr("field_delim"), ctx.attr("use_quote_delim")
    na_value, select = ctx.attr("na_value").encode(), list(ctx.attr("select_cols"))

    def decode(records, *defaults):
        if len(delim_text.encode()) != 1:
            raise errors.InvalidArgumentError("field_delim should be only 1 char", node=node)
        delim = delim_text.encode()
        for j, d in enumerate(defaults):
            if np.size(d) > 1:
                raise errors.InvalidArgumentError(f"There should only be 1 default per field but field {j} has "
                                                  f"{np.size(d)}", node=node)
        records = _strings(records)
        outs = [np.empty(records.shape, dtype=object if t == dtypes.string else t.np) for t in types]
        for rec, (idx, record) in enumerate(np.ndenumerate(records)):
            record = record if isinstance(record, bytes) else str(record).encode()
            try:
                fields = _csv_fields(record, delim, quoted)
                if select:
                    fields = [f for k, f in enumerate(fields) if k in select]
                if len(fields) != len(types):
                    raise errors.InvalidArgumentError(f"Expect {len(types)} fields but have {len(fields)} in "
                                                      f"record {rec}")
                for col, (field, dtype) in enumerate(zip(fields, types)):
                    if field == b"" or field == na_value:
                        if np.size(defaults[col]) == 0:
                            raise errors.InvalidArgumentError(f"Field {col} is required but missing in record "
                                                              f"{rec}!")
                        outs[col][idx] = np.asarray(defaults[col]).reshape(-1)[0]
                    else:
                        outs[col][idx] = _csv_value(field, dtype, col, rec)
            except errors.OpError as e:
                raise type(e)(e.message, node=node) from None
        return tuple(outs) if len(outs) != 1 else outs[0]  # a kernel of one output returns it bare
    return decode


# -- DecodeRaw ---------------------------------------------------------------------------------

@register_kernel("DecodeRaw", "CPU", host_only=True)
def _decode_raw(ctx):
    node, dtype = ctx.name, ctx.attr("out_type")
    wire = np.dtype(dtype.np).newbyteorder("<" if ctx.attr("little_endian") else ">")

    def decode(raw):
        raw = _strings(raw)
        flat = [s if isinstance(s, bytes) else str(s).encode() for s in raw.reshape(-1)]
        size = len(flat[0]) if flat else 0
        for i, s in enumerate(flat):
            if len(s) != size:
                raise errors.InvalidArgumentError(f"DecodeRaw requires input strings to all be the same size, but "
                                                  f"element {i} has size {size} != {len(s)}", node=node)
        if size % wire.itemsize:
            raise errors.InvalidArgumentError(f"Input to DecodeRaw has length {size} that is not a multiple of "
                                              f"{wire.itemsize}, the size of {_tf_name(dtype)}", node=node)
        values = np.frombuffer(b"".join(flat), dtype=wire).astype(dtype.np)
        return values.reshape(raw.shape + (size // wire.itemsize,))
    return decode


# -- SerializeTensor / ParseTensor ---------------------------------------------------------------

@register_kernel("SerializeTensor", "CPU", host_only=True)
def _serialize_tensor(ctx):
    dtype = ctx.attr("T")

    def serialize(value):
        value = np.asarray(value)
        proto = TensorProto(dtype=dtype_to_enum(dtype))
        proto.tensor_shape.SetInParent()  # TF writes the (possibly empty) shape of a scalar too
        for d in value.shape:
            proto.tensor_shape.dim.add(size=d)
        if dtype == dtypes.string:
            proto.string_val.extend(s if isinstance(s, bytes) else str(s).encode() for s in value.reshape(-1))
        elif value.size:
            proto.tensor_content = np.ascontiguousarray(value, dtype=np.dtype(dtype.np).newbyteorder("<")).tobytes()
        return np.array(proto.SerializeToString(deterministic=True), dtype=object)
    return serialize


@register_kernel("ParseTensor", "CPU", host_only=True)
def _parse_tensor(ctx):
    node, dtype = ctx.name, ctx.attr("out_type")

    def parse(serialized):
        data = np.asarray(serialized, dtype=object)
        if data.ndim:
            raise errors.InvalidArgumentError(f"Expected `serialized` to be a scalar, got shape: "
                                              f"[{','.join(map(str, data.shape))}]", node=node)
        data = data.item()
        try:
            proto = TensorProto.FromString(data)
            got = enum_to_dtype(proto.dtype)
            value = None if got != dtype else MakeNdarray(proto)
        except (DecodeError, TypeError, ValueError):
            raise errors.InvalidArgumentError(f"Could not parse `serialized` as TensorProto, base64: "
                                              f"{base64.b64encode(data).decode()}", node=node) from None
        if value is None:
            raise errors.InvalidArgumentError(f"Type mismatch between parsed tensor ({_tf_name(got)}) and dtype "
                                              f"({_tf_name(dtype)})", node=node)
        return value
    return parse


# -- base64, compression, JSON -----------------------------------------------------------------

_WEB_SAFE = re.compile(rb"^[A-Za-z0-9_-]*={0,2}$")


@register_kernel("DecodeBase64", "CPU", host_only=True)
def _decode_base64(ctx):
    node = ctx.name

    def decode_one(s):
        if not _WEB_SAFE.match(s):
            raise errors.InvalidArgumentError("Invalid character found in base64.", node=node)
        body = s.rstrip(b"=")
        if len(body) % 4 == 1:
            raise errors.InvalidArgumentError("Invalid base64 input length.", node=node)
        try:
            return base64.urlsafe_b64decode(body + b"=" * (-len(body) % 4))
        except binascii.Error:
            raise errors.InvalidArgumentError("Invalid character found in base64.", node=node) from None
    return lambda x: _map_strings(x, decode_one)


@register_kernel("EncodeBase64", "CPU", host_only=True)
def _encode_base64(ctx):
    pad = ctx.attr("pad")

    def encode_one(s):
        out = base64.urlsafe_b64encode(s)
        return out if pad else out.rstrip(b"=")
    return lambda x: _map_strings(x, encode_one)


_WBITS = {"ZLIB": 15, "GZIP": 31}


@register_kernel("DecodeCompressed", "CPU", host_only=True)
def _decode_compressed(ctx):
    node, kind = ctx.name, ctx.attr("compression_type")
    if kind not in ("", "ZLIB", "GZIP"):
        raise errors.InvalidArgumentError(f"Unsupported compression_type: {kind}", node=node)

    def decompress(s):
        try:
            return zlib.decompress(s, _WBITS[kind])
        except zlib.error as e:
            raise errors.DataLossError(f"inflate() failed: {e}", node=node) from None
    return lambda x: _strings(x).copy() if not kind else _map_strings(x, decompress)


@register_kernel("DecodeJSONExample", "CPU", host_only=True)
def _decode_json_example(ctx):
    node = ctx.name

    def convert(s):
        try:
            return json_format.Parse(s, Example()).SerializeToString(deterministic=True)
        except json_format.ParseError as e:
            raise errors.InvalidArgumentError(f"Error while parsing JSON: {e}", node=node) from None
    return lambda x: _map_strings(x, convert)
