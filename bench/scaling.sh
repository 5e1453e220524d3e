#!/usr/bin/env bash
# The benchmark scripts live in h5vec-bench/scripts/ (results in
# h5vec-bench/results/); this forwards to h5vec-bench/scripts/scaling.sh.
exec bash "$(cd "$(dirname "$0")/.." && pwd)/h5vec-bench/scripts/scaling.sh" "$@"
