#!/bin/bash
# Exhaustive crash-state replay for h5vec (see README.md here).
# usage: scripts/crash-replay/run.sh OUTDIR [BASE_STEPS [TRACE_STEPS]]
# Environment: H5VEC_CRASH_DEFLATE=1, H5VEC_CRASH_PLAIN_FILE=1 (as tests/crash.rs),
# H5VEC_REPLAY_TEAR=1 (also cut metadata writes at page boundaries).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
OUT="$(mkdir -p "$1" && cd "$1" && pwd)"; BASE=${2:-10}; STEPS=${3:-2}
cc -O2 -shared -fPIC -o "$OUT/wtrace.so" "$HERE/wtrace.c" -ldl
EXE=$(cd "$ROOT" && cargo test --release -p h5vec-tests --test crash --no-run --message-format=json 2>/dev/null \
      | python3 -c 'import json,sys
for l in sys.stdin:
    m=json.loads(l)
    if m.get("reason")=="compiler-artifact" and m["target"]["name"]=="crash" and m.get("executable"): print(m["executable"])' | tail -1)
run() { "$EXE" --ignored --exact "$1" --nocapture --test-threads=1; }
rm -f "$OUT/base.h5" "$OUT/log"
H5VEC_CRASH_FILE="$OUT/base.h5" run crash_new_file > /dev/null
H5VEC_CRASH_FILE="$OUT/base.h5" H5VEC_CRASH_STEPS=$BASE run crash_child > /dev/null
MIN=$(H5VEC_CRASH_FILE="$OUT/base.h5" H5VEC_CRASH_MIN=0 run crash_check | sed -n 's/.*len \([0-9]*\).*/\1/p')
cp "$OUT/base.h5" "$OUT/work.h5"
H5VEC_CRASH_FILE="$OUT/work.h5" H5VEC_CRASH_STEPS=$STEPS WTRACE_FILE="$OUT/work.h5" \
  WTRACE_LOG="$OUT/log" LD_PRELOAD="$OUT/wtrace.so" run crash_child > "$OUT/child.out"
rm -f "$OUT/work.h5"
echo "base: $BASE steps, v has $MIN rows; traced $STEPS more steps ($(grep -c begins "$OUT/child.out") operations)"
python3 "$HERE/replay.py" "$OUT/base.h5" "$OUT/log" "$EXE" "$MIN" "$OUT" ${H5VEC_REPLAY_TEAR:+--tear}
