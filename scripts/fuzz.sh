#!/usr/bin/env bash
# Runs the mutation fuzzer (h5vec-fuzz) for a while, restarting it after
# every hang (the fuzzer's watchdog ends the process with exit code 86 and
# saves the input and a gdb backtrace), every leak (a mutant left HDF5
# objects open: exit code 87, input saved) and every abort (the process dies
# by a signal: this script saves the input named in DIR/current).
#
#   bash scripts/fuzz.sh [--minutes M] [--seed S] [--start I] [--dir DIR]
#                        [--timeout SECS] [--jobs J] [--mem-gb G] [--checksum]
#
# --checksum: the seeds are written with SaveOptions::checksum(true) (and
# strings in the VLS layout) into create_file files (object headers with
# HDF5's checksums, SPEC.md 6.4), so every value byte is checksummed: any load
# of different values without an error is a failure (its input is saved in
# DIR/*/crashes, and the summary counts them), except from mutants that
# recomputed HDF5's metadata checksums over the bytes they changed
# (`ok-different-forged`: forgeries, counted apart). Replay such mutants with
# `h5vec-fuzz replay --checksum --seed S --index I`.
#
# Mutant I of seed S is always the same input: `h5vec-fuzz replay --seed S
# --index I` rebuilds it. With --jobs J, J fuzzers run side by side on
# seeds S, S+1, ... (one directory each under DIR). At the end it prints
# `h5vec-fuzz summary` of each directory. Inputs worth keeping are in
# DIR/*/crashes; copy them into tests/fuzz/ (tests/fuzz_regressions.rs).
set -u
# Run from a copy: bash reads a script as it goes, and an edit of this file
# during a long run would break the running loop.
if [ -z "${H5VEC_FUZZ_ROOT:-}" ]; then
  H5VEC_FUZZ_ROOT="$(cd "$(dirname "$0")/.." && pwd)"
  export H5VEC_FUZZ_ROOT
  copy="$(mktemp "${TMPDIR:-/tmp}/h5vec-fuzz-XXXXXX.sh")"
  cp "$0" "$copy"
  exec bash "$copy" "$@"
fi
cd "$H5VEC_FUZZ_ROOT"
minutes=10 seed=1 start=0 dir=fuzz-out timeout=10 jobs=1 mem_gb=6 checksum=
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --start) start=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --mem-gb) mem_gb=$2; shift 2 ;;
    --checksum) checksum=--checksum; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done

source scripts/env.sh
# env.sh turns on -e; a fuzzer that ends by a hang or a signal is expected here.
set +e +o pipefail
cargo build --release -p h5vec-fuzz || exit 1
# A copy: a rebuild during the run must not replace the binary under the
# running fuzzers (gdb needs its symbols for the backtraces of hangs).
mkdir -p "$dir"
bin="$dir/h5vec-fuzz.bin"
cp "${CARGO_TARGET_DIR:-$PWD/target}/release/h5vec-fuzz" "$bin" || exit 1
until=$(( $(date +%s) + minutes * 60 ))

# One fuzzer: restart after each hang or abort until the time is up.
drive() {
  local s=$1 out=$2 next=$start rc cpid cur idx name entry input sig
  mkdir -p "$out/crashes"
  while [ "$(date +%s)" -lt "$until" ]; do
    # Allocations beyond the limit fail (and abort) instead of swapping.
    ( ulimit -v $(( mem_gb * 1024 * 1024 )); exec "$bin" run --dir "$out" --seed "$s" \
        --start "$next" --until "$until" --timeout "$timeout" $checksum ) 2>>"$out/stderr.log" &
    cpid=$!
    wait "$cpid"
    rc=$?
    [ "$rc" -eq 0 ] && break
    cur=$(cat "$out/current" 2>/dev/null) || { echo "no current mutant (exit $rc)" >&2; break; }
    read -r _ idx name entry input <<<"$cur"
    if [ "$rc" -gt 128 ]; then
      sig=$(( rc - 128 ))
      cp "$input" "$out/crashes/abort-$name-s$s-i$idx.h5" 2>/dev/null
      printf '{"class":"abort","seed":%s,"index":%s,"seed_name":"%s","entry":"%s","ops":"","secs":0,"detail":"signal %s","input":"abort-%s-s%s-i%s.h5"}\n' \
        "$s" "$idx" "$name" "$entry" "$sig" "$name" "$s" "$idx" >>"$out/events.jsonl"
      echo "seed $s mutant $idx ($name, $entry): killed by signal $sig" >&2
    elif [ "$rc" -eq 86 ]; then
      echo "seed $s mutant $idx ($name, $entry): hang (see $out/crashes)" >&2
    elif [ "$rc" -eq 87 ]; then
      echo "seed $s mutant $idx ($name): HDF5 objects left open (see $out/crashes)" >&2
    else
      echo "seed $s mutant $idx: fuzzer exited with $rc" >&2
      break
    fi
    rm -rf "/dev/shm/h5vec-fuzz-work-$cpid" "${TMPDIR:-/tmp}/h5vec-fuzz-work-$cpid"
    next=$(( idx + 1 ))
  done
}

pids=()
for j in $(seq 0 $(( jobs - 1 ))); do
  drive $(( seed + j )) "$dir/s$(( seed + j ))" &
  pids+=($!)
done
wait "${pids[@]}"
for j in $(seq 0 $(( jobs - 1 ))); do
  echo "== seed $(( seed + j ))"
  "$bin" summary "$dir/s$(( seed + j ))"
done
