#!/usr/bin/env bash
# Runs every test: the Rust workspace (unit, integration, doc and compile-fail
# tests) and the Python cross-language tests (h5py + numpy).
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ROOT"
pip_install -r tests/python/requirements.txt
# The Python package (python/): its dependencies and extras, then the wheel
# `pip wheel` builds from the tree, installed in place of any earlier one.
pip_install "./python[arrow,pandas,polars,dask]"
WHEEL_DIR="$(mktemp -d)"
"$PY" -m pip wheel --quiet --disable-pip-version-check --no-deps -w "$WHEEL_DIR" ./python
pip_install --no-deps --force-reinstall "$WHEEL_DIR"/h5vec-*.whl
rm -rf "$WHEEL_DIR"
t0=$SECONDS
cargo test --workspace --features "$H5VEC_FEATURES"
echo "cargo test: $((SECONDS - t0)) s"
# The `h5vec` command the Python tests run (tests/python/test_cli_parquet.py,
# test_untyped_julia.py): the debug binary `cargo test` built beside the tests.
cargo build -p h5vec-cli --bin h5vec
export H5VEC_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/h5vec"
t0=$SECONDS
"$PY" -m pytest -q --durations=15 tests/python
echo "pytest: $((SECONDS - t0)) s"
