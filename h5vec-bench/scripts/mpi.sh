#!/usr/bin/env bash
# Issue 32's benchmark: W1 rows (SPEC's Measurement) saved by 2 MPI ranks
# into one file (h5vec::mpi, each rank half the rows) against one process
# saving all of them (h5vec::save_vector_with), uncompressed and with
# deflate 4, in the same build (Debian 12's parallel HDF5 1.10.8) and the
# same run, alternating; also h5vec::mpi on one rank, and one process
# followed by an fsync of its file (HDF5 1.10.8's MPI-IO driver syncs the
# file at every flush; a serial save leaves that to the kernel). Medians
# of REPS.
#
#   bash h5vec-bench/scripts/mpi.sh [ROWS=10000000] [REPS=5] [DIR=/tmp/h5vec-mpi-bench]
#
# Needs the packages of scripts/mpi_test.sh. Appends raw lines to
# h5vec-bench/results/mpi-ROWS.jsonl and prints the table.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
ROWS="${1:-10000000}"
REPS="${2:-5}"
DIR="${3:-/tmp/h5vec-mpi-bench}"
cd "$ROOT"
HDF5_DIR="${HDF5_DIR:-/usr/lib/x86_64-linux-gnu/hdf5/openmpi}" \
  cargo build --release -q -p h5vec --no-default-features --features mpi --example mpi_bench
EXE="${CARGO_TARGET_DIR:-$ROOT/target}/release/examples/mpi_bench"
MPIRUN=(mpirun --oversubscribe)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
mkdir -p "$DIR"
OUT="$ROOT/h5vec-bench/results/mpi-$ROWS.jsonl"
RUN="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
for rep in $(seq 1 "$REPS"); do
  for comp in none deflate; do
    # Alternate which side goes first.
    if [ $((rep % 2)) = 1 ]; then order="serial1 serialsync1 mpi2 mpi1"; else order="mpi2 mpi1 serialsync1 serial1"; fi
    for m in $order; do
      mode="${m%?}"; n="${m: -1}"
      # Every run starts with no dirty pages of an earlier one to write back.
      sync
      "${MPIRUN[@]}" -n "$n" "$EXE" "$mode" "$DIR/$m.h5" "$ROWS" "$comp" \
        | sed "s/^{/{\"run\": \"$RUN\", \"rep\": $rep, /" | tee -a "$OUT"
    done
  done
done
python3 - "$OUT" "$RUN" <<'PY'
import json, statistics, sys
out, run = sys.argv[1], sys.argv[2]
rows = [json.loads(l) for l in open(out) if json.loads(l).get("run") == run]
def med(mode, ranks, comp):
    xs = [r["seconds"] for r in rows if (r["mode"], r["ranks"], r["compression"]) == (mode, ranks, comp)]
    size = [r["bytes"] for r in rows if (r["mode"], r["ranks"], r["compression"]) == (mode, ranks, comp)][-1]
    return statistics.median(xs), min(xs), max(xs), size
n = rows[0]["rows"]
mb = n * 44 / 1e6
print(f"\nrun {run}: {n:,} W1 rows ({mb:.0f} MB of payload), medians of {len(rows) // 8}")
print("| compression | one process s (MB/s) | one process + fsync s | h5vec::mpi 2 ranks s (MB/s) | ratio 2 ranks / one process | ratio 2 ranks / one process + fsync | h5vec::mpi 1 rank s | file MiB one process / 2 ranks |")
print("|---|---|---|---|---|---|---|---|")
for comp in ("none", "deflate"):
    s, sl, sh, ss = med("serial", 1, comp)
    y, _, _, _ = med("serialsync", 1, comp)
    m, ml, mh, ms = med("mpi", 2, comp)
    o, _, _, _ = med("mpi", 1, comp)
    print(f"| {comp} | {s:.3f} ({mb / s:.0f}) [{sl:.3f}-{sh:.3f}] | {y:.3f} | {m:.3f} ({mb / m:.0f}) [{ml:.3f}-{mh:.3f}] | "
          f"**{m / s:.2f}** | **{m / y:.2f}** | {o:.3f} | {ss / 2**20:.1f} / {ms / 2**20:.1f} |")
PY
