"""Files MPI ranks wrote (SPEC.md section 16), read with plain h5py and the
package: examples/mpi_save.rs's particles, written by `mpirun -n 3` in
scripts/mpi_test.sh, which sets H5VEC_MPI_DIR (skipped without it: the
default build has no MPI). Rank r saved 1000 (r + 1) particles; particle
`id` follows from its row alone (examples/mpi_save.rs)."""

import os
from pathlib import Path

import h5py
import numpy as np
import pytest

import h5vec

DIR = os.environ.get("H5VEC_MPI_DIR")
pytestmark = pytest.mark.skipif(not DIR, reason="H5VEC_MPI_DIR unset: scripts/mpi_test.sh runs these")
RANKS = 3
N = 1000 * RANKS * (RANKS + 1) // 2


def expected():
    ids = np.arange(N, dtype=np.uint64)
    position = np.stack([ids.astype(np.float64), 0.5 * ids, -ids.astype(np.float64)], axis=1)
    species = ["e-" if i % 3 == 0 else "p+" for i in range(N)]
    hits = [list(range(i % 4)) for i in range(N)]
    charge = [None if i % 5 == 0 else (-1 if i % 2 == 0 else 1) for i in range(N)]
    return ids, position, species, hits, charge


def test_plain_h5py_reads_the_particles_row_by_row():
    ids, position, species, hits, charge = expected()
    with h5py.File(Path(DIR) / "particles.h5", "r") as f:
        z = int(f["particles/metadata/count"][()])
        assert z == N
        d = f["particles/data"]
        assert d["id/values"].dtype == np.dtype("<u8")
        np.testing.assert_array_equal(d["id/values"][:z], ids)
        np.testing.assert_array_equal(d["position/values"][:z], position)
        # SPEC 4.1's recipe (compressed strings: heap + pointers).
        p = d["species/pointers"][:z]
        heap = d["species/heap"][:]
        got = [bytes(heap[o:o + n]).split(b"\0")[0].decode() for o, n in zip(p["offset"], p["length"])]
        assert got == species
        # SPEC 4.2's recipe (OFFSETS + VALUES).
        off = d["hits/OFFSETS"][: z + 1]
        vals = d["hits/VALUES"][:]
        assert off[0] == 0
        assert [vals[off[i]:off[i + 1]].tolist() for i in range(z)] == hits
        # SPEC 4.3's recipe (MASK + values).
        mask = d["charge/MASK"][:z].astype(bool)
        values = d["charge/values"][:z]
        assert [int(v) if m else None for m, v in zip(mask, values)] == charge
        # Deflate through HDF5's parallel filtered writes.
        assert d["id/values"].compression == "gzip"


def test_the_package_reads_the_particles():
    ids, position, species, hits, charge = expected()
    v = h5vec.open_vector(str(Path(DIR) / "particles.h5"), "particles")
    assert len(v) == N
    t = v.to_arrow()
    assert t.column("id").to_pylist() == ids.tolist()
    assert t.column("position").to_pylist() == position.tolist()
    assert t.column("species").to_pylist() == species
    assert t.column("hits").to_pylist() == hits
    assert t.column("charge").to_pylist() == charge
