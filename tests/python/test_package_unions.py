"""The Python package and enums with data (SPEC.md section 4.4) written by
examples/xlang_enums.rs: numpy rows as {"variant": name, **fields}, Arrow as
the dense union of SPEC.md section 11, pandas, row ranges, Option<union>,
lists of unions; a hostile tag is a FormatError naming the field and row;
writing a union from Python is refused."""

import shutil

import h5py
import numpy as np
import pyarrow as pa
import pytest

import h5vec
from test_enums_h5py import N, enums_file  # noqa: F401 (the fixture)


def event(i):
    """Row i of `event` as this package's numpy rows (see examples/xlang_enums.rs)."""
    k = i % 4
    if k == 0:
        return {"variant": "Idle"}
    if k == 1:
        return {"variant": "Tick", "1": i * 0.5}
    if k == 2:
        return {"variant": "Fill", "qty": 10 - i, "price": 1.25 * i}
    return {"variant": "note", "1": "n%d" % i, "2": list(range(i % 3))}


def arrow_event(i):
    """The same row as pyarrow's to_pylist of a dense union (the variant's struct)."""
    e = dict(event(i))
    del e["variant"]
    return e


def plain(row):
    if row is None:
        return None
    return {k: (v.tolist() if isinstance(v, np.ndarray) else v.item() if isinstance(v, np.generic) else v)
            for k, v in row.items()}


EVENT_TYPE = pa.union([
    pa.field("Idle", pa.struct([]), nullable=False),
    pa.field("Tick", pa.struct([pa.field("1", pa.float64(), nullable=False)]), nullable=False),
    pa.field("Fill", pa.struct([pa.field("qty", pa.int32(), nullable=False),
                                pa.field("price", pa.float64(), nullable=False)]), nullable=False),
    pa.field("note", pa.struct([pa.field("1", pa.large_string(), nullable=False),
                                pa.field("2", pa.large_list(pa.field("item", pa.uint16(), nullable=False)),
                                         nullable=False)]), nullable=False),
], mode="dense", type_codes=[0, 1, 2, 3])


def test_numpy_rows_are_variant_dicts(enums_file):  # noqa: F811
    d = h5vec.open_vector(enums_file.filename, "rows").read()
    ev = d["event"]
    assert ev.dtype == object and len(ev) == N
    assert [plain(r) for r in ev] == [event(i) for i in range(N)]
    assert type(ev[2]["qty"]) is np.int32
    maybe = [plain(r) for r in d["maybe"]]
    assert maybe == [event(i + 1) if i % 3 else None for i in range(N)]
    hist = [[plain(r) for r in h] for h in d["history"]]
    assert hist == [[event(i + k) for k in range(i % 3)] for i in range(N)]


def test_arrow_is_a_dense_union_with_tag_type_ids_and_index_offsets(enums_file):  # noqa: F811
    t = h5vec.open_vector(enums_file.filename, "rows").to_arrow()
    col = t.column("event").combine_chunks()
    assert col.type == EVENT_TYPE
    assert t.schema.field("event").nullable is False
    assert col.type_codes.to_pylist() == [i % 4 for i in range(N)]
    assert col.offsets.to_pylist() == [i // 4 for i in range(N)]
    assert col.to_pylist() == [arrow_event(i) for i in range(N)]
    assert col.field(2).to_pylist() == [{"qty": 8, "price": 2.5}, {"qty": 4, "price": 7.5}]
    assert col.field(0).type == pa.struct([]) and len(col.field(0)) == 3
    hist = t.column("history").combine_chunks()
    assert hist.type.value_type == EVENT_TYPE
    assert hist.to_pylist() == [[arrow_event(i + k) for k in range(i % 3)] for i in range(N)]


def test_option_union_has_nullable_children_null_in_the_tag_child(enums_file):  # noqa: F811
    t = h5vec.open_vector(enums_file.filename, "rows").to_arrow()
    col = t.column("maybe").combine_chunks()
    assert t.schema.field("maybe").nullable is True
    assert [f.nullable for f in col.type] == [True] * 4
    assert [f.type for f in col.type] == [f.type for f in EVENT_TYPE]
    assert col.to_pylist() == [arrow_event(i + 1) if i % 3 else None for i in range(N)]
    # The null rows are the first variant's placeholder rows, null there.
    assert col.type_codes.to_pylist() == [0 if i % 3 == 0 else (i + 1) % 4 for i in range(N)]
    assert col.field(0).is_null().to_pylist() == [True, True, True, False]


def test_row_range_reads_only_its_variants_spans(enums_file):  # noqa: F811
    v = h5vec.open_vector(enums_file.filename, "rows")
    col = v.to_arrow(rows=slice(3, 7)).column("event").combine_chunks()
    assert col.to_pylist() == [arrow_event(i) for i in range(3, 7)]
    # Offsets restart at 0 within each variant's span of the range.
    assert col.type_codes.to_pylist() == [3, 0, 1, 2]
    assert col.offsets.to_pylist() == [0, 0, 0, 0]
    assert [len(col.field(k)) for k in range(4)] == [1, 1, 1, 1]
    d = v.read(rows=slice(5, 9))
    assert [plain(r) for r in d["event"]] == [event(i) for i in range(5, 9)]


def test_pandas_column_of_variant_dicts(enums_file):  # noqa: F811
    df = h5vec.open_vector(enums_file.filename, "rows").to_pandas()
    assert df["event"].dtype == object
    assert [plain(r) for r in df["event"]] == [event(i) for i in range(N)]
    assert df["maybe"].isna().tolist() == [i % 3 == 0 for i in range(N)]


def test_tag_out_of_range_is_a_format_error_naming_field_and_row(enums_file, tmp_path):  # noqa: F811
    path = tmp_path / "bad.h5"
    shutil.copy(enums_file.filename, path)
    with h5py.File(path, "r+") as f:
        tag = f["rows/data/event/TAG"]
        tag.id.write(h5py.h5s.create_simple((1,)), _sel(tag, 6), np.array([9], np.uint8),
                     mtype=h5py.h5t.NATIVE_UINT8)
    v = h5vec.open_vector(str(path), "rows")
    with pytest.raises(h5vec.FormatError, match="tag 9 names no variant") as e:
        v.to_arrow()
    assert e.value.path == "$.event"
    assert e.value.location == "/rows/data/event/TAG[6]"
    # A range without the bad row still reads.
    assert v.to_arrow(rows=slice(0, 6)).column("event").to_pylist() == [arrow_event(i) for i in range(6)]


def _sel(ds, row):
    space = ds.id.get_space()
    space.select_hyperslab((row,), (1,))
    return space


def test_index_past_the_variants_rows_is_a_format_error(enums_file, tmp_path):  # noqa: F811
    path = tmp_path / "bad.h5"
    shutil.copy(enums_file.filename, path)
    with h5py.File(path, "r+") as f:
        idx = f["rows/data/event/INDEX"]
        idx[6] = 5  # row 6 is Fill's second row (INDEX 1); Fill holds 2 rows
    with pytest.raises(h5vec.FormatError, match="past the rows of variant 'Fill'") as e:
        h5vec.open_vector(str(path), "rows").read(rows=slice(6, 7))
    assert e.value.path == "$.event" and e.value.location == "/rows/data/event/INDEX[6]"
    with pytest.raises(h5vec.FormatError, match="out of order") as e:
        h5vec.open_vector(str(path), "rows").read()
    assert e.value.location == "/rows/data/event/INDEX[6]"


def test_a_union_read_by_the_package_saves_and_appends_back(enums_file, tmp_path):  # noqa: F811
    # Writing enums with data (issue 27): the dense union of to_arrow saves
    # back with the same TAG and INDEX, and an append continues them.
    t = h5vec.open_vector(enums_file.filename, "rows").to_arrow()
    out = tmp_path / "out.h5"
    h5vec.save_vector(str(out), "rows", t)
    with h5py.File(enums_file.filename, "r") as a, h5py.File(out, "r") as b:
        for ds in ("TAG", "INDEX"):
            assert b[f"rows/data/event/{ds}"].dtype == a[f"rows/data/event/{ds}"].dtype
            assert b[f"rows/data/event/{ds}"][:N].tolist() == a[f"rows/data/event/{ds}"][:N].tolist()
    assert h5vec.open_vector(str(out), "rows").to_arrow().equals(t)
    copy = tmp_path / "copy.h5"
    shutil.copy(enums_file.filename, copy)
    h5vec.append_vector(str(copy), "rows", t)
    back = h5vec.open_vector(str(copy), "rows").to_arrow()
    assert back.num_rows == 2 * N
    assert back.slice(N).equals(t) and back.slice(0, N).equals(t)
