"""Unicode string ops: codecs against Python's, TF's error modes, n-grams, segment joins,
and the NotImplementedError where TF would return a RaggedTensor."""
import numpy as np
import pytest

import graphrt as tf
from graphrt import errors
from graphrt.strings import scripts

S = tf.strings


def _run(x):
    with tf.Session() as s:
        return s.run(x)


TEXT = "h\u00e9llo \u4e16\u754c \U0001F600 \u05e9\u05dc\u05d5\u05dd"


@pytest.mark.parametrize("encoding,codec", [("UTF-8", "utf-8"), ("UTF-16-BE", "utf-16-be"),
                                            ("UTF-32-BE", "utf-32-be")])
def test_decode_encode_round_trip_matches_python(encoding, codec):
    data = TEXT.encode(codec)
    cps, offsets = _run(S.unicode_decode_with_offsets(data, encoding))
    assert cps.tolist() == [ord(c) for c in TEXT]
    assert offsets.tolist() == [len(TEXT[:i].encode(codec)) for i in range(len(TEXT))]
    assert _run(S.unicode_encode(cps, encoding)) == data


def test_malformed_utf8_is_replaced_per_maximal_subpart():
    data = b"a\xff\xc0\x80\xe4\xb8x\xed\xa0\x80"
    cps, offsets = _run(S.unicode_decode_with_offsets(data, "UTF-8"))
    assert cps.tolist() == [ord(c) for c in data.decode("utf-8", "replace")]
    assert offsets.tolist() == [0, 1, 2, 3, 4, 6, 7, 8, 9]
    assert _run(S.unicode_decode(data, "UTF-8", errors="ignore")).tolist() == [97, 120]
    with pytest.raises(errors.InvalidArgumentError, match="Invalid formatting"):
        _run(S.unicode_decode(data, "UTF-8", errors="strict"))


def test_encode_replaces_invalid_code_points():
    assert _run(S.unicode_encode([[65, 0xD800, 0x110000, -1]], "UTF-8", replacement_char=63)).tolist() == [b"A???"]
    assert _run(S.unicode_encode([[65, 0xD800]], "UTF-8", errors="ignore")).tolist() == [b"A"]
    with pytest.raises(errors.InvalidArgumentError):
        _run(S.unicode_encode([65, -1], "UTF-8", errors="strict"))


def test_encode_shapes():
    x = np.array([[[72, 105], [0x4e16, 33]]] * 3, np.int32)
    out = S.unicode_encode(x, "UTF-8")
    assert out.shape.as_list() == [3, 2]
    assert _run(out)[2].tolist() == [b"Hi", "\u4e16!".encode()]
    assert S.unicode_encode([72], "UTF-8").shape.ndims == 0
    with pytest.raises(ValueError, match="at least 1"):
        S.unicode_encode(72, "UTF-8")


def test_batches_need_ragged_tensor():
    for fn in (lambda: S.unicode_decode(["a"], "UTF-8"), lambda: S.unicode_decode_with_offsets(["a"], "UTF-8"),
               lambda: S.unicode_split(["a"], "UTF-8"), lambda: S.bytes_split(["a"])):
        with pytest.raises(NotImplementedError, match="RaggedTensor"):
            fn()


def test_split_transcode_and_bytes():
    assert _run(S.unicode_split("a\u00e9\u4e16", "UTF-8")).tolist() == [b"a", "\u00e9".encode(), "\u4e16".encode()]
    assert _run(S.unicode_transcode(TEXT, "UTF-8", "UTF-16-BE")) == TEXT.encode("utf-16-be")
    assert _run(S.unicode_transcode(b"x\x01", "UTF-8", "UTF-8", replace_control_characters=True)) == \
        "x\ufffd".encode()
    assert _run(S.bytes_split("\u00e9")).tolist() == [b"\xc3", b"\xa9"]


def test_script_codes():
    got = _run(S.unicode_script([ord("A"), 0x3b1, 0x416, 0x4e16, 0x30a2, 0x3042, ord(" "), 0x301, -1]))
    assert got.tolist() == [25, 14, 8, 17, 22, 20, 0, 1, -1]
    assert scripts.script(0xE000) == scripts.UNKNOWN  # private use


def test_ngrams():
    assert _run(S.ngrams(["a", "b", "c"], 2)).tolist() == [b"a b", b"b c"]
    out = S.ngrams([["a", "b", "c"], ["d", "e", "f"]], 2, separator="", pad_values="#")
    assert out.shape.as_list() == [2, None]
    assert _run(out).tolist() == [[b"#a", b"ab", b"bc", b"c#"], [b"#d", b"de", b"ef", b"f#"]]
    assert _run(S.ngrams(["a"], 3, preserve_short_sequences=True)).tolist() == [b"a"]
    with pytest.raises(ValueError, match="rank>0"):
        S.ngrams("a", 2)
    with pytest.raises(ValueError, match="greater than 0"):
        S.ngrams(["a"], [2, 0])


def test_unsorted_segment_join():
    out = S.unsorted_segment_join(["a", "b", "c"], [2, 0, 2], 3, separator="+")
    assert out.shape.as_list() == [3]
    assert _run(out).tolist() == [b"b", b"", b"a+c"]
    with pytest.raises(errors.InvalidArgumentError, match="negative"):
        _run(S.unsorted_segment_join(["a"], [-1], 1))
