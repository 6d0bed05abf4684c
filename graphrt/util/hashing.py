"""The 64-bit string hashes of TF's StringToHashBucket* kernels, on bytes.

* `fingerprint64`: farmhash's Fingerprint64 (farmhashna::Hash64), TF's
  `Fingerprint64` (StringToHashBucketFast, and the OOV buckets of lookup tables).
* `legacy_hash64`: TF's `Hash64(data, n, seed=0xDECAFCAFFE)` (MurmurHash64A),
  what the legacy StringToHashBucket uses.
* `siphash24`: SipHash-2-4 under a 128-bit key given as two uint64 halves
  (little endian), TF's StrongKeyedHash (StringToHashBucketStrong).

All three read words little endian; arithmetic is mod 2**64 (`_M`).
"""
import struct

MASK64 = _M = (1 << 64) - 1
_K0 = 0xc3a5c85c97cb3127
_K1 = 0xb492b66fbe98f273
_K2 = 0x9ae16a3b2f90404f


def _fetch64(s, i):
    return struct.unpack_from("<Q", s, i)[0]


def _fetch32(s, i):
    return struct.unpack_from("<I", s, i)[0]


def _rotr(v, shift):
    return ((v >> shift) | (v << (64 - shift))) & _M


def _shift_mix(v):
    return v ^ (v >> 47)


def _hash_len16(u, v, mul):
    a = ((u ^ v) * mul) & _M
    a ^= a >> 47
    b = ((v ^ a) * mul) & _M
    b ^= b >> 47
    return (b * mul) & _M


def _hash_len0to16(s, n):
    if n >= 8:
        mul = _K2 + n * 2
        a = (_fetch64(s, 0) + _K2) & _M
        b = _fetch64(s, n - 8)
        c = (_rotr(b, 37) * mul + a) & _M
        d = ((_rotr(a, 25) + b) * mul) & _M
        return _hash_len16(c, d, mul)
    if n >= 4:
        mul = _K2 + n * 2
        a = _fetch32(s, 0)
        return _hash_len16(n + (a << 3), _fetch32(s, n - 4), mul)
    if n > 0:
        y = s[0] + (s[n >> 1] << 8)
        z = n + (s[n - 1] << 2)
        return (_shift_mix(((y * _K2) ^ (z * _K0)) & _M) * _K2) & _M
    return _K2


def _hash_len17to32(s, n):
    mul = _K2 + n * 2
    a = (_fetch64(s, 0) * _K1) & _M
    b = _fetch64(s, 8)
    c = (_fetch64(s, n - 8) * mul) & _M
    d = (_fetch64(s, n - 16) * _K2) & _M
    return _hash_len16((_rotr((a + b) & _M, 43) + _rotr(c, 30) + d) & _M,
                       (a + _rotr((b + _K2) & _M, 18) + c) & _M, mul)


def _hash_len33to64(s, n):
    mul = _K2 + n * 2
    a = (_fetch64(s, 0) * _K2) & _M
    b = _fetch64(s, 8)
    c = (_fetch64(s, n - 8) * mul) & _M
    d = (_fetch64(s, n - 16) * _K2) & _M
    y = (_rotr((a + b) & _M, 43) + _rotr(c, 30) + d) & _M
    z = _hash_len16(y, (a + _rotr((b + _K2) & _M, 18) + c) & _M, mul)
    e = (_fetch64(s, 16) * mul) & _M
    f = _fetch64(s, 24)
    g = ((y + _fetch64(s, n - 32)) * mul) & _M
    h = ((z + _fetch64(s, n - 24)) * mul) & _M
    return _hash_len16((_rotr((e + f) & _M, 43) + _rotr(g, 30) + h) & _M,
                       (e + _rotr((f + a) & _M, 18) + g) & _M, mul)


def _weak_hash_len32_with_seeds(s, i, a, b):
    w, x, y, z = struct.unpack_from("<4Q", s, i)
    a = (a + w) & _M
    b = _rotr((b + a + z) & _M, 21)
    c = a
    a = (a + x + y) & _M
    b = (b + _rotr(a, 44)) & _M
    return (a + z) & _M, (b + c) & _M


def fingerprint64(s):
    """farmhashna::Hash64 of the bytes `s` (an int in [0, 2**64))."""
    n = len(s)
    if n <= 16:
        return _hash_len0to16(s, n)
    if n <= 32:
        return _hash_len17to32(s, n)
    if n <= 64:
        return _hash_len33to64(s, n)
    seed = 81
    x = seed
    y = (seed * _K1 + 113) & _M
    z = (_shift_mix((y * _K2 + 113) & _M) * _K2) & _M
    v = (0, 0)
    w = (0, 0)
    x = (x * _K2 + _fetch64(s, 0)) & _M
    end = ((n - 1) // 64) * 64
    last64 = n - 64
    i = 0
    while True:
        x = (_rotr((x + y + v[0] + _fetch64(s, i + 8)) & _M, 37) * _K1) & _M
        y = (_rotr((y + v[1] + _fetch64(s, i + 48)) & _M, 42) * _K1) & _M
        x ^= w[1]
        y = (y + v[0] + _fetch64(s, i + 40)) & _M
        z = (_rotr((z + w[0]) & _M, 33) * _K1) & _M
        v = _weak_hash_len32_with_seeds(s, i, (v[1] * _K1) & _M, (x + w[0]) & _M)
        w = _weak_hash_len32_with_seeds(s, i + 32, (z + w[1]) & _M, (y + _fetch64(s, i + 16)) & _M)
        z, x = x, z
        i += 64
        if i == end:
            break
    mul = _K1 + ((z & 0xff) << 1)
    i = last64
    w0 = (w[0] + ((n - 1) & 63)) & _M
    v0 = (v[0] + w0) & _M
    w0 = (w0 + v0) & _M
    v, w = (v0, v[1]), (w0, w[1])
    x = (_rotr((x + y + v[0] + _fetch64(s, i + 8)) & _M, 37) * mul) & _M
    y = (_rotr((y + v[1] + _fetch64(s, i + 48)) & _M, 42) * mul) & _M
    x ^= (w[1] * 9) & _M
    y = (y + v[0] * 9 + _fetch64(s, i + 40)) & _M
    z = (_rotr((z + w[0]) & _M, 33) * mul) & _M
    v = _weak_hash_len32_with_seeds(s, i, (v[1] * mul) & _M, (x + w[0]) & _M)
    w = _weak_hash_len32_with_seeds(s, i + 32, (z + w[1]) & _M, (y + _fetch64(s, i + 16)) & _M)
    z, x = x, z
    return _hash_len16((_hash_len16(v[0], w[0], mul) + _shift_mix(y) * _K0 + z) & _M,
                       (_hash_len16(v[1], w[1], mul) + x) & _M, mul)


_MURMUR_M = 0xc6a4a7935bd1e995


def legacy_hash64(s, seed=0xDECAFCAFFE):
    """TF's Hash64 (tensorflow/core/lib/hash/hash.cc): MurmurHash64A."""
    n = len(s)
    h = (seed ^ (n * _MURMUR_M)) & _M
    full = n // 8 * 8
    for i in range(0, full, 8):
        k = (_fetch64(s, i) * _MURMUR_M) & _M
        k ^= k >> 47
        k = (k * _MURMUR_M) & _M
        h = ((h ^ k) * _MURMUR_M) & _M
    if n > full:
        h ^= int.from_bytes(s[full:], "little")
        h = (h * _MURMUR_M) & _M
    h ^= h >> 47
    h = (h * _MURMUR_M) & _M
    return h ^ (h >> 47)


def _sip_round(v0, v1, v2, v3):
    v0 = (v0 + v1) & _M
    v1 = _rotr(v1, 51) ^ v0
    v0 = _rotr(v0, 32)
    v2 = (v2 + v3) & _M
    v3 = _rotr(v3, 48) ^ v2
    v0 = (v0 + v3) & _M
    v3 = _rotr(v3, 43) ^ v0
    v2 = (v2 + v1) & _M
    v1 = _rotr(v1, 47) ^ v2
    v2 = _rotr(v2, 32)
    return v0, v1, v2, v3


def siphash24(k0, k1, s):
    """SipHash-2-4 of `s` under the key (k0, k1), each a uint64 (the key's little-endian halves)."""
    v0 = k0 ^ 0x736f6d6570736575
    v1 = k1 ^ 0x646f72616e646f6d
    v2 = k0 ^ 0x6c7967656e657261
    v3 = k1 ^ 0x7465646279746573
    n = len(s)
    full = n // 8 * 8
    for i in range(0, full, 8):
        m = _fetch64(s, i)
        v3 ^= m
        v0, v1, v2, v3 = _sip_round(*_sip_round(v0, v1, v2, v3))
        v0 ^= m
    m = ((n & 0xff) << 56) | int.from_bytes(s[full:], "little")
    v3 ^= m
    v0, v1, v2, v3 = _sip_round(*_sip_round(v0, v1, v2, v3))
    v0 ^= m
    v2 ^= 0xff
    for _ in range(4):
        v0, v1, v2, v3 = _sip_round(v0, v1, v2, v3)
    return v0 ^ v1 ^ v2 ^ v3
