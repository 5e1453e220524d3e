#!/usr/bin/env bash
# What the default statistics cost saves (issue 30,
# results/statistics-cost-1000000.md): one release `compare` binary, run
# with statistics on (default) and off (H5VEC_BENCH_STATISTICS=0),
# interleaved 7 times for W1 and W2 at 1M rows; JSON lines in $OUT
# (default /tmp/ab38), summarized by statistics_ab_stat.py.
#   bash h5vec-bench/scripts/statistics_ab.sh && python3 h5vec-bench/scripts/statistics_ab_stat.py
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="${OUT:-/tmp/ab38}"
cd "$ROOT"
cargo build --release -q -p h5vec-bench --bin compare
mkdir -p "$OUT" && rm -rf "${OUT:?}"/*
BIN="$OUT/compare-bin"
cp "${CARGO_TARGET_DIR:-$ROOT/target}/release/compare" "$BIN"
uptime > "$OUT/load-start.txt"
for i in 1 2 3 4 5 6 7; do for v in off on; do for w in w1 w2; do
  if [ "$v" = off ]; then export H5VEC_BENCH_STATISTICS=0; else unset H5VEC_BENCH_STATISTICS; fi
  "$BIN" --rows 1000000 --workload "$w" --passes 1 --warmup 1 \
    --dir "$OUT/d-$v" --jsonl "$OUT/$v.jsonl" --pass-label "$i" > /dev/null 2>>"$OUT/err.log"
  rm -rf "$OUT/d-$v"
done; done; done
uptime > "$OUT/load-end.txt"
