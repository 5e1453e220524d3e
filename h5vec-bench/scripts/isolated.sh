#!/usr/bin/env bash
# The isolated check's cost (issue 28): open_untrusted / check_isolated
# against a plain load and the same check in process, on W1:
#
#   h5vec-bench/scripts/isolated.sh [ROWS] [REPS]     # default 1000000 9
#
# Output: h5vec-bench/results/isolated-ROWS.md
set -euo pipefail
ROWS=${1:-1000000}
REPS=${2:-9}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
TMP=${BENCH_TMP:-${TMPDIR:-/tmp}/h5vec-isolated-$$}
OUT="$ROOT/h5vec-bench/results/isolated-$ROWS.md"
cd "$ROOT"
echo "building (release)..." >&2
cargo build --release -q -p h5vec-bench --bin isolated
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release
mkdir -p "$TMP"
trap 'rm -rf "$TMP"' EXIT
{
  "$BIN/isolated" "$ROWS" "$REPS" "$TMP"
  echo
  echo "date: $(date -u +%FT%TZ); commit: $(git rev-parse --short HEAD);" \
    "command: h5vec-bench/scripts/isolated.sh $ROWS $REPS"
} | tee "$OUT"
