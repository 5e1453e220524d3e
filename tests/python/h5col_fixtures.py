"""Tables written by the real h5col 0.4.0 (vendored in vendor/h5col, see
vendor/README.md) for the interop tests, and for the golden file
tests/golden/h5col/g_categorical_indexes.h5 (`python3 h5col_fixtures.py OUT.h5`).

`write_indexed_table(group)`: 10 rows, chunks of 4 rows; columns id (int64,
units/valid_min/valid_max/description), x (float64, one missing), level
(categorical Low/Mid/High, one missing), pay (categorical "Credit card"/Cash/
Dispute, ordered, one missing), flag (h5col bool); search indexes SORTED_ROWS
on id, CHUNK_MINMAX on x, BITMAP on level, and two of kinds h5col does not
build (CHUNK_BLOOM, FOO) linked to id. Index datasets get chunks of 64
bytes (h5col's INDEX_CHUNK_BYTES) to keep the files small."""

import sys
from pathlib import Path

import h5py
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent / "vendor"))

import h5col  # noqa: E402
from h5col import ColumnSpec, Table  # noqa: E402
from h5col import references  # noqa: E402

IDS = list(range(10))
XS = [0.5, 1.5, None, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5]
LEVELS = ["Low", "High", "Mid", "Mid", None, "Low", "High", "Low", "Mid", "High"]
PAYS = ["Cash", "Cash", "Credit card", None, "Dispute", "Cash", "Credit card", "Cash", "Dispute", "Cash"]
FLAGS = [i % 3 == 0 for i in range(10)]
LEVEL_LABELS = ["Low", "Mid", "High"]
PAY_LABELS = ["Credit card", "Cash", "Dispute"]

# What `h5col_interop append` adds (examples/h5col_interop.rs).
APPENDED = {
    "id": [10, 11, 12, 13],
    "x": [10.5, None, 12.5, 13.5],
    "level": ["High", "Low", None, "Mid"],
    "pay": ["Dispute", None, "Cash", "Credit card"],
    "flag": [True, False, True, False],
}


def write_indexed_table(group):
    # Small index chunks (h5col's default is 64 KiB each): a small file.
    h5col.indexes.INDEX_CHUNK_BYTES = 64
    chunks = (4,)
    t = Table.create(group, [
        ColumnSpec(name="id", dtype="int64", chunks=chunks, units="s", valid_min=0, valid_max=1000000,
                   description="row id"),
        ColumnSpec(name="x", dtype="float64", chunks=chunks),
        ColumnSpec(name="level", categories=LEVEL_LABELS, chunks=chunks),
        ColumnSpec(name="pay", categories=PAY_LABELS, ordered=True, chunks=chunks),
        ColumnSpec(name="flag", dtype="bool", chunks=chunks),
    ])
    t.append({"id": np.array(IDS, np.int64), "x": XS, "level": LEVELS, "pay": PAYS, "flag": FLAGS})
    t.build_index("id", "SORTED_ROWS")
    t.build_index("x", "CHUNK_MINMAX")
    t.build_index("level", "BITMAP")
    si = group["SEARCH_INDEXES"]
    for name, kind in (("id__bloom", "CHUNK_BLOOM"), ("id__foo", "FOO")):
        ds = si.create_dataset(name, data=np.zeros(3, np.uint8), chunks=(3,), maxshape=(None,))
        ds.attrs.create("KIND", np.bytes_(kind))
        ds.attrs.create("SOURCE_GENERATION", np.uint64(0))
        ds.attrs.create("SOURCE_NROWS", np.uint64(len(IDS)))
        references.append_ref_to_array_attr(group["id"], "SEARCH_INDEX_LIST", ds)
    return t


if __name__ == "__main__":
    with h5py.File(sys.argv[1], "w") as f:
        write_indexed_table(f.create_group("table"))
    print(h5col.__version__, h5py.__version__, h5py.version.hdf5_version)
