"""`filters=` of the h5vec Python package (issue 30): every operator and AND/OR
combinations against a brute-force filter of the full read (exact values,
dtypes, row order), over random data with NaN, nulls, sorted and unsorted
columns, int64 near 2**63, uint64, bools, enums, strings, instants and dates;
after appends; with stale or lying statistics; pruning counted; errors;
Dask; Rust-written vectors."""

import datetime as dt
import json
import random

import h5py
import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import h5vec
import h5vec.dask as hdask
from h5vec import _stats
from test_package_common import pkg_exe, pkg_file  # noqa: F401

N = 1200
CHUNK = 64
LABELS = {"Low": 0, "Mid": 1, "High": 5, "Off": 9}
T0 = np.datetime64("2024-01-01T00:00:00", "ns")


def table(n=N, seed=0, start=0):
    rng = np.random.default_rng(seed)
    i = np.arange(start, start + n)
    f = rng.normal(size=n)
    f[rng.random(n) < 0.1] = np.nan
    big = np.int64(2**63 - 1) - rng.integers(0, 3000, n)
    big[::5] = np.int64(-(2**63)) + rng.integers(0, 3000, n)[::5]
    u = rng.integers(0, 2**64 - 1, n, dtype=np.uint64)
    u[::3] = np.uint64(2**64 - 1) - rng.integers(0, 50, n)[::3].astype(np.uint64)
    oi = pa.array(rng.integers(-50, 50, n), pa.int64(), mask=rng.random(n) < 0.2)
    ofv = rng.normal(size=n)
    ofv[rng.random(n) < 0.1] = np.nan
    of = pa.array(ofv, pa.float64(), mask=rng.random(n) < 0.2)
    codes = rng.choice([0, 1, 5, 9], n)
    names = {v: k for k, v in LABELS.items()}
    e = pa.array([names[c] for c in codes]).dictionary_encode()
    s = pa.array([f"s{k:02d}" for k in rng.integers(0, 30, n)], pa.large_string())
    os_ = pa.array([None if k % 4 == 0 else f"o{k}" for k in rng.integers(0, 20, n)], pa.large_string())
    ts = T0 + (i * 1_000_000_007).astype("m8[ns]")  # sorted, not on whole seconds
    tz = pa.array((T0 + rng.integers(0, 10**15, n).astype("m8[ns]")).astype("i8"), pa.timestamp("ns", "UTC"))
    d = pa.array((np.datetime64("2020-01-01") + rng.integers(0, 400, n).astype("m8[D]")), pa.date32())
    rec = pa.StructArray.from_arrays([pa.array(rng.integers(-5, 5, n).astype(np.int32)),
                                      pa.array(rng.random(n) < 0.5)], ["x", "flag"])
    fields = [
        pa.field("seq", pa.int64(), nullable=False), pa.field("big", pa.int64(), nullable=False),
        pa.field("u", pa.uint64(), nullable=False), pa.field("f", pa.float64(), nullable=False),
        pa.field("f32", pa.float32(), nullable=False), pa.field("oi", pa.int64()), pa.field("of", pa.float64()),
        pa.field("b", pa.bool_(), nullable=False),
        pa.field("e", e.type, nullable=False, metadata={"h5vec.codec": "HDF5Vectors.EnumCodec",
                                                       "h5vec.labels": json.dumps(LABELS),
                                                       "h5vec.encoded_type": "UInt8"}),
        pa.field("s", pa.large_string(), nullable=False), pa.field("os", pa.large_string()),
        pa.field("ts", pa.timestamp("ns"), nullable=False), pa.field("tz", pa.timestamp("ns", "UTC"), nullable=False),
        pa.field("d", pa.date32(), nullable=False), pa.field("rec", rec.type, nullable=False),
    ]
    arrays = [pa.array(i.astype(np.int64)), pa.array(big), pa.array(u), pa.array(f),
              pa.array(rng.normal(size=n).astype(np.float32)), oi, of, pa.array(rng.random(n) < 0.3), e, s, os_,
              pa.array(ts), tz, d, rec]
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("filters")
    p = d / "f.h5"
    h5vec.save_vector(p, "v", table(), chunk_length=CHUNK)
    h5vec.save_vector(p, "nostats", table(), chunk_length=CHUNK, statistics=False)
    return p


# ---------------------------------------------------------------------------
# Brute force: Python values of the full read, compared row by row


def py_values(v):
    """{column: list of Python values (None for nulls)} of the whole vector."""
    df = v.to_pandas()
    out = {}
    for c in v.columns:
        s = df[c]
        if c in ("ts", "tz"):
            out[c] = [None if x is pd.NaT else x for x in s.tolist()]
        elif c == "d":
            out[c] = [x.date() for x in s.tolist()]
        else:
            arr = v.read(columns=[c])[c]
            out[c] = arr.tolist()
    return out


def match(x, op, val):
    if x is None:
        return False
    if op in ("=", "=="):
        return x == val
    if op == "!=":
        return not (x == val)
    if op == "<":
        return x < val
    if op == "<=":
        return x <= val
    if op == ">":
        return x > val
    if op == ">=":
        return x >= val
    if op == "in":
        return any(x == w for w in val)
    if op == "not in":
        return not any(x == w for w in val)
    raise AssertionError(op)


def brute_mask(values, filters):
    terms = [filters] if isinstance(filters[0], tuple) else filters
    n = len(next(iter(values.values())))
    out = np.zeros(n, bool)
    for term in terms:
        acc = np.ones(n, bool)
        for c, op, val in term:
            acc &= np.array([match(x, op, val) for x in values[c]], dtype=bool)
        out |= acc
    return out


def check(v, full_df, values, filters, columns=None):
    mask = brute_mask(values, filters)
    got = v.to_pandas(columns=columns, filters=filters)
    want = (full_df if columns is None else full_df[columns])[mask]
    pd.testing.assert_frame_equal(got, want)
    assert got.index.dtype == np.int64 and got.index.tolist() == np.flatnonzero(mask).tolist()
    return int(mask.sum())


PREDICATES = [
    ("seq", [100, 600.5, 2**70, float("-inf")]),
    ("big", [2**63 - 1, -(2**63) + 1000, 2**63 + 5, 9.2e18]),
    ("u", [2**64 - 25, -1, 2**53 + 1]),
    ("f", [0.5, -1.25, float("inf"), 2**60 + 1]),
    ("f32", [0.1, -0.5]),
    ("oi", [0, -50]),
    ("of", [0.3]),
    ("b", [True, False]),
    ("s", ["s05", "s1", "zzz"]),
    ("os", ["o5", "a"]),
    ("rec.x", [0, 4]),
    ("rec.flag", [True]),
    ("ts", [pd.Timestamp(T0 + np.timedelta64(600 * 1_000_000_007, "ns")),
            dt.datetime(2024, 1, 1, 0, 20), np.datetime64("2024-01-01T00:10:00.000000001")]),
    ("tz", [pd.Timestamp("2024-01-06", tz="UTC"), dt.datetime(2024, 1, 3, 12, tzinfo=dt.timezone.utc),
            pd.Timestamp("2024-01-06 05:00", tz="Asia/Tokyo")]),
    ("d", [dt.date(2020, 6, 1), dt.date(2020, 1, 1), dt.date(2021, 2, 4)]),
]
OPS = ["=", "==", "!=", "<", "<=", ">", ">="]
OPS1 = ["==", "!=", "<", "<=", ">", ">="]


def test_every_op_against_brute_force(files):
    with h5vec.open_vector(files, "v") as v:
        df = v.to_pandas()
        df.attrs.clear()  # (pandas deep-copies attrs on every selection)
        values = py_values(v)
        hits = 0
        for col, vals in PREDICATES:
            data_vals = [x for x in values[col] if x is not None and x == x]
            for val in vals + [data_vals[7]]:
                for op in OPS1 if val is not vals[0] else OPS:
                    hits += check(v, df, values, [(col, op, val)], [col]) > 0
            present = data_vals[:3] + [vals[0]]
            check(v, df, values, [(col, "in", present)])
            check(v, df, values, [(col, "not in", present)], [col])
            check(v, df, values, [(col, "in", [])], [col])
            check(v, df, values, [(col, "not in", [])], [col])
        assert hits > 100  # the suite is not vacuous


def test_enum_labels(files):
    with h5vec.open_vector(files, "v") as v:
        df = v.to_pandas()
        values = py_values(v)
        for val in ["Low", "High", "Nope"]:
            for op in ("=", "!="):
                check(v, df, values, [("e", op, val)])
        assert check(v, df, values, [("e", "in", ["Mid", "Off", "Nope"])]) > 0
        assert check(v, df, values, [("e", "not in", ["Mid", "Off"])]) > 0
        # Orderings compare the stored values (Low 0 < Mid 1 < High 5 < Off 9), as Rust's derived order.
        codes = {k: LABELS[k] for k in LABELS}
        for op in ("<", "<=", ">", ">="):
            for lab in ("Mid", "High"):
                want = [i for i, x in enumerate(values["e"]) if match(codes[x], op, codes[lab])]
                assert v.to_pandas(columns=["e"], filters=[("e", op, lab)]).index.tolist() == want
                assert 0 < len(want) < N
        with pytest.raises(ValueError, match="'Nope' is not a label of enum column 'e', so it has no order "
                                             "for '<'; labels: \\['Low', 'Mid', 'High', 'Off'\\]"):
            v.read(filters=[("e", "<", "Nope")])
        with pytest.raises(TypeError, match="column 'e' is an enum: expected a label"):
            v.read(filters=[("e", "==", 1)])


def test_nan_and_null_semantics(files):
    """Nulls match nothing, `!=`/`not in` included; NaN only `!=` and `not in` (as h5col and pyarrow)."""
    with h5vec.open_vector(files, "v") as v:
        of = v.read(columns=["of"])["of"]
        f = v.read(columns=["f"])["f"]
        null = np.ma.getmaskarray(of)
        nan = ~null & np.isnan(of.filled(0.0))
        ne = v.read(columns=["of"], filters=[("of", "!=", 0.5)])["of"]
        assert len(ne) == int((~null).sum()) and not np.ma.getmaskarray(ne).any()
        assert int(np.isnan(ne.filled(0.0)).sum()) == int(nan.sum()) > 0
        assert len(v.read(filters=[("of", "not in", [0.5])])["of"]) == int((~null).sum())
        assert len(v.read(filters=[("f", "!=", 0.5)])["f"]) == N
        assert len(v.read(filters=[("f", "<", float("inf"))])["f"]) == int((~np.isnan(f)).sum())
        # pyarrow's own filter of the same rows agrees.
        t = v.to_arrow(columns=["of", "oi", "os"])
        import pyarrow.compute as pc
        for col, op, val in [("of", "!=", 0.3), ("oi", "!=", 3), ("os", "!=", "o5"), ("oi", "<", 0)]:
            fn = {"!=": pc.not_equal, "<": pc.less}[op]
            want = t.filter(fn(t[col], val))
            got = v.to_arrow(columns=["of", "oi", "os"], filters=[(col, op, val)])
            assert got.schema == want.schema and got.num_rows == want.num_rows > 0
            pd.testing.assert_frame_equal(got.to_pandas(), want.to_pandas())  # NaN == NaN here
        with pytest.raises(ValueError, match="NaN compared with column 'f'"):
            v.read(filters=[("f", "==", float("nan"))])


def test_and_or_combinations(files):
    rnd = random.Random(5)
    with h5vec.open_vector(files, "v") as v:
        df = v.to_pandas()
        values = py_values(v)
        flat = [(c, val) for c, vals in PREDICATES if c not in ("tz",) for val in vals[:3]]
        total = 0
        for _ in range(25):
            terms = []
            for _ in range(rnd.randint(1, 3)):
                term = []
                for _ in range(rnd.randint(1, 3)):
                    c, val = rnd.choice(flat)
                    op = rnd.choice(OPS + ["in", "not in"])
                    term.append((c, op, [val] if op in ("in", "not in") else val))
                terms.append(term)
            filters = terms[0] if len(terms) == 1 and rnd.random() < 0.5 else terms
            total += check(v, df, values, filters)
        assert total > 0


def test_every_entry_point(files):
    flt = [[("seq", ">=", 500), ("seq", "<", 800), ("f", ">", 0.0)], [("s", "==", "s03")]]
    with h5vec.open_vector(files, "v") as v:
        values = py_values(v)
        mask = brute_mask(values, flt)
        rows = np.flatnonzero(mask)
        cols = ["seq", "f", "s", "os", "rec.x", "e", "ts", "tz", "d", "oi"]
        full_np = v.read(columns=cols)
        got = v.read(columns=cols, filters=flt)
        assert list(got) == list(full_np)  # the vector's column order
        for c in cols:
            assert got[c].dtype == full_np[c].dtype
            assert type(got[c]) is type(full_np[c])
            if isinstance(full_np[c], np.ma.MaskedArray):
                assert np.ma.getmaskarray(got[c]).tolist() == np.ma.getmaskarray(full_np[c])[rows].tolist()
            np.testing.assert_array_equal(np.asarray(got[c]), np.asarray(full_np[c])[rows])
        full_arrow = v.to_arrow()
        arr = v.to_arrow(filters=flt)
        assert arr.schema == full_arrow.schema
        pd.testing.assert_frame_equal(arr.to_pandas(), full_arrow.take(pa.array(rows)).to_pandas())
        pol = v.to_polars(filters=flt)
        assert pol.equals(v.to_polars()[rows.tolist()])
        assert pol.schema == v.to_polars().schema
        # rows= limits the search; iter_batches yields the matching rows of each span.
        sub = v.to_pandas(rows=slice(600, 1000), filters=flt)
        assert sub.index.tolist() == [r for r in rows if 600 <= r < 1000]
        batches = list(v.iter_batches(batch_rows=500, format="pandas", filters=flt))
        assert pd.concat(batches).index.tolist() == rows.tolist()
        assert all(len(b) for b in batches)
        arrow_b = list(v.iter_batches(batch_rows=500, format="arrow", filters=flt))
        pd.testing.assert_frame_equal(pa.Table.from_batches(arrow_b).to_pandas(),
                                      full_arrow.take(pa.array(rows)).to_pandas())
        np_b = list(v.iter_batches(batch_rows=700, columns=["seq"], filters=flt))
        assert np.concatenate([b["seq"] for b in np_b]).tolist() == rows.tolist()
        pl_b = list(v.iter_batches(batch_rows=700, format="polars", filters=flt))
        assert pl.concat(pl_b).equals(v.to_polars()[rows.tolist()])
        # Nothing matches: empty, with the full read's dtypes.
        empty = v.to_pandas(filters=[("seq", "<", -5)])
        assert len(empty) == 0 and empty.dtypes.equals(v.to_pandas().dtypes)
        assert v.to_arrow(filters=[("seq", "<", -5)]).schema == full_arrow.schema
        assert list(v.iter_batches(filters=[("seq", "<", -5)])) == []


def test_times(files):
    with h5vec.open_vector(files, "v") as v:
        ts = v.read(columns=["ts"])["ts"]
        exact = ts[1034]
        got = v.read(columns=["ts"], filters=[("ts", "==", exact)])["ts"]
        assert got.tolist() == [exact.astype("i8")] or got.astype("i8").tolist() == [exact.astype("i8")]
        # One nanosecond off matches nothing; microsecond datetimes are exact too.
        assert len(v.read(columns=["ts"], filters=[("ts", "==", exact + np.timedelta64(1, "ns"))])["ts"]) == 0
        lo = pd.Timestamp(ts[100])
        assert lo.nanosecond != 0
        # A datetime (microseconds) lies strictly between two stored nanosecond instants: exact, not rounded.
        us = lo.floor("us").to_pydatetime()
        assert len(v.read(columns=["ts"], filters=[("ts", ">", us), ("ts", "<", lo)])["ts"]) == 0
        assert v.to_pandas(columns=["ts"], filters=[("ts", ">=", us), ("ts", "<=", lo)]).index.tolist() == [100]
        assert v.to_pandas(columns=["ts"], filters=[("ts", "==", lo)]).index.tolist() == [100]
        assert len(v.read(columns=["ts"], filters=[("ts", "==", us)])["ts"]) == 0
        # Coarser numpy units are exact: microseconds (truncated below the row's instant), seconds.
        us64 = exact.astype("M8[us]")
        assert us64.astype("M8[ns]") < exact
        assert len(v.read(columns=["ts"], filters=[("ts", "<=", us64)])["ts"]) == 1034
        assert len(v.read(columns=["ts"], filters=[("ts", "<", np.datetime64("2024-01-01T00:00:01"))])["ts"]) == 1
        assert len(v.read(columns=["ts"], filters=[("ts", "<=", exact)])["ts"]) == 1035
        # dates: a datetime within a day compares exactly (2020-06-01T12:00 > 2020-06-01)
        d = v.read(columns=["d"])["d"]
        want = int((d > np.datetime64("2020-06-01")).sum())
        assert len(v.read(columns=["d"], filters=[("d", ">", dt.datetime(2020, 6, 1, 12))])["d"]) == want
        assert len(v.read(columns=["d"], filters=[("d", ">=", np.datetime64("2020-06-01T12"))])["d"]) == want
        # zones must agree with the column
        with pytest.raises(TypeError, match="'tz' holds instants in time zone 'UTC'"):
            v.read(filters=[("tz", ">", dt.datetime(2024, 1, 2))])
        with pytest.raises(TypeError, match="'tz' holds instants in time zone 'UTC'"):
            v.read(filters=[("tz", ">", np.datetime64("2024-01-02"))])
        with pytest.raises(TypeError, match="'ts' holds instants without a time zone"):
            v.read(filters=[("ts", ">", pd.Timestamp("2024-01-02", tz="UTC"))])
        with pytest.raises(TypeError, match="'d' holds dates without a time zone"):
            v.read(filters=[("d", ">", pd.Timestamp("2024-01-02", tz="UTC"))])


def test_errors(files):
    with h5vec.open_vector(files, "v") as v:
        with pytest.raises(ValueError, match="no column 'nope'; columns: \\['seq'"):
            v.read(filters=[("nope", "==", 1)])
        with pytest.raises(ValueError, match="unknown operator '~=' for column 'seq'"):
            v.read(filters=[("seq", "~=", 1)])
        with pytest.raises(TypeError, match="column 'seq' holds numbers: expected a number, found str"):
            v.read(filters=[("seq", "==", "1")])
        with pytest.raises(TypeError, match="column 'seq' holds numbers: expected a number, found bool"):
            v.read(filters=[("seq", "==", True)])
        with pytest.raises(TypeError, match="column 'b' holds bools: expected a bool, found int"):
            v.read(filters=[("b", "==", 1)])
        with pytest.raises(TypeError, match="column 's' holds strings: expected a str, found int"):
            v.read(filters=[("s", "==", 1)])
        with pytest.raises(TypeError, match="'in' on column 'seq' takes a collection"):
            v.read(filters=[("seq", "in", 3)])
        with pytest.raises(TypeError, match="column 'rec' is not a column filters compare \\(a record: filter on its "
                                            "fields \\['rec.x', 'rec.flag'\\]\\)"):
            v.read(filters=[("rec", "==", 3)])
        with pytest.raises(ValueError, match="filters: expected a non-empty list"):
            v.read(filters=[])
        with pytest.raises(ValueError, match="filters: expected a list of"):
            v.read(filters=[("seq", "==", 1), [("seq", "==", 2)]])
        with pytest.raises(TypeError, match="column 'ts' holds instants: expected a datetime"):
            v.read(filters=[("ts", ">", "2024-01-01")])


# ---------------------------------------------------------------------------
# Pruning and statistics


def count_reads(monkeypatch, v):
    calls = []
    orig = type(v)._read_rows

    def spy(self, sel, a, b):
        calls.append((sel, a, b))
        return orig(self, sel, a, b)
    monkeypatch.setattr(type(v), "_read_rows", spy)
    return calls


def test_pruning_reads_only_candidate_chunks(files, monkeypatch):
    flt = [("seq", ">=", 500), ("seq", "<", 550)]
    with h5vec.open_vector(files, "v") as v, h5vec.open_vector(files, "nostats") as w:
        assert v._chunk_stats("seq").chunk == CHUNK
        assert w._chunk_stats("seq") is None
        calls = count_reads(monkeypatch, v)
        got = v.read(filters=flt)
        assert got["seq"].tolist() == list(range(500, 550))
        rows_read = sum(b - a for _, a, b in calls if b > a)
        # The predicate column over its candidate chunks (448..512 and 512..576), then the
        # selected columns over the 50 matching rows only.
        assert rows_read == 2 * CHUNK + 50
        calls.clear()
        got2 = w.read(filters=flt)
        assert got2["seq"].tolist() == got["seq"].tolist()
        assert sum(b - a for _, a, b in calls if b > a) == N + 50
        calls.clear()
        # OR: a term without statistics on its column reads everything.
        v.read(columns=["seq"], filters=[[("seq", "==", 5)], [("s", "==", "s00")]])
        assert sum(b - a for sel, a, b in calls if b > a and "s" in (sel or {})) == N


def tamper(path, name, what):
    with h5py.File(path, "r+") as f:
        si = f[f"{name}/metadata/SEARCH_INDEXES"]
        ds = si["seq.values__chunk_minmax"]
        if what == "nrows":
            ds.attrs.modify("SOURCE_NROWS", np.uint64(N + 1))
        elif what == "generation":
            si.attrs.modify("GENERATION", np.uint64(7))
        elif what == "signed":
            ds.attrs["SOURCE_NROWS"] = np.int64(N)
        elif what == "lie":
            e = ds[...]
            e["min"] = -10
            e["max"] = -5
            ds[...] = e


@pytest.mark.parametrize("what", ["nrows", "generation", "signed"])
def test_invalid_tokens_are_ignored(tmp_path, what):
    p = tmp_path / "t.h5"
    h5vec.save_vector(p, "v", table(600), chunk_length=64)
    tamper(p, "v", "lie")  # statistics that would prune every chunk...
    with h5vec.open_vector(p, "v") as v:
        assert len(v.read(filters=[("seq", ">=", 100)])["seq"]) == 0  # ...are believed while valid
    tamper(p, "v", what)
    with h5vec.open_vector(p, "v") as v:
        assert v._chunk_stats("seq") is None
        assert v.read(filters=[("seq", ">=", 100), ("seq", "<", 110)])["seq"].tolist() == list(range(100, 110))


def test_statistics_of_an_option_leaf_honour_fill_count(tmp_path, monkeypatch):
    """Statistics another writer puts on an Option<number>'s values (nulls in fill_count, min/max over the
    rest) prune, and a chunk of nulls only is never read."""
    p = tmp_path / "o.h5"
    vals = np.arange(256, dtype=np.int64)
    null = (vals // 64) == 2  # chunk 2: nulls only
    null[::7] = True
    h5vec.save_vector(p, "v", pa.table({"x": pa.array(vals, mask=null)}), chunk_length=64)
    with h5py.File(p, "r+") as f:
        g = f["v"]
        src = g["data/x/values"]
        mask = g["data/x/MASK"][:].astype(bool)
        raw = src[:]
        e = np.zeros(4, _stats._entry_dtype(np.dtype("<i8")))
        for i in range(4):
            m = mask[i * 64:(i + 1) * 64]
            r = raw[i * 64:(i + 1) * 64][m]
            e[i] = (r.min() if len(r) else 0, r.max() if len(r) else 0, 0, int((~m).sum()), 64)
        assert e["fill_count"][2] == 64
        assert "SEARCH_INDEXES" not in g["metadata"]  # the Python writer gives an Option none (yet)
        si = g["metadata"].create_group("SEARCH_INDEXES")
        _stats._write_u64_attr(si, "GENERATION", 0)
        ds = _stats._create(si, "x.values__chunk_minmax", src, e)
        _stats._write_kind(ds, "CHUNK_MINMAX")
        _stats._write_source(ds, "data/x/values")
        _stats._write_u64_attr(ds, "SOURCE_GENERATION", 0)
        _stats._write_u64_attr(ds, "SOURCE_NROWS", 256)
    want = [i for i in range(256) if not null[i] and (i < 70 or i > 250)]
    with h5vec.open_vector(p, "v") as v:
        assert v._chunk_stats("x") is not None
        calls = count_reads(monkeypatch, v)
        got = v.to_pandas(filters=[[("x", "<", 70)], [("x", ">", 250)], [("x", "in", [140, 150])]])
        assert got.index.tolist() == want and got["x"].tolist() == want
        touched = {k for _, a, b in calls if b > a for k in range(a // 64, (b - 1) // 64 + 1)}
        assert sorted(touched) == [0, 1, 3]  # chunk 2 never read
        calls.clear()
        assert len(v.read(filters=[("x", "!=", 5)])["x"]) == int((~null).sum()) - 1
        assert 2 not in {k for _, a, b in calls if b > a for k in range(a // 64, (b - 1) // 64 + 1)}


def test_after_appends(tmp_path):
    p = tmp_path / "a.h5"
    h5vec.save_vector(p, "v", table(1000, seed=1), chunk_length=CHUNK)
    h5vec.append_vector(p, "v", table(700, seed=2, start=1000))
    h5vec.append_vector(p, "v", table(300, seed=3, start=1700))
    with h5vec.open_vector(p, "v") as v:
        assert len(v) == 2000
        st = v._chunk_stats("seq")
        assert st is not None and len(st.entries) == -(-2000 // CHUNK)
        df = v.to_pandas()
        values = py_values(v)
        for flt in ([("seq", ">=", 1900)], [("seq", "in", [5, 1000, 1999])], [("big", ">", 2**63 - 10)],
                    [[("u", "<", 2**62)], [("f", ">=", 1.5), ("seq", "<", 1500)]], [("b", "==", True)]):
            check(v, df, values, flt)


def test_dask(files):
    flt = [("seq", ">=", 500), ("seq", "<", 700)]
    with h5vec.open_vector(files, "v") as v:
        want = v.to_pandas(filters=flt)
        values = py_values(v)
    ddf = hdask.read_vector(files, "v", partition_rows=512, filters=flt)
    assert ddf.known_divisions
    assert ddf.npartitions == 2 and ddf.divisions == (0, 512, 1023)
    got = ddf.compute()
    pd.testing.assert_frame_equal(got, want)
    # Without statistics: every partition kept, filtered within.
    ddf2 = hdask.read_vector(files, "nostats", partition_rows=512, filters=flt)
    assert ddf2.npartitions == -(-N // 512)
    pd.testing.assert_frame_equal(ddf2.compute(), want)
    # Nothing can match: one empty partition.
    ddf3 = hdask.read_vector(files, "v", partition_rows=512, filters=[("seq", ">", 10**9)])
    assert len(ddf3.compute()) == 0
    # A filter on a column without statistics, OR'd: all partitions.
    flt4 = [[("seq", "==", 5)], [("s", "==", "s00")]]
    with h5vec.open_vector(files, "v") as v:
        pd.testing.assert_frame_equal(hdask.read_vector(files, "v", partition_rows=512, filters=flt4).compute(),
                                      v.to_pandas(filters=flt4))
        assert int(brute_mask(values, flt4).sum()) == len(v.to_pandas(filters=flt4))
    with pytest.raises(ValueError, match="no column 'zz'"):
        hdask.read_vector(files, "v", filters=[("zz", "==", 1)])


def test_root_scalar_and_nullable_record(tmp_path):
    p = tmp_path / "r.h5"
    vals = np.array([5, -3, 2**62, 7, 7, 0], np.int64)
    h5vec.save_vector(p, "s", vals, chunk_length=2)
    rec = pa.StructArray.from_arrays([pa.array([1, 2, 3, 4], pa.int64()), pa.array([0.5, 1.5, None, 3.0])],
                                     ["a", "b"], mask=pa.array([False, True, False, False]))
    h5vec.save_vector(p, "r", pa.table({"r": rec}))
    with h5vec.open_vector(p, "s") as v:
        assert v.columns == ["value"]
        assert v.read(filters=[("value", ">", 6)])["value"].tolist() == [2**62, 7, 7]
        assert v._chunk_stats("value") is not None
    with h5vec.open_vector(p, "r") as v:
        assert v.columns == ["r.a", "r.b"]
        # Row 1's record is null: its fields match nothing, `!=` included.
        assert v.to_pandas(filters=[("r.a", "!=", 99)]).index.tolist() == [0, 2, 3]
        assert v.to_pandas(filters=[("r.b", "!=", 99.0)]).index.tolist() == [0, 3]


def test_tables_filter_too():
    """h5col tables share the read API: filters scan them (no statistics)."""
    from test_package_common import GOLDEN
    meta = json.loads((GOLDEN / "h5col" / "d_mixed_table.json").read_text())
    with h5py.File(GOLDEN / "h5col" / meta["file"], "r") as f:
        with h5vec.open_table(f[meta["group"]]) as t:
            full = t.to_arrow()
            rows = full.to_pylist()
            checked = 0
            for c in ("id", "name", "score", "flag", "code"):
                vals = [r[c] for r in rows if r[c] is not None and r[c] == r[c]]
                for op in OPS + ["in", "not in"]:
                    q = vals[:2] if op in ("in", "not in") else vals[1]
                    want = [i for i, r in enumerate(rows) if match(r[c], op, q)]
                    got = t.to_arrow(filters=[(c, op, q)])
                    assert got.equals(full.take(pa.array(want, pa.int64())))
                    assert t.to_pandas(filters=[(c, op, q)]).index.tolist() == want
                    checked += len(want)
            assert checked > 20
            with pytest.raises(ValueError, match="no column 'zz'"):
                t.read(filters=[("zz", "==", 1)])


def test_every_kind_is_cut_and_joined_exactly(tmp_path, monkeypatch):
    """Vectors of every kind (maps, unions, lists of unions, UUIDs, complex, times...) filtered in pieces
    of a few rows (so matching rows of many reads are joined): Arrow equal to the full read's rows."""
    from test_package_kinds_write import arrow_table
    t = arrow_table(range(40))
    p = tmp_path / "k.h5"
    h5vec.save_vector(p, "k", t, chunk_length=4)
    monkeypatch.setattr(h5vec.Vector, "_filter_batch_rows", lambda self: 3)
    with h5vec.open_vector(p, "k") as v:
        full = v.to_arrow()
        py = {c: v.to_pandas(columns=[c])[c].tolist() for c in ("at", "naive", "took", "placed.at")}
        py = {c: [None if x is pd.NaT else x for x in xs] for c, xs in py.items()}
        at = py["at"]
        flts = [[("at", ">=", at[10]), ("at", "<", at[30])], [("took", "!=", pd.Timedelta(4_000_000_028, "ns"))],
                [("took", ">", dt.timedelta(seconds=30))],
                [[("placed.at", "in", [1, 5, 6, 33])], [("naive", "<", py["naive"][3])]],
                [("naive", ">", np.datetime64(int(py["naive"][20].value), "ns"))]]
        for flt in flts:
            mask = brute_mask(py, flt)
            assert 0 < mask.sum() < len(mask)
            rows = pa.array(np.flatnonzero(mask))
            got = v.to_arrow(filters=flt)
            assert got.schema == full.schema and got.equals(full.take(rows))
            assert v.to_pandas(columns=["shape", "shapes", "prices"], filters=flt).index.tolist() == \
                np.flatnonzero(mask).tolist()
            assert pa.Table.from_batches(list(v.iter_batches(7, format="arrow", filters=flt))).equals(full.take(rows))
        # Times of day: datetime.time (or a timedelta since midnight), exact in nanoseconds.
        clock = v.to_pandas(columns=["clock"])["clock"]
        want = np.flatnonzero((clock < pd.Timedelta(hours=12)).to_numpy())
        assert 0 < len(want) < 40
        assert v.to_pandas(columns=["clock"], filters=[("clock", "<", dt.time(12))]).index.tolist() == want.tolist()
        assert v.to_pandas(columns=["clock"], filters=[("clock", "<", dt.timedelta(hours=12))]).index.tolist() == \
            want.tolist()


def test_string_arrays_and_the_python_fallback(monkeypatch):
    """VLS string arrays (column "value"); the string comparison without pyarrow gives the same rows."""
    from test_package_common import GOLDEN
    meta = json.loads((GOLDEN / "vls" / "dolomite_na_literal.json").read_text())
    with h5py.File(GOLDEN / "vls" / meta["file"], "r") as f:
        with h5vec.open_strings(f[meta["group"]]) as s:
            full = s.read().tolist()
            assert None in full
            present = [x for x in full if x is not None]
            for op in OPS + ["in", "not in"]:
                q = present[:2] if op in ("in", "not in") else present[1]
                want = [i for i, x in enumerate(full) if match(x, op, q)]
                assert s.to_pandas(filters=[("value", op, q)]).index.tolist() == want
                monkeypatch.setattr(h5vec._columns, "_pyarrow", lambda: None)
                got = s.to_pandas(filters=[("value", op, q)])
                monkeypatch.undo()
                assert got.index.tolist() == want
            with pytest.raises(ValueError, match="no column 'x'; columns: \\['value'\\]"):
                s.read(filters=[("x", "==", "a")])


def test_same_rows_as_h5col_select(tmp_path):
    """The real h5col 0.4.0's query layer (vendored in tests/python/vendor once issue 30's h5col work is
    merged; skipped without it) selects the same rows on the same table: NaN as a value, NaN as the fill
    value (missing), integer fill values, bools, AND/OR."""
    import sys
    from pathlib import Path
    vendor = Path(__file__).resolve().parent / "vendor"
    if not (vendor / "h5col").is_dir():
        pytest.skip("h5col 0.4.0 is not vendored in tests/python/vendor")
    if int(np.__version__.split(".")[0]) < 2:
        pytest.skip("h5col 0.4.0 needs numpy >= 2")
    pytest.importorskip("pydantic")
    pytest.importorskip("hdf5plugin")
    sys.path.insert(0, str(vendor))
    import h5col
    rng = np.random.default_rng(3)
    n = 300
    ids = rng.integers(-(2**62), 2**62, n)
    xs = rng.normal(size=n)
    xs[::9] = np.nan
    xs_l = [None if i % 13 == 0 else float(v) for i, v in enumerate(xs)]
    ks = [None if i % 11 == 0 else int(v) for i, v in enumerate(rng.integers(-5, 5, n))]
    p = tmp_path / "h5col.h5"
    with h5py.File(p, "w") as f:
        t = h5col.Table.create(f.create_group("t"), [
            h5col.ColumnSpec(name="id", dtype="int64", chunks=(32,)),
            h5col.ColumnSpec(name="x", dtype="float64", chunks=(32,)),
            h5col.ColumnSpec(name="xn", dtype="float64", chunks=(32,), fill_value=np.nan),
            h5col.ColumnSpec(name="k", dtype="int32", chunks=(32,)),
            h5col.ColumnSpec(name="flag", dtype="bool", chunks=(32,)),
        ])
        t.append({"id": ids, "x": xs_l, "xn": xs_l, "k": ks, "flag": list(rng.random(n) < 0.5)})
        t.build_index("x", "CHUNK_MINMAX")
    vals = {"id": [int(ids[5]), 0], "x": [0.0, float(xs[3])], "xn": [0.0, float(xs[3])], "k": [0, -5],
            "flag": [True]}
    ops = ["==", "!=", "<", "<=", ">", ">=", "in", "not in"]
    cases = [[(c, op, [v] if op in ("in", "not in") else v)] for c, vs in vals.items() for v in vs for op in ops]
    rnd = random.Random(1)
    for _ in range(30):
        cases.append([[(c, op, [v] if op in ("in", "not in") else v)
                       for c, op, v in ((c, rnd.choice(ops), rnd.choice(vals[c]))
                                        for c in rnd.sample(list(vals), rnd.randint(1, 3)))]
                      for _ in range(rnd.randint(1, 2))])
    with h5py.File(p, "r") as f:
        ht = h5col.Table(f["t"])
        with h5vec.open_table(f["t"]) as vt:
            for flt in cases:
                assert vt.to_pandas(filters=flt).index.tolist() == ht.select(flt).row_positions.tolist(), flt
    # Categorical columns (read as their labels; `pay` is ordered: by code, as h5col).
    import h5col_fixtures
    with h5py.File(tmp_path / "cat.h5", "w") as f:
        h5col_fixtures.write_indexed_table(f.create_group("t"))
    with h5py.File(tmp_path / "cat.h5", "r") as f:
        ht = h5col.Table(f["t"])
        with h5vec.open_table(f["t"]) as vt:
            for flt in ([("level", "==", "Mid")], [("level", "!=", "Mid")], [("level", "in", ["Low", "High"])],
                        [("level", "not in", ["Low"])], [("pay", "==", "Cash")], [("pay", "<", "Cash")],
                        [("pay", ">=", "Cash")], [("level", "==", "Nope")], [("level", "!=", "Nope")],
                        [[("x", ">", 3.0)], [("level", "==", "Low")]], [("flag", "==", True), ("id", "in", [1, 3])]):
                assert vt.to_pandas(filters=flt).index.tolist() == ht.select(flt).row_positions.tolist(), flt


# ---------------------------------------------------------------------------
# Rust-written vectors


def test_rust_written(pkg_file):  # noqa: F811
    with h5vec.open_vector(pkg_file, "flat") as v:
        df = v.to_pandas()
        cols = ["i8_", "u16_", "i32_", "u64_", "f32_", "f64_", "flag", "text", "level"]
        arrays = {c: v.read(columns=[c])[c].tolist() for c in cols}
        for c in cols:
            present = [x for x in arrays[c] if x is not None]
            for val in present[:1] + present[-1:]:
                for op in OPS + ["in", "not in"]:
                    if c == "level" and op in ("<", "<=", ">", ">="):
                        continue
                    q = [val] if op in ("in", "not in") else val
                    mask = brute_mask(arrays, [(c, op, q)])
                    pd.testing.assert_frame_equal(v.to_pandas(filters=[(c, op, q)]), df[mask])
        letters = v.read(columns=["letter"])["letter"].tolist()
        got = v.read(columns=["letter"], filters=[("letter", "==", letters[1])])["letter"].tolist()
        assert got == [x for x in letters if x == letters[1]]
        if "SEARCH_INDEXES" in v.group["metadata"]:
            # Rust's statistics (when it writes them) are what a recomputation gives.
            for path, _ in _stats.leaves(v.node):
                src = _stats.source_of(path)
                st = _stats.find(v.group, src, len(v))
                assert st is not None, src
                want = _stats.compute(v.group[src], 0, len(v))
                assert st.entries.tolist() == want.tolist()
    with h5vec.open_vector(pkg_file, "nulls") as v:
        df = v.to_pandas()
        arrays = {c: v.read(columns=[c])[c].tolist() for c in ["maybe_num", "maybe_str", "maybe_bool"]}
        for flt in ([("maybe_num", ">", 3.0)], [("maybe_num", "!=", 4.5)], [("maybe_str", "!=", "s2")],
                    [("maybe_bool", "==", False)], [[("maybe_bool", "!=", True)], [("maybe_str", "in", ["s4"])]]):
            mask = brute_mask(arrays, flt)
            pd.testing.assert_frame_equal(v.to_pandas(filters=flt), df[mask])
            assert mask.any()
