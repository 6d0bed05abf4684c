"""String decoders of input pipelines, as TF's ops: `tf.decode_csv` (DecodeCSV),
`tf.decode_raw` (DecodeRaw), `tf.io.serialize_tensor` / `parse_tensor`
(SerializeTensor / ParseTensor, TensorProto bytes), `tf.decode_base64` /
`encode_base64` (web-safe alphabet), `tf.io.decode_compressed`
(DecodeCompressed) and `tf.decode_json_example` (DecodeJSONExample).
Declarations and API here, kernels in decoding_kernels.py; none has a gradient."""
from ..framework import dtypes
from ..framework.graph import get_default_graph
from ..framework.op_builder import apply_op, convert_to_tensor
from ..framework.registry import not_differentiable, register_op
from ..framework.tensor_shape import TensorShape
from ..ops import shape_fns

_CSV_TYPES = {dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64, dtypes.string}
_RAW_TYPES = {dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int32, dtypes.uint16, dtypes.uint8,
              dtypes.int16, dtypes.int8, dtypes.int64, dtypes.complex64, dtypes.complex128, dtypes.bool}


def _csv_shapes(ctx):
    for i in range(1, ctx.num_inputs):
        d = ctx.shape(i)
        if d.ndims is not None and d.ndims > 1:
            raise ValueError(f"Shape must be at most rank 1 but is rank {d.ndims}")
        if d.is_fully_defined() and d.num_elements() > 1:
            raise ValueError(f"Shape must be at most 1 element but is {d}")
    return [ctx.shape(0)] * (ctx.num_inputs - 1)


def _raw_shape(ctx):
    return ctx.shape(0).concatenate(TensorShape([None]))


register_op("DecodeCSV", ["records: string", "record_defaults: OUT_TYPE"], ["output: OUT_TYPE"],
            attrs={"field_delim": ",", "use_quote_delim": True, "na_value": "", "select_cols": []},
            shape_fn=_csv_shapes, allowed_types={"OUT_TYPE": _CSV_TYPES})
register_op("DecodeRaw", ["bytes: string"], ["output: out_type"], attrs={"little_endian": True},
            shape_fn=_raw_shape, allowed_types={"out_type": _RAW_TYPES})
register_op("SerializeTensor", ["tensor: T"], ["serialized: string"], shape_fn=shape_fns.scalar)
register_op("ParseTensor", ["serialized: string"], ["output: out_type"], shape_fn=shape_fns.unknown)
register_op("DecodeBase64", ["input: string"], ["output: string"], shape_fn=shape_fns.unchanged)
register_op("EncodeBase64", ["input: string"], ["output: string"], attrs={"pad": False},
            shape_fn=shape_fns.unchanged)
register_op("DecodeCompressed", ["bytes: string"], ["output: string"], attrs={"compression_type": ""},
            shape_fn=shape_fns.unchanged)
register_op("DecodeJSONExample", ["json_examples: string"], ["binary_examples: string"],
            shape_fn=shape_fns.unchanged)
for _name in ("DecodeCSV", "DecodeRaw", "SerializeTensor", "ParseTensor", "DecodeBase64", "EncodeBase64",
              "DecodeCompressed", "DecodeJSONExample"):
    not_differentiable(_name)


def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, name=None, na_value="",
               select_cols=None):
    """Splits each CSV record into one tensor per column, typed by `record_defaults` (a default
    value per column, or an empty one for a required column)."""
    if select_cols is not None and any(select_cols[i] >= select_cols[i + 1] for i in range(len(select_cols) - 1)):
        raise ValueError("select_cols is not strictly increasing.")
    if select_cols is not None and select_cols[0] < 0:
        raise ValueError("select_cols contains negative values.")
    if select_cols is not None and len(select_cols) != len(record_defaults):
        raise ValueError("Length of select_cols and record_defaults do not match.")
    g = get_default_graph()
    with g.name_scope(name or "DecodeCSV") as scope:
        records = convert_to_tensor(records, dtype=dtypes.string, name="records")
        defaults = [convert_to_tensor(d, name=f"record_defaults_{i}") for i, d in enumerate(record_defaults)]
        op = g.create_op("DecodeCSV", [records] + defaults,
                         {"OUT_TYPE": [d.dtype.base_dtype for d in defaults], "field_delim": field_delim,
                          "use_quote_delim": bool(use_quote_delim), "na_value": na_value,
                          "select_cols": list(select_cols or [])}, name=scope)
    return list(op.outputs)


def decode_raw(input_bytes=None, out_type=None, little_endian=True, name=None, bytes=None):  # noqa: A002
    """Reinterprets the bytes of each string as a vector of `out_type` (TF1's `tf.decode_raw`)."""
    if input_bytes is not None and bytes is not None:
        raise ValueError("Cannot pass both 'input_bytes' and 'bytes'")
    input_bytes = bytes if input_bytes is None else input_bytes
    return apply_op("DecodeRaw", [input_bytes], name=name or "DecodeRaw", out_type=dtypes.as_dtype(out_type),
                    little_endian=bool(little_endian)).outputs[0]


def serialize_tensor(tensor, name=None):
    """The TensorProto bytes of `tensor` (a string scalar)."""
    return apply_op("SerializeTensor", [tensor], name=name or "SerializeTensor").outputs[0]


def parse_tensor(serialized, out_type, name=None):
    """The tensor of the TensorProto bytes `serialized`, which must hold `out_type`."""
    return apply_op("ParseTensor", [serialized], name=name or "ParseTensor",
                    out_type=dtypes.as_dtype(out_type)).outputs[0]


def decode_base64(input, name=None):  # noqa: A002 - the TF name
    """Decodes web-safe base64 strings ('-' and '_' for '+' and '/'; padding optional)."""
    return apply_op("DecodeBase64", [input], name=name or "DecodeBase64").outputs[0]


def encode_base64(input, pad=False, name=None):  # noqa: A002 - the TF name
    """Encodes strings as web-safe base64, with '=' padding only when `pad`."""
    return apply_op("EncodeBase64", [input], name=name or "EncodeBase64", pad=bool(pad)).outputs[0]


def decode_compressed(bytes, compression_type="", name=None):  # noqa: A002 - the TF name
    """Decompresses each string ('' leaves it as is, 'ZLIB' or 'GZIP')."""
    return apply_op("DecodeCompressed", [bytes], name=name or "DecodeCompressed",
                    compression_type=compression_type).outputs[0]


def decode_json_example(json_examples, name=None):
    """Converts Example protos in JSON (protobuf's JSON mapping) to their binary form."""
    return apply_op("DecodeJSONExample", [json_examples], name=name or "DecodeJSONExample").outputs[0]
