"""The values examples/xlang.rs writes, recomputed independently in Python.

Every function mirrors the Rust function of the same name in
examples/xlang.rs; each value is a pure function of its row index.
"""

import numpy as np

N_SCALARS = 40

# name -> (numpy dtype, bits, signed, HDF5Vectors encoded_type)
INT_TYPES = {
    "int8": ("<i1", 8, True, "Int8"),
    "int16": ("<i2", 16, True, "Int16"),
    "int32": ("<i4", 32, True, "Int32"),
    "int64": ("<i8", 64, True, "Int64"),
    "uint8": ("<u1", 8, False, "UInt8"),
    "uint16": ("<u2", 16, False, "UInt16"),
    "uint32": ("<u4", 32, False, "UInt32"),
    "uint64": ("<u8", 64, False, "UInt64"),
}


def base(n):
    return n * n * 37 - 500 * n


def wrap(x, bits, signed):
    """Rust's `x as iN` / `x as uN` (two's-complement truncation)."""
    x %= 1 << bits
    if signed and x >= 1 << (bits - 1):
        x -= 1 << bits
    return x


def int_value(name, n):
    _, bits, signed, _ = INT_TYPES[name]
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if n == 0:
        return lo
    if n == 1:
        return hi
    return wrap(base(n), bits, signed)


def f32_value(n):
    f32 = np.float32
    if n == 0:
        return np.finfo(f32).max
    if n == 1:
        return np.finfo(f32).tiny  # f32::MIN_POSITIVE
    if n == 2:
        return f32(-0.0)
    return f32(n) * f32(0.5) - f32(3.25)


def f64_value(n):
    if n == 0:
        return np.finfo(np.float64).max
    if n == 1:
        return 5e-324
    if n == 2:
        return -0.0
    return float(n) * 0.1 - 1.0


def bool_value(n):
    return n % 3 == 0


CHARS = ["a", "é", "日", "🎉", "\0", "\U0010FFFF", "Z"]


def char_value(n):
    return CHARS[n % len(CHARS)]


TEXTS = ["", "plain", "héllo wörld", "日本語テキスト", "emoji 🎉🚀", "tab\tnew\nline", 'quote " back\\slash']


def text_value(n):
    if n % len(TEXTS) == 0:
        return ""
    return f"{TEXTS[n % len(TEXTS)]}#{n}"


# Level: #[repr(i16)] enum, variant -> discriminant, in LEVELS order.
LEVELS = [("Low", -3), ("Mid", 0), ("High", 7), ("Max", 300)]


def level_value(n):
    return LEVELS[n % len(LEVELS)]


def measurement(i):
    return {
        "timestamp": {"weeks": 2300 + i // 10, "microseconds": i * 1_000_000},
        "temperature": 20.0 + i * 0.25,
        "position": [float(i), float(i) * 2.0, -float(i)],
    }


def all_scalars(n):
    rec = {name: int_value(name, n) for name in INT_TYPES}
    rec.update(
        float32=f32_value(n),
        float64=f64_value(n),
        flag=bool_value(n),
        letter=char_value(n),
        text=text_value(n),
        level=level_value(n),
    )
    return rec


ALL_FIELDS = list(INT_TYPES) + ["float32", "float64", "flag", "letter", "text", "level"]


def meta(n):
    return {"name": f"météo-{n}", "tags": [f"t{k}" for k in range(n % 3)], "score": n * 1.5}


def extra(n):
    return {
        "label": f"ex{n}é",
        "weights": [k * 150 + (70_000 if k == 3 else 0) for k in range(n)],
        "flag": n % 2 == 1,
    }


def annotated(n):
    return {
        "id": n * 3,
        "temp_c": -40.0 + n,
        "extra": extra(n),
        "meta": meta(n),
        "note": f"note {n} ✓",
    }


def vec3(n):
    x = np.float32(n)
    return np.array([x, x + np.float32(0.5), -x * np.float32(0.25)], dtype=np.float32)


def mat(n):
    """Rust [[i32; 2]; 3]: 3 rows of 2 -> numpy (3, 2)."""
    return np.array([[n * 100 + r * 10 + c for c in range(2)] for r in range(3)], dtype=np.int32)


def flags(n):
    return np.array([(n >> b) & 1 == 1 for b in range(4)])


def tuple_value(n):
    return (n - 5, n / 4.0, text_value(n))


def nested(n):
    return (n * 20, (-n * 1000, char_value(n)))


def pair(n):
    return (n * n, n + 0.125)


# --- bincode 2, standard configuration (varint integers, little-endian) ---


def bincode_varint(x):
    if x < 251:
        return bytes([x])
    if x < 1 << 16:
        return b"\xfb" + x.to_bytes(2, "little")
    if x < 1 << 32:
        return b"\xfc" + x.to_bytes(4, "little")
    return b"\xfd" + x.to_bytes(8, "little")


def bincode_extra(e):
    label = e["label"].encode("utf-8")
    out = bincode_varint(len(label)) + label
    out += bincode_varint(len(e["weights"])) + b"".join(bincode_varint(w) for w in e["weights"])
    out += b"\x01" if e["flag"] else b"\x00"
    return out
