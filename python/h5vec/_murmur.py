"""MurmurHash3_x64_128 (Austin Appleby's reference, as `mmh3.hash128(...,
x64arch=True)`) in numpy, for CHUNK_BLOOM indexes (SPEC 14.6): `hash128`
for one byte string (Python ints), `hash128_rows` vectorised over equal-length
byte strings (a `(N, L)` uint8 matrix: fixed-width numbers are the L = 1, 2,
4, 8 case, strings are grouped by length), and `bloom_bits` (the exact
double hashing `(h_a + i * h_b) mod m_bits`, never wrapping at 64 bits).
The package does not need the `mmh3` module; the tests compare with it."""

from __future__ import annotations

import numpy as np

_M64 = (1 << 64) - 1
_C1 = 0x87C37B91114253D5
_C2 = 0x4CF5AD432745937F


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & _M64


def _fmix(k):
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & _M64
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & _M64
    k ^= k >> 33
    return k


def hash128(data: bytes, seed: int = 0):
    """(h_a, h_b): the low and high 64 bits of MurmurHash3_x64_128(data, seed)."""
    data = bytes(data)
    n = len(data)
    h1 = h2 = seed & 0xFFFFFFFF
    nblocks = n // 16
    for i in range(nblocks):
        k1 = int.from_bytes(data[16 * i:16 * i + 8], "little")
        k2 = int.from_bytes(data[16 * i + 8:16 * i + 16], "little")
        k1 = (_rotl((k1 * _C1) & _M64, 31) * _C2) & _M64
        h1 ^= k1
        h1 = (_rotl(h1, 27) + h2) & _M64
        h1 = (h1 * 5 + 0x52DCE729) & _M64
        k2 = (_rotl((k2 * _C2) & _M64, 33) * _C1) & _M64
        h2 ^= k2
        h2 = (_rotl(h2, 31) + h1) & _M64
        h2 = (h2 * 5 + 0x38495AB5) & _M64
    tail = data[16 * nblocks:]
    if len(tail) > 8:
        k2 = int.from_bytes(tail[8:], "little")
        h2 ^= (_rotl((k2 * _C2) & _M64, 33) * _C1) & _M64
    if len(tail) > 0:
        k1 = int.from_bytes(tail[:8], "little")
        h1 ^= (_rotl((k1 * _C1) & _M64, 31) * _C2) & _M64
    h1 ^= n
    h2 ^= n
    h1 = (h1 + h2) & _M64
    h2 = (h2 + h1) & _M64
    h1 = _fmix(h1)
    h2 = _fmix(h2)
    h1 = (h1 + h2) & _M64
    h2 = (h2 + h1) & _M64
    return h1, h2


# ---------------------------------------------------------------------------
# Vectorised: uint64 arrays wrap modulo 2**64, as the reference's arithmetic.

_U = np.uint64


def _vrotl(x, r):
    return (x << _U(r)) | (x >> _U(64 - r))


def _vfmix(k):
    k = k ^ (k >> _U(33))
    k = k * _U(0xFF51AFD7ED558CCD)
    k = k ^ (k >> _U(33))
    k = k * _U(0xC4CEB9FE1A85EC53)
    return k ^ (k >> _U(33))


def _words(mat, a, b):
    """Little-endian uint64 of bytes a..b (b - a <= 8) of every row."""
    part = mat[:, a:b]
    if b - a == 8:
        return np.ascontiguousarray(part).view("<u8").reshape(-1).astype(np.uint64, copy=False)
    out = np.zeros(len(mat), np.uint64)
    for j in range(b - a):
        out |= part[:, j].astype(np.uint64) << _U(8 * j)
    return out


def hash128_rows(mat, seed: int = 0):
    """(h_a, h_b) uint64 arrays: MurmurHash3_x64_128 of every row of `mat`, an
    (N, L) uint8 array of N byte strings of length L."""
    mat = np.ascontiguousarray(mat, np.uint8)
    n, length = mat.shape
    with np.errstate(over="ignore"):
        h1 = np.full(n, seed & 0xFFFFFFFF, np.uint64)
        h2 = h1.copy()
        c1, c2 = _U(_C1), _U(_C2)
        nblocks = length // 16
        for i in range(nblocks):
            k1 = _words(mat, 16 * i, 16 * i + 8)
            k2 = _words(mat, 16 * i + 8, 16 * i + 16)
            h1 ^= _vrotl(k1 * c1, 31) * c2
            h1 = (_vrotl(h1, 27) + h2) * _U(5) + _U(0x52DCE729)
            h2 ^= _vrotl(k2 * c2, 33) * c1
            h2 = (_vrotl(h2, 31) + h1) * _U(5) + _U(0x38495AB5)
        t = 16 * nblocks
        rest = length - t
        if rest > 8:
            h2 ^= _vrotl(_words(mat, t + 8, length) * c2, 33) * c1
        if rest > 0:
            h1 ^= _vrotl(_words(mat, t, t + min(8, rest)) * c1, 31) * c2
        h1 ^= _U(length)
        h2 ^= _U(length)
        h1 = h1 + h2
        h2 = h2 + h1
        h1 = _vfmix(h1)
        h2 = _vfmix(h2)
        h1 = h1 + h2
        h2 = h2 + h1
    return h1, h2


def hash128_values(values, seed: int = 0):
    """(h_a, h_b) of fixed-width numbers (their little-endian bytes, as stored)."""
    v = np.ascontiguousarray(values)
    v = v.astype(v.dtype.newbyteorder("<"), copy=False)
    mat = v.view(np.uint8).reshape(len(v), v.dtype.itemsize)
    return hash128_rows(mat, seed)


def hash128_strings(strings, seed: int = 0):
    """(h_a, h_b) of a sequence of byte strings, vectorised per length."""
    n = len(strings)
    ha = np.zeros(n, np.uint64)
    hb = np.zeros(n, np.uint64)
    if n == 0:
        return ha, hb
    lens = np.fromiter((len(s) for s in strings), np.int64, n)
    for length in np.unique(lens):
        idx = np.flatnonzero(lens == length)
        if length == 0:
            mat = np.zeros((len(idx), 0), np.uint8)
        else:
            buf = b"".join(strings[i] for i in idx)
            mat = np.frombuffer(buf, np.uint8).reshape(len(idx), int(length))
        a, b = hash128_rows(mat, seed)
        ha[idx] = a
        hb[idx] = b
    return ha, hb


def iter_positions(ha, hb, k: int, m_bits: int):
    """Yields, for i in 0..k, the int64 array of g_i = (h_a + i * h_b) mod
    m_bits of every hash, computed exactly (steps that stay below 2 m)."""
    m = np.uint64(m_bits)
    g = np.asarray(ha, np.uint64) % m
    b = np.asarray(hb, np.uint64) % m
    for i in range(k):
        yield g.astype(np.int64)
        if i + 1 < k:
            g = g + b
            np.subtract(g, m, out=g, where=g >= m)


def bit_positions(ha, hb, k: int, m_bits: int):
    """(len(ha), k) uint64 bit numbers g_i = (h_a + i * h_b) mod m_bits,
    computed exactly: (h_a mod m) + i * (h_b mod m) by steps that stay below 2 m."""
    m = np.uint64(m_bits)
    a = np.asarray(ha, np.uint64) % m
    b = np.asarray(hb, np.uint64) % m
    out = np.empty((len(a), k), np.uint64)
    g = a
    for i in range(k):
        out[:, i] = g
        # g + b < 2 m <= 2**64 for every m_bits HEP001 allows (m_bits < 2**63).
        g = g + b
        g = np.where(g >= m, g - m, g)
    return out


def has_all_bits(rows, positions):
    """Per row of `rows` ((C, m_bytes) uint8): whether every bit in `positions`
    (one value's k bit numbers) is set."""
    p = np.asarray(positions, np.uint64).reshape(-1)
    byte = (p >> np.uint64(3)).astype(np.int64)
    bit = (np.uint8(1) << (p & np.uint64(7)).astype(np.uint8)).astype(np.uint8)
    return ((rows[:, byte] & bit[None, :]) == bit[None, :]).all(axis=1)
