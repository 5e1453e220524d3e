#!/usr/bin/env bash
# Per-row cost of every h5vec phase at 100k, 1M and 10M rows: per-row cost
# should stay flat or fall as the vector grows.
#
#   h5vec-bench/scripts/scaling.sh [SIZES...]     # default: 100000 1000000 10000000; PASSES=3
#
# Runs the compare binary once per (workload, size) with the h5vec rows
# (uncompressed, deflate4, zstd): save into a fresh file, save into an
# existing file (truncated) and replacing the vector (--existing), load, and
# the deep clone of the input (the floor of any loader returning objects).
# Appends its JSON lines to h5vec-bench/results/scaling.jsonl and prints
# ns/row per size, the ratio to the smallest size (1.00 = linear) and, for
# loads, the ratio to the clone at the same size.
# 10M W2 rows need ~7 GB of RAM (input + loaded copy).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
RESULTS=$(dirname "$HERE")/results
PASSES=${PASSES:-3}
SIZES=("$@")
[[ ${#SIZES[@]} -gt 0 ]] || SIZES=(100000 1000000 10000000)
TMP=${BENCH_TMP:-${TMPDIR:-/tmp}/h5vec-scaling-$$}
OUT="$RESULTS/scaling.jsonl"
cd "$ROOT"
cargo build --release -q -p h5vec-bench --bin compare
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release
mkdir -p "$TMP"
trap 'rm -rf "$TMP"' EXIT
rm -f "$OUT"
for wl in w1 w2; do
  for n in "${SIZES[@]}"; do
    echo "scaling: $wl $n rows" >&2
    "$BIN/compare" --rows "$n" --workload "$wl" --passes "$PASSES" --warmup 1 --deflate --zstd \
      --existing --only h5vec,h5vec-deflate4,h5vec-zstd --no-compound --dir "$TMP" --jsonl "$OUT" > /dev/null
  done
done
python3 - "$OUT" <<'PY' | tee "$RESULTS/scaling.md"
import json, statistics, sys
from collections import defaultdict
g = defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line)
    g[(r["workload"], r["impl"], r["phase"], r["n"])].append(r["seconds"])
print("| workload | impl | phase | rows | median s | ns/row | vs smallest size | load / clone |")
print("|---|---|---|---:|---:|---:|---:|---:|")
base = {}
order = {"write": 0, "write-existing": 1, "write-replace": 2, "read": 3, "clone": 4}
for (wl, impl, ph, n) in sorted(g, key=lambda k: (k[0], k[1], order.get(k[2], 9), k[3])):
    m = statistics.median(g[(wl, impl, ph, n)])
    per = m / n * 1e9
    b = base.setdefault((wl, impl, ph), per)
    clone = g.get((wl, "rs-clone-vec", "clone", n))
    vs = f"{m / statistics.median(clone):.2f}" if ph == "read" and clone else "–"
    print(f"| {wl} | {impl[3:]} | {ph} | {n:,} | {m:.4f} | {per:.1f} | {per / b:.2f} | {vs} |")
PY
