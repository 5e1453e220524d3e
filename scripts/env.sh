# Sourced by the other scripts: installs what a fresh Debian 12 machine with
# Rust and Python 3 + pip lacks (cmake >= 3.26 for the bundled HDF5 build,
# h5py, numpy, pytest) and puts cmake on PATH.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PYTHON:-python3}"

pip_install() {
  # Plain pip first; on an "externally managed" system Python, retry with
  # --break-system-packages (never sudo).
  "$PY" -m pip install --quiet --disable-pip-version-check "$@" 2>/tmp/h5vec-pip.err \
    || "$PY" -m pip install --quiet --disable-pip-version-check --break-system-packages "$@" \
    || { cat /tmp/h5vec-pip.err >&2; return 1; }
}

need_cmake() {
  command -v cmake >/dev/null 2>&1 || return 0
  local v
  v="$(cmake --version | head -n1 | awk '{print $3}')"
  # Needs >= 3.26.
  [ "$(printf '%s\n3.26.0\n' "$v" | sort -V | head -n1)" != "3.26.0" ]
}

if need_cmake; then
  pip_install "cmake>=3.26"
  CMAKE_DIR="$("$PY" -c 'import cmake, os; print(cmake.CMAKE_BIN_DIR)')"
  export PATH="$CMAKE_DIR:$PATH"
fi

# Every feature of the default build (the bundled HDF5): what the scripts
# build and test. Not `--all-features`: `mpi` links the system's parallel
# HDF5 instead of the bundled one and cannot be combined with it (README,
# "Parallel writes with MPI"; scripts/mpi_test.sh builds it).
# tests/python/cargo_features.py holds the same list.
export H5VEC_FEATURES="h5vec/arrow,h5vec/serde-columns,h5vec/chrono,h5vec/time,h5vec/uuid,h5vec/half,h5vec/num-complex,h5vec/lock-audit"
