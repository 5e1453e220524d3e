#!/usr/bin/env bash
# Builds h5vec (with HDF5 from its bundled source) and runs the quickstart:
# 100 Measurements saved to quickstart.h5 and loaded back.
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ROOT"
cargo run --example quickstart -- "${1:-quickstart.h5}"
