#!/usr/bin/env bash
# Random access (issue 18, target 5): load_range of RANGE rows at random
# offsets of a ROWS-row deflated W2 vector, a fresh open per read, against
# pyarrow reading the same rows from a Parquet file written with defaults.
#
#   h5vec-bench/scripts/random_access.sh [ROWS] [RANGE]   # default 10000000 1000; ~5 min
#
# Untimed: the W2 rows (the Rust generator, exported by export_data for the
# Python side) saved by h5vec with deflate(4) and by pyarrow's write_table
# with its defaults. Timed: READS reads (default 101, after 5 warm-up
# reads) per implementation, same offsets (fixed seed). Output:
# h5vec-bench/results/random-access-ROWS.md (+ .jsonl). Env: READS,
# METHODS (Parquet methods of random_access.py, default
# "row-groups,read-table"; "all" adds dataset-take, ~2 s per read),
# BENCH_TMP (kept, and its files reused: ~2.5 GB at 10M rows),
# CARGO_TARGET_DIR, PYTHON.
set -euo pipefail
ROWS=${1:-10000000}
RANGE=${2:-1000}
READS=${READS:-101}
METHODS=${METHODS:-row-groups,read-table}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
RESULTS=$(dirname "$HERE")/results
TMP=${BENCH_TMP:-${TMPDIR:-/tmp}/h5vec-random-access-$$}
PY=${PYTHON:-python3}
OUT_JSONL="$RESULTS/random-access-$ROWS.jsonl"
OUT_MD="$RESULTS/random-access-$ROWS.md"

"$PY" -c "import numpy, pyarrow" 2>/dev/null || {
  echo "need python3 with numpy and pyarrow: pip install numpy pyarrow" >&2; exit 1; }
cd "$ROOT"
echo "building (release)..." >&2
cargo build --release -q -p h5vec-bench --bin random_access --bin export_data
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release
mkdir -p "$TMP"
# A BENCH_TMP given is kept, and the files in it reused by the next run.
[[ -n ${BENCH_TMP:-} ]] || trap 'rm -rf "$TMP"' EXIT
rm -f "$OUT_JSONL"
ENV_TXT="$TMP/env.txt"
{
  echo "date: $(date -u +%FT%TZ); host: $(uname -srm); cpus: $(nproc); rows: $ROWS; range: $RANGE; reads: $READS"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
  echo "rustc: $(rustc --version); commit: $(git rev-parse --short HEAD 2>/dev/null || echo ?)"
  echo "python: $("$PY" -c 'import sys, numpy, pyarrow; print(sys.version.split()[0], "numpy", numpy.__version__, "pyarrow", pyarrow.__version__)')"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$ENV_TXT"
"$BIN/export_data" --rows "$ROWS" --dir "$TMP/data"
"$BIN/random_access" --rows "$ROWS" --range "$RANGE" --reads "$READS" --dir "$TMP" \
  --offsets "$TMP/offsets.txt" --jsonl "$OUT_JSONL" --reuse
"$PY" "$HERE/random_access.py" read "$TMP/data" "$TMP/w2.parquet" "$TMP/offsets.txt" \
  --range "$RANGE" --method "$METHODS" >> "$OUT_JSONL"
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$ENV_TXT"
"$PY" "$HERE/random_access.py" summarize "$OUT_JSONL" "$ENV_TXT" > "$OUT_MD"
cat "$OUT_MD"
echo "wrote $OUT_MD and $OUT_JSONL" >&2
