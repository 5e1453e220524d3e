#!/usr/bin/env bash
# h5vec against its peers on the same data, in one run (issue 6).
#
#   h5vec-bench/scripts/compare.sh [ROWS]        # default 1000000; PASSES=3 (>= 3), ~4 min at 1M
#
# Measures W1 (Measurement) and W2 (Event) with
#   rs-h5vec, rs-h5vec-deflate4                 h5vec save_vector / load_vector
#   rs-h5vec-zstd                               the same with Blosc + Zstandard (compare.rs ZSTD_SETTING)
#   rs-baseline-chunk64k, rs-baseline-deflate4  hand-written hdf5-metno columns (64k chunks)
#   rs-compound-contig (W1)                     one contiguous compound write of the Vec
#   rs-clone-vec                                deep Vec::clone (floor of loaders returning objects)
#   py-h5py-cols                                h5py, numpy column arrays in/out
#   py-h5py-vlen (W2)                           h5py variable-length strings / lists
#   py-parquet-snappy, py-parquet-zstd          pyarrow write_table / read_table
# and for the Rust implementations, saves into an existing file (issue 18):
#   write-existing                              File::create truncating the file of the pass's save
#   write-replace                               File::open_rw + replacing the vector it holds
# The Rust generator's data are exported once (export_data, untimed) and the
# Python peers read those columns, so every implementation sees the same data.
# Each (implementation group, workload) runs in its own process: 1 unreported
# warm-up + 1 measured repetition, in PASSES interleaved passes with a
# rotating order. Output: h5vec-bench/results/results-ROWS.md (table + target
# checks) and h5vec-bench/results/results-ROWS.jsonl (raw). Env: PASSES, BENCH_TMP, CARGO_TARGET_DIR,
# PYTHON (python3), ARROW_DEFAULT_MEMORY_POOL (see README), TAG (results-ROWS-TAG.*).
set -euo pipefail
ROWS=${1:-1000000}
PASSES=${PASSES:-3}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
RESULTS=$(dirname "$HERE")/results
TMP=${BENCH_TMP:-${TMPDIR:-/tmp}/h5vec-compare-$$}
PY=${PYTHON:-python3}
OUT_JSONL="$RESULTS/results-$ROWS${TAG:+-$TAG}.jsonl"
OUT_MD="$RESULTS/results-$ROWS${TAG:+-$TAG}.md"
export GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072

"$PY" -c "import h5py, numpy, pyarrow" 2>/dev/null || {
  echo "need python3 with h5py, numpy and pyarrow: pip install h5py numpy pyarrow" >&2; exit 1; }

cd "$ROOT"
echo "building (release)..." >&2
cargo build --release -q -p h5vec-bench --bin compare --bin export_data
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release
mkdir -p "$TMP"
trap 'rm -rf "$TMP"' EXIT
"$BIN/export_data" --rows "$ROWS" --dir "$TMP/data"
rm -f "$OUT_JSONL"

# job = "rust WL" (all Rust implementations of WL in one process) or "py IMPL WL"
JOBS=(
  "rust w1" "py h5py-cols w1" "py parquet-snappy w1" "py parquet-zstd w1"
  "rust w2" "py h5py-cols w2" "py h5py-vlen w2" "py parquet-snappy w2" "py parquet-zstd w2"
)
ENV_TXT="$TMP/env.txt"
{
  echo "date: $(date -u +%FT%TZ); host: $(uname -srm); cpus: $(nproc); rows: $ROWS; passes: $PASSES"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
  echo "rustc: $(rustc --version); commit: $(git rev-parse --short HEAD 2>/dev/null || echo ?)"
  echo "python: $("$PY" -c 'import sys, h5py, numpy, pyarrow; print(sys.version.split()[0], "h5py", h5py.__version__, "HDF5", h5py.version.hdf5_version, "numpy", numpy.__version__, "pyarrow", pyarrow.__version__)')"
  echo "GLIBC_TUNABLES=$GLIBC_TUNABLES; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$ENV_TXT"

for ((p = 0; p < PASSES; p++)); do
  n=${#JOBS[@]}
  for ((k = 0; k < n; k++)); do
    job=${JOBS[$(((k + p) % n))]}
    set -- $job
    echo "pass $p: $job" >&2
    if [[ $1 == rust ]]; then
      "$BIN/compare" --rows "$ROWS" --workload "$2" --passes 1 --warmup 1 --deflate --zstd --existing \
        --dir "$TMP" --jsonl "$OUT_JSONL" --pass-label "$p" > "$TMP/last-rust.txt"
    else
      "$PY" "$HERE/peers.py" "$2" "$3" "$TMP/data" "$TMP/peer-$2-$3.bin" \
        --warmup 1 --reps 1 --pass "$p" >> "$OUT_JSONL"
    fi
  done
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$ENV_TXT"
"$PY" "$HERE/summarize.py" "$OUT_JSONL" "$ENV_TXT" > "$OUT_MD"
cat "$OUT_MD"
echo "wrote $OUT_MD and $OUT_JSONL" >&2
