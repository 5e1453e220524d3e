"""Fast read paths. The compressed-strings layout's reader (SPEC 4.1:
pointers {offset, length} into a heap of bytes): the fast path for slices
that lie back to back gives exactly what the general path gives, and leaves
every other case (gaps, overlaps, NULs, pointers outside the heap or
wrapping around) to it; the UTF-8 check's ASCII shortcut refuses what the
full check refuses. Datasets without filters read without a chunk cache,
into arrays of pyarrow's memory pool."""

import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))

import h5vec  # noqa: E402
from h5vec import _columns as C  # noqa: E402
from h5vec import _read  # noqa: E402
from h5vec._errors import FormatError  # noqa: E402


class Heap:
    """A stand-in for the heap dataset: what read_bytes_raw reads of it."""

    def __init__(self, data):
        self.data = np.frombuffer(bytes(data), np.uint8)
        self.name = "/v/data/s/heap"
        self.reads = []

    @property
    def shape(self):
        return (len(self.data),)


@pytest.fixture
def raw_heap(monkeypatch):
    def read(ds, start, stop, path):
        ds.reads.append((start, stop))
        return ds.data[start:stop].copy()
    monkeypatch.setattr(_read._h5, "read_bytes_raw", read)


def general(off, ln, heap, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(_read, "_gather_back_to_back", lambda *a: None)
        return _read.gather_vls(off, ln, heap, len(heap.data), "$.s", "/v/data/s/pointers", 10)


def both(off, ln, data, monkeypatch):
    off, ln = np.array(off, np.uint64), np.array(ln, np.uint64)
    heap = Heap(data)
    try:
        want = general(off, ln, heap, monkeypatch)
    except FormatError as e:
        with pytest.raises(FormatError) as got:
            _read.gather_vls(off, ln, heap, len(heap.data), "$.s", "/v/data/s/pointers", 10)
        assert (got.value.location, got.value.message) == (e.location, e.message)
        return None, None
    got = _read.gather_vls(off, ln, heap, len(heap.data), "$.s", "/v/data/s/pointers", 10)
    assert len(got) == len(want) == 5
    for g, w in zip(got, want):
        assert (g is None) == (w is None)
        if g is not None:
            assert g.tolist() == w.tolist()
    return got, heap


def test_back_to_back_equals_general(raw_heap, monkeypatch):
    data = b"xxalphabetagammadelta--"
    # rows: alpha, beta, gamma, "", delta from offset 2 on.
    got, heap = both([2, 7, 11, 16, 16], [5, 4, 5, 0, 5], data, monkeypatch)
    offsets, body = got[0], got[1]
    assert offsets.tolist() == [0, 5, 9, 14, 14, 19]
    assert body.tobytes() == b"alphabetagammadelta"
    assert heap.reads[-1] == (2, 21)  # one read of exactly the rows' bytes
    assert [bytes(body[a:b]).decode() for a, b in zip(offsets[:-1], offsets[1:])] == \
        ["alpha", "beta", "gamma", "", "delta"]
    # ... through the fast path; a gap or a NUL leaves it to the general one.
    fast = _read._gather_back_to_back
    u = np.uint64
    assert fast(np.array([2, 7], u), np.array([5, 4], u), heap, len(heap.data), "$.s") is not None
    assert fast(np.array([2, 8], u), np.array([5, 4], u), heap, len(heap.data), "$.s") is None
    assert fast(np.array([0, 3], u), np.array([3, 3], u), Heap(b"ab\0def"), 6, "$.s") is None


@pytest.mark.parametrize("case", [
    ([0, 5, 5], [5, 0, 3], b"abcdefgh"),            # back to back from 0
    ([0, 0, 0], [0, 0, 0], b""),                     # all empty, empty heap
    ([3, 3], [0, 0], b"abcdef"),                     # all empty inside the heap
    ([0, 6, 9], [3, 3, 1], b"abcdefghij"),           # a gap
    ([4, 0, 2], [2, 2, 2], b"abcdefgh"),             # out of order
    ([0, 2, 4], [4, 4, 2], b"abcdefgh"),             # overlapping
    ([0, 3, 6], [3, 3, 3], b"ab\0def\0hi"),          # NULs cut slices
    ([0, 3, 6], [3, 3, 3], b"abc\0efghi"),           # a NUL at a row's start
    ([0, 3, 6], [3, 3, 4], b"abcdefghi"),            # the last one past the end
    ([0, 3, 2**64 - 1], [3, 3, 2], b"abcdefghi"),    # wrapping around 2^64
    ([0, 2**63 + 3, 3], [2**63 + 3, 2**63 - 3, 2], b"abcdefghi"),  # back to back only modulo 2^64
    ([0, 3, 10], [3, 7, 0], b"abcdefghij"),          # an empty row at the very end
    ([9], [1], b"abcdefghij"),
])
def test_every_case_equals_general(raw_heap, monkeypatch, case):
    both(*case, monkeypatch)


def test_random_pointers_equal_general(raw_heap, monkeypatch):
    rng = np.random.default_rng(7)
    for trial in range(300):
        n = int(rng.integers(1, 30))
        data = rng.integers(0, 4, 60).astype(np.uint8) + (ord("a") if trial % 3 else 0)
        ln = rng.integers(0, 5, n)
        if trial % 2:
            off = np.concatenate([[rng.integers(0, 10)], rng.integers(0, 10) + np.cumsum(ln)[:-1]])
        else:
            off = rng.integers(0, 70, n)
        both(off, ln, data.tobytes(), monkeypatch)


def test_past_the_heap_named_as_before(raw_heap, monkeypatch):
    with pytest.raises(FormatError, match=r"slice 6\+4 is past the end of the heap \(9 bytes\)") as e:
        _read.gather_vls(np.array([0, 3, 6], np.uint64), np.array([3, 3, 4], np.uint64), Heap(b"abcdefghi"), 9,
                         "$.s", "/v/data/s/pointers", 10)
    assert e.value.location == "/v/data/s/pointers[12]"


@pytest.mark.parametrize("data,offsets,ok", [
    (b"plain ascii", [0, 5, 11], True),
    (b"caf\xc3\xa9 na\xc3\xafve", [0, 5, 12], True),
    (b"caf\xc3\xa9", [0, 4, 5], False),     # a row starts inside a character
    (b"ab\xffcd", [0, 2, 5], False),        # not UTF-8 at all
    (b"\x80", [0, 1], False),
    (b"", [0, 0, 0], True),
])
def test_check_utf8(data, offsets, ok):
    arr = np.frombuffer(data, np.uint8)
    off = np.array(offsets, np.int64)
    if ok:
        C.check_utf8(off, arr, "$.s", "/v/data/s/pointers", 0)
    else:
        with pytest.raises(FormatError, match="not valid UTF-8"):
            C.check_utf8(off, arr, "$.s", "/v/data/s/pointers", 0)


def test_vectors_read_through_it(tmp_path):
    """Rows of the heap layout, every range, as written."""
    values = ["", "a", "ä", "日本語", "x" * 70, "emoji \U0001F600", "tab\there", "last"] * 5
    path = tmp_path / "s.h5"
    h5vec.save_vector(path, "v", pa.table({"s": values}, schema=pa.schema([pa.field("s", pa.string(),
                                                                                     nullable=False)])),
                      vls_strings=True)
    with h5vec.open_vector(path, "v") as v:
        assert v.schema["children"][0]["kind"] == "vls_string"
        for a in range(0, len(values), 3):
            for b in range(a, len(values) + 1, 4):
                assert v.read(rows=slice(a, b))["s"].tolist() == values[a:b]
        assert v.to_pandas(rows=slice(3, 9))["s"].tolist() == values[3:9]


def _rows_and_error(path, columns):
    try:
        with h5vec.open_vector(path, "v") as v:
            return [v.read(columns=columns, rows=slice(a, b))[columns[0]].tolist()
                    for a, b in [(0, 40), (0, 7), (5, 17), (13, 40), (39, 40), (4, 4)]], None
    except FormatError as e:
        return None, (e.path, e.location, e.message)


def _strings_file(path, nullable=False):
    values = ["", "a", "ä", "日本語", "x" * 70, "emoji \U0001F600", None if nullable else "n", "last"] * 5
    h5vec.save_vector(path, "v", pa.table({"s": values}, schema=pa.schema([pa.field("s", pa.string(),
                                                                                     nullable=nullable)])),
                      vls_strings=True)
    return values


@pytest.mark.parametrize("damage", [None, "gap", "swap", "past", "wrap", "nul", "boundary"])
@pytest.mark.parametrize("nullable", [False, True])
def test_blocks_of_pointers_equal_general(tmp_path, monkeypatch, damage, nullable):
    """Read a few pointers at a time (blocks of 3 rows), every range equals
    the general path's answer, or its error, for pointers laid out as written
    and damaged in ways that leave the fast path."""
    import h5py
    path = tmp_path / "s.h5"
    values = _strings_file(path, nullable)
    with h5py.File(path, "r+") as f:
        p = f["v/data/s/pointers"]
        rows = p[()]
        if damage == "gap":
            rows["offset"][9:] += 1
        elif damage == "swap":
            rows[[10, 11]] = rows[[11, 10]]
        elif damage == "past":
            rows["length"][-1] += 1
        elif damage == "wrap":
            rows["offset"][20] = 2**64 - 1
        elif damage == "nul":
            f["v/data/s/heap"][int(rows["offset"][9])] = 0
        elif damage == "boundary":  # back to back within blocks of 3, not across them
            rows["offset"][6:] += 1
        p[()] = rows
    monkeypatch.setattr(_read, "POINTER_BLOCK", 3)
    fast, real = [], _read._read_back_to_back
    monkeypatch.setattr(_read, "_read_back_to_back", lambda *a: fast.append(real(*a) is not None) or real(*a))
    got = _rows_and_error(path, ["s"])
    monkeypatch.setattr(_read, "_read_back_to_back", real)
    # As written: every range through the fast path (nulls point to one placeholder
    # after the rows: ranges holding one are not back to back); damaged: not rows 0..40.
    assert fast and fast[0] == (damage is None and not nullable)
    if damage is None and not nullable:
        assert all(fast)
    with monkeypatch.context() as m:
        m.setattr(_read, "_read_back_to_back", lambda *a: None)
        want = _rows_and_error(path, ["s"])
    assert got == want
    if damage is None:
        assert got[0][0] == values


def test_unfiltered_chunked_datasets_are_read_without_a_chunk_cache(tmp_path):
    """Datasets chunked without filters are opened without HDF5's chunk cache
    (chunks read straight into the result); filtered ones keep it; values
    read are the same either way, in large reads (arrays from pyarrow's pool)
    and small ones."""
    import h5py
    from h5vec import _h5
    path = tmp_path / "c.h5"
    n = 300_000
    vals = np.arange(n, dtype=np.float64) * 0.5
    h5vec.save_vector(path, "v", {"plain": vals})
    h5vec.save_vector(tmp_path / "z.h5", "v", {"plain": vals}, compression="gzip")
    for p, cached in [(path, False), (tmp_path / "z.h5", True)]:
        with h5vec.open_vector(p, "v") as v:
            ds = v._reader.readers[0].ds
            assert (ds.id.get_access_plist().get_chunk_cache()[1] > 0) == cached
            assert (ds.id.get_create_plist().get_nfilters() > 0) == cached
            got = v.read(columns="plain")["plain"]
            assert got.tolist() == vals.tolist()
            assert v.read(columns="plain", rows=slice(65_530, 65_541))["plain"].tolist() == vals[65_530:65_541].tolist()
            assert [v[i]["plain"] for i in (0, 65_535, 65_536, n - 1)] == [vals[i] for i in (0, 65_535, 65_536, n - 1)]
    big = _h5.empty((3, 1 << 18), np.int64)
    assert big.shape == (3, 1 << 18) and big.dtype == np.int64 and big.flags.writeable
    assert type(big.base.base).__module__.startswith("pyarrow")  # reshaped view of a view of a pool buffer
    small = _h5.empty(10, np.uint8)
    assert small.shape == (10,) and small.base is None
