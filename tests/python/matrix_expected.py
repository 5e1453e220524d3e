"""The canonical form of examples/xlang_matrix.rs (see its module doc) and the
conversions of every reader's output into it.

`canon(ty, value)` turns what a reader gave for one value of type `ty` (the
`type` descriptor of EXPECTED.json) into the canonical JSON value, or raises
`Mismatch` naming the path and what was found. It accepts each documented form
of a kind (numpy, pandas, Arrow and polars values, the command's text), never a
value that is not exactly the stored one: a float that does not fit its width,
an instant of another zone, a NaT, a null where the type has none, a record with
other fields are all mismatches.

Readers' outputs are first made "plain": `arrow_plain` (pyarrow arrays: times as
tagged integers, unions as tagged dicts), `pandas_plain` / `numpy_plain`
(columns -> lists of Python/numpy scalars), the CSV and table parsers (text).
`assemble` rebuilds the rows of a vector from a reader's (dotted) columns.
"""

import datetime
import json
import os
import re
import subprocess
import uuid
from pathlib import Path

import numpy as np

WORKSPACE = Path(__file__).resolve().parent.parent.parent


def build_example():
    """`cargo build --example xlang_matrix` (once per session: cargo does nothing the second time); returns the
    executable."""
    cmd = ["cargo", "build", "--quiet", "-p", "h5vec", "--example", "xlang_matrix",
           "--features", "chrono,uuid,half,num-complex", "--message-format=json-render-diagnostics"]
    if os.environ.get("XLANG_CARGO_PROFILE") == "release":
        cmd.append("--release")
    proc = subprocess.run(cmd, cwd=WORKSPACE, stdout=subprocess.PIPE, text=True)
    assert proc.returncode == 0, "building examples/xlang_matrix.rs failed"
    exe = None
    for line in proc.stdout.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("target", {}).get("name") == "xlang_matrix":
            exe = msg.get("executable") or exe
    assert exe, "cargo did not report the xlang_matrix executable"
    return exe


def write_matrix(directory, exe=None):
    """`xlang_matrix write` into `directory`: (h5 path, EXPECTED.json path, {name: vector})."""
    exe = exe or build_example()
    h5, expected = Path(directory) / "matrix.h5", Path(directory) / "expected.json"
    proc = subprocess.run([exe, "write", str(h5), str(expected)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(expected.read_text())
    return h5, expected, {v["name"]: v for v in doc["vectors"]}

NAMES = [
    "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32", "f64", "bool", "char", "string", "enum_i16",
    "enum_u8", "json", "dense_f64", "dense_nested", "dense_bool", "dense_char", "dense_enum", "dense_u8",
    "record_struct", "record_tuple_struct", "record_tuple", "constant_unit_struct", "constant_unit",
    "constant_phantom", "blob", "vls_string", "vls_option_string", "vls_field", "vls_json", "list_i32",
    "list_string", "list_option_f64", "list_nested", "list_struct", "list_bool", "list_option_string",
    "list_array", "list_enum", "option_i32", "option_f64", "option_bool", "option_string", "option_struct",
    "option_list", "option_array", "option_enum", "union", "union_option", "union_list", "union_field",
    "map_string_f64", "map_u32_string", "map_hash", "map_option", "map_string_list", "system_time", "duration",
    "datetime_utc", "naive_datetime", "naive_date", "naive_time", "time_delta", "datetime_fixed",
    "option_datetime", "time_int64_min", "uuid", "option_uuid", "f16", "complex64", "complex128",
]

INT_RANGES = {
    "i8": (-2**7, 2**7 - 1), "i16": (-2**15, 2**15 - 1), "i32": (-2**31, 2**31 - 1), "i64": (-2**63, 2**63 - 1),
    "u8": (0, 2**8 - 1), "u16": (0, 2**16 - 1), "u32": (0, 2**32 - 1), "u64": (0, 2**64 - 1),
}
FLOATS = {"f16": (np.float16, np.uint16, 4), "f32": (np.float32, np.uint32, 8), "f64": (np.float64, np.uint64, 16)}
NS = 10**9
DAY_NS = 86_400 * NS


class Mismatch(AssertionError):
    def __init__(self, path, msg):
        super().__init__(f"{path}: {msg}")
        self.path = path


class TextFloat(str):
    """A JSON number's text (json.loads(parse_float=TextFloat)): parsed at the target width."""


class Ctx:
    """What a reader's output can say, by its format.

    text_floats: readers of text (JSON lines by pyarrow/polars) give float64 for every float, so an f32/f16
      value is the nearest of its width; typed readers must hold the value exactly.
    csv: a CSV cell: an empty cell is null for every type but text (an empty unquoted cell of a text column
      that cannot be null, such as String, is the empty string: the type says it cannot be null).
    inferred_structs: JSON objects read by pyarrow/polars become one struct type for all rows, so a row's
      absent keys come back as null fields (a map's JSON object, a union's other variants' fields)."""

    def __init__(self, text_floats=False, csv=False, inferred_structs=False):
        self.text_floats = text_floats
        self.csv = csv
        self.inferred_structs = inferred_structs


STRICT = Ctx()


def fail(path, msg):
    raise Mismatch(path, msg)


def is_null(v):
    if v is None or v is np.ma.masked:
        return True
    try:
        import pandas as pd
        if v is pd.NA or v is pd.NaT:
            return True
    except ImportError:
        pass
    return False


def show(v):
    r = repr(v)
    return r if len(r) < 200 else r[:200] + "..."


# ---------------------------------------------------------------------------
# Tagged plain values made by the adapters


class Tagged:
    """A time value with its unit already applied: kind in ts/date/tod/dur, `value` in ns (days for date)."""

    __slots__ = ("kind", "value", "tz")

    def __init__(self, kind, value, tz=None):
        self.kind, self.value, self.tz = kind, value, tz

    def __repr__(self):
        return f"{self.kind}({self.value}{', ' + repr(self.tz) if self.tz else ''})"


class UnionValue:
    __slots__ = ("name", "fields")

    def __init__(self, name, fields):
        self.name, self.fields = name, fields

    def __repr__(self):
        return f"Union({self.name}, {self.fields!r})"


UNIT_NS = {"s": NS, "ms": 10**6, "us": 10**3, "ns": 1}


def dt64_ns(v, path):
    """np.datetime64 / np.timedelta64 of any unit -> integer ns (exact, no overflow: Python ints)."""
    unit, count = np.datetime_data(v.dtype)
    if np.isnat(v) and not (unit == "ns" and count == 1):
        # numpy's NaT is the bit pattern of i64::MIN: in nanoseconds that is a
        # value SPEC 4.6 allows (numpy arrays carry nulls as masks, never NaT);
        # in another unit it is no stored value.
        fail(path, f"NaT ({show(v)}) where a value is stored")
    raw = int(v.astype("int64"))
    per = {"D": DAY_NS, "h": 3600 * NS, "m": 60 * NS, "s": NS, "ms": 10**6, "us": 10**3, "ns": 1}
    if unit not in per:
        fail(path, f"unit {unit} of {show(v)}")
    return raw * per[unit] * count


# ---------------------------------------------------------------------------
# Text forms (the command's JSON lines, CSV and table cells)

RFC3339 = re.compile(r"^([+-]?\d{4,})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:?\d\d)?$")
DATE = re.compile(r"^([+-]?\d{4,})-(\d\d)-(\d\d)$")
TOD = re.compile(r"^(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?$")
ISO_DUR = re.compile(r"^(-)?P(?:(-?\d+)D)?(?:T(?:(-?\d+)H)?(?:(-?\d+)M)?(?:(-?\d+)(?:\.(\d{1,9}))?S)?)?$")


def days_from_civil(y, m, d):
    """Proleptic Gregorian date -> days since 1970-01-01 (H. Hinnant's algorithm)."""
    y -= m <= 2
    era = y // 400  # floor division: no C-style adjustment for negative years
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def frac_ns(s):
    return int((s or "").ljust(9, "0")) if s else 0


def parse_instant(s, path):
    """RFC 3339 -> (ns since 1970 UTC, zone suffix or None)."""
    m = RFC3339.match(s)
    if not m:
        fail(path, f"{s!r} is not an RFC 3339 date-time")
    y, mo, d, h, mi, sec, frac, zone = m.groups()
    ns = (days_from_civil(int(y), int(mo), int(d)) * 86400 + int(h) * 3600 + int(mi) * 60 + int(sec)) * NS
    ns += frac_ns(frac)
    offset = 0
    if zone and zone != "Z":
        sign = -1 if zone[0] == "-" else 1
        z = zone[1:].replace(":", "")
        offset = sign * (int(z[:2]) * 3600 + int(z[2:]) * 60)
    return ns - offset * NS, zone, offset


def parse_date(s, path):
    m = DATE.match(s)
    if not m:
        fail(path, f"{s!r} is not a date YYYY-MM-DD")
    return days_from_civil(int(m.group(1)), int(m.group(2)), int(m.group(3)))


def parse_tod(s, path):
    m = TOD.match(s)
    if not m:
        fail(path, f"{s!r} is not a time of day HH:MM:SS[.fffffffff]")
    h, mi, sec, frac = m.groups()
    return (int(h) * 3600 + int(mi) * 60 + int(sec)) * NS + frac_ns(frac)


def parse_duration(s, path):
    m = ISO_DUR.match(s)
    if not m or s in ("P", "PT", "-P"):
        fail(path, f"{s!r} is not an ISO 8601 duration")
    neg, d, h, mi, sec, frac = m.groups()
    total = (int(d or 0) * 86400 + int(h or 0) * 3600 + int(mi or 0) * 60) * NS
    secs = int(sec or 0)
    f = frac_ns(frac)
    total += secs * NS + (-f if sec and sec.startswith("-") else f)
    return -total if neg else total


COMPLEX_TEXT = re.compile(r"^\(?([^()]+?)([+-](?:[^+-]+?))[ij]\)?$")


def parse_json_text(s, path):
    try:
        return json.loads(s, parse_float=TextFloat, parse_constant=TextFloat)
    except ValueError as e:
        fail(path, f"{s!r} is not JSON text: {e}")


# ---------------------------------------------------------------------------
# canon


def canon_float(t, v, path, ctx):
    ftype, utype, width = FLOATS[t]
    if isinstance(v, (bool, np.bool_)) or is_null(v):
        fail(path, f"{show(v)} where a {t} is stored")
    if isinstance(v, str):
        text = v.strip()
        low = text.lower()
        special = {"nan": "nan", "+nan": "nan", "-nan": "-nan", "inf": "inf", "+inf": "inf", "infinity": "inf",
                   "+infinity": "inf", "-inf": "-inf", "-infinity": "-inf"}
        try:
            x = float(special.get(low, text))
        except ValueError:
            fail(path, f"{v!r} is not a number")
        if t == "f64" and not np.isnan(x):
            return "%016x" % np.float64(x).view(np.uint64)
        y = ftype(x)  # the nearest of the width to the decimal text
    elif isinstance(v, (np.floating, float)):
        if isinstance(v, np.floating) and v.dtype.itemsize * 2 == width:
            y = v
        else:
            x = float(v)
            y = ftype(x)
            if not ctx.text_floats and not (np.isnan(x) and np.isnan(y)) and float(y) != x:
                fail(path, f"{show(v)} ({type(v).__name__}) is not a {t}")
    else:
        fail(path, f"{show(v)} ({type(v).__name__}) where a {t} is stored")
    if np.isnan(y):
        y = ftype(np.nan) if not np.signbit(y) else -ftype(np.nan)
    return ("%0" + str(width) + "x") % int(np.asarray(y, dtype=ftype).view(utype))


def canon_int(t, v, path):
    lo, hi = INT_RANGES[t]
    if isinstance(v, (bool, np.bool_)):
        fail(path, f"{show(v)} where an integer is stored")
    if isinstance(v, str):
        if not re.fullmatch(r"-?\d+", v.strip()):
            fail(path, f"{v!r} is not an integer")
        v = int(v)
    elif isinstance(v, (int, np.integer)):
        v = int(v)
    else:
        fail(path, f"{show(v)} ({type(v).__name__}) where an integer {t} is stored")
    if not lo <= v <= hi:
        fail(path, f"{v} is outside {t}")
    return v


def canon_instant(ty, v, path):
    tz = ty.get("tz")
    if isinstance(v, str):
        ns, zone, offset = parse_instant(v, path)
        if tz is None and zone is not None:
            fail(path, f"{v!r} has a zone; the stored instant is naive")
        if tz is not None and (zone is None or offset != 0):
            fail(path, f"{v!r}: expected the UTC instant with its zone (Z or +00:00)")
        return ns
    if isinstance(v, Tagged):
        if v.kind != "ts":
            fail(path, f"{v!r} where an instant is stored")
        if (v.tz is None) != (tz is None) or (tz is not None and v.tz not in ("UTC", "+00:00", "Z", "Etc/UTC")):
            fail(path, f"zone {v.tz!r}, expected {tz!r}")
        return v.value
    if isinstance(v, np.datetime64):
        # numpy has no zones: datetime64 is the UTC wall time (the design's numpy mapping)
        return dt64_ns(v, path)
    try:
        import pandas as pd
        if isinstance(v, pd.Timestamp):
            zone = None if v.tz is None else str(v.tz)
            if (zone is None) != (tz is None) or (tz is not None and zone not in ("UTC", "Etc/UTC")):
                fail(path, f"pandas Timestamp in zone {zone!r}, expected {tz!r}")
            return int(v.as_unit("ns").value)
    except ImportError:
        pass
    if isinstance(v, datetime.datetime):
        fail(path, f"{v!r}: a Python datetime holds microseconds only")
    fail(path, f"{show(v)} ({type(v).__name__}) where an instant is stored")


def canon_date(v, path):
    if isinstance(v, str):
        return parse_date(v, path)
    if isinstance(v, Tagged):
        if v.kind == "date":
            return v.value
        if v.kind == "ts" and v.tz is None and v.value % DAY_NS == 0:
            return v.value // DAY_NS
        fail(path, f"{v!r} where a date is stored")
    if isinstance(v, np.datetime64):
        ns = dt64_ns(v, path)
        if ns % DAY_NS:
            fail(path, f"{show(v)} is not a whole day")
        return ns // DAY_NS
    if isinstance(v, datetime.date) and not isinstance(v, datetime.datetime):
        return v.toordinal() - datetime.date(1970, 1, 1).toordinal()
    fail(path, f"{show(v)} ({type(v).__name__}) where a date is stored")


def canon_ns_span(kind, v, path):
    """Times of day and durations: Int64 nanoseconds."""
    if isinstance(v, str):
        return parse_tod(v, path) if kind == "time" else parse_duration(v, path)
    if isinstance(v, Tagged):
        if v.kind != ("tod" if kind == "time" else "dur"):
            fail(path, f"{v!r} where a {kind} is stored")
        return v.value
    if isinstance(v, np.timedelta64):
        return dt64_ns(v, path)
    try:
        import pandas as pd
        if isinstance(v, pd.Timedelta):
            return int(v.as_unit("ns").value)
    except ImportError:
        pass
    if isinstance(v, (datetime.time, datetime.timedelta)):
        fail(path, f"{v!r}: Python's {type(v).__name__} holds microseconds only")
    fail(path, f"{show(v)} ({type(v).__name__}) where a {kind} is stored")


def canon_uuid(v, path):
    if isinstance(v, uuid.UUID):
        return str(v)
    if isinstance(v, np.void):
        v = v.tobytes()
    if isinstance(v, (bytes, bytearray)):
        if len(v) != 16:
            fail(path, f"{len(v)} bytes where a UUID (16) is stored")
        return str(uuid.UUID(bytes=bytes(v)))
    if isinstance(v, str):
        try:
            u = uuid.UUID(v)
        except ValueError:
            fail(path, f"{v!r} is not a UUID")
        if str(u) != v:
            fail(path, f"{v!r} is not the canonical UUID text {str(u)!r}")
        return v
    fail(path, f"{show(v)} ({type(v).__name__}) where a UUID is stored")


def canon_complex(t, v, path, ctx):
    ft = "f32" if t == "complex64" else "f64"
    if isinstance(v, str):
        s = v.strip()
        if s.startswith("{"):
            v = parse_json_text(s, path)
        else:
            m = COMPLEX_TEXT.match(s.replace(" ", ""))
            if not m:
                fail(path, f"{v!r} is not a complex number")
            return {"r": canon_float(ft, m.group(1), path + ".r", ctx),
                    "i": canon_float(ft, m.group(2), path + ".i", ctx)}
    if isinstance(v, (complex, np.complexfloating)):
        if isinstance(v, np.complexfloating) and v.dtype != np.dtype(t):
            fail(path, f"{v.dtype} where a {t} is stored")
        re_, im = (v.real, v.imag) if isinstance(v, np.complexfloating) else (v.real, v.imag)
        return {"r": canon_float(ft, re_, path + ".r", ctx), "i": canon_float(ft, im, path + ".i", ctx)}
    if isinstance(v, dict):
        if list(v) != ["r", "i"]:
            fail(path, f"complex as {show(v)}: expected fields r, i")
        return {"r": canon_float(ft, v["r"], path + ".r", ctx), "i": canon_float(ft, v["i"], path + ".i", ctx)}
    fail(path, f"{show(v)} ({type(v).__name__}) where a {t} is stored")


def canon_record(ty, v, path, ctx):
    fields = ty["fields"]
    names = [f[0] for f in fields]
    if isinstance(v, str):
        v = parse_json_text(v, path)
    if isinstance(v, (tuple, list)) and ty["t"] == "tuple":
        if len(v) != len(fields):
            fail(path, f"{len(v)} items for a tuple of {len(fields)}")
        v = dict(zip(names, v))
    if not isinstance(v, dict):
        fail(path, f"{show(v)} ({type(v).__name__}) where a record {names} is stored")
    if list(v) != names:
        fail(path, f"fields {list(v)}, expected {names}")
    return {n: canon(t, v[n], f"{path}.{n}", ctx) for n, t in fields}


def canon_union(ty, v, path, ctx):
    variants = dict((n, f) for n, f in ty["variants"])
    if isinstance(v, str):
        v = parse_json_text(v, path)
    if isinstance(v, UnionValue):
        name, fields = v.name, v.fields
        if name not in variants:
            fail(path, f"variant {name!r} is not one of {list(variants)}")
        f = variants[name]
        if f is None:
            if fields not in (None, {}):
                fail(path, f"unit variant {name} with fields {show(fields)}")
            return {"variant": name}
        rec = canon_record(f, fields, f"{path}.{name}", ctx)
        return {"variant": name, **rec}
    if not isinstance(v, dict) or "variant" not in v:
        fail(path, f"{show(v)} ({type(v).__name__}) where an enum with data is stored")
    name = v["variant"]
    if not isinstance(name, str) or name not in variants:
        fail(path, f"variant {name!r} is not one of {list(variants)}")
    f = variants[name]
    others = {k: x for k, x in v.items() if k != "variant"}
    with_fields = {n for n, x in variants.items() if x is not None}
    flat = bool(others) and set(others) <= with_fields and \
        (isinstance(others.get(name), (dict, str)) if f is not None else True) and \
        (f is None or name not in [x[0] for x in f["fields"]])
    if flat and f is None:
        stray = {k: x for k, x in others.items() if not is_null(x)}
        if stray:
            fail(path, f"unit variant {name}: other variants' children are not null: {show(stray)}")
        return {"variant": name}
    if flat:
        # the flat form: one child per variant with fields, null on the other variants' rows
        fields = others.pop(name)
        stray = {k: x for k, x in others.items() if not is_null(x)}
        if stray:
            fail(path, f"variant {name}: other variants' children are not null: {show(stray)}")
        rec = canon_record(f, fields, f"{path}.{name}", ctx)
        return {"variant": name, **rec}
    names = [x[0] for x in f["fields"]] if f is not None else []
    # the JSON lines form: the variant's fields beside `variant`; readers that infer one struct for
    # every row (pyarrow/polars JSON) add the other variants' keys as nulls.
    stray = {k: x for k, x in others.items() if k not in names and not (ctx.inferred_structs and is_null(x))}
    if stray:
        fail(path, f"variant {name}: unexpected fields {show(stray)}")
    if f is None:
        return {"variant": name}
    missing = [n for n in names if n not in others]
    if missing:
        fail(path, f"variant {name}: fields {missing} missing in {show(v)}")
    rec = canon_record(f, {n: others[n] for n in names}, f"{path}.{name}", ctx)
    return {"variant": name, **rec}


def canon_map(ty, v, path, ctx):
    if isinstance(v, str):
        v = parse_json_text(v, path)
    if isinstance(v, dict):
        # a JSON object (string keys); readers that infer one struct for all rows add absent keys as nulls
        pairs = [(k, x) for k, x in v.items()
                 if not (ctx.inferred_structs and is_null(x) and ty["value"]["t"] != "option")]
    elif isinstance(v, (list, tuple, np.ndarray)):
        pairs = []
        for i, e in enumerate(v):
            if isinstance(e, dict) and list(e) == ["key", "value"]:
                pairs.append((e["key"], e["value"]))
            elif isinstance(e, (tuple, list)) and len(e) == 2:
                pairs.append((e[0], e[1]))
            else:
                fail(f"{path}[{i}]", f"map entry {show(e)}: expected (key, value)")
    else:
        fail(path, f"{show(v)} ({type(v).__name__}) where a map is stored")
    return [[canon(ty["key"], k, f"{path}[{i}].key", ctx), canon(ty["value"], x, f"{path}[{i}].value", ctx)]
            for i, (k, x) in enumerate(pairs)]


def canon_seq(ty, v, path, ctx):
    if isinstance(v, str):
        v = parse_json_text(v, path)
    if isinstance(v, np.ndarray):
        v = list(v)
    if not isinstance(v, (list, tuple)):
        fail(path, f"{show(v)} ({type(v).__name__}) where a list is stored")
    if ty["t"] == "array" and len(v) != ty["n"]:
        fail(path, f"{len(v)} items where [T; {ty['n']}] is stored")
    return [canon(ty["item"], x, f"{path}[{i}]", ctx) for i, x in enumerate(v)]


TEXTUAL = ("string", "char", "json", "blob")


def canon(ty, v, path="$", ctx=STRICT):
    t = ty["t"]
    if ctx.csv:
        leaf_t = ty["some"]["t"] if t == "option" else t
        if isinstance(v, str) and v == "" and leaf_t not in TEXTUAL:
            v = None
        elif v is None and t in TEXTUAL:
            v = ""
    if t == "option":
        if is_null(v):
            return None
        return canon(ty["some"], v, path, ctx)
    if t == "unit":
        if not is_null(v):
            fail(path, f"{show(v)} where a constant (null) is stored")
        return None
    if is_null(v):
        fail(path, f"null ({show(v)}) where a value is stored")
    if t in INT_RANGES:
        return canon_int(t, v, path)
    if t in FLOATS:
        return canon_float(t, v, path, ctx)
    if t == "bool":
        if isinstance(v, str) and v in ("true", "false"):
            return v == "true"
        if not isinstance(v, (bool, np.bool_)):
            fail(path, f"{show(v)} ({type(v).__name__}) where a bool is stored")
        return bool(v)
    if t in ("char", "string", "enum", "json"):
        if t == "json" and isinstance(v, (dict, list)):
            return json.dumps(v, separators=(",", ":"), ensure_ascii=False)
        if not isinstance(v, str):
            fail(path, f"{show(v)} ({type(v).__name__}) where a {t} (text) is stored")
        if t == "char" and len(v) != 1:
            fail(path, f"{v!r} is not one character")
        if t == "enum" and v not in ty["names"]:
            fail(path, f"{v!r} is not one of the labels {ty['names']}")
        return str(v)
    if t == "blob":
        if isinstance(v, np.bytes_):
            v = bytes(v)
        if isinstance(v, (bytes, bytearray)):
            return bytes(v).hex()
        if isinstance(v, str) and re.fullmatch(r"(?:[0-9a-fA-F]{2})*", v):
            return v.lower()
        fail(path, f"{show(v)} ({type(v).__name__}) where blob bytes are stored")
    if t in ("list", "array"):
        return canon_seq(ty, v, path, ctx)
    if t in ("struct", "tuple"):
        return canon_record(ty, v, path, ctx)
    if t == "union":
        return canon_union(ty, v, path, ctx)
    if t == "map":
        return canon_map(ty, v, path, ctx)
    if t == "instant":
        return canon_instant(ty, v, path)
    if t == "date":
        return canon_date(v, path)
    if t in ("time", "duration"):
        return canon_ns_span(t, v, path)
    if t == "offset_datetime":
        if isinstance(v, str) and not v.lstrip().startswith("{"):
            ns, zone, offset = parse_instant(v, path)
            if zone is None:
                fail(path, f"{v!r}: a date-time with an offset has a zone suffix")
            return {"instant": ns, "offset_seconds": offset}
        if isinstance(v, str):
            v = parse_json_text(v, path)
        if not isinstance(v, dict) or list(v) != ["instant", "offset_seconds"]:
            fail(path, f"{show(v)} where {{instant, offset_seconds}} is stored")
        return {"instant": canon_instant({"tz": "UTC"}, v["instant"], path + ".instant"),
                "offset_seconds": canon_int("i32", v["offset_seconds"], path + ".offset_seconds")}
    if t == "uuid":
        return canon_uuid(v, path)
    if t in ("complex64", "complex128"):
        return canon_complex(t, v, path, ctx)
    raise ValueError(f"unknown type {t}")


def sort_maps(ty, v):
    """Every map's entries sorted by key (for readers that cannot keep a row's entry order)."""
    t = ty["t"]
    if v is None:
        return None
    if t == "option":
        return sort_maps(ty["some"], v)
    if t == "map":
        pairs = [[sort_maps(ty["key"], k), sort_maps(ty["value"], x)] for k, x in v]
        return sorted(pairs, key=lambda p: json.dumps(p[0]))
    if t in ("list", "array"):
        return [sort_maps(ty["item"], x) for x in v]
    if t in ("struct", "tuple"):
        return {n: sort_maps(ft, v[n]) for n, ft in ty["fields"]}
    if t == "union":
        f = dict((n, f) for n, f in ty["variants"])[v["variant"]]
        return {"variant": v["variant"], **({n: sort_maps(ft, v[n]) for n, ft in f["fields"]} if f else {})}
    return v


def first_diff(got, want, path="$"):
    if isinstance(want, list) and isinstance(got, list):
        if len(got) != len(want):
            return f"{path}: {len(got)} items, expected {len(want)}: {show(got)} != {show(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            d = first_diff(g, w, f"{path}[{i}]")
            if d:
                return d
        return None
    if isinstance(want, dict) and isinstance(got, dict):
        if sorted(got) != sorted(want):
            return f"{path}: fields {list(got)}, expected {list(want)}"
        for k in want:
            d = first_diff(got[k], want[k], f"{path}.{k}")
            if d:
                return d
        return None
    if type(got) is type(want) and got == want:
        return None
    return f"{path}: {show(got)}, expected {show(want)}"


def check_rows(ty, got_plain, want, ctx=STRICT, unordered_maps=False):
    """Canonicalises a reader's rows and compares them with EXPECTED's, raising AssertionError at the first
    difference."""
    if len(got_plain) != len(want):
        raise AssertionError(f"{len(got_plain)} rows, expected {len(want)}")
    got = [canon(ty, v, f"$[{i}]", ctx) for i, v in enumerate(got_plain)]
    if unordered_maps:
        got = [sort_maps(ty, v) for v in got]
        want = [sort_maps(ty, v) for v in want]
    d = first_diff(got, want)
    if d:
        raise AssertionError(d)


# ---------------------------------------------------------------------------
# Adapters: reader outputs -> lists of plain values


def arrow_plain(arr):
    """A pyarrow Array or ChunkedArray -> list of plain Python values (times tagged, unions UnionValue)."""
    import pyarrow as pa
    if isinstance(arr, pa.ChunkedArray):
        out = []
        for c in arr.chunks:
            out.extend(arrow_plain(c))
        return out
    t = arr.type
    n = len(arr)
    valid = arr.is_valid().to_pylist() if arr.null_count else [True] * n
    if isinstance(t, pa.ExtensionType) or isinstance(arr, pa.ExtensionArray):
        return arrow_plain(arr.storage)
    if pa.types.is_dictionary(t):
        return arrow_plain(arr.dictionary_decode())
    if pa.types.is_null(t):
        return [None] * n
    if pa.types.is_timestamp(t) or pa.types.is_duration(t) or pa.types.is_time(t) or pa.types.is_date(t):
        if pa.types.is_date64(t):
            raw = arr.cast(pa.int64()).to_pylist()
            return [None if x is None else Tagged("ts", x * 10**6) for x in raw]
        if pa.types.is_date32(t):
            raw = arr.cast(pa.int32()).to_pylist()
            return [None if x is None else Tagged("date", x) for x in raw]
        raw = arr.cast(pa.int32() if pa.types.is_time32(t) else pa.int64()).to_pylist()
        mul = UNIT_NS[t.unit]
        kind = "ts" if pa.types.is_timestamp(t) else "dur" if pa.types.is_duration(t) else "tod"
        tz = t.tz if kind == "ts" else None
        return [None if x is None else Tagged(kind, x * mul, tz) for x in raw]
    if pa.types.is_float16(t):
        bits = np.frombuffer(arr.buffers()[1], dtype=np.uint16)[arr.offset:arr.offset + n]
        return [np.uint16(b).view(np.float16) if ok else None for b, ok in zip(bits, valid)]
    if pa.types.is_float32(t):
        return [np.float32(x) if x is not None else None for x in arr.to_pylist()]
    if pa.types.is_struct(t):
        kids = [arrow_plain(arr.field(i)) for i in range(t.num_fields)]
        names = [t.field(i).name for i in range(t.num_fields)]
        return [dict(zip(names, (k[i] for k in kids))) if valid[i] else None for i in range(n)]
    if pa.types.is_map(t):
        offs = arr.offsets.to_pylist()
        keys, items = arrow_plain(arr.keys), arrow_plain(arr.items)
        return [list(zip(keys[offs[i]:offs[i + 1]], items[offs[i]:offs[i + 1]])) if valid[i] else None
                for i in range(n)]
    if pa.types.is_fixed_size_list(t):
        size = t.list_size
        vals = arrow_plain(arr.values)
        start = arr.offset * size
        return [vals[start + i * size:start + (i + 1) * size] if valid[i] else None for i in range(n)]
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_list_view(t) or \
            pa.types.is_large_list_view(t):
        offs = arr.offsets.to_pylist()
        vals = arrow_plain(arr.values)
        return [vals[offs[i]:offs[i + 1]] if valid[i] else None for i in range(n)]
    if pa.types.is_union(t):
        if t.mode != "dense":
            raise AssertionError(f"a {t.mode} union")
        codes = arr.type_codes.to_pylist()
        offs = arr.offsets.to_pylist()
        kids = {t.type_codes[i]: (t.field(i).name, arrow_plain(arr.field(i))) for i in range(t.num_fields)}
        out = []
        for c, o in zip(codes, offs):
            name, vals = kids[c]
            out.append(None if vals[o] is None else UnionValue(name, vals[o]))
        return out
    if pa.types.is_fixed_size_binary(t):
        return arr.to_pylist()
    return arr.to_pylist()


def numpy_plain(a):
    """A column of `Vector.read()` -> list of plain values (masked -> None)."""
    if isinstance(a, np.ma.MaskedArray):
        mask = np.ma.getmaskarray(a)
        if mask.ndim > 1:
            mask = mask.reshape(mask.shape[0], -1).all(axis=1)
        data = a.data
        return [None if m else (data[i] if data.ndim == 1 else data[i]) for i, m in enumerate(mask)]
    return [a[i] for i in range(len(a))]


def pandas_plain(s):
    """A pandas Series -> list of plain values."""
    import pandas as pd
    dt = s.dtype
    if isinstance(dt, pd.ArrowDtype):
        import pyarrow as pa
        return arrow_plain(pa.array(s))
    if isinstance(dt, pd.DatetimeTZDtype):
        tz = str(dt.tz)
        vals = s.array.as_unit("ns").asi8 if hasattr(s.array, "as_unit") else s.array.asi8
        return [None if pd.isna(x) else Tagged("ts", int(v), tz) for x, v in zip(s, vals)]
    if dt.kind in "mM":
        return [None if np.isnat(x) else x for x in s.to_numpy()]
    if isinstance(dt, pd.CategoricalDtype):
        return [None if pd.isna(x) else x for x in s.astype(object)]
    if isinstance(dt, pd.api.extensions.ExtensionDtype) and not isinstance(dt, pd.StringDtype):
        # Int64/Float64/boolean masked arrays: values and mask separately (NaN is not NA)
        arr = s.array
        if hasattr(arr, "_data") and hasattr(arr, "_mask"):
            return [None if m else v for v, m in zip(arr._data, arr._mask)]
        return [None if x is pd.NA else x for x in s.to_numpy(dtype=object)]
    if isinstance(dt, pd.StringDtype):
        return [None if x is pd.NA or x is None or (isinstance(x, float) and np.isnan(x)) else x
                for x in s.to_numpy(dtype=object)]
    return list(s.to_numpy())


def columns_of_arrow_table(table):
    return {name: arrow_plain(table.column(name)) for name in table.column_names}


def columns_of_polars(df):
    return columns_of_arrow_table(df.to_arrow())


def columns_of_pandas(df):
    return {str(c): pandas_plain(df[c]) for c in df.columns}


def columns_of_numpy(d):
    return {k: numpy_plain(v) for k, v in d.items()}


RECORDISH = ("struct", "tuple", "offset_datetime")


def assemble(ty, cols, n, prefix=None):
    """The rows of a vector from a reader's columns: `value` for a non-record root, else the record's fields;
    records (also under Option, and unions in the flat form) may be split into dotted columns."""
    if prefix is None:
        if "value" in cols or any(c.startswith("value.") for c in cols):
            prefix = "value"
        elif ty["t"] in RECORDISH or (ty["t"] == "option" and ty["some"]["t"] in RECORDISH):
            prefix = ""
        else:
            raise AssertionError(f"no column `value` among {list(cols)}")
        rows = assemble(ty, cols, n, prefix)
        used = set(_used)
        extra = [c for c in cols if c not in used]
        _used.clear()
        if extra:
            raise AssertionError(f"unexpected columns {extra}")
        return rows
    if prefix in cols and prefix != "":
        _used.append(prefix)
        col = cols[prefix]
        if len(col) != n:
            raise AssertionError(f"column {prefix}: {len(col)} rows, expected {n}")
        return col
    dot = prefix + "." if prefix else ""
    t = ty["t"]
    inner = ty["some"] if t == "option" else ty
    it = inner["t"]
    if it in RECORDISH or it == "complex64" or it == "complex128":
        names = [f[0] for f in inner["fields"]] if it in ("struct", "tuple") else \
            ["instant", "offset_seconds"] if it == "offset_datetime" else ["r", "i"]
        ftypes = [f[1] for f in inner["fields"]] if it in ("struct", "tuple") else \
            [{"t": "instant", "tz": "UTC"}, {"t": "i32"}] if it == "offset_datetime" else [None, None]
        kids = [assemble(ft or {"t": "f64"}, cols, n, dot + name) for name, ft in zip(names, ftypes)]
        rows = [dict(zip(names, (k[i] for k in kids))) for i in range(n)]
        if t == "option":
            rows = [None if all(is_null(x) for x in r.values()) else r for r in rows]
        return rows
    if it == "union":
        if dot + "variant" not in cols:
            raise AssertionError(f"no column {prefix or 'value'} (nor {dot}variant)")
        _used.append(dot + "variant")
        var = cols[dot + "variant"]
        kids = {}
        for name, f in inner["variants"]:
            if f is None:
                continue
            if dot + name in cols:
                _used.append(dot + name)
                kids[name] = cols[dot + name]
            else:
                fk = [assemble(ft, cols, n, f"{dot}{name}.{fn}") for fn, ft in f["fields"]]
                fnames = [x[0] for x in f["fields"]]
                kids[name] = [None if all(is_null(k[i]) for k in fk) else dict(zip(fnames, (k[i] for k in fk)))
                              for i in range(n)]
        rows = []
        for i in range(n):
            if is_null(var[i]):
                rows.append(None)
            else:
                rows.append({"variant": var[i], **{k: v[i] for k, v in kids.items()}})
        return rows
    raise AssertionError(f"no column {prefix!r}")


_used = []


def rows_from_columns(ty, cols, n):
    _used.clear()
    try:
        return assemble(ty, cols, n)
    finally:
        _used.clear()


# ---------------------------------------------------------------------------
# The command's table format (arrow's pretty printer)


def table_rows(text):
    """(header, [line cells]); cells are split at '|' (no value of the matrix holds one: a cell that did
    would make the line's cell count differ, an error)."""
    lines = text.splitlines()
    header = None
    body = []
    for ln in lines:
        if ln.startswith("+"):
            continue
        if not (ln.startswith("|") and ln.endswith("|")):
            raise AssertionError(f"not a table line: {ln!r}")
        cells = [c.strip() for c in ln[1:-1].split("|")]
        if header is None:
            header = cells
        elif len(cells) != len(header):
            raise AssertionError(f"{len(cells)} cells for {len(header)} columns: {ln!r}")
        else:
            body.append(cells)
    return header, body


class TableParser:
    """Type-directed parse of one cell of arrow's display: `[a, b]`, `{k: v, ...}`, strings unquoted."""

    def __init__(self, text):
        self.s, self.i = text, 0

    def peek(self, lit):
        return self.s.startswith(lit, self.i)

    def eat(self, lit, path):
        if not self.peek(lit):
            fail(path, f"expected {lit!r} at {self.s[self.i:self.i + 30]!r} in table cell {self.s!r}")
        self.i += len(lit)

    def leaf(self, stops):
        """Text up to the first of `stops` at this level (or the end)."""
        j = len(self.s)
        for st in stops:
            k = self.s.find(st, self.i)
            if k != -1:
                j = min(j, k)
        out = self.s[self.i:j]
        self.i = j
        return out

    def value(self, ty, stops, path):
        t = ty["t"]
        if t in ("option", "unit"):
            # arrow's display prints a null as `null` (an empty string stays empty)
            if self.peek("null") and (self.i + 4 == len(self.s) or any(self.s.startswith(st, self.i + 4)
                                                                      for st in stops)):
                self.i += 4
                return None
            if t == "unit":
                fail(path, f"{self.s[self.i:]!r} where a constant (null) is stored")
            return self.value(ty["some"], stops, path)
        if t in ("list", "array"):
            self.eat("[", path)
            out = []
            if self.peek("]") and (ty["t"] == "list" or ty["n"] == 0):
                self.i += 1
                return out
            while True:
                out.append(self.value(ty["item"], [", ", "]"], f"{path}[{len(out)}]"))
                if not self.peek(", "):
                    break
                self.i += 2
            self.eat("]", path)
            return out
        if t in ("struct", "tuple") or t == "offset_datetime" or t in ("complex64", "complex128"):
            fields = ty["fields"] if t in ("struct", "tuple") else \
                [["instant", {"t": "instant", "tz": "UTC"}], ["offset_seconds", {"t": "i32"}]] \
                if t == "offset_datetime" else [["r", {"t": "f32" if t == "complex64" else "f64"}],
                                                ["i", {"t": "f32" if t == "complex64" else "f64"}]]
            if not self.peek("{"):
                return self.leaf(stops)
            self.eat("{", path)
            out = {}
            for k, (n, ft) in enumerate(fields):
                self.eat(n + ": ", path)
                out[n] = self.value(ft, [", " + fields[k + 1][0] + ": "] if k + 1 < len(fields) else ["}"],
                                    f"{path}.{n}")
                if k + 1 < len(fields):
                    self.eat(", ", path)
            self.eat("}", path)
            return out
        if t == "map":
            self.eat("{", path)
            out = []
            if self.peek("}"):
                self.i += 1
                return out
            while True:
                k = self.value(ty["key"], [": "], f"{path}[{len(out)}].key")
                self.eat(": ", path)
                v = self.value(ty["value"], [", ", "}"], f"{path}[{len(out)}].value")
                out.append((k, v))
                if not self.peek(", "):
                    break
                self.i += 2
            self.eat("}", path)
            return out
        if t == "union":
            names = [n for n, _ in ty["variants"]]
            if not self.peek("{variant: "):
                # arrow's display of a dense union: {Name={field: value, ...}}
                self.eat("{", path)
                name = self.leaf(["="])
                self.eat("=", path)
                f = dict(ty["variants"]).get(name)
                if name not in names:
                    fail(path, f"variant {name!r} in table cell {self.s!r}")
                if self.peek("null}"):
                    # a null row of Option<Enum>: null in the child of its tag (SPEC 11)
                    self.i += 5
                    return None
                if f is None:
                    self.eat("{}", path)
                    fields = {}
                else:
                    fields = self.value(f, ["}"], f"{path}.{name}")
                self.eat("}", path)
                return UnionValue(name, fields)
            # the flat form's struct: {variant: V, V1: {..} or null, ...}
            self.eat("{variant: ", path)
            names = [n for n, _ in ty["variants"]]
            kids = [(n, f) for n, f in ty["variants"] if f is not None]
            name = self.leaf([", ", "}"])
            out = {"variant": name}
            f = dict(ty["variants"]).get(name)
            if name not in names:
                fail(path, f"variant {name!r} in table cell {self.s!r}")
            if not any(self.peek(", " + n + ": ") for n, _ in kids) or \
                    (f is not None and any(self.peek(", " + fn + ": ") for fn, _ in f["fields"])):
                # the JSON lines form: {variant: V, field: value, ...}
                fields = f["fields"] if f is not None else []
                for k, (fn, ft) in enumerate(fields):
                    self.eat(", " + fn + ": ", path)
                    out[fn] = self.value(ft, [", " + fields[k + 1][0] + ": "] if k + 1 < len(fields) else ["}"],
                                         f"{path}.{fn}")
                self.eat("}", path)
                return out
            for n, f in kids:
                self.eat(", " + n + ": ", path)
                out[n] = self.value({"t": "option", "some": f}, [", " + m + ": " for m, _ in kids] + ["}"],
                                    f"{path}.{n}")
            self.eat("}", path)
            if name not in names:
                fail(path, f"variant {name!r} in table cell {self.s!r}")
            return out
        return self.leaf(stops)


def parse_cell(ty, text, path):
    p = TableParser(text)
    v = p.value(ty, [], path)
    if p.i != len(text):
        fail(path, f"trailing text {text[p.i:]!r} in table cell {text!r}")
    return v
