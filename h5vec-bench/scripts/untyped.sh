#!/usr/bin/env bash
# Reading without the Rust type (issue 13's targets), side by side in one run:
#
#   h5vec-bench/scripts/untyped.sh [ROWS] [REPS]     # default 1000000 7
#
# 1. `untyped` (in process): typed load_vector against h5vec::arrow::read_vector
#    and against a scan through h5vec::arrow::batches, for W1 and W2.
# 2. untyped.py (processes, interleaved): `h5vec validate` of W2 against a
#    process doing the typed load; `h5vec convert w2.h5:events w2.parquet`
#    against pyarrow's write_table(compression="zstd") of the same table.
# Output: h5vec-bench/results/untyped-ROWS.md
set -euo pipefail
ROWS=${1:-1000000}
REPS=${2:-7}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PY=${PYTHON:-python3}
TMP=${BENCH_TMP:-${TMPDIR:-/tmp}/h5vec-untyped-$$}
OUT="$ROOT/h5vec-bench/results/untyped-$ROWS.md"
cd "$ROOT"
echo "building (release)..." >&2
cargo build --release -q -p h5vec-bench --bin untyped
cargo build --release -q -p h5vec-cli --bin h5vec
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release
mkdir -p "$TMP"
trap 'rm -rf "$TMP"' EXIT
{
  echo "# Reading without the type: $ROWS rows"
  echo
  echo "date: $(date -u +%FT%TZ); cpus: $(nproc); commit: $(git rev-parse --short HEAD); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  "$BIN/untyped" "$ROWS" "$REPS" "$TMP"
  echo
  "$PY" "$HERE/untyped.py" "$BIN" "$TMP" "$REPS"
  echo
  echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$OUT"
echo "wrote $OUT" >&2
