"""validate(path): every container of a file read completely with the
package's checks, by default in a child Python process, so that a file that
crashes or hangs HDF5 (tests/fuzz/KNOWN.md) raises FormatError instead of
ending the caller (as h5vec::check_isolated does in Rust)."""

import json
import os
import signal
import subprocess
import sys
from typing import Any, Dict, List, Optional, Union

import h5py

from . import _gheap, _h5
from ._errors import FileError, FormatError
from ._tables import read_strings, read_table
from ._vector import _is_vector, _open_where, open_vector

TIME_LIMIT = 60.0
MEMORY_LIMIT = 4 << 30

_MAX_DEPTH = 160


def _kind(g):
    """'vector', 'table', 'vls' or None for an h5py.Group."""
    for name, kind in (("CLASS", "table"), ("type", "vls")):
        if name in g.attrs:
            # Damaged heap collections that HDF5 would loop on (SPEC section
            # 7): reading the container reports them as its problem.
            try:
                _gheap.guard_attr(g, name, "$")
            except FormatError:
                return kind
    try:
        attrs = g.attrs
        cls = attrs.get("CLASS")
        if isinstance(cls, bytes):
            cls = cls.decode("utf-8", "replace")
        if cls == "COLUMN_TABLE":
            return "table"
        t = attrs.get("type")
        if isinstance(t, bytes):
            t = t.decode("utf-8", "replace")
        if t == "vls":
            return "vls"
    except (OSError, KeyError, TypeError, ValueError):
        pass
    return "vector" if _is_vector(g) else None


def _find(group):
    """(path, kind) of every container at or below `group`, sorted; hard
    links only, each object once, containers not searched further."""
    out = []
    seen = set()

    def walk(g, depth):
        if depth > _MAX_DEPTH:
            raise FormatError("$", g.name, f"groups nested more than {_MAX_DEPTH} deep")
        for name in sorted(g.keys()):
            if not isinstance(g.get(name, getlink=True), h5py.HardLink):
                continue
            obj = g[name]
            if not isinstance(obj, h5py.Group) or hash(obj.id) in seen:
                continue
            seen.add(hash(obj.id))
            kind = _kind(obj)
            if kind is not None:
                out.append((obj.name, kind))
            else:
                walk(obj, depth + 1)

    kind = _kind(group) if group.name != "/" else None
    if kind is not None:
        out.append((group.name, kind))
    else:
        walk(group, 0)
    return sorted(out)


def _read_all(f, path, kind):
    """Rows of the container at `path`, read completely (raises on a problem)."""
    parent, _, name = path.rpartition("/")
    parent = f[parent or "/"]
    if kind == "vector":
        v = open_vector(parent, name)
        return v.validate()
    if kind == "table":
        cols = read_table(parent, name)
        return max((len(c) for c in cols.values()), default=0)
    return len(read_strings(parent, name))


def _check(path, only=None):
    """The report: one dict per container (path, kind, rows, problem)."""
    f, owned = _open_where(path)
    try:
        start = f
        if only is not None:
            if only not in f:
                raise FormatError("$", only, f"no vector, h5col table or VLS array at {only}")
            start = f[only]
        report = []
        for p, kind in _find(start):
            try:
                rows, problem = _read_all(f, p, kind), None
            except Exception as e:  # every failure of a container is its problem
                rows, problem = 0, str(e) or type(e).__name__
            report.append({"path": p, "kind": kind, "rows": int(rows), "problem": problem})
        return report
    finally:
        if owned is not None:
            _h5.close_file(owned)


def _child():
    """In the child: check sys.argv[1] and print the report as JSON."""
    path = sys.argv[1]
    only = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] else None
    try:
        out = {"report": _check(path, only)}
    except FormatError as e:
        out = {"error": {"type": "FormatError", "path": e.path, "location": e.location,
                         "message": e.message}}
    except FileError as e:
        out = {"error": {"type": "FileError", "path": e.path, "message": str(e)}}
    except Exception as e:
        out = {"error": {"type": type(e).__name__, "message": str(e)}}
    sys.stdout.write(json.dumps(out))
    sys.stdout.flush()
    # No atexit handlers, no HDF5 close at exit.
    os._exit(0)


def _limits(memory_limit):
    """preexec_fn: the child's memory budget, no core dumps."""
    import resource

    def apply():
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if memory_limit is not None:
            soft, hard = resource.getrlimit(resource.RLIMIT_AS)
            lim = memory_limit if hard == resource.RLIM_INFINITY else min(memory_limit, hard)
            resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
    return apply


def _signal_name(sig):
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"


def validate(path: Union[str, "os.PathLike[str]"], isolated: bool = True, time_limit: Optional[float] = TIME_LIMIT,
             memory_limit: Optional[int] = MEMORY_LIMIT, only: Optional[str] = None) -> List[Dict[str, Any]]:
    """Reads every row of every vector, h5col table and VLS array in the file
    `path` with the package's checks (SPEC section 7), and returns one dict
    per container, sorted by path: ``{"path": "/xs", "kind": "vector" |
    "table" | "vls", "rows": n, "problem": None or the error's message}``.

    With ``isolated=True`` (the default) the reading runs in a child Python
    process (``sys.executable``) limited to `time_limit` seconds and
    `memory_limit` bytes of address space (``RLIMIT_AS``, the whole child
    interpreter included); a crash, hang or runaway allocation in HDF5 then
    raises FormatError naming the signal (``SIGSEGV``, ``SIGFPE``; ``SIGABRT``
    or ``MemoryError`` most likely from the budget) or the limit, instead of
    ending the caller. ``isolated=False`` reads in this process. `only`
    checks the container (or the group of containers) at that HDF5 path.

    A file that cannot be opened raises what opening it raises
    (``h5vec.FileError``, an OSError, for a file that is not HDF5), in both
    modes.

        report = h5vec.validate("upload.h5")
        bad = [c for c in report if c["problem"]]
    """
    path = os.fspath(path)
    if not isolated:
        return _check(path, only)
    pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = ("import sys; sys.path.insert(0, sys.argv.pop(1)); "
            "from h5vec import _validate; _validate._child()")
    env = dict(os.environ)
    # One BLAS thread: the child reads, it multiplies nothing (and BLAS
    # threads reserve address space the budget counts).
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env.setdefault("OMP_NUM_THREADS", "1")
    where = ("$", path)
    try:
        r = subprocess.run(
            [sys.executable, "-c", code, pkg_root, path, only or ""],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            timeout=time_limit, env=env, preexec_fn=_limits(memory_limit),
        )
    except subprocess.TimeoutExpired:
        raise FormatError(*where, f"isolated check: still running after the time limit of "
                                  f"{time_limit} s, killed") from None
    lines = r.stderr.decode("utf-8", "replace").strip().splitlines()
    said = f" (it printed: {lines[-1]})" if lines else ""
    if r.returncode < 0:
        name = _signal_name(-r.returncode)
        cause = {
            "SIGSEGV": "an invalid memory access in HDF5",
            "SIGBUS": "an invalid memory access in HDF5",
            "SIGFPE": "an arithmetic fault (a division by zero) in HDF5",
            "SIGABRT": f"an abort, most likely an allocation past the memory budget "
                       f"({memory_limit} bytes)",
        }.get(name, "a signal")
        raise FormatError(*where, f"isolated check killed by {name}: {cause}{said}")
    try:
        out = json.loads(r.stdout)
    except ValueError:
        raise FormatError(*where, f"isolated check: the child exited with status "
                                  f"{r.returncode} without a report{said}") from None
    if "error" in out:
        e = out["error"]
        if e["type"] == "FormatError":
            raise FormatError(e["path"], e["location"], e["message"])
        if e["type"] == "FileError":
            raise FileError(e["path"], e["message"])
        if e["type"] == "MemoryError":
            raise FormatError(*where, f"isolated check: out of the memory budget "
                                      f"({memory_limit} bytes)")
        if e["type"] in ("OSError", "FileNotFoundError", "PermissionError", "IsADirectoryError"):
            raise OSError(e["message"])
        raise FormatError(*where, f"{e['type']}: {e['message']}")
    return out["report"]
