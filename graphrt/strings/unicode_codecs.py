"""Unicode decoding and encoding as TF's ICU-based kernels do it, with byte offsets.

Decoding yields (code point, byte offset, ok) per character; an ill-formed sequence is one
error per maximal subpart (Unicode's recommended practice, which ICU follows: `C0 80` is two
errors, a truncated `E4 B8` one). UTF-16 pairs surrogates; an unpaired one, a code point
above U+10FFFF or a surrogate in UTF-32, and trailing bytes short of a unit are errors.
Encoding accepts 0..U+10FFFF except surrogates (noncharacters are encoded, as in TF).
"""
import struct

ENCODINGS = ("UTF-8", "UTF-16-BE", "UTF-32-BE")


def is_valid(cp):
    return 0 <= cp <= 0x10FFFF and not 0xD800 <= cp <= 0xDFFF


def _utf8_second_range(lead):
    """The allowed range of the byte after `lead` (Table 3-7 of the Unicode standard), and the length."""
    if 0xC2 <= lead <= 0xDF:
        return 0x80, 0xBF, 2
    if lead == 0xE0:
        return 0xA0, 0xBF, 3
    if lead == 0xED:
        return 0x80, 0x9F, 3
    if 0xE1 <= lead <= 0xEF:
        return 0x80, 0xBF, 3
    if lead == 0xF0:
        return 0x90, 0xBF, 4
    if lead == 0xF4:
        return 0x80, 0x8F, 4
    if 0xF1 <= lead <= 0xF3:
        return 0x80, 0xBF, 4
    return None


def _decode_utf8(s):
    i, n = 0, len(s)
    while i < n:
        lead = s[i]
        if lead < 0x80:
            yield lead, i, True
            i += 1
            continue
        spec = _utf8_second_range(lead)
        if spec is None:
            yield None, i, False
            i += 1
            continue
        lo, hi, length = spec
        j = i + 1
        cp = lead & (0x7F >> length)
        while j < i + length:
            if j >= n or not (lo <= s[j] <= hi if j == i + 1 else 0x80 <= s[j] <= 0xBF):
                break
            cp = (cp << 6) | (s[j] & 0x3F)
            j += 1
        if j == i + length:
            yield cp, i, True
        else:
            yield None, i, False
        i = j


def _decode_utf16be(s):
    i, n = 0, len(s)
    while i < n:
        if i + 2 > n:
            yield None, i, False
            return
        unit = (s[i] << 8) | s[i + 1]
        if 0xD800 <= unit <= 0xDBFF and i + 4 <= n:
            low = (s[i + 2] << 8) | s[i + 3]
            if 0xDC00 <= low <= 0xDFFF:
                yield 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00), i, True
                i += 4
                continue
        yield (None, i, False) if 0xD800 <= unit <= 0xDFFF else (unit, i, True)
        i += 2


def _decode_utf32be(s):
    for i in range(0, len(s), 4):
        if i + 4 > len(s):
            yield None, i, False
            return
        (cp,) = struct.unpack(">I", s[i:i + 4])
        yield (cp, i, True) if is_valid(cp) else (None, i, False)


_DECODERS = {"UTF-8": _decode_utf8, "UTF-16-BE": _decode_utf16be, "UTF-32-BE": _decode_utf32be}
_ENCODERS = {"UTF-8": "utf-8", "UTF-16-BE": "utf-16-be", "UTF-32-BE": "utf-32-be"}


def decode(s, encoding):
    """(code point or None, byte offset, well formed) per character of the bytes `s`."""
    return _DECODERS[encoding](s)


def encode(code_points, encoding):
    """The bytes of valid code points."""
    return "".join(map(chr, code_points)).encode(_ENCODERS[encoding])
