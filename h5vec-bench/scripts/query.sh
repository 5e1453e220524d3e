#!/usr/bin/env bash
# Issue 30's query benchmark, h5vec and its Parquet peers in one run:
#   bash h5vec-bench/scripts/query.sh [ROWS] [DIR]
# builds `query` in release, runs it (h5vec: load_where, column+filter,
# count_where, select_rows), then scripts/query.py (DuckDB, pandas, the
# h5vec Python package) on the same rows; appends to
# h5vec-bench/results/query-ROWS.jsonl and prints both tables.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
ROWS="${1:-20000000}"
DIR="${2:-/tmp/h5vec-query-bench}"
mkdir -p "$DIR"
OUT="$ROOT/h5vec-bench/results/query-$ROWS.jsonl"
cd "$ROOT"
cargo build --release -q -p h5vec-bench --bin query
"${CARGO_TARGET_DIR:-$ROOT/target}/release/query" --rows "$ROWS" --dir "$DIR" --reuse --jsonl "$OUT"
PYTHONPATH="$ROOT/python" python3 "$ROOT/h5vec-bench/scripts/query.py" --rows "$ROWS" --dir "$DIR" --jsonl "$OUT"
