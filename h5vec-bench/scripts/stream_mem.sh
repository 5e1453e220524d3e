#!/usr/bin/env bash
# Bounded-memory streaming (issue 5): 50,000,000 Measurements written through
# VectorWriter and read back through VectorReader, each phase in its own
# process under /usr/bin/time -v (target: max RSS under 200 MiB per phase).
#
#   h5vec-bench/scripts/stream_mem.sh [ROWS] [extra stream_mem args, e.g. --deflate]
#
# Needs /usr/bin/time (apt-get install time). The file (~2.2 GB for 50M rows
# uncompressed) goes to BENCH_TMP (default /tmp) and is removed afterwards.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
ROWS=${1:-50000000}
shift || true
TMP=${BENCH_TMP:-${TMPDIR:-/tmp}}
FILE="$TMP/h5vec-stream-$$.h5"
[[ -x /usr/bin/time ]] || { echo "need /usr/bin/time: apt-get install time" >&2; exit 1; }
cd "$ROOT"
cargo build --release -q -p h5vec-bench --bin stream_mem
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release
trap 'rm -f "$FILE"' EXIT
for phase in write read; do
  extra=()
  [[ $phase == write ]] && extra=("$@")
  /usr/bin/time -v "$BIN/stream_mem" "$phase" --rows "$ROWS" --file "$FILE" "${extra[@]}" \
    2> "$TMP/stream-$phase.time"
  grep -E "Maximum resident|Elapsed \(wall|User time|System time" "$TMP/stream-$phase.time" | sed 's/^\s*/    /'
done
