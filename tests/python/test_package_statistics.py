"""Statistics written by the h5vec Python package (issue 30): the HEP001
CHUNK_MINMAX datasets under `metadata/SEARCH_INDEXES` (layout of SPEC's
statistics section), read back with h5py and compared with a recomputation;
kept current by appends in the commit order; stale ones (a crash, tampered
tokens) recomputed; `statistics=False`; vectors without statistics stay so."""

import json

import h5py
import numpy as np
import pyarrow as pa
import pytest

import h5vec
from h5vec import _stats
from test_package_common import pkg_exe, pkg_file  # noqa: F401

CHUNK = 32
LABELS = {"A": 0, "B": 3, "C": 7}


def data(n, seed=0, start=0):
    rng = np.random.default_rng(seed)
    f32 = rng.normal(size=n).astype(np.float32)
    f32[rng.random(n) < 0.2] = np.nan
    f64 = rng.normal(size=n)
    f64[:CHUNK] = np.nan  # a chunk without a single ordered value (when start == 0)
    e = pa.array([["A", "B", "C"][k] for k in rng.integers(0, 3, n)]).dictionary_encode()
    rec = pa.StructArray.from_arrays([pa.array(rng.integers(-9, 9, n).astype(np.int16)),
                                      pa.array([f"x{k}" for k in range(n)], pa.large_string())],
                                     fields=[pa.field("k", pa.int16(), nullable=False),
                                             pa.field("name", pa.large_string(), nullable=False)])
    fields = [
        pa.field("i8", pa.int8(), nullable=False), pa.field("u64", pa.uint64(), nullable=False),
        pa.field("i64", pa.int64(), nullable=False),
        pa.field("f32", pa.float32(), nullable=False), pa.field("f64", pa.float64(), nullable=False),
        pa.field("flag", pa.bool_(), nullable=False),
        pa.field("e", e.type, nullable=False, metadata={"h5vec.codec": "HDF5Vectors.EnumCodec",
                                                       "h5vec.labels": json.dumps(LABELS),
                                                       "h5vec.encoded_type": "UInt8"}),
        pa.field("t", pa.timestamp("ns", "UTC"), nullable=False), pa.field("d", pa.date32(), nullable=False),
        pa.field("dur", pa.duration("ns"), nullable=False),
        pa.field("opt", pa.int64()), pa.field("s", pa.large_string(), nullable=False),
        pa.field("lst", pa.large_list(pa.int32()), nullable=False), pa.field("rec", rec.type, nullable=False),
    ]
    arrays = [
        pa.array(rng.integers(-128, 128, n).astype(np.int8)),
        pa.array(np.uint64(2**64 - 1) - rng.integers(0, 2**40, n).astype(np.uint64)),
        pa.array(np.arange(start, start + n, dtype=np.int64) * 3 - 2**62),
        pa.array(f32), pa.array(f64), pa.array(rng.random(n) < 0.5), e,
        pa.array(rng.integers(0, 10**18, n), pa.timestamp("ns", "UTC")),
        pa.array(rng.integers(-1000, 1000, n).astype(np.int32), pa.date32()),
        pa.array(rng.integers(-10**12, 10**12, n), pa.duration("ns")),
        pa.array(rng.integers(0, 9, n), pa.int64(), mask=rng.random(n) < 0.3),
        pa.array([f"s{k}" for k in range(n)], pa.large_string()),
        pa.array([list(range(k % 3)) for k in range(n)], pa.large_list(pa.int32())),
        rec,
    ]
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


STATS_SOURCES = sorted(f"data/{c}/values" for c in ("i8", "u64", "i64", "f32", "f64", "flag", "e", "t", "d", "dur"))
STATS_SOURCES = sorted(STATS_SOURCES + ["data/rec/k/values"])


def stored_values(ds, count):
    """The source's stored numbers (a Bool bitfield as its bytes)."""
    out = np.empty(count, np.dtype(ds.dtype.str) if ds.id.get_type().get_class() != h5py.h5t.BITFIELD else np.uint8)
    if count:
        ds.read_direct(out, np.s_[0:count]) if out.dtype != np.uint8 else \
            ds.id.read(h5py.h5s.create_simple((count,)), _sel(ds, count), out, mtype=ds.id.get_type())
    return out


def _sel(ds, count):
    sp = ds.id.get_space()
    sp.select_hyperslab((0,), (count,))
    return sp


def recompute(vals, chunk):
    """[(min, max, nan_count, fill_count, n)] as the format defines them."""
    out = []
    for a in range(0, len(vals), chunk):
        c = vals[a:a + chunk]
        nan = np.isnan(c) if c.dtype.kind == "f" else np.zeros(len(c), bool)
        ok = c[~nan]
        lo, hi = (ok.min().item(), ok.max().item()) if len(ok) else (0, 0)
        out.append((lo, hi, int(nan.sum()), 0, len(c)))
    return out


def check_statistics(vg, generation):
    """Every statistics dataset of vector group `vg` is valid, laid out as the format says and equal to
    a recomputation from the data."""
    count = int(vg["metadata/count"][()])
    si = vg["metadata/SEARCH_INDEXES"]
    gid = si.attrs.get_id("GENERATION")
    assert gid.get_type().get_class() == h5py.h5t.INTEGER and gid.get_type().get_size() == 8
    assert gid.get_type().get_sign() == h5py.h5t.SGN_NONE and gid.shape == ()
    assert si.attrs["GENERATION"] == generation
    sources = []
    for name in si:
        ds = si[name]
        source = ds.attrs["SOURCE"]
        assert isinstance(source, str)
        sources.append(source)
        assert name == source[len("data/"):].replace("/", ".") + "__chunk_minmax"
        kt = ds.attrs.get_id("KIND").get_type()
        assert (kt.get_class(), kt.get_size(), kt.get_strpad(), kt.get_cset()) == \
            (h5py.h5t.STRING, 13, h5py.h5t.STR_NULLPAD, h5py.h5t.CSET_ASCII)  # as h5col and Rust write KIND
        assert ds.attrs["KIND"] == b"CHUNK_MINMAX"
        st = ds.attrs.get_id("SOURCE").get_type()
        assert st.is_variable_str() and st.get_cset() == h5py.h5t.CSET_UTF8
        for tok, want in (("SOURCE_GENERATION", generation), ("SOURCE_NROWS", count)):
            t = ds.attrs.get_id(tok).get_type()
            assert (t.get_class(), t.get_size(), t.get_sign()) == (h5py.h5t.INTEGER, 8, h5py.h5t.SGN_NONE)
            assert ds.attrs[tok] == want
        src = vg[source]
        ct = ds.id.get_type()
        assert [ct.get_member_name(i) for i in range(5)] == [b"min", b"max", b"nan_count", b"fill_count", b"n"]
        assert ct.get_member_type(0) == src.id.get_type() and ct.get_member_type(1) == src.id.get_type()
        for i in (2, 3, 4):
            assert ct.get_member_type(i) == h5py.h5t.STD_U64LE
        chunk = src.chunks[0]
        need = -(-count // chunk)
        assert ds.shape[0] >= need
        got = [tuple(x.item() if hasattr(x, "item") else x for x in e) for e in ds[:need]]
        want = recompute(stored_values(src, count), chunk)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g[2:] == w[2:]
            if g[2] + g[3] < g[4]:
                assert g[:2] == w[:2]
            else:
                assert g[:2] == (0, 0)  # placeholders
    return sorted(sources)


def test_save_writes_statistics(tmp_path):
    p = tmp_path / "s.h5"
    h5vec.save_vector(p, "v", data(200), chunk_length=CHUNK)
    with h5py.File(p, "r") as f:
        assert check_statistics(f["v"], 1) == STATS_SOURCES  # a new vector's first commit: GENERATION 1
        assert set(f["v"].keys()) == {"data", "metadata"}
        e = f["v/metadata/SEARCH_INDEXES/f64.values__chunk_minmax"][0]
        assert (e["nan_count"], e["n"]) == (CHUNK, CHUNK)  # the all-NaN chunk
    with h5vec.open_vector(p, "v") as v:
        assert v.validate() == 200
        for c in ("i8", "rec.k", "flag", "e", "t"):
            assert v._chunk_stats(c) is not None, c
        for c in ("opt", "s", "lst", "rec.name"):
            assert v._chunk_stats(c) is None, c


def test_statistics_off(tmp_path):
    p = tmp_path / "o.h5"
    h5vec.save_vector(p, "v", data(100), chunk_length=CHUNK, statistics=False)
    h5vec.append_vector(p, "v", data(50, seed=1, start=100))
    with h5py.File(p, "r") as f:
        assert "SEARCH_INDEXES" not in f["v/metadata"]
    with h5vec.open_vector(p, "v") as v:
        assert len(v) == 150
        assert v.read(columns=["i64"], filters=[("i64", ">=", 140 * 3 - 2**62)])["i64"].tolist() == \
            [k * 3 - 2**62 for k in range(140, 150)]


def test_appends_keep_statistics_current(tmp_path):
    p = tmp_path / "a.h5"
    h5vec.save_vector(p, "v", data(70), chunk_length=CHUNK)
    total = 70
    for gen, n in enumerate([1, 40, 2, 130], start=2):
        h5vec.append_vector(p, "v", data(n, seed=gen, start=total))
        total += n
        with h5py.File(p, "r") as f:
            assert int(f["v/metadata/count"][()]) == total
            assert check_statistics(f["v"], gen) == STATS_SOURCES
    with h5vec.open_vector(p, "v") as v:
        want = [k * 3 - 2**62 for k in range(200, 215)]
        got = v.read(columns=["i64"], filters=[("i64", ">=", want[0]), ("i64", "<=", want[-1])])["i64"]
        assert got.tolist() == want


def tamper(p, what):
    with h5py.File(p, "r+") as f:
        si = f["v/metadata/SEARCH_INDEXES"]
        ds = si["i64.values__chunk_minmax"]
        if what == "nrows":
            ds.attrs.modify("SOURCE_NROWS", np.uint64(3))
        elif what == "generation":
            si.attrs.modify("GENERATION", np.uint64(41))
        elif what == "lie":
            e = ds[...]
            e["min"] = 0
            e["max"] = 1
            ds[...] = e
        elif what == "fixed":
            # A non-growable index (as another writer may make one): the append recreates it.
            e = ds[...]
            attrs = {k: ds.attrs[k] for k in ds.attrs}
            del si["i64.values__chunk_minmax"]
            new = si.create_dataset("i64.values__chunk_minmax", data=e)
            for k, v in attrs.items():
                new.attrs[k] = v
            new.attrs.modify("SOURCE_GENERATION", np.uint64(attrs["SOURCE_GENERATION"]))
            new.attrs.modify("SOURCE_NROWS", np.uint64(attrs["SOURCE_NROWS"]))


@pytest.mark.parametrize("what", ["nrows", "generation", "fixed"])
def test_append_recomputes_stale_statistics(tmp_path, what):
    p = tmp_path / "t.h5"
    h5vec.save_vector(p, "v", data(100), chunk_length=CHUNK)
    tamper(p, "lie")
    tamper(p, what)
    with h5vec.open_vector(p, "v") as v:
        if what == "fixed":
            assert v._chunk_stats("i64") is not None
        else:
            assert v._chunk_stats("i64") is None
    h5vec.append_vector(p, "v", data(45, seed=3, start=100))
    with h5py.File(p, "r") as f:
        gen = int(f["v/metadata/SEARCH_INDEXES"].attrs["GENERATION"])
        assert check_statistics(f["v"], gen) == STATS_SOURCES
        assert f["v/metadata/SEARCH_INDEXES/i64.values__chunk_minmax"].maxshape == (None,)


@pytest.mark.parametrize("step", ["content", "commit"])
def test_crash_mid_append_leaves_stale_not_wrong(tmp_path, monkeypatch, step):
    p = tmp_path / "c.h5"
    h5vec.save_vector(p, "v", data(100), chunk_length=CHUNK)

    def boom(self, *a):
        raise RuntimeError("killed")
    monkeypatch.setattr(_stats.Append, step, boom)
    with pytest.raises(RuntimeError, match="killed"):
        h5vec.append_vector(p, "v", data(60, seed=4, start=100))
    monkeypatch.undo()
    with h5py.File(p, "r") as f:
        count = int(f["v/metadata/count"][()])
        ds = f["v/metadata/SEARCH_INDEXES/i64.values__chunk_minmax"]
        assert count == (100 if step == "content" else 160)
        assert int(ds.attrs["SOURCE_GENERATION"]) == 2 and int(ds.attrs["SOURCE_NROWS"]) == 160
        assert int(f["v/metadata/SEARCH_INDEXES"].attrs["GENERATION"]) == 1
    with h5vec.open_vector(p, "v") as v:
        assert v._chunk_stats("i64") is None  # stale: never believed
        got = v.read(columns=["i64"], filters=[("i64", ">", 90 * 3 - 2**62)])["i64"].tolist()
        assert got == [k * 3 - 2**62 for k in range(91, count)]
    h5vec.append_vector(p, "v", data(10, seed=5, start=count))
    with h5py.File(p, "r") as f:
        assert check_statistics(f["v"], 2) == STATS_SOURCES


def test_checksummed_statistics(tmp_path):
    """checksum=True: the statistics get Fletcher32 like every dataset of the save (SPEC 6.4); a damaged
    statistics chunk under valid tokens is an error naming it, never a wrong row; an append rebuilds it."""
    p = tmp_path / "k.h5"
    h5vec.save_vector(p, "v", data(100), chunk_length=CHUNK, checksum=True)
    with h5py.File(p, "r") as f:
        si = f["v/metadata/SEARCH_INDEXES"]
        assert all(si[n].fletcher32 for n in si)
        check_statistics(f["v"], 1)
        ds = si["i64.values__chunk_minmax"]
        off = ds.id.get_offset()
        assert off is None  # chunked: find the chunk's bytes
        info = ds.id.get_chunk_info(0)
    with open(p, "r+b") as fh:
        fh.seek(info.byte_offset + 5)
        b = fh.read(1)
        fh.seek(info.byte_offset + 5)
        fh.write(bytes([b[0] ^ 0xFF]))
    with h5vec.open_vector(p, "v") as v:
        assert v._chunk_stats("i8") is not None
        # Valid tokens over a damaged index: an error naming it (SPEC 14.1), never rows from it.
        with pytest.raises(h5vec.FormatError, match="i64.values__chunk_minmax.*cannot read it"):
            v.read(columns=["i64"], filters=[("i64", "<", 5 * 3 - 2**62)])
    h5vec.append_vector(p, "v", data(10, seed=8, start=100))  # rebuilds it
    with h5py.File(p, "r") as f:
        assert f["v/metadata/SEARCH_INDEXES/i64.values__chunk_minmax"].fletcher32
        check_statistics(f["v"], 2)
    with h5vec.open_vector(p, "v") as v:
        assert v.read(columns=["i64"], filters=[("i64", "<", 5 * 3 - 2**62)])["i64"].tolist() == \
            [k * 3 - 2**62 for k in range(5)]


def test_append_makes_other_indexes_stale(tmp_path):
    p = tmp_path / "o.h5"
    h5vec.save_vector(p, "v", data(64), chunk_length=CHUNK)
    with h5py.File(p, "r+") as f:
        si = f["v/metadata/SEARCH_INDEXES"]
        other = si.create_dataset("i64_sorted", data=np.arange(64, dtype=np.uint64))
        _stats._write_kind(other, "SORTED_ROWS")
        _stats._write_source(other, "data/i64/values")
        _stats._write_u64_attr(other, "SOURCE_GENERATION", 1)
        _stats._write_u64_attr(other, "SOURCE_NROWS", 64)
    h5vec.append_vector(p, "v", data(5, seed=6, start=64))
    with h5py.File(p, "r") as f:
        si = f["v/metadata/SEARCH_INDEXES"]
        assert int(si.attrs["GENERATION"]) == 2
        assert int(si["i64_sorted"].attrs["SOURCE_GENERATION"]) == 1  # untouched: now stale
        assert si["i64_sorted"][:].tolist() == list(range(64))


def test_invalid_generation_is_repaired_above_every_token(tmp_path):
    p = tmp_path / "g.h5"
    h5vec.save_vector(p, "v", data(40), chunk_length=CHUNK)
    with h5py.File(p, "r+") as f:
        si = f["v/metadata/SEARCH_INDEXES"]
        si.attrs["GENERATION"] = np.int64(1)  # not a uint64: no index is valid
        si["i8.values__chunk_minmax"].attrs.modify("SOURCE_GENERATION", np.uint64(6))
    with h5vec.open_vector(p, "v") as v:
        assert v._chunk_stats("i8") is None and v._chunk_stats("i64") is None
    h5vec.append_vector(p, "v", data(3, seed=2, start=40))
    with h5py.File(p, "r") as f:
        assert check_statistics(f["v"], 8) == STATS_SOURCES  # max SOURCE_GENERATION 6, + 1, then the commit


def test_valid_tokens_over_a_malformed_index_are_an_error(tmp_path):
    p = tmp_path / "m.h5"
    h5vec.save_vector(p, "v", data(100), chunk_length=CHUNK)
    with h5py.File(p, "r+") as f:
        ds = f["v/metadata/SEARCH_INDEXES/i64.values__chunk_minmax"]
        e = ds[...]
        e["n"][1] = 5
        ds[...] = e
        ds2 = f["v/metadata/SEARCH_INDEXES/i8.values__chunk_minmax"]
        ds2.resize((2,))
    with h5vec.open_vector(p, "v") as v:
        with pytest.raises(h5vec.FormatError, match=r"/v/metadata/SEARCH_INDEXES/i64.values__chunk_minmax.*"
                                                    r"entry 1: n = 5, nan_count = 0, fill_count = 0 for a chunk of 32"):
            v.read(filters=[("i64", ">", 0)])
        with pytest.raises(h5vec.FormatError, match="must have an entry for each of the 4 chunks, found 2"):
            v.read(filters=[("i8", ">", 0)])
        assert len(v.read(filters=[("u64", ">", 0)])["u64"]) == 100
    h5vec.append_vector(p, "v", data(1, seed=2, start=100))  # an append rebuilds both
    with h5py.File(p, "r") as f:
        assert check_statistics(f["v"], 2) == STATS_SOURCES


def test_root_scalar_and_contiguous_rules(tmp_path):
    p = tmp_path / "r.h5"
    h5vec.save_vector(p, "s", np.array([3.5, np.nan, -1.0, 8.0, 2.0]), chunk_length=2)
    with h5py.File(p, "r") as f:
        ds = f["s/metadata/SEARCH_INDEXES/values__chunk_minmax"]
        assert ds.attrs["SOURCE"] == "data/values"
        assert [tuple(e.tolist()) for e in ds[:3]] == [(3.5, 3.5, 1, 0, 2), (-1.0, 8.0, 0, 0, 2), (2.0, 2.0, 0, 0, 1)]
    # A contiguous source has one entry for all rows (as another writer may lay it out).
    with h5py.File(p, "r+") as f:
        g = f.create_group("c")
        g.create_dataset("v", data=np.arange(10, dtype=np.int64))
        e = _stats.compute(g["v"], 0, 10)
        assert [tuple(x.tolist()) for x in e] == [(0, 9, 0, 0, 10)]


def test_rust_written_statistics(pkg_file):  # noqa: F811
    """Vectors written by Rust: when this build of Rust writes statistics, they cover the leaves the
    Python writer would (same names), and those whose tokens are valid equal a recomputation; without
    them, none are found."""
    with h5py.File(pkg_file, "r") as f:
        names = h5vec.list_vectors(f)
        assert "flat" in names
        checked = 0
        for name in names:
            vg = f[name]
            with h5vec.open_vector(f, name) as v:
                leaves = [_stats.source_of(pth) for pth, _ in _stats.leaves(v.node)]
                if "SEARCH_INDEXES" not in vg["metadata"]:
                    assert all(_stats.find(vg, src, len(v)) is None for src in leaves)
                    continue
                si = vg["metadata/SEARCH_INDEXES"]
                assert sorted(si) == sorted(_stats.default_name(src) for src in leaves), name
                gen = int(si.attrs["GENERATION"])
                for src in leaves:
                    ds = si[_stats.default_name(src)]
                    st = _stats.find(vg, src, len(v))
                    if int(ds.attrs["SOURCE_GENERATION"]) != gen or int(ds.attrs["SOURCE_NROWS"]) != len(v):
                        assert st is None, (name, src)  # e.g. "appended": its count set back by hand
                        continue
                    assert st is not None, (name, src)
                    want = recompute(stored_values(vg[src], len(v)), st.chunk)
                    got = [tuple(x.item() for x in e) for e in st.entries]
                    assert len(got) == len(want)
                    for g_, w in zip(got, want):
                        assert g_[2:] == w[2:] and (g_[2] + g_[3] == g_[4] or g_[:2] == w[:2]), (name, src)
                    checked += 1
        assert checked == 0 or checked >= 10
