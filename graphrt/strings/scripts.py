"""ICU script codes (UScriptCode) of code points, for UnicodeScript: a table of the ranges of
the common scripts (Latin, Greek, Coptic, Cyrillic, Armenian, Hebrew, Arabic, Syriac, Thaana,
the Indic scripts, Thai, Lao, Tibetan, Myanmar, Georgian, Hangul, Ethiopic, Cherokee, Ogham,
Runic, Khmer, Mongolian, Hiragana, Katakana, Bopomofo, Han, Yi, Canadian Aboriginal, Braille) and of Common and Inherited
characters among and around them. An assigned code point outside the table is Common (0); an
unassigned one (by Python's unicodedata), a surrogate or a private-use one is Unknown (103); one outside 0..U+10FFFF is -1.
Scripts not in the table (Tifinagh, Javanese, Balinese, historic scripts, ...) come out Common, where ICU
names them; so do characters newer than TF's ICU (which calls them Unknown).
"""
import bisect
import unicodedata

COMMON, INHERITED, UNKNOWN = 0, 1, 103
_ARABIC, _ARMENIAN, _BENGALI, _BOPOMOFO, _CHEROKEE, _COPTIC, _CYRILLIC = 2, 3, 4, 5, 6, 7, 8
_DEVANAGARI, _ETHIOPIC, _GEORGIAN, _GREEK, _GUJARATI, _GURMUKHI, _HAN, _HANGUL = 10, 11, 12, 14, 15, 16, 17, 18
_HEBREW, _HIRAGANA, _KANNADA, _KATAKANA, _KHMER, _LAO, _LATIN, _MALAYALAM = 19, 20, 21, 22, 23, 24, 25, 26
_MONGOLIAN, _MYANMAR, _OGHAM, _ORIYA, _RUNIC, _SINHALA, _SYRIAC, _TAMIL = 27, 28, 29, 31, 32, 33, 34, 35
_TELUGU, _THAANA, _THAI, _TIBETAN = 36, 37, 38, 39
_CANADIAN_ABORIGINAL, _YI, _BRAILLE = 40, 41, 46

# (first, last, script); later rows win over earlier ones (exceptions inside blocks follow them).
_RANGES = [
    (0x0000, 0x02FF, COMMON), (0x0041, 0x005A, _LATIN), (0x0061, 0x007A, _LATIN), (0x00AA, 0x00AA, _LATIN),
    (0x00BA, 0x00BA, _LATIN), (0x00C0, 0x00D6, _LATIN), (0x00D8, 0x00F6, _LATIN), (0x00F8, 0x02B8, _LATIN),
    (0x02E0, 0x02E4, _LATIN), (0x02EA, 0x02EB, _BOPOMOFO),
    (0x0300, 0x036F, INHERITED),
    (0x0370, 0x03FF, _GREEK), (0x0374, 0x0374, COMMON), (0x037E, 0x037E, COMMON), (0x0385, 0x0385, COMMON),
    (0x0387, 0x0387, COMMON), (0x03E2, 0x03EF, _COPTIC),
    (0x0400, 0x052F, _CYRILLIC), (0x0485, 0x0486, INHERITED),
    (0x0531, 0x058F, _ARMENIAN), (0x0591, 0x05F4, _HEBREW),
    (0x0600, 0x06FF, _ARABIC), (0x0605, 0x0605, COMMON), (0x060C, 0x060C, COMMON), (0x061B, 0x061B, COMMON),
    (0x061F, 0x061F, COMMON), (0x0640, 0x0640, COMMON), (0x064B, 0x0655, INHERITED), (0x0670, 0x0670, INHERITED),
    (0x06DD, 0x06DD, COMMON), (0x0700, 0x074F, _SYRIAC), (0x0750, 0x077F, _ARABIC), (0x0780, 0x07BF, _THAANA),
    (0x08A0, 0x08FF, _ARABIC), (0x08E2, 0x08E2, COMMON),
    (0x0900, 0x097F, _DEVANAGARI), (0x0951, 0x0954, INHERITED), (0x0964, 0x0965, COMMON),
    (0x0980, 0x09FF, _BENGALI), (0x0A00, 0x0A7F, _GURMUKHI), (0x0A80, 0x0AFF, _GUJARATI), (0x0B00, 0x0B7F, _ORIYA),
    (0x0B80, 0x0BFF, _TAMIL), (0x0C00, 0x0C7F, _TELUGU), (0x0C80, 0x0CFF, _KANNADA), (0x0D00, 0x0D7F, _MALAYALAM),
    (0x0D80, 0x0DFF, _SINHALA), (0x0E00, 0x0E7F, _THAI), (0x0E3F, 0x0E3F, COMMON), (0x0E80, 0x0EFF, _LAO),
    (0x0F00, 0x0FFF, _TIBETAN), (0x0FD5, 0x0FD8, COMMON), (0x1000, 0x109F, _MYANMAR),
    (0x10A0, 0x10FF, _GEORGIAN), (0x10FB, 0x10FB, COMMON), (0x1100, 0x11FF, _HANGUL),
    (0x1200, 0x139F, _ETHIOPIC), (0x13A0, 0x13FF, _CHEROKEE), (0x1680, 0x169F, _OGHAM),
    (0x16A0, 0x16F8, _RUNIC), (0x16EB, 0x16ED, COMMON), (0x1780, 0x17FF, _KHMER),
    (0x1800, 0x18AF, _MONGOLIAN), (0x1802, 0x1803, COMMON), (0x1805, 0x1805, COMMON), (0x19E0, 0x19FF, _KHMER),
    (0x1400, 0x167F, _CANADIAN_ABORIGINAL), (0x18B0, 0x18FF, _CANADIAN_ABORIGINAL), (0x1AB0, 0x1AFF, INHERITED), (0x1C80, 0x1C88, _CYRILLIC), (0x1C90, 0x1CBF, _GEORGIAN),
    (0x1D00, 0x1D25, _LATIN), (0x1D26, 0x1D2A, _GREEK), (0x1D2B, 0x1D2B, _CYRILLIC), (0x1D2C, 0x1D5C, _LATIN),
    (0x1D5D, 0x1D61, _GREEK), (0x1D62, 0x1D65, _LATIN), (0x1D66, 0x1D6A, _GREEK), (0x1D6B, 0x1D77, _LATIN),
    (0x1D78, 0x1D78, _CYRILLIC), (0x1D79, 0x1DBE, _LATIN), (0x1DBF, 0x1DBF, _GREEK), (0x1DC0, 0x1DFF, INHERITED),
    (0x1E00, 0x1EFF, _LATIN), (0x1F00, 0x1FFF, _GREEK),
    (0x2000, 0x2BFF, COMMON), (0x200C, 0x200D, INHERITED), (0x2071, 0x2071, _LATIN), (0x207F, 0x207F, _LATIN),
    (0x2090, 0x209C, _LATIN), (0x20D0, 0x20F0, INHERITED), (0x2126, 0x2126, _GREEK), (0x212A, 0x212B, _LATIN),
    (0x2132, 0x2132, _LATIN), (0x214E, 0x214E, _LATIN), (0x2160, 0x2188, _LATIN),
    (0x2800, 0x28FF, _BRAILLE), (0x2C60, 0x2C7F, _LATIN), (0x2C80, 0x2CFF, _COPTIC), (0x2D00, 0x2D2F, _GEORGIAN), (0x2DE0, 0x2DFF, _CYRILLIC),
    (0x2E00, 0x2E7F, COMMON), (0x2E80, 0x2FD5, _HAN), (0x2FF0, 0x2FFF, COMMON),
    (0x3000, 0x303F, COMMON), (0x3005, 0x3005, _HAN), (0x3007, 0x3007, _HAN), (0x3021, 0x3029, _HAN),
    (0x302A, 0x302D, INHERITED), (0x3038, 0x303B, _HAN), (0x3041, 0x3096, _HIRAGANA), (0x3099, 0x309A, INHERITED),
    (0x309B, 0x309C, COMMON), (0x309D, 0x309F, _HIRAGANA), (0x30A0, 0x30A0, COMMON), (0x30A1, 0x30FA, _KATAKANA),
    (0x30FB, 0x30FC, COMMON), (0x30FD, 0x30FF, _KATAKANA), (0x3105, 0x312F, _BOPOMOFO), (0x3131, 0x318E, _HANGUL),
    (0x3190, 0x319F, COMMON), (0x31A0, 0x31BF, _BOPOMOFO), (0x31C0, 0x31EF, COMMON), (0x31F0, 0x31FF, _KATAKANA),
    (0x3200, 0x33FF, COMMON), (0x3200, 0x321E, _HANGUL), (0x3260, 0x327E, _HANGUL), (0x32D0, 0x32FE, _KATAKANA),
    (0x3300, 0x3357, _KATAKANA), (0x3400, 0x4DBF, _HAN), (0x4E00, 0x9FFF, _HAN),
    (0xA000, 0xA4CF, _YI), (0xA640, 0xA69F, _CYRILLIC), (0xA700, 0xA721, COMMON), (0xA722, 0xA787, _LATIN), (0xA788, 0xA78A, COMMON),
    (0xA78B, 0xA7FF, _LATIN), (0xA8E0, 0xA8FF, _DEVANAGARI), (0xA960, 0xA97F, _HANGUL),
    (0xAB30, 0xAB5A, _LATIN), (0xAB5B, 0xAB5B, COMMON), (0xAB5C, 0xAB64, _LATIN), (0xAB65, 0xAB65, _GREEK),
    (0xAB70, 0xABBF, _CHEROKEE), (0xAC00, 0xD7FF, _HANGUL), (0xF900, 0xFAFF, _HAN),
    (0xFB00, 0xFB06, _LATIN), (0xFB13, 0xFB17, _ARMENIAN), (0xFB1D, 0xFB4F, _HEBREW), (0xFB50, 0xFDFF, _ARABIC),
    (0xFD3E, 0xFD3F, COMMON), (0xFE00, 0xFE0F, INHERITED), (0xFE10, 0xFE1F, COMMON), (0xFE20, 0xFE2D, INHERITED),
    (0xFE30, 0xFE6F, COMMON), (0xFE70, 0xFEFC, _ARABIC), (0xFEFF, 0xFF20, COMMON), (0xFF21, 0xFF3A, _LATIN),
    (0xFF3B, 0xFF40, COMMON), (0xFF41, 0xFF5A, _LATIN), (0xFF5B, 0xFF65, COMMON), (0xFF66, 0xFF6F, _KATAKANA),
    (0xFF70, 0xFF70, COMMON), (0xFF71, 0xFF9D, _KATAKANA), (0xFF9E, 0xFF9F, COMMON), (0xFFA0, 0xFFDC, _HANGUL),
    (0xFFE0, 0xFFFD, COMMON), (0x1B000, 0x1B000, _KATAKANA), (0x1B001, 0x1B11F, _HIRAGANA),
    (0x1F000, 0x1FBFF, COMMON), (0x1F200, 0x1F200, _HIRAGANA), (0x20000, 0x323AF, _HAN),
    (0xE0001, 0xE007F, COMMON), (0xE0100, 0xE01EF, INHERITED),
]


def _flatten(ranges):
    """Disjoint (start, script) breakpoints from overlapping ranges, later ones winning."""
    points = sorted({r[0] for r in ranges} | {r[1] + 1 for r in ranges})
    starts, scripts = [], []
    for p in points:
        script = None
        for first, last, s in ranges:
            if first <= p <= last:
                script = s
        starts.append(p)
        scripts.append(script)
    return starts, scripts


_STARTS, _SCRIPTS = _flatten(_RANGES)


def script(cp):
    """ICU's script code of code point `cp`."""
    if not 0 <= cp <= 0x10FFFF:
        return -1
    if unicodedata.category(chr(cp)) in ("Cn", "Cs", "Co"):  # unassigned, surrogates, private use
        return UNKNOWN
    i = bisect.bisect_right(_STARTS, cp) - 1
    found = _SCRIPTS[i] if i >= 0 else None
    return COMMON if found is None else found
