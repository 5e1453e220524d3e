"""h5col tables and VLS arrays written by h5vec, checked with plain h5py.

Runs `cargo run --example h5col_vls -- OUT.h5` (honouring CARGO_TARGET_DIR),
then checks the file against the layout rules of SPEC-h5col-vls.md: the
attributes and their HDF5 types, dtypes, fill values, offsets and NROWS.
Self-contained: needs only h5py, numpy and cargo.
"""

import os
import pathlib
import subprocess

import h5py
import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def h5file(tmp_path_factory):
    out = tmp_path_factory.mktemp("h5col_vls") / "out.h5"
    subprocess.run(
        ["cargo", "run", "--quiet", "--example", "h5col_vls", "--", str(out)],
        cwd=REPO,
        env=os.environ.copy(),  # CARGO_TARGET_DIR is passed through
        check=True,
    )
    with h5py.File(out, "r") as f:
        yield f


def attr_type(obj, name):
    return obj.attrs.get_id(name).get_type()


def assert_fixed_ascii_attr(obj, name, value):
    t = attr_type(obj, name)
    assert isinstance(t, h5py.h5t.TypeStringID)
    assert not t.is_variable_str()
    assert t.get_cset() == h5py.h5t.CSET_ASCII
    assert t.get_strpad() == h5py.h5t.STR_NULLPAD
    assert t.get_size() == len(value) + 1  # sized with the trailing NUL
    assert obj.attrs.get_id(name).shape == ()
    assert obj.attrs[name] == value.encode()


def is_h5col_bool(ds):
    t = ds.id.get_type()
    if t.get_class() != h5py.h5t.ENUM or t.get_size() != 1:
        return False
    base = t.get_super()
    if base.get_sign() != h5py.h5t.SGN_2 or t.get_nmembers() != 2:
        return False
    return {t.get_member_name(i): t.get_member_value(i) for i in range(2)} == {
        b"FALSE": 0,
        b"TRUE": 1,
    }


def user_fill(ds):
    dcpl = ds.id.get_create_plist()
    if dcpl.fill_value_defined() != h5py.h5d.FILL_VALUE_USER_DEFINED:
        return None
    return ds.fillvalue


def test_table_attributes(h5file):
    t = h5file["table"]
    assert_fixed_ascii_attr(t, "CLASS", "COLUMN_TABLE")
    assert_fixed_ascii_attr(t, "VERSION", "1.0")
    nt = attr_type(t, "NROWS")
    assert nt.get_class() == h5py.h5t.INTEGER and nt.get_size() == 8
    assert nt.get_sign() == h5py.h5t.SGN_NONE
    assert t.attrs.get_id("NROWS").shape == ()
    assert int(t.attrs["NROWS"]) == 3
    order = [c.decode() for c in t.attrs["column-order"]]
    assert order == ["id", "score", "flag", "name", "tags", "values"]
    ot = attr_type(t, "column-order")
    assert ot.get_cset() == h5py.h5t.CSET_UTF8 and not ot.is_variable_str()
    assert ot.get_size() == max(len(c) for c in order) + 1
    assert sorted(t.keys()) == sorted(order)


def test_scalar_columns(h5file):
    t = h5file["table"]
    n = int(t.attrs["NROWS"])
    ids = t["id"]
    assert ids.dtype == np.dtype("<i8") and ids.maxshape == (None,)
    assert user_fill(ids) == -9223372036854775807
    assert list(ids[:n]) == [1, 2, 3]
    score = t["score"]
    assert score.dtype == np.dtype("<f8")
    fill = user_fill(score)
    assert fill == 9.969209968386869e36
    s = score[:n]
    assert s[0] == 0.5 and s[1] == fill and s[2] == -1.25  # None -> fill value
    assert is_h5col_bool(t["flag"]) and user_fill(t["flag"]) is None
    assert list(t["flag"][:n]) == [True, False, True]
    name = t["name"]
    nt = name.id.get_type()
    assert not nt.is_variable_str() and nt.get_cset() == h5py.h5t.CSET_UTF8
    assert nt.get_strpad() == h5py.h5t.STR_NULLPAD
    assert nt.get_size() == 6  # the longest value in bytes ("日本")
    assert user_fill(name) == b""
    assert [v.decode() for v in name[:n]] == ["alpha", "日本", "βeta"]


def test_list_columns(h5file):
    t = h5file["table"]
    n = int(t.attrs["NROWS"])
    for col in ("tags", "values"):
        g = t[col]
        assert_fixed_ascii_attr(g, "CLASS", "LIST_COLUMN")
        assert_fixed_ascii_attr(g, "KIND", "OFFSETS")
        assert g["OFFSETS"].dtype == np.dtype("<u8")
    values = t["values"]
    assert sorted(values.keys()) == ["OFFSETS", "VALUES"]
    offs = values["OFFSETS"][: n + 1]
    assert list(offs) == [0, 2, 2, 3] and offs[0] == 0 and np.all(np.diff(offs) >= 0)
    assert values["VALUES"].dtype == np.dtype("<f4")
    assert list(values["VALUES"][: offs[-1]]) == [1.0, 2.5, 0.25]

    tags = t["tags"]
    assert sorted(tags.keys()) == ["MASK", "OFFSETS", "VALUES"]
    assert is_h5col_bool(tags["MASK"])
    mask = tags["MASK"][:n]
    offs = tags["OFFSETS"][: n + 1]
    assert list(mask) == [True, False, True] and list(offs) == [0, 2, 2, 2]
    sv = tags["VALUES"]
    assert_fixed_ascii_attr(sv, "CLASS", "STRING_VALUES")
    assert sorted(sv.keys()) == ["CHARS", "MASK", "OFFSETS"]
    assert sv["CHARS"].dtype == np.dtype("u1") and sv["OFFSETS"].dtype == np.dtype("<u8")
    so = sv["OFFSETS"][: offs[-1] + 1]
    chars = sv["CHARS"][: so[-1]].tobytes()
    strings = [chars[a:b].decode() for a, b in zip(so[:-1], so[1:])]
    smask = sv["MASK"][: offs[-1]]
    decoded = [s if m else None for s, m in zip(strings, smask)]
    assert decoded == ["qc", None]
    # Null rows have empty spans.
    for i in range(n):
        if not mask[i]:
            assert offs[i] == offs[i + 1]
    # No variable-length type anywhere below a list column.
    def no_vlen(name, obj):
        if isinstance(obj, h5py.Dataset):
            assert h5py.check_vlen_dtype(obj.dtype) is None, name
            assert h5py.check_string_dtype(obj.dtype) is None or obj.dtype.kind == "S", name

    t["tags"].visititems(no_vlen)


def test_table_copy_equals_table(h5file):
    a, b = h5file["table"], h5file["table_copy"]
    assert int(a.attrs["NROWS"]) == int(b.attrs["NROWS"]) == 3
    for col in ("id", "score", "flag", "name"):
        assert list(a[col][:3]) == list(b[col][:3])


def read_vls(group):
    ptrs = group["pointers"][()]
    heap = group["heap"][()].tobytes()
    ph = group["pointers"].attrs.get("missing-value-placeholder")
    if isinstance(ph, bytes):
        ph = ph.decode()
    out = []
    for off, length in ptrs:
        assert off <= len(heap) and off + length <= len(heap)
        s = heap[off : off + length].split(b"\0", 1)[0].decode()
        out.append(None if s == ph else s)
    return out


def test_vls_array(h5file):
    g = h5file["atomic_vector"]
    t = attr_type(g, "type")
    assert t.is_variable_str() and t.get_cset() == h5py.h5t.CSET_UTF8
    assert g.attrs["type"] == "vls"
    assert sorted(g.keys()) == ["heap", "pointers"]
    p = g["pointers"]
    assert p.dtype.names == ("offset", "length")
    assert p.dtype["offset"] == np.dtype("<u8") and p.dtype["length"] == np.dtype("<u8")
    assert g["heap"].dtype == np.dtype("u1") and g["heap"].ndim == 1
    assert g["heap"].compression == "gzip"
    pt = p.attrs.get_id("missing-value-placeholder").get_type()
    assert pt.is_variable_str() and pt.get_cset() == h5py.h5t.CSET_UTF8
    assert p.attrs["missing-value-placeholder"] == "NA_"  # "NA" is a real value
    assert read_vls(g) == ["alpha", None, "", "NA", "héllo wörld"]
    # Consecutive values sit on neighbouring heap bytes.
    ptrs = p[()]
    assert [int(o) for o, _ in ptrs[[0, 2, 3, 4]]] == [0, 5, 5, 7]


def test_vls_no_missing_has_no_placeholder(h5file):
    g = h5file["no_missing"]
    assert "missing-value-placeholder" not in g["pointers"].attrs
    assert read_vls(g) == ["x", "yy"]
