"""CRC-32C (Castagnoli) and TensorFlow's masked form, in numpy.

TF checksums checkpoint tensors and table blocks with crc32c, stored
"masked" (rotated and offset, so a CRC of data holding CRCs stays strong).
A byte-at-a-time table loop in Python runs at a few MB/s, so large inputs
are cut into `lanes` chunks whose CRCs advance together, one numpy step per
four-byte column (two 64K-entry tables), and are then folded: crc(A || B) = shift_|B|(crc(A)) ^ crc(B)
for the raw register, where shift_n (feeding n zero bytes) is linear over
GF(2) and so costs four table lookups once built.
"""
import numpy as np

_POLY = 0x82F63B78  # reflected Castagnoli polynomial
_MASK_DELTA = 0xA282EAD8


def _byte_table():
    table = np.arange(256, dtype=np.uint32)
    for _ in range(8):
        table = np.where(table & 1, (table >> 1) ^ np.uint32(_POLY), table >> 1).astype(np.uint32)
    return table


_TABLE = _byte_table()
_TABLE_LIST = _TABLE.tolist()
# Four bytes per step, in two lookups. Feeding a 32-bit word w is linear in w, so it is
# HI[w >> 16] ^ LO[w & 0xFFFF]: HI[v] feeds the 16 bits of v (low byte first), and LO[v] feeds
# v and then 16 zero bits.
_i = np.arange(1 << 16, dtype=np.uint32)
_HI = (_TABLE[_i & 0xFF] >> 8) ^ _TABLE[(_TABLE[_i & 0xFF] ^ (_i >> 8)) & 0xFF]
_LO = _HI[_HI & 0xFFFF] ^ (_HI >> 16)
del _i


def _update_py(crc, data):
    t = _TABLE_LIST
    for b in data:
        crc = t[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


def _mat_apply(mat, v):
    out, i = 0, 0
    while v:
        if v & 1:
            out ^= mat[i]
        v >>= 1
        i += 1
    return out


def _mat_square(mat):
    return [_mat_apply(mat, m) for m in mat]


def _shift_tables(n_bytes):
    """Four 256-entry tables T[j][b] = shift_n(b << 8j): feeding n zero bytes to the raw register."""
    one_bit = [_POLY] + [1 << i for i in range(31)]  # operator for one zero bit
    op = _mat_square(_mat_square(_mat_square(one_bit)))  # one zero byte
    result = [1 << i for i in range(32)]  # identity
    n = n_bytes
    while n:
        if n & 1:
            result = [_mat_apply(op, r) for r in result]
        n >>= 1
        if n:
            op = _mat_square(op)
    basis = np.array(result, dtype=np.uint32)
    bits = (np.arange(256)[:, None] >> np.arange(8)) & 1
    tables = []
    for j in range(4):
        cols = basis[8 * j:8 * j + 8]
        tables.append(np.bitwise_xor.reduce(np.where(bits.astype(bool), cols[None, :], 0).astype(np.uint32),
                                            axis=1).tolist())
    return tables


def crc32c(data, lanes=None):
    """CRC-32C of `data` (bytes-like)."""
    buf = np.frombuffer(memoryview(data).cast("B"), dtype=np.uint8)
    n = len(buf)
    if n < 1 << 17:
        return _update_py(0xFFFFFFFF, buf.tobytes()) ^ 0xFFFFFFFF
    lanes = lanes or min(32768, max(1024, n >> 10))  # wide numpy steps, but a short Python fold
    length = (n // lanes) & ~3  # a multiple of four bytes per lane: one word per step
    words = buf[:lanes * length].reshape(lanes, length).view("<u4")
    crc = np.zeros(lanes, dtype=np.uint32)
    crc[0] = 0xFFFFFFFF
    hi, lo = _HI, _LO
    for j in range(0, words.shape[1], 32):  # transposed in cache-sized blocks: row i is word i of each lane
        for row in words[:, j:j + 32].T.copy():
            x = crc ^ row
            crc = lo[x & 0xFFFF] ^ hi[x >> 16]
    t0, t1, t2, t3 = _shift_tables(length)
    acc = 0
    for c in crc.tolist():
        acc = (t0[acc & 0xFF] ^ t1[(acc >> 8) & 0xFF] ^ t2[(acc >> 16) & 0xFF] ^ t3[acc >> 24]) ^ c
    acc = _update_py(acc, buf[lanes * length:].tobytes())
    return acc ^ 0xFFFFFFFF


def mask(crc):
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + _MASK_DELTA) & 0xFFFFFFFF


def unmask(masked):
    rot = (masked - _MASK_DELTA) & 0xFFFFFFFF
    return ((rot >> 17) | (rot << 15)) & 0xFFFFFFFF


def masked_crc32c(data):
    return mask(crc32c(data))
