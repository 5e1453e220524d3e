"""Maps, instants, dates, durations, UUIDs, f16 and complex numbers written
by examples/xlang_types.rs, read with plain h5py + numpy (SPEC.md sections
4.5 to 4.8). Expected values are recomputed here from the row index."""

import json
import os
import subprocess
import uuid

import h5py
import numpy as np
import pytest

from conftest import WORKSPACE

N = 7


def ns(i):
    return (i - 3) * 86_400_000_000_123 + i * 7


@pytest.fixture(scope="module")
def types_file(tmp_path_factory):
    cmd = ["cargo", "build", "--quiet", "--example", "xlang_types",
           "--features", "chrono,uuid,half,num-complex", "--message-format=json-render-diagnostics"]
    if os.environ.get("XLANG_CARGO_PROFILE") == "release":
        cmd.append("--release")
    proc = subprocess.run(cmd, cwd=WORKSPACE, stdout=subprocess.PIPE, text=True)
    assert proc.returncode == 0, "building examples/xlang_types.rs failed"
    exe = None
    for line in proc.stdout.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("target", {}).get("name") == "xlang_types":
            exe = msg.get("executable") or exe
    assert exe
    out = tmp_path_factory.mktemp("types") / "types.h5"
    run = subprocess.run([exe, str(out)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    with h5py.File(out, "r") as f:
        yield f


def col(f, path):
    z = int(f["rows/metadata/count"][()])
    assert z == N
    return f["rows/data/" + path]


def node(f, path):
    g = f["rows/metadata/schema/" + path] if path else f["rows/metadata/schema"]
    return {k: g[k][()].decode() for k in g if isinstance(g[k], h5py.Dataset) and g[k].shape == ()}


def child(f, name):
    names = [n.decode() for n in f["rows/metadata/schema/field_names"][:]]
    return "children/%d" % (names.index(name) + 1)


def test_instants_are_datetime64_ns_by_view(types_file):
    f = types_file
    for name in ("at", "received"):
        v = col(f, name + "/values")
        assert v.dtype == np.dtype("<i8")
        ts = v[:N].view("M8[ns]")
        assert list(ts) == [np.datetime64(ns(i), "ns") for i in range(N)]
        meta = node(f, child(f, name))
        assert (meta["codec"], meta["time_unit"], meta["time_zone"]) == ("h5vec.InstantCodec", "ns", "UTC")
    assert col(f, "at/values")[0].view("M8[ns]") < np.datetime64("1970-01-01", "ns")


def test_offset_date_times_are_instant_plus_offset(types_file):
    f = types_file
    inst = col(f, "local/instant/values")[:N]
    off = col(f, "local/offset_seconds/values")[:N]
    assert off.dtype == np.dtype("<i4")
    assert list(inst) == [ns(i) for i in range(N)]
    assert list(off) == [(i - 2) * 1800 for i in range(N)]
    local = (inst + off.astype("i8") * 10**9).view("M8[ns]")
    assert local[3] == np.datetime64(ns(3) + 1800 * 10**9, "ns")
    assert node(f, child(f, "local"))["codec"] == "h5vec.OffsetDateTimeCodec"


def test_dates_times_of_day_and_durations(types_file):
    f = types_file
    day = col(f, "day/values")[:N]
    assert day.dtype == np.dtype("<i4")
    assert list(day.astype("M8[D]")) == [np.datetime64(ns(i), "ns").astype("M8[D]") for i in range(N)]
    meta = node(f, child(f, "day"))
    assert (meta["codec"], meta["time_unit"]) == ("h5vec.DateCodec", "d")
    clock = col(f, "clock/values")[:N]
    assert list(clock) == [ns(i) % 86_400_000_000_000 for i in range(N)]
    took = col(f, "took/values")[:N].view("m8[ns]")
    assert list(took) == [np.timedelta64(i * 1_000_000_007, "ns") for i in range(N)]
    assert "time_zone" not in node(f, child(f, "took"))


def test_uuids_are_16_bytes_per_row(types_file):
    f = types_file
    v = col(f, "id/values")
    assert v.shape == (N, 16) and v.dtype == np.dtype("u1")
    ids = [uuid.UUID(bytes=row.tobytes()) for row in v[:N]]
    assert ids == [uuid.UUID(int=0x0123_4567_89ab_4def_8123_4567_89ab_cd00 + i) for i in range(N)]
    assert node(f, child(f, "id"))["codec"] == "h5vec.UuidCodec"


def test_f16_is_numpy_float16(types_file):
    f = types_file
    v = col(f, "level/values")
    assert v.dtype == np.float16
    assert list(v[:N]) == [np.float16(i * 0.5 - 1.0) for i in range(N)]
    h = f["halfs/data/values"]
    assert h.dtype == np.float16
    bits = h[:].view("<u2")
    assert list(bits[1:]) == [0x7C00, 0xFC00, 0x0001, 0x7BFF]
    assert np.isnan(h[0])


def test_complex_is_numpy_complex(types_file):
    f = types_file
    z = col(f, "z/values")
    assert z.dtype == np.complex128
    assert list(z[:N]) == [complex(i + 0.5, -i) for i in range(N)]
    z32 = col(f, "z32/values")
    assert z32.dtype == np.complex64
    assert list(z32[:N]) == [np.complex64(complex(i, 2)) for i in range(N)]


def test_maps_via_offsets_and_values(types_file):
    f = types_file
    off = col(f, "prices/OFFSETS")[: N + 1]
    # String keys in the VLS layout (4.1): a byte heap and (offset, length) pointers.
    heap = col(f, "prices/VALUES/key/heap")[:].tobytes()
    ptr = col(f, "prices/VALUES/key/pointers")[:]
    keys = [heap[o:o + n].decode() for o, n in zip(ptr["offset"], ptr["length"])]
    vals = col(f, "prices/VALUES/value/values")[:]
    rows = [dict(zip(keys[off[i]:off[i + 1]], vals[off[i]:off[i + 1]])) for i in range(N)]
    assert rows == [{"k%d" % k: i * 10.0 + k for k in range(i % 3)} for i in range(N)]
    meta = node(f, child(f, "prices"))
    assert (meta["kind"], meta["codec"]) == ("list", "h5vec.MapCodec")
    # Values that are lists: a nested list group under VALUES/value.
    off = col(f, "tags/OFFSETS")[: N + 1]
    k = col(f, "tags/VALUES/key/values")[:]
    voff = col(f, "tags/VALUES/value/OFFSETS")[:]
    chars_off = col(f, "tags/VALUES/value/VALUES/OFFSETS")[:]
    chars = col(f, "tags/VALUES/value/VALUES/CHARS")[:].tobytes()
    strs = [chars[chars_off[j]:chars_off[j + 1]].decode() for j in range(len(chars_off) - 1)]
    tags = [{int(k[e]): strs[voff[e]:voff[e + 1]] for e in range(off[i], off[i + 1])} for i in range(N)]
    assert tags == [{1: ["t%d" % i] * (i % 3)} if i % 2 else {} for i in range(N)]
    # Option<map>: MASK beside OFFSETS.
    mask = col(f, "maybe/MASK")[:N]
    assert list(mask) == [i % 2 == 0 for i in range(N)]
