"""Dask over many files, on a real cluster (dask.distributed.LocalCluster
with two worker processes): `h5vec.dask.read_vector` of a glob or a list
(partitions within one file, divisions over the global row numbers,
`filters=` dropping partitions), and `h5vec.dask.to_h5vec` (one part per
partition under a temporary name then renamed; a task that fails or whose
worker dies leaves no part a reader takes, and a retry succeeds).

The `h5vec` command ($H5VEC_BIN, else target/debug/h5vec) writes the
Rust file; without it that test is skipped.
"""

import glob
import os
import subprocess
import sys
import time
from pathlib import Path

import h5py
import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pd = pytest.importorskip("pandas")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

import h5vec  # noqa: E402
from h5vec.dask import read_vector, to_h5vec  # noqa: E402
from cli_bin import h5vec_bin  # noqa: E402

NAME = "telemetry"
# pandas' default dtype for strings: 'str' from pandas 3 (Arrow-backed, NaN for missing).
STR = str(pd.Series(["a"]).dtype)


H5VEC = h5vec_bin()


@pytest.fixture(scope="module")
def client():
    """Two worker processes, one thread each; they import this h5vec and pickle this module's functions by value."""
    import cloudpickle
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    package = str(Path(h5vec.__file__).resolve().parent.parent)
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = package + (os.pathsep + old if old else "")
    try:
        with distributed.LocalCluster(processes=True, n_workers=2, threads_per_worker=1,
                                      dashboard_address=None) as cluster, distributed.Client(cluster) as c:
            yield c
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


def rows(lo, hi):
    i = np.arange(lo, hi, dtype=np.int64)
    return pa.table({
        "id": pa.array(i),
        "x": pa.array(i * 0.25),
        "g": pa.array([("a", "b", "c")[k % 3] for k in i], pa.large_string()),
        "n": pa.array([None if k % 4 == 0 else int(k) for k in i], pa.int32()),
    })


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Five files (sorted names): Python (chunks of 8), Rust (chunks of 16), empty, appended to, Python."""
    d = tmp_path_factory.mktemp("many")
    h5vec.save_vector(d / "a.h5", NAME, rows(0, 37), chunk_length=8)
    if H5VEC is not None:
        pq.write_table(rows(37, 100), d / "b.parquet")
        subprocess.run([str(H5VEC), "convert", "--chunk-length", "16", str(d / "b.parquet"), f"{d / 'b.h5'}:{NAME}"],
                       check=True, capture_output=True)
    else:
        h5vec.save_vector(d / "b.h5", NAME, rows(37, 100), chunk_length=16)
    h5vec.save_vector(d / "c.h5", NAME, rows(0, 0))
    h5vec.save_vector(d / "d.h5", NAME, rows(100, 110), chunk_length=4)
    h5vec.append_vector(d / "d.h5", NAME, rows(110, 131))
    h5vec.save_vector(d / "e.h5", NAME, rows(131, 140), chunk_length=8)
    return d


def test_read_vector_of_a_glob(client, files):
    ddf = read_vector(str(files / "*.h5"), NAME, partition_rows=16)
    # a: 37 rows, chunks 8 -> 0,16,32; b: 63 rows, chunks 16 -> 37,53,69,85; c: none;
    # d: 31 rows, chunks 4 -> 100,116; e: 9 rows -> 131; then the last row.
    assert ddf.known_divisions
    assert ddf.divisions == (0, 16, 32, 37, 53, 69, 85, 100, 116, 131, 139)
    ds = h5vec.open_dataset(str(files / "*.h5"), NAME)
    want = ds.to_pandas()
    got = ddf.compute()
    pd.testing.assert_frame_equal(got, want)
    assert got["id"].tolist() == list(range(140))
    # Strings in pandas' default string dtype ('str' from pandas 3, as read_parquet gives).
    assert dict(got.dtypes.astype(str)) == {"id": "Int64", "x": "Float64", "g": STR, "n": "Int32"}
    # Each partition lies in one file.
    spans = [(f.start, f.stop) for f in ds.files]
    sizes = []
    for i in range(ddf.npartitions):
        part = ddf.get_partition(i).compute()
        sizes.append(len(part))
        lo, hi = int(part.index.min()), int(part.index.max())
        assert any(a <= lo and hi < b for a, b in spans), (i, lo, hi)
    assert sizes == [16, 16, 5, 16, 16, 16, 15, 16, 15, 9]
    # Computations on the cluster.
    assert ddf["x"].mean().compute() == pytest.approx(want["x"].mean())
    counts = ddf.groupby("g")["id"].count().compute().sort_index()
    assert counts.to_dict() == {"a": 47, "b": 47, "c": 46}
    assert ddf["n"].sum().compute() == want["n"].sum()
    # Column projection: a computation on one column reads that column alone
    # (fused: several partitions a task, see test_read_vector_fuses_reads_of_few_columns).
    assert [e.operand("_expr").columns for e in fused_reads(ddf["x"])] == [["x"]]
    from h5vec.dask import _Part
    part = _Part(NAME, None, None, "id")((str(files / "b.h5"), 2, 5, 37), columns=["x", "id"])
    assert part.columns.tolist() == ["x", "id"] and part.index.tolist() == [39, 40, 41]
    assert part["id"].tolist() == [39, 40, 41]
    assert _Part(NAME, None, None, "id")((str(files / "b.h5"), 2, 5, 37), columns=[]).shape == (3, 0)
    assert len(ddf) == 140 and len(ddf[ddf["g"] == "a"]) == 47
    sub = read_vector(str(files / "*.h5"), NAME, filters=[("id", ">=", 130)])[["n", "x"]].compute()
    assert sub.columns.tolist() == ["n", "x"] and sub.index.tolist() == list(range(130, 140))


def test_read_vector_of_a_list_and_one_file(client, files):
    ddf = read_vector([files / "e.h5", files / "c.h5", files / "a.h5"], NAME, columns=["id"])
    assert ddf.divisions == (0, 9, 45)
    assert ddf.compute()["id"].tolist() == list(range(131, 140)) + list(range(37))
    # One file: as before (its own row numbers, chunk-aligned partitions).
    one = read_vector(files / "a.h5", NAME, partition_rows=10)
    assert one.divisions == (0, 8, 16, 24, 32, 36)
    with h5vec.open_vector(files / "a.h5", NAME) as v:
        pd.testing.assert_frame_equal(one.compute(), v.to_pandas())
    # Only empty files: one empty partition.
    empty = read_vector([files / "c.h5", files / "c.h5"], NAME)
    assert empty.npartitions == 1 and empty.divisions == (0, 0)
    assert len(empty.compute()) == 0


def test_read_vector_filters_drop_partitions(client, files, tmp_path):
    # Non-null numbers carry chunk statistics (save_vector's default).
    for k, (lo, hi) in enumerate([(0, 40), (40, 40), (40, 100)]):
        h5vec.save_vector(tmp_path / f"s{k}.h5", NAME, {"id": np.arange(lo, hi, dtype=np.int64)}, chunk_length=8)
    flt = [("id", ">=", 50), ("id", "<", 60)]
    ddf = read_vector(str(tmp_path / "s*.h5"), NAME, partition_rows=8, filters=flt)
    # Partitions (8 rows each, per file): only 48..56 and 56..64 can match.
    assert ddf.divisions == (48, 56, 63)
    got = ddf.compute()
    assert got.index.tolist() == list(range(50, 60)) and got["id"].tolist() == list(range(50, 60))
    pd.testing.assert_frame_equal(got, h5vec.open_dataset(str(tmp_path / "s*.h5"), NAME).to_pandas(filters=flt))
    none = read_vector(str(tmp_path / "s*.h5"), NAME, filters=[("id", ">", 10_000)])
    assert none.npartitions == 1 and len(none.compute()) == 0
    # Files whose columns have no statistics (nullable here): every partition kept, rows filtered.
    flt = [("id", ">=", 35), ("id", "<", 40)]
    ddf = read_vector(str(files / "*.h5"), NAME, partition_rows=16, filters=flt)
    assert ddf.npartitions == 10
    got = ddf.compute()
    assert got.index.tolist() == [35, 36, 37, 38, 39]
    pd.testing.assert_frame_equal(got, h5vec.open_dataset(str(files / "*.h5"), NAME).to_pandas(filters=flt))


def typed_frame(n=50):
    i = np.arange(n)
    return pd.DataFrame({
        "i": i.astype(np.int64),
        "f": i * 0.5,
        "ts": pd.to_datetime(i * 3_600_000_000_123, unit="ns"),
        "tz": pd.to_datetime(i * 1_000_000_007, unit="ns", utc=True),
        "cat": pd.Categorical([None if k % 11 == 0 else ("low", "mid", "high")[k % 3] for k in i],
                              categories=["low", "mid", "high"]),
        "ni": pd.array([None if k % 3 == 0 else int(k) for k in i], "Int64"),
        "s": pd.array([None if k % 7 == 0 else f"s{k}" for k in i], "string"),
        "l": pd.Series([list(range(k % 4)) for k in i], dtype=pd.ArrowDtype(pa.large_list(pa.int64()))),
    })


def test_to_h5vec_round_trip(client, tmp_path):
    df = typed_frame()
    ddf = dd.from_pandas(df, npartitions=4)
    ddf = dd.concat([ddf, ddf[ddf["i"] < 0]])  # partitions of no rows at the end
    assert ddf.npartitions == 8
    out = tmp_path / "parts"
    paths = to_h5vec(ddf, out, NAME, chunk_length=5, compression="deflate")
    assert paths == [str(out / f"part-{k:05d}.h5") for k in range(8)]
    assert sorted(os.listdir(out)) == [f"part-{k:05d}.h5" for k in range(8)]
    ds = h5vec.open_dataset(str(out / "*.h5"), NAME)  # same schema in every part, the empty ones too
    assert [f.rows for f in ds.files] == [13, 13, 12, 12, 0, 0, 0, 0]
    with h5vec.open_vector(paths[-1], NAME) as v:
        assert len(v) == 0 and v.columns == list(df.columns) and v.chunk_rows() == 5
    back = read_vector(str(out / "*.h5"), NAME).compute()
    # What the package stores each dtype as, read back: datetimes in ns, a categorical
    # (no schema=) as an enum of its categories (the same dtype back, missing values
    # too), nullable ints as Int64, strings in pandas' default string dtype ('str' from
    # pandas 3, missing values NaN, as read_parquet gives), lists as objects.
    assert dict(back.dtypes.astype(str)) == {
        "i": "int64", "f": "float64", "ts": "datetime64[ns]", "tz": "datetime64[ns, UTC]",
        "cat": "category", "ni": "Int64", "s": STR, "l": "object"}
    assert back["cat"].dtype == df["cat"].dtype
    want = df.copy()
    want["ts"] = want["ts"].astype("datetime64[ns]")
    want["tz"] = want["tz"].astype("datetime64[ns, UTC]")
    want["s"] = pd.Series([None if v is pd.NA else v for v in df["s"]], dtype=STR)
    want["l"] = pd.Series([list(v) for v in df["l"]], dtype=object)
    pd.testing.assert_frame_equal(back, want, check_index_type=False)
    assert back.index.tolist() == list(range(50))
    assert [None if v is None or v != v else v for v in back["s"].tolist()] == \
        [None if k % 7 == 0 else f"s{k}" for k in range(50)]
    # The parts hold the strings in the heap layout (to_h5vec's default, SPEC 4.1).
    with h5py.File(paths[0], "r") as f:
        assert sorted(f[f"{NAME}/data/s"].keys()) == ["heap", "pointers"]
    assert back["l"].tolist() == [list(range(k % 4)) for k in range(50)]

    # read_vector -> to_h5vec -> read_vector is exact: the stored layouts ride along in the meta.
    first = read_vector(str(out / "*.h5"), NAME, partition_rows=5)
    again = to_h5vec(first, tmp_path / "again", NAME)
    assert len(again) == first.npartitions == 12  # 13, 13, 12, 12 rows in chunks of 5: 3 partitions each
    back2 = read_vector(str(tmp_path / "again" / "*.h5"), NAME).compute()
    pd.testing.assert_frame_equal(back2, back, check_index_type=True)
    assert h5vec.open_dataset(again, NAME).schema == h5vec.open_dataset(paths, NAME).schema


@pytest.mark.skipif(H5VEC is None, reason="no h5vec binary at $H5VEC_BIN or target/debug/h5vec")
def test_rust_reads_the_parts_as_one_vector(client, tmp_path):
    """The command (Rust, through h5vec::Dataset) reads the parts to_h5vec wrote
    (empty ones too) as one vector: the same Arrow table as the package's."""
    import pyarrow.parquet as pq
    ddf = dd.concat([dd.from_pandas(typed_frame(), npartitions=3), dd.from_pandas(typed_frame(0), npartitions=1)])
    paths = to_h5vec(ddf, tmp_path / "parts", NAME, chunk_length=8)
    assert len(paths) == 4
    out = tmp_path / "all.parquet"
    proc = subprocess.run([str(H5VEC), "convert", f"{tmp_path / 'parts'}/*.h5:{NAME}", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    got = pq.read_table(out)
    want = h5vec.open_dataset(str(tmp_path / "parts" / "*.h5"), NAME).to_arrow()
    assert got.num_rows == want.num_rows == 50
    assert got.schema.names == want.schema.names
    for name in want.schema.names:
        assert got[name].to_pylist() == want[name].to_pylist(), name
    for args, want in ((["count", *paths, NAME], "50"),
                       (["count", f"{tmp_path / 'parts'}/part-*.h5", NAME, "--where", "i >= 48 or f < 1"], "4"),
                       (["rows", f"{tmp_path / 'parts'}/part-*.h5", NAME, "--where", "i >= 48 or f < 1"],
                        "0 1 48 49")):
        proc = subprocess.run([str(H5VEC), *args], capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0 and " ".join(proc.stdout.split()) == want, (args, proc.stdout, proc.stderr)


def test_to_h5vec_enum_categorical_exact(client, tmp_path):
    """A categorical written with an enum schema reads back as that categorical, and again after a second trip."""
    node = {"kind": "record", "schema": "HDF5Vectors.RecordSchema", "codec": "HDF5Vectors.StructCodec",
            "logical_type": "Reading", "field_names": ["level", "v"],
            "children": [{"kind": "scalar", "schema": "HDF5Vectors.ScalarSchema", "codec": "HDF5Vectors.EnumCodec",
                          "logical_type": "Level", "encoded_type": "Int8", "labels": {"low": 0, "mid": 1, "high": 2}},
                         {"kind": "scalar", "schema": "HDF5Vectors.ScalarSchema",
                          "codec": "HDF5Vectors.IdentityCodec", "logical_type": "f64", "encoded_type": "Float64"}]}
    df = pd.DataFrame({"level": pd.Categorical([("low", "mid", "high")[k % 3] for k in range(30)],
                                               categories=["low", "mid", "high"]),
                       "v": np.arange(30) / 4})
    to_h5vec(dd.from_pandas(df, npartitions=3), tmp_path / "a", NAME, schema=node)
    first = read_vector(str(tmp_path / "a" / "*.h5"), NAME)
    back = first.compute()
    pd.testing.assert_frame_equal(back, df, check_index_type=False)
    assert back["level"].dtype == pd.CategoricalDtype(["low", "mid", "high"])
    to_h5vec(first, tmp_path / "b", NAME)
    back2 = read_vector(str(tmp_path / "b" / "*.h5"), NAME).compute()
    pd.testing.assert_frame_equal(back2, back, check_index_type=True)


def test_to_h5vec_infers_object_columns_from_the_first_rows(client, tmp_path):
    # As to_parquet(schema="infer"): an object column's type is Arrow's inference from the
    # first partition that has rows (empty ones before it), nullable, the same for every
    # part; the frame reads back exactly (dtypes too).
    import dask
    df = pd.DataFrame({
        "i": np.arange(30, dtype=np.int64),
        "l": pd.Series([list(range(k % 4)) for k in range(30)], dtype=object),
        "b": pd.Series([bytes([k]) * (k % 5) for k in range(30)], dtype=object),
        "s": pd.array([None if k % 9 == 4 else ("NA" if k % 7 == 0 else f"s{k}") for k in range(30)], dtype=STR),
    })
    df.loc[17, "l"] = None  # a None after the partition the type came from
    with dask.config.set({"dataframe.convert-string": False}):  # Dask would turn the lists into text
        ddf = dd.from_pandas(df, npartitions=3)
    ddf = dd.concat([ddf[ddf["i"] < 0], ddf])
    assert ddf.npartitions == 6
    paths = to_h5vec(ddf, tmp_path / "inf", NAME)
    with h5vec.open_vector(paths[0], NAME) as v:
        assert len(v) == 0
        kids = dict(zip(v.schema["field_names"], v.schema["children"]))
        assert kids["l"]["kind"] == "nullable" and kids["l"]["children"][0]["kind"] == "list"
        assert kids["b"]["kind"] == "nullable" and kids["b"]["children"][0]["kind"] == "blob"
        assert kids["s"]["kind"] == "vls_string"
    ds = h5vec.open_dataset(paths, NAME)
    assert [f.rows for f in ds.files] == [0, 0, 0, 10, 10, 10]
    back = read_vector(str(tmp_path / "inf" / "*.h5"), NAME).compute()
    assert dict(back.dtypes.astype(str)) == {"i": "int64", "l": "object", "b": "object", "s": STR}
    assert back["l"].tolist() == df["l"].tolist()
    assert back["b"].tolist() == df["b"].tolist()
    assert back["s"].isna().tolist() == df["s"].isna().tolist()
    assert back["s"].dropna().tolist() == df["s"].dropna().tolist()
    pd.testing.assert_frame_equal(back, df, check_index_type=False)


def test_to_h5vec_directory_rules(client, tmp_path):
    ddf = dd.from_pandas(pd.DataFrame({"k": np.arange(40, dtype=np.int64)}), npartitions=4)
    out = tmp_path / "d"
    assert len(to_h5vec(ddf, out, NAME)) == 4
    (out / "notes.txt").write_text("kept")
    with pytest.raises(FileExistsError, match="is not empty"):
        to_h5vec(ddf, out, NAME)
    paths = to_h5vec(ddf.repartition(npartitions=2), out, NAME, overwrite=True)
    assert sorted(os.listdir(out)) == ["notes.txt", "part-00000.h5", "part-00001.h5"]
    assert h5vec.open_dataset(paths, NAME).read()["k"].tolist() == list(range(40))
    # An object column whose partitions are all empty says nothing Arrow can type.
    with pytest.raises(TypeError, match="column 'o' has dtype object"):
        import dask
        with dask.config.set({"dataframe.convert-string": False}):
            obj = dd.from_pandas(pd.DataFrame({"o": pd.Series([[1], [2]], dtype=object)}), npartitions=1)
        to_h5vec(obj[obj["o"].isna()], tmp_path / "o", NAME)
    with pytest.raises(ValueError, match="invalid vector name"):
        to_h5vec(ddf, tmp_path / "x", "a/b")


# -- failures ---------------------------------------------------------------


def _install_fault(flag, part, how):
    """In a worker: h5vec's dataset writer fails for `part` while `flag` exists (after its temporary file
    is created): `how` = "raise" raises, "kill" removes the flag and ends the process at once."""
    from h5vec import _write
    orig = getattr(_write, "_orig_write_field", _write.write_field)
    _write._orig_write_field = orig

    def write_field(group, *args, **kw):
        filename = os.path.basename(group.file.filename)
        if filename.startswith(f".{part}.tmp-") and os.path.exists(flag):
            if how == "raise":
                raise RuntimeError(f"injected failure writing {filename}")
            try:
                os.remove(flag)
            except FileNotFoundError:
                pass
            else:
                os._exit(17)
        return orig(group, *args, **kw)
    _write.write_field = write_field


def _remove_fault():
    from h5vec import _write
    if hasattr(_write, "_orig_write_field"):
        _write.write_field = _write._orig_write_field


def _idle(client, timeout=20):
    end = time.time() + timeout
    while any(client.processing().values()) and time.time() < end:
        time.sleep(0.05)


def test_failed_task_leaves_no_part_and_retry_succeeds(client, tmp_path):
    df = pd.DataFrame({"k": np.arange(60, dtype=np.int64), "s": pd.array([f"v{k}" for k in range(60)], "string")})
    ddf = dd.from_pandas(df, npartitions=3)
    out, flag = tmp_path / "out", tmp_path / "flag"
    flag.write_text("")
    client.run(_install_fault, str(flag), "part-00001.h5", "raise")
    try:
        with pytest.raises(RuntimeError, match=r"injected failure writing \.part-00001\.h5\.tmp-"):
            to_h5vec(ddf, out, NAME)
        _idle(client)
        # Tasks the failure released may still be running on a worker (Dask does not
        # interrupt them): wait until they end, each renaming its temporary file.
        end = time.time() + 30
        while [n for n in os.listdir(out) if ".tmp-" in n] and time.time() < end:
            time.sleep(0.05)
        names = os.listdir(out)
        assert "part-00001.h5" not in names
        assert not [n for n in names if ".tmp-" in n]  # the failed task removed its temporary file
        # What a reader takes is complete.
        taken = sorted(glob.glob(str(out / "*.h5")))
        assert taken == [str(out / n) for n in sorted(names)]
        for p in taken:
            with h5vec.open_vector(p, NAME) as v:
                assert len(v) == 20
        # The retry (overwrite) succeeds.
        flag.unlink()
        paths = to_h5vec(ddf, out, NAME, overwrite=True)
        assert sorted(os.listdir(out)) == ["part-00000.h5", "part-00001.h5", "part-00002.h5"]
        assert read_vector(paths, NAME).compute()["k"].tolist() == list(range(60))
    finally:
        client.run(_remove_fault)


def test_worker_killed_mid_partition_leaves_no_part_a_reader_takes(client, tmp_path):
    df = pd.DataFrame({"k": np.arange(60, dtype=np.int64), "x": np.arange(60) / 8})
    ddf = dd.from_pandas(df, npartitions=3)
    out, flag = tmp_path / "out", tmp_path / "flag"
    flag.write_text("")
    client.run(_install_fault, str(flag), "part-00002.h5", "kill")
    try:
        # The worker writing part 2 dies with its temporary file half written; Dask runs the task
        # again on a worker that lives, which writes the part under a new temporary name.
        paths = to_h5vec(ddf, out, NAME)
        assert not flag.exists()  # the fault did fire
        names = sorted(os.listdir(out))
        left = [n for n in names if ".tmp-" in n]
        assert len(left) == 1 and left[0].startswith(".part-00002.h5.tmp-")
        assert sorted(glob.glob(str(out / "*.h5"))) == paths
        back = read_vector(str(out / "*.h5"), NAME).compute()
        pd.testing.assert_frame_equal(back, df, check_index_type=False)
        # A new write over the directory clears the leftover.
        to_h5vec(ddf, out, NAME, overwrite=True)
        assert sorted(os.listdir(out)) == ["part-00000.h5", "part-00001.h5", "part-00002.h5"]
    finally:
        client.wait_for_workers(2, timeout=60)
        client.run(_remove_fault)


def test_a_file_that_shrank_is_an_error(client, tmp_path):
    p = tmp_path / "a.h5"
    h5vec.save_vector(p, NAME, {"k": np.arange(10, dtype=np.int64)})
    ddf = read_vector([p], NAME)
    h5vec.save_vector(p, NAME, {"k": np.arange(4, dtype=np.int64)}, replace=True)
    with pytest.raises(h5vec.FormatError, match=r"a\.h5: vector 'telemetry' has 4 rows, fewer than the 10"):
        ddf.compute()


def fused_reads(coll):
    """The FusedIO expressions of `coll` after Dask's optimizer (before its blockwise fusion, which hides them)."""
    from dask.dataframe.dask_expr.io.io import FusedIO
    return [e for e in coll.optimize(fuse=False).expr.walk() if isinstance(e, FusedIO)]


def same(df):
    return df


def fusion_rows(lo, hi):
    i = np.arange(lo, hi, dtype=np.int64)
    return pa.table({
        "id": pa.array(i),  # Int64: 8 bytes a row
        "x": pa.array(i * 0.25),  # Float64: 8 (sums of quarters are exact)
        "g": pa.array([("a", "b", "c")[k % 3] for k in i], pa.large_string()),  # 32 (an estimate)
        "l": pa.array([list(range(k % 3)) if k % 5 else None for k in i], pa.list_(pa.int64())),  # object: 32
        "n": pa.array([None if k % 4 == 0 else int(k) for k in i], pa.int32()),  # Int32: 4
    })


@pytest.fixture(scope="module")
def eight(tmp_path_factory):
    """Eight files of 1,000 rows (chunks of 100): one partition each by default."""
    d = tmp_path_factory.mktemp("eight")
    for k in range(8):
        h5vec.save_vector(d / f"p{k}.h5", NAME, fusion_rows(k * 1000, (k + 1) * 1000), chunk_length=100)
    return d


def test_read_vector_fuses_reads_of_few_columns(client, eight):
    """A computation on few columns reads several whole partitions in one
    task (Dask's FusedIO, as for read_parquet): column x holds 8 of a row's
    84 bytes (id 8 + x 8 + g 32 + l 32 + n 4), so up to ceil(84 / 8) = 11
    partitions a task, capped by Dask at ceil(sqrt(8)) = 3: 3 tasks for 8
    partitions. The frame keeps one partition a file."""
    ddf = read_vector(str(eight / "*.h5"), NAME)
    want = h5vec.open_dataset(str(eight / "*.h5"), NAME).to_pandas()
    assert ddf.npartitions == 8
    assert ddf.divisions == (0, 1000, 2000, 3000, 4000, 5000, 6000, 7000, 7999)
    x = ddf["x"]
    [fused] = fused_reads(x)
    assert fused.operand("_expr").columns == ["x"]
    assert fused.operand("_expr")._fusion_compression_factor == 8 / 84
    buckets = fused._fusion_buckets
    assert len(buckets) == 3 and [p for b in buckets for p in b] == list(range(8))
    assert len(x.optimize().__dask_graph__()) == 3  # was 8: one read (and projection) a partition
    assert all(k[0].startswith("h5vec-") for k in x.optimize().__dask_graph__())
    assert x.optimize().npartitions == 3 and x.npartitions == 8
    # Exact: every sum of quarters below 2**53 is.
    got = x.mean().compute()
    assert got == want["x"].mean() == 3999.5 * 0.25
    # The frame itself is untouched: its partitions are still one file each.
    assert ddf.npartitions == 8 and x.npartitions == 8
    for i in (0, 3, 7):
        part = ddf.partitions[i]["x"]
        assert part.optimize().npartitions == 1
        assert part.compute().index.tolist() == list(range(i * 1000, (i + 1) * 1000))
    assert ddf.map_partitions(len).compute().tolist() == [1000] * 8
    # The index alone (len) reads the narrowest column (n: Int32, 4 of 84 bytes), fused.
    [index_read] = fused_reads(ddf.index.size)
    assert index_read.operand("_expr").columns == ["n"] and len(index_read._fusion_buckets) == 3
    assert len(ddf) == 8000 and len(ddf[ddf["g"] == "a"]) == 2667
    # A group-by count reads g and id: 40 of 84 bytes, ceil(84 / 40) = 3 partitions a task.
    gb = ddf.groupby("g")["id"].count()
    [fused] = fused_reads(gb)
    assert sorted(fused.operand("_expr").columns) == ["g", "id"] and len(fused._fusion_buckets) == 3
    assert gb.compute().sort_index().to_dict() == {"a": 2667, "b": 2667, "c": 2666}
    assert gb.compute().sort_index().to_dict() == want.groupby("g")["id"].count().to_dict()


def test_read_vector_reading_every_column_does_not_fuse(client, eight):
    ddf = read_vector(str(eight / "*.h5"), NAME)
    assert fused_reads(ddf) == [] and len(ddf.optimize().__dask_graph__()) == 8
    assert fused_reads(ddf.map_partitions(len)) == []
    # The frame's columns are what columns= read: all of them, so no fusion either.
    only = read_vector(str(eight / "*.h5"), NAME, columns=["x"])
    assert fused_reads(only["x"]) == [] and len(only["x"].optimize().__dask_graph__()) == 8
    assert only["x"].sum().compute() == sum(i * 0.25 for i in range(8000))
    # Two partitions a file (partition_rows=500): 16 partitions, reads of x fused 4 a task.
    half = read_vector(str(eight / "*.h5"), NAME, partition_rows=500)
    assert half.npartitions == 16 and half.divisions[:3] == (0, 500, 1000)
    [fused] = fused_reads(half["x"])
    assert len(fused._fusion_buckets) == 4
    assert half["x"].sum().compute() == sum(i * 0.25 for i in range(8000))


def test_read_vector_fused_values_equal_the_unfused(client, eight, monkeypatch):
    """Fused reads give the values, dtypes and index the files hold, as the
    unfused path (`dd.from_map`, which read_vector falls back to on a Dask
    without the internals) does; Dask's string conversion stays off."""
    import dask
    import h5vec._dask_fusion as fusion
    pattern = str(eight / "*.h5")
    want = pd.concat([h5vec.open_vector(eight / f"p{k}.h5", NAME).to_pandas() for k in range(8)], ignore_index=True)
    pd.testing.assert_frame_equal(want, h5vec.open_dataset(pattern, NAME).to_pandas())
    assert dict(want.dtypes.astype(str)) == {"id": "Int64", "x": "Float64", "g": STR, "l": "object", "n": "Int32"}
    flt = [("id", ">=", 2500), ("id", "<", 5200)]

    def collections(ddf):
        return {
            "all": ddf,
            "x,n": ddf[["x", "n"]].map_partitions(same),  # (a projection alone is not fused: no task above it)
            "l": ddf["l"].map_partitions(same),
            "g==a": ddf[ddf["g"] == "a"][["id", "l"]],
            "count": ddf.groupby("g")["id"].count(),
            "size": ddf.groupby("g").size(),
            "len": ddf.index.size,
            "filtered": read_vector(pattern, NAME, filters=flt)[["x", "l"]].map_partitions(same),
            "columns=": read_vector(pattern, NAME, columns=["n", "x", "l"])[["l", "x"]].map_partitions(same),
        }

    with dask.config.set({"dataframe.convert-string": True}):
        fused = collections(read_vector(pattern, NAME))
        assert {k: len(fused_reads(c)) for k, c in fused.items()} == {
            "all": 0, "x,n": 1, "l": 1, "g==a": 1, "count": 1, "size": 1, "len": 1, "filtered": 1, "columns=": 1}
        got = {k: c.compute() for k, c in fused.items()}
        monkeypatch.setattr(fusion, "EXPR", None)
        plain = collections(read_vector(pattern, NAME))
        assert type(plain["all"].expr).__name__ == "FromMapProjectable"
        assert plain["all"].divisions == fused["all"].divisions
        assert all(fused_reads(c) == [] for c in plain.values())
        unfused = {k: c.compute() for k, c in plain.items()}
    for key, frame in got.items():
        assert type(frame) is type(unfused[key]), key
        if isinstance(frame, pd.Series):
            pd.testing.assert_series_equal(frame, unfused[key], check_exact=True)
        elif not isinstance(frame, pd.DataFrame):
            assert frame == unfused[key], key
        else:
            pd.testing.assert_frame_equal(frame, unfused[key], check_exact=True)
    pd.testing.assert_frame_equal(got["all"], want, check_exact=True)
    pd.testing.assert_frame_equal(got["x,n"], want[["x", "n"]], check_exact=True)
    pd.testing.assert_series_equal(got["l"], want["l"])
    assert not isinstance(got["l"].iloc[2], str) and list(got["l"].iloc[2]) == [0, 1]  # lists, not their text
    assert got["l"].iloc[0] is None
    pd.testing.assert_frame_equal(got["g==a"], want[want["g"] == "a"][["id", "l"]])
    pd.testing.assert_series_equal(got["count"], want.groupby("g")["id"].count())
    assert got["size"].tolist() == [2667, 2667, 2666]
    assert got["len"] == 8000
    sub = want[(want["id"] >= 2500) & (want["id"] < 5200)][["x", "l"]]
    pd.testing.assert_frame_equal(got["filtered"], sub)
    assert got["filtered"].index.tolist() == list(range(2500, 5200))
    pd.testing.assert_frame_equal(got["columns="], want[["l", "x"]])


def test_read_vector_fusion_of_no_rows(client, tmp_path):
    for k in range(3):
        h5vec.save_vector(tmp_path / f"e{k}.h5", NAME, fusion_rows(0, 0))
    ddf = read_vector(str(tmp_path / "e*.h5"), NAME)
    assert ddf.npartitions == 1 and ddf.divisions == (0, 0)
    x = ddf["x"].compute()
    assert len(x) == 0 and str(x.dtype) == "Float64"
    assert ddf.groupby("g")["id"].count().compute().tolist() == []
    assert str(ddf["l"].compute().dtype) == "object"


def test_fusion_factor():
    from h5vec._dask_fusion import compression_factor, row_bytes
    meta = pd.DataFrame({"a": pd.array([], "Int64"), "b": np.array([], np.float32), "s": pd.Series([], dtype=object),
                         "t": np.array([], "M8[ns]")})
    assert row_bytes(meta.dtypes) == 8 + 4 + 32 + 8
    assert compression_factor(meta, None) == 1
    assert compression_factor(meta, ["t", "s", "b", "a"]) == 1
    assert compression_factor(meta, ["b"]) == 4 / 52
    assert compression_factor(meta, ["s", "a"]) == 40 / 52
    assert compression_factor(meta, []) == 8 / 52  # the first column, read for the row count
    wide = pd.DataFrame({f"c{i}": np.array([], np.int8) for i in range(2000)})
    assert compression_factor(wide, ["c0"]) == 0.001
