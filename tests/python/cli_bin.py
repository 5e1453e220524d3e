"""The `h5vec` command the tests run: $H5VEC_BIN if that file exists, else
target/debug/h5vec of this workspace (or of $CARGO_TARGET_DIR); None when
neither is built."""

import os
from pathlib import Path

WORKSPACE = Path(__file__).resolve().parent.parent.parent


def h5vec_bin():
    env = os.environ.get("H5VEC_BIN")
    cands = [Path(env)] if env else []
    target = Path(os.environ.get("CARGO_TARGET_DIR", WORKSPACE / "target"))
    cands.append((target if target.is_absolute() else WORKSPACE / target) / "debug" / "h5vec")
    return next((p for p in cands if p.is_file()), None)
