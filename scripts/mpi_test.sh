#!/usr/bin/env bash
# The MPI tests (SPEC.md section 16, README "Parallel writes with MPI"):
# h5vec's `mpi` feature built against the system's parallel HDF5, its
# examples run under mpirun, the files checked by serial h5vec (both
# builds), plain h5py and the Python package.
#
# Needs (Debian 12, as root; .ci/run installs them):
#   apt-get update && apt-get install -y libhdf5-openmpi-dev openmpi-bin libclang-dev
# and what scripts/test.sh installs for Python. Prints each part's time.
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ROOT"
for pkg in libhdf5-openmpi-dev openmpi-bin libclang-dev; do
  if ! dpkg -s "$pkg" >/dev/null 2>&1; then
    echo "scripts/mpi_test.sh: $pkg is not installed:" >&2
    echo "  apt-get update && apt-get install -y libhdf5-openmpi-dev openmpi-bin libclang-dev" >&2
    exit 1
  fi
done
# Only for the MPI build: the default build's HDF5 (hdf5-metno-sys's build
# script reruns when HDF5_DIR changes) must not see it.
MPI_HDF5_DIR="${HDF5_DIR:-/usr/lib/x86_64-linux-gnu/hdf5/openmpi}"
unset HDF5_DIR
MPI_FEATURES="mpi,chrono,uuid,half,num-complex"
T="${CARGO_TARGET_DIR:-$ROOT/target}/debug/examples"
MPIRUN=(mpirun --oversubscribe)
# OpenMPI refuses root unless told (CI runs as root).
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
WORK="$(mktemp -d /tmp/h5vec-mpi.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
t0=$SECONDS

# The MPI build (the parallel HDF5 1.10.8, no bundled HDF5) and the default
# build's matrix checker (the bundled HDF5 2.x: a serial reader built apart).
HDF5_DIR="$MPI_HDF5_DIR" cargo build -p h5vec --no-default-features --features "$MPI_FEATURES" \
  --example xlang_matrix --example mpi_check --example mpi_save
cp "$T/xlang_matrix" "$WORK/xlang_matrix_mpi"
cargo build -p h5vec --features chrono,uuid,half,num-complex --example xlang_matrix
cp "$T/xlang_matrix" "$WORK/xlang_matrix_serial"
# The command the matrix's readers run (scripts/test.sh built it already).
cargo build -p h5vec-cli --bin h5vec
export H5VEC_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/h5vec"
# Lints and docs of the code only the MPI build compiles.
HDF5_DIR="$MPI_HDF5_DIR" cargo clippy -p h5vec --no-default-features --features "$MPI_FEATURES" \
  --lib --examples -- -D warnings
HDF5_DIR="$MPI_HDF5_DIR" RUSTDOCFLAGS="-D warnings" cargo doc -p h5vec --no-deps \
  --no-default-features --features "$MPI_FEATURES"
echo "mpi build: $((SECONDS - t0)) s"
t1=$SECONDS

# Every kind of the cross-language matrix, each vector's rows split
# unevenly over the ranks (rank 0 often has none): saved at once, or half
# saved and half appended, with and without deflate (parallel filtered
# writes); then read back serially by both builds, vector by vector.
for n in 2 3; do
  modes=("" "deflate" "append" "append deflate")
  [ "$n" = 2 ] && modes+=("append lzf" "append zstd" "append checksum")
  for mode in "${modes[@]}"; do
    out="$WORK/m$n-${mode// /-}"
    mkdir -p "$out"
    "${MPIRUN[@]}" -n "$n" "$WORK/xlang_matrix_mpi" mpi-write "$out/matrix.h5" "$out/expected.json" $mode \
      2> >(grep -v "append refused as expected" >&2)
    for checker in xlang_matrix_mpi xlang_matrix_serial; do
      if ! "$WORK/$checker" check "$out/matrix.h5" "$out/expected.json" > "$out/check.txt"; then
        grep -v '^ok ' "$out/check.txt" >&2
        echo "FAIL: $checker check of mpirun -n $n mpi-write $mode" >&2
        exit 1
      fi
    done
    echo "ok mpirun -n $n matrix ${mode:-save}: $(grep -c '^ok ' "$out/check.txt") vectors"
  done
done

# The Python package and the command on the 3-rank deflate file, every
# reader of the matrix (its writers are the default build's tests).
H5VEC_MATRIX_DIR="$WORK/m3-deflate" "$PY" -m pytest -q -p no:cacheprovider \
  tests/python/test_matrix.py -k "test_read and not write_"

# VectorWriter, the errors every rank must see, the README example (and
# its file through plain h5py and the package).
# The library's own tests of its MPI code (one process: MPI's singleton
# start), e.g. that h5vec's flushes skip the MPI-IO driver's fsync.
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 HDF5_DIR="$MPI_HDF5_DIR" \
  cargo test -q -p h5vec --no-default-features --features "$MPI_FEATURES" --lib mpi
"${MPIRUN[@]}" -n 3 "$T/mpi_check" writer "$WORK/writer.h5"
"${MPIRUN[@]}" -n 1 "$T/mpi_check" writer "$WORK/writer1.h5"
for n in 2 3; do "${MPIRUN[@]}" -n "$n" "$T/mpi_check" errors "$WORK/errors$n.h5"; done
"${MPIRUN[@]}" -n 1 "$T/mpi_check" serial-file "$WORK/serial.h5"
"${MPIRUN[@]}" -n 3 "$T/mpi_check" serial-append "$WORK/serial.h5"
"${MPIRUN[@]}" -n 3 "$T/mpi_save" "$WORK/particles.h5"
H5VEC_MPI_DIR="$WORK" "$PY" -m pytest -q -p no:cacheprovider tests/python/test_mpi_files.py
echo "mpi runs: $((SECONDS - t1)) s"
t1=$SECONDS

# A job killed (SIGKILL, every process) in the middle of appends leaves the
# last commit: whole commits only, every row exact, and at least the rows
# rank 0 saw committed.
for delay in 0.05 0.15 0.3; do
  log="$WORK/kill.log"
  setsid "${MPIRUN[@]}" -n 2 "$T/mpi_check" kill "$WORK/kill.h5" > "$log" 2>&1 &
  pid=$!
  for _ in $(seq 1 600); do
    [ "$(grep -c '^committed' "$log" || true)" -ge 3 ] && break
    sleep 0.1
  done
  sleep "$delay"
  kill -KILL -- "-$pid" 2>/dev/null || true
  pkill -KILL -f "mpi_check kill $WORK/kill.h5" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  seen="$(grep '^committed' "$log" | tail -n1 | awk '{print $2}')"
  [ -n "$seen" ] || { cat "$log" >&2; echo "FAIL: the job committed nothing before the kill" >&2; exit 1; }
  "$T/mpi_check" verify "$WORK/kill.h5" 2 "$seen"
done
echo "mpi kills: $((SECONDS - t1)) s"
echo "mpi tests: $((SECONDS - t0)) s"
