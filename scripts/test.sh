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
cargo test --workspace
"$PY" -m pytest -q tests/python
