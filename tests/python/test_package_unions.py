"""The Python package and enums with data (SPEC.md section 4.4): a vector
with a union field is refused with h5vec.FormatError naming the field, not
misread; labelled enums keep reading as their codes with their labels."""

import pytest

import h5vec
from test_enums_h5py import enums_file  # noqa: F401 (the fixture)


def test_union_field_is_a_format_error_naming_the_field(enums_file):  # noqa: F811
    path = enums_file.filename
    with pytest.raises(h5vec.FormatError, match="enum with data") as e:
        h5vec.open_vector(path, "rows").to_arrow()
    assert isinstance(e.value, ValueError)
    assert e.value.path == "$.event"
    assert e.value.location == "/rows/metadata/schema/children/2"
