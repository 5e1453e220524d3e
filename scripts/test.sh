#!/usr/bin/env bash
# Runs every test: the Rust workspace (unit, integration, doc and compile-fail
# tests) and the Python cross-language tests (h5py + numpy).
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ROOT"
pip_install -r tests/python/requirements.txt
cargo test --workspace
"$PY" -m pytest -q tests/python
