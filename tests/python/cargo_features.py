"""The cargo features the tests build the workspace with: every feature of the
default build (the bundled HDF5), as scripts/env.sh exports them in
H5VEC_FEATURES. Not `--all-features`: `mpi` needs the system's parallel HDF5
and excludes the bundled one. Building with the same features as `cargo test`
reuses its artifacts."""

import os

FEATURES = os.environ.get(
    "H5VEC_FEATURES",
    "h5vec/arrow,h5vec/serde-columns,h5vec/chrono,h5vec/time,h5vec/uuid,h5vec/half,h5vec/num-complex,"
    "h5vec/lock-audit",
)
