"""h5vec.open_dataset: the vectors of one name in several files, written by
Rust (`h5vec convert`) and by Python (one of no rows, one appended to), read
as one; every result equals the concatenation of the files' `Vector`
results, dtypes included.

The `h5vec` command is $H5VEC_BIN if that file exists, else target/debug/h5vec
(or under $CARGO_TARGET_DIR); without it the tests that need a Rust-written
file are skipped.
"""

import subprocess
import time
from pathlib import Path

import h5py
import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pd = pytest.importorskip("pandas")
pl = pytest.importorskip("polars")

import h5vec  # noqa: E402
from cli_bin import h5vec_bin  # noqa: E402



H5VEC = h5vec_bin()
needs_bin = pytest.mark.skipif(H5VEC is None, reason="no h5vec binary at $H5VEC_BIN or target/debug/h5vec")

NAME = "telemetry"


def rows(lo, hi):
    """Rows lo..hi as a pyarrow table (nullable columns: the layout Rust's Arrow writer and save_vector share)."""
    i = np.arange(lo, hi, dtype=np.int64)
    return pa.table({
        "id": pa.array(i),
        "x": pa.array(i * 0.5),
        "s": pa.array([f"row{k}" for k in i], pa.large_string()),
        "ts": pa.array((i * 1_000_000_007).astype("datetime64[ns]")),
        "l": pa.array([[int(k)] * int(k % 3) for k in i], pa.large_list(pa.int64())),
        "n": pa.array([None if k % 4 == 0 else int(k) for k in i], pa.int32()),
        "level": pa.array([("low", "mid", "high")[k % 3] if k % 5 else None for k in i], pa.large_string()),
    })


def open_handles():
    return h5py.h5f.get_obj_count(h5py.h5f.OBJ_ALL, h5py.h5f.OBJ_FILE)


@pytest.fixture(scope="module")
def parts(tmp_path_factory):
    """[(path, rows)] in dataset order: Python, Rust, empty, appended, Python (sorted names)."""
    d = tmp_path_factory.mktemp("dataset")
    out = []
    a = d / "a-python.h5"
    h5vec.save_vector(a, NAME, rows(0, 37), chunk_length=8)
    out.append((a, 37))
    b = d / "b-rust.h5"
    if H5VEC is not None:
        pq.write_table(rows(37, 100), d / "b.parquet")
        subprocess.run([str(H5VEC), "convert", "--chunk-length", "16", str(d / "b.parquet"), f"{b}:{NAME}"],
                       check=True, capture_output=True)
        out.append((b, 63))
    c = d / "c-empty.h5"
    h5vec.save_vector(c, NAME, rows(0, 0))
    out.append((c, 0))
    e = d / "d-appended.h5"
    h5vec.save_vector(e, NAME, rows(100, 110), chunk_length=4)
    h5vec.append_vector(e, NAME, rows(110, 131))
    out.append((e, 31))
    f = d / "e-python.h5"
    h5vec.save_vector(f, NAME, rows(131, 140), chunk_length=8)
    out.append((f, 9))
    return out


def paths_of(parts):
    return [str(p) for p, _ in parts]


def concat_pandas(parts, **kw):
    frames, base = [], 0
    for p, n in parts:
        with h5vec.open_vector(p, NAME) as v:
            df = v.to_pandas(**kw)
        df.index = df.index + base
        frames.append(df)
        base += n
    kept = [f for f in frames if len(f)] or frames[:1]
    out = pd.concat(kept) if len(kept) > 1 else kept[0]
    return out


def concat_arrow(parts, **kw):
    tables = []
    for p, _ in parts:
        with h5vec.open_vector(p, NAME) as v:
            tables.append(v.to_arrow(**kw))
    return pa.concat_tables(tables)


def concat_numpy(parts, **kw):
    out = {}
    for p, _ in parts:
        with h5vec.open_vector(p, NAME) as v:
            for k, arr in v.read(**kw).items():
                out.setdefault(k, []).append(arr)
    return {k: (np.ma.concatenate(a) if any(isinstance(x, np.ma.MaskedArray) for x in a) else np.concatenate(a))
            for k, a in out.items()}


def assert_numpy_equal(got, want):
    """Same keys, array types, dtypes, shapes, masks and (unmasked) values."""
    assert list(got) == list(want)
    for k in want:
        g, w = got[k], want[k]
        assert type(g) is type(w), k
        assert g.dtype == w.dtype and g.shape == w.shape, k
        keep = np.ones(len(w), bool)
        if isinstance(w, np.ma.MaskedArray):
            assert np.array_equal(np.ma.getmaskarray(g), np.ma.getmaskarray(w)), k
            keep = ~np.ma.getmaskarray(w)
            g, w = np.ma.getdata(g), np.ma.getdata(w)
        g, w = g[keep], w[keep]
        if w.dtype == object:
            assert [np.asarray(x).tolist() for x in g] == [np.asarray(x).tolist() for x in w], k
        else:
            assert np.array_equal(g, w), k


@needs_bin
def test_rust_and_python_files_read_as_their_concatenation(parts, whole):
    ds = h5vec.open_dataset(paths_of(parts), NAME)
    assert len(ds) == 140
    assert [(f.path, f.start, f.stop) for f in ds.files] == [
        (paths_of(parts)[0], 0, 37), (paths_of(parts)[1], 37, 100), (paths_of(parts)[2], 100, 100),
        (paths_of(parts)[3], 100, 131), (paths_of(parts)[4], 131, 140)]
    assert ds.columns == ["id", "x", "s", "ts", "l", "n", "level"]
    with h5vec.open_vector(paths_of(parts)[0], NAME) as v:
        assert ds.schema == v.schema
    # pandas: values, dtypes, index (the dataset's row numbers) and attrs.
    got = ds.to_pandas()
    want = whole["pandas"]
    pd.testing.assert_frame_equal(got, want, check_index_type=True)
    assert list(got.index) == list(range(140))
    str_ = str(pd.Series(["a"]).dtype)  # pandas' default for strings: 'str' from pandas 3
    assert dict(got.dtypes.astype(str)) == {"id": "Int64", "x": "Float64", "s": str_, "ts": "datetime64[ns]",
                                            "l": "object", "n": "Int32", "level": str_}
    assert got.attrs == want.attrs
    assert got["id"].tolist() == list(range(140))
    # arrow: the same table (schema and its metadata too) as concatenating.
    t = ds.to_arrow()
    assert t.equals(whole["arrow"], check_metadata=True)
    assert t.column("id").to_pylist() == list(range(140))
    assert t.equals(rows(0, 140).cast(t.schema))
    # polars and numpy.
    assert ds.to_polars().equals(pl.from_arrow(whole["arrow"]))
    assert ds.to_polars().schema == pl.concat([h5vec.open_vector(p, NAME).to_polars() for p, _ in parts]).schema
    assert_numpy_equal(ds.read(), whole["numpy"])


def test_python_files_and_glob_order(parts):
    py = [p for p in parts if "rust" not in str(p[0])]
    d = Path(py[0][0]).parent
    ds = h5vec.open_dataset(str(d / "*-python.h5"), NAME)
    assert [f.path for f in ds.files] == [str(d / "a-python.h5"), str(d / "e-python.h5")]
    assert len(ds) == 46
    assert ds.to_pandas()["id"].tolist() == list(range(37)) + list(range(131, 140))
    # A list keeps its order.
    ds = h5vec.open_dataset([d / "e-python.h5", d / "c-empty.h5", d / "a-python.h5"], NAME)
    assert [(f.start, f.stop) for f in ds.files] == [(0, 9), (9, 9), (9, 46)]
    assert ds.to_arrow().column("id").to_pylist() == list(range(131, 140)) + list(range(37))
    pd.testing.assert_frame_equal(ds.to_pandas(), concat_pandas([(d / "e-python.h5", 9), (d / "c-empty.h5", 0),
                                                                 (d / "a-python.h5", 37)]))


@pytest.fixture(scope="module")
def whole(parts):
    """The concatenation of the files' Vector results, computed once."""
    return {"pandas": concat_pandas(parts), "arrow": concat_arrow(parts), "numpy": concat_numpy(parts)}


@needs_bin
def test_rows_across_file_boundaries(parts, whole):
    ds = h5vec.open_dataset(paths_of(parts), NAME)
    full, table, arrays = whole["pandas"], whole["arrow"], whole["numpy"]
    for a, b in [(30, 45), (36, 37), (37, 38), (99, 101), (100, 101), (95, 135), (100, 100), (0, 0),
                 (140, 140), (120, 1000), (-5, None), (45, 40)]:
        sl = slice(a, b)
        start, stop, _ = sl.indices(140)
        stop = max(start, stop)
        want = full.iloc[sl]
        got = ds.to_pandas(rows=sl)
        if len(want) == 0:
            assert len(got) == 0 and list(got.columns) == list(full.columns), sl
            assert dict(got.dtypes) == dict(full.dtypes), sl
        else:
            pd.testing.assert_frame_equal(got, want)
        t = ds.to_arrow(rows=sl, columns=["id", "l"])
        assert t.column("id").to_pylist() == list(range(start, stop)), sl
        assert t.equals(table.select(["id", "l"]).slice(start, stop - start)), sl
        assert_numpy_equal(ds.read(rows=sl, columns=["n", "s"]),
                           {k: arrays[k][start:stop] for k in ("s", "n")})  # schema order
        assert ds.to_polars(rows=sl).height == stop - start


@needs_bin
def test_indexing_and_slicing(parts):
    ds = h5vec.open_dataset(paths_of(parts), NAME)
    assert ds[36]["id"].tolist() == [36]
    assert ds[37]["id"].tolist() == [37]
    assert ds[-1]["id"].tolist() == [139]
    assert ds[98:102]["id"].tolist() == [98, 99, 100, 101]
    with pytest.raises(IndexError, match="row 140 is outside the 140 rows"):
        ds[140]


@needs_bin
@pytest.mark.parametrize("filters", [
    [("id", ">=", 30), ("id", "<", 105)],
    [("n", "==", 3)],
    [[("level", "==", "high")], [("id", "in", [0, 99, 139])]],
    [("id", ">", 1000)],
])
def test_filters_apply_per_file(parts, whole, filters):
    ds = h5vec.open_dataset(paths_of(parts), NAME)
    want = concat_pandas(parts, filters=filters)
    got = ds.to_pandas(filters=filters)
    if len(want):
        pd.testing.assert_frame_equal(got, want)
    else:
        assert len(got) == 0 and dict(got.dtypes) == dict(want.dtypes)
    full = whole["pandas"]
    # The same rows as filtering the whole concatenation by hand.
    assert got.index.tolist() == full.index[_mask(full, filters)].tolist()
    assert ds.to_arrow(filters=filters).equals(concat_arrow(parts, filters=filters))
    assert_numpy_equal(ds.read(filters=filters, columns=["id", "s"]),
                       {k: v[_mask(full, filters)] for k, v in whole["numpy"].items() if k in ("id", "s")})
    # rows= limits the rows searched, across files.
    sub = ds.to_pandas(rows=slice(20, 120), filters=filters)
    assert sub.index.tolist() == [i for i in got.index if 20 <= i < 120]


def _mask(df, filters):
    ops = {"==": lambda s, v: s == v, ">=": lambda s, v: s >= v, "<": lambda s, v: s < v,
           ">": lambda s, v: s > v, "in": lambda s, v: s.isin(v)}
    groups = filters if isinstance(filters[0], list) else [filters]
    out = np.zeros(len(df), bool)
    for g in groups:
        m = np.ones(len(df), bool)
        for col, op, v in g:
            m &= ops[op](df[col], v).fillna(False).to_numpy(bool)
        out |= m
    return out


@needs_bin
@pytest.mark.parametrize("fmt", ["numpy", "arrow", "pandas", "polars"])
def test_iter_batches_concatenate_to_read(parts, fmt):
    ds = h5vec.open_dataset(paths_of(parts), NAME)
    batches = list(ds.iter_batches(batch_rows=10, format=fmt, columns=["id", "s"]))
    if fmt == "numpy":
        assert_numpy_equal({k: np.concatenate([b[k] for b in batches]) for k in ("id", "s")},
                           ds.read(columns=["id", "s"]))
        # A batch never holds rows of two files: 37 -> 10,10,10,7; 63 -> 7 batches; 31 -> 4; 9 -> 1.
        assert [len(b["id"]) for b in batches] == [10, 10, 10, 7] + [10] * 6 + [3] + [10, 10, 10, 1] + [9]
    elif fmt == "arrow":
        assert pa.Table.from_batches(batches).equals(ds.to_arrow(columns=["id", "s"]))
    elif fmt == "pandas":
        pd.testing.assert_frame_equal(pd.concat(batches), ds.to_pandas(columns=["id", "s"]))
    else:
        assert pl.concat(batches).equals(ds.to_polars(columns=["id", "s"]))
    flt = [("id", ">=", 35), ("id", "<", 40)]
    got = list(ds.iter_batches(batch_rows=10, format="pandas", filters=flt))
    assert [b.index.tolist() for b in got] == [[35, 36], [37, 38, 39]]


@needs_bin
def test_one_file_open_at_a_time(parts):
    before = open_handles()
    ds = h5vec.open_dataset(paths_of(parts), NAME)
    assert open_handles() == before
    ds.to_pandas()
    ds.to_arrow(filters=[("id", "<", 50)])
    assert open_handles() == before
    seen = []
    for _ in ds.iter_batches(batch_rows=16):
        seen.append(open_handles() - before)
    assert max(seen) == 1
    assert open_handles() == before
    # A consumer that stops early leaves no file open either.
    it = ds.iter_batches(batch_rows=16)
    next(it)
    it.close()
    assert open_handles() == before


def test_many_files_hold_no_handles(tmp_path):
    for i in range(120):
        h5vec.save_vector(tmp_path / f"p{i:04d}.h5", NAME, {"k": np.full(i % 3, i, np.int64)})
    before = open_handles()
    ds = h5vec.open_dataset(str(tmp_path / "p*.h5"), NAME)
    assert open_handles() == before
    assert len(ds.files) == 120 and len(ds) == 120
    assert ds.read()["k"].tolist() == [i for i in range(120) for _ in range(i % 3)]
    assert open_handles() == before


def test_rows_appended_after_open_are_not_read(tmp_path):
    p = tmp_path / "a.h5"
    h5vec.save_vector(p, NAME, {"k": np.arange(5, dtype=np.int64)})
    ds = h5vec.open_dataset([p, p], NAME)
    h5vec.append_vector(p, NAME, {"k": np.arange(5, 8, dtype=np.int64)})
    assert ds.read()["k"].tolist() == [0, 1, 2, 3, 4] * 2
    assert [len(b["k"]) for b in ds.iter_batches()] == [5, 5]
    assert len(h5vec.open_dataset([p], NAME)) == 8


def test_schema_mismatch_names_the_file_and_field(tmp_path):
    a, b, c = tmp_path / "a.h5", tmp_path / "b.h5", tmp_path / "c.h5"
    h5vec.save_vector(a, NAME, rows(0, 5))
    h5vec.save_vector(b, NAME, rows(5, 9).set_column(1, "x", pa.array(np.zeros(4, np.float32))))
    with pytest.raises(h5vec.FormatError) as e:
        h5vec.open_dataset(str(tmp_path / "*.h5"), NAME)
    msg = str(e.value)
    assert str(b) in msg and str(a) in msg
    assert e.value.path == "$.x"
    assert "encoded_type 'Float64'" in msg and "encoded_type 'Float32'" in msg
    # A field missing: the record's field names differ.
    h5vec.save_vector(c, NAME, rows(0, 3).drop_columns(["level"]))
    with pytest.raises(h5vec.FormatError, match=r"c\.h5.*at \$: expected field_names") as e:
        h5vec.open_dataset([a, c], NAME)
    assert "'level'" in str(e.value)
    # A nullable column against a plain one.
    h5vec.save_vector(b, NAME, {"id": np.arange(3, dtype=np.int64)}, replace=True)
    h5vec.save_vector(c, NAME, pa.table({"id": pa.array([1, None], pa.int64())}), replace=True)
    with pytest.raises(h5vec.FormatError, match=r"c\.h5.*at \$\.id: expected kind 'scalar', found kind 'nullable'"):
        h5vec.open_dataset([b, c], NAME)


def test_bad_inputs_are_named(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"no file matches the pattern '.*nothing-\*\.h5'"):
        h5vec.open_dataset(str(tmp_path / "nothing-*.h5"), NAME)
    with pytest.raises(ValueError, match="empty list"):
        h5vec.open_dataset([], NAME)
    a = tmp_path / "a.h5"
    h5vec.save_vector(a, NAME, {"k": np.arange(3)})
    h5vec.save_vector(tmp_path / "b.h5", "other", {"k": np.arange(3)})
    with pytest.raises(KeyError, match=r"b\.h5: no vector 'telemetry'"):
        h5vec.open_dataset([a, tmp_path / "b.h5"], NAME)
    (tmp_path / "c.h5").write_bytes(b"not hdf5 at all" * 10)
    with pytest.raises(OSError, match=r"c\.h5"):
        h5vec.open_dataset([a, tmp_path / "c.h5"], NAME)
    with pytest.raises(ValueError, match="invalid vector name"):
        h5vec.open_dataset([a], "a/b")
    ds = h5vec.open_dataset([a], NAME)
    with pytest.raises(KeyError, match="no column 'nope'"):
        ds.read(columns=["nope"])
    with pytest.raises(KeyError, match="no column 'nope'"):
        next(ds.iter_batches(columns=["nope"]))
    # A file replaced by one of fewer rows after open.
    ds = h5vec.open_dataset([a, a], NAME)
    h5vec.save_vector(a, NAME, {"k": np.arange(2)}, replace=True)
    with pytest.raises(h5vec.FormatError, match=r"a\.h5: vector 'telemetry' has 2 rows, fewer than the 3"):
        ds.read()


def test_exported():
    assert "open_dataset" in h5vec.__all__ and h5vec.open_dataset is h5vec._dataset.open_dataset
    assert "Dataset" in h5vec.__all__


def test_unchanged_files_are_not_read_again(tmp_path, monkeypatch):
    """Reads after open do not read an unchanged file's schema tree again;
    a file written since is opened and checked in full."""
    import h5vec._schema as S
    a, b = tmp_path / "a.h5", tmp_path / "b.h5"
    h5vec.save_vector(a, NAME, rows(0, 5))
    h5vec.save_vector(b, NAME, rows(5, 9))
    ds = h5vec.open_dataset([a, b], NAME)
    calls = []
    real = S.read_node
    monkeypatch.setattr(S, "read_node", lambda *args, **kw: calls.append(args[1]) or real(*args, **kw))
    assert ds.read(columns="id")["id"].tolist() == list(range(9))
    assert list(ds.iter_batches(columns="id", format="numpy"))[1]["id"].tolist() == [5, 6, 7, 8]
    assert calls == []
    # Opening the unchanged files again (this process has read them) reads no tree either.
    again = h5vec.open_dataset([b, a], NAME)
    assert [f.rows for f in again.files] == [4, 5] and calls == []
    from h5vec.dask import read_vector
    ddf = read_vector([a, b], NAME)
    assert calls == []
    assert ddf.compute(scheduler="sync")["id"].tolist() == list(range(9))
    assert calls == []
    # b rewritten with another layout: opened in full, and refused.
    time.sleep(0.01)
    h5vec.save_vector(b, NAME, rows(5, 9).set_column(1, "x", pa.array(np.zeros(4, np.float32))), replace=True)
    with pytest.raises(h5vec.FormatError, match=r"b\.h5: the schema of vector 'telemetry' changed since the "
                                                 r"dataset was opened: expected encoded_type 'Float64', "
                                                 r"found encoded_type 'Float32'"):
        ds.read()
    assert calls != []
    calls.clear()
    with pytest.raises(h5vec.FormatError, match=r"b\.h5: the schema of vector 'telemetry' differs from .*a\.h5's "
                                                 r"at \$\.x: expected encoded_type 'Float64'"):
        h5vec.open_dataset([a, b], NAME)
    assert calls != []  # b read in full
    with pytest.raises(h5vec.FormatError, match=r"b\.h5: the schema of vector 'telemetry' changed since the frame "
                                                 r"was made: expected encoded_type 'Float64', found"):
        ddf.compute(scheduler="sync")


def test_unchanged_files_are_not_opened_again_to_count(tmp_path, monkeypatch):
    """A dataset (or read_vector) of files this process counted, unchanged
    since, opens none of them; reads open and check them; a file written
    since is opened and counted again."""
    import h5vec._dataset as D
    import h5vec.dask as hd
    a, b = tmp_path / "a.h5", tmp_path / "b.h5"
    h5vec.save_vector(a, NAME, rows(0, 5))
    h5vec.save_vector(b, NAME, rows(5, 9))
    first = h5vec.open_dataset([a, b], NAME)
    hd.read_vector([a, b], NAME, columns=["id"])  # its meta, made once
    opened = []
    real = D.open_known
    monkeypatch.setattr(D, "open_known", lambda path, *args, **kw: opened.append(Path(path).name)
                        or real(path, *args, **kw))
    monkeypatch.setattr(hd, "open_known", D.open_known)
    again = h5vec.open_dataset([b, a], NAME)
    assert [f.rows for f in again.files] == [4, 5] and again.columns == first.columns and opened == []
    ddf = hd.read_vector([a, b], NAME, columns=["id"])
    assert opened == [] and ddf.npartitions == 2 and list(ddf.divisions) == [0, 5, 8]
    assert ddf.compute(scheduler="sync")["id"].tolist() == list(range(9))
    assert sorted(opened) == ["a.h5", "b.h5"]  # each partition opens its file
    assert again.read(columns="id")["id"].tolist() == [5, 6, 7, 8, 0, 1, 2, 3, 4]
    opened.clear()
    # b rewritten with more rows: opened and counted again.
    time.sleep(0.01)
    h5vec.save_vector(b, NAME, rows(5, 12), replace=True)
    grown = h5vec.open_dataset([a, b], NAME)
    assert [f.rows for f in grown.files] == [5, 7] and opened == ["b.h5"]
    # The dataset opened before still reads the rows it counted.
    assert first.read(columns="id")["id"].tolist() == list(range(9))
    # A file of fewer rows since: an error naming it, also in a read_vector partition.
    stale = hd.read_vector([a, b], NAME, columns=["id"])
    time.sleep(0.01)
    h5vec.save_vector(b, NAME, rows(5, 7), replace=True)
    with pytest.raises(h5vec.FormatError, match=r"b\.h5: vector 'telemetry' has 2 rows, fewer than the 7"):
        stale.compute(scheduler="sync")


def test_partition_opens_only_the_fields_it_reads(tmp_path):
    """A read_vector partition of some columns opens only their fields: a
    field damaged since the frame was made does not stop it; reading that
    field is an error."""
    a = tmp_path / "a.h5"
    h5vec.save_vector(a, NAME, rows(0, 5))
    from h5vec.dask import read_vector
    ddf = read_vector(a, NAME, columns=["id", "s"])
    whole = read_vector(a, NAME)
    with h5py.File(a, "r+") as f:
        del f[f"{NAME}/data/x"]
        f[f"{NAME}/data/x"] = np.zeros(3)  # a dataset where a group belongs
    assert ddf["id"].compute(scheduler="sync").tolist() == list(range(5))
    assert whole["id"].compute(scheduler="sync").tolist() == list(range(5))  # only id is read
    with pytest.raises(h5vec.FormatError, match="expected a group, found a dataset"):
        whole.compute(scheduler="sync")
    with pytest.raises(h5vec.FormatError):
        h5vec.open_vector(a, NAME)
    with pytest.raises(h5vec.FormatError):
        read_vector(a, NAME)


def test_nodes_this_version_does_not_know(tmp_path):
    """Files whose field has a codec of a newer h5vec form a dataset when they agree on it;
    the other columns read, that one is an error naming it; a file without it differs."""
    from h5vec import _h5

    def future(path, lo, hi):
        h5vec.save_vector(path, NAME, rows(lo, hi))
        with h5py.File(path, "r+") as f:
            node = f[f"{NAME}/metadata/schema/children/2/children/1"]  # x: Option<f64> -> its f64
            del node["codec"]
            _h5.write_fixed_str(node, "codec", "h5vec.FutureCodec")
    a, b, c = tmp_path / "a.h5", tmp_path / "b.h5", tmp_path / "c.h5"
    future(a, 0, 4)
    future(b, 4, 9)
    h5vec.save_vector(c, NAME, rows(9, 12))
    ds = h5vec.open_dataset([a, b], NAME)
    assert ds.columns == ["id", "x", "s", "ts", "l", "n", "level"]
    assert ds.read(columns=["id", "s"])["id"].tolist() == list(range(9))
    with pytest.raises(h5vec.FormatError, match="unknown codec h5vec.FutureCodec") as e:
        ds.read()
    assert e.value.path == "$.x"
    with pytest.raises(h5vec.FormatError, match=r"c\.h5: .* at \$\.x: expected codec 'h5vec\.FutureCodec'"):
        h5vec.open_dataset([a, c], NAME)
