//! The Arrow side of the column encoders: where the values being written
//! are (`At`, for errors), string and binary arrays of any Arrow type
//! (`Texts`, `Bytes`), and the null checks and the errors they give.

use arrow_array::cast::AsArray;
use arrow_array::Array;
use arrow_buffer::NullBuffer;

use crate::error::{Error, Result};

/// The logical path and first row of the values being written, for errors.
pub(crate) struct At<'a> {
    pub(crate) path: &'a str,
    /// The row (or list element) of the vector the array's first value is.
    pub(crate) base: u64,
}

impl At<'_> {
    pub(crate) fn row(&self, i: usize) -> String {
        format!("{}[{}]", self.path, self.base + i as u64)
    }
}

pub(crate) fn bad_key(at: &At<'_>, i: usize) -> Error {
    Error::invalid(
        at.row(i),
        "dictionary key out of range of the dictionary's values",
    )
}

/// A string column of any Arrow string type (dictionaries decoded).
pub(crate) enum Texts<'a> {
    Small(&'a arrow_array::StringArray),
    Large(&'a arrow_array::LargeStringArray),
    View(&'a arrow_array::StringViewArray),
    Dict(Vec<usize>, Box<Texts<'a>>),
}

impl<'a> Texts<'a> {
    pub(crate) fn of(a: &'a dyn Array) -> Option<Texts<'a>> {
        if let Some(s) = a.as_string_opt::<i32>() {
            return Some(Texts::Small(s));
        }
        if let Some(s) = a.as_string_opt::<i64>() {
            return Some(Texts::Large(s));
        }
        if let Some(s) = a.as_string_view_opt() {
            return Some(Texts::View(s));
        }
        let d = a.as_any_dictionary_opt()?;
        let values = Texts::of(d.values().as_ref())?;
        Some(Texts::Dict(d.normalized_keys(), Box::new(values)))
    }

    /// Value `i`; `None` only for a dictionary key out of range.
    pub(crate) fn get(&self, i: usize) -> Option<&'a str> {
        match self {
            Texts::Small(s) => (i < s.len()).then(|| s.value(i)),
            Texts::Large(s) => (i < s.len()).then(|| s.value(i)),
            Texts::View(s) => (i < s.len()).then(|| s.value(i)),
            Texts::Dict(keys, v) => v.get(*keys.get(i)?),
        }
    }
}

/// A binary column of any Arrow binary type.
pub(crate) enum Bytes<'a> {
    Small(&'a arrow_array::BinaryArray),
    Large(&'a arrow_array::LargeBinaryArray),
    View(&'a arrow_array::BinaryViewArray),
}

impl<'a> Bytes<'a> {
    pub(crate) fn of(a: &'a dyn Array) -> Option<Bytes<'a>> {
        if let Some(s) = a.as_binary_opt::<i32>() {
            return Some(Bytes::Small(s));
        }
        if let Some(s) = a.as_binary_opt::<i64>() {
            return Some(Bytes::Large(s));
        }
        a.as_binary_view_opt().map(Bytes::View)
    }

    pub(crate) fn get(&self, i: usize) -> &'a [u8] {
        match self {
            Bytes::Small(s) => s.value(i),
            Bytes::Large(s) => s.value(i),
            Bytes::View(s) => s.value(i),
        }
    }
}

pub(crate) fn hole(holes: Option<&NullBuffer>, i: usize) -> bool {
    holes.is_some_and(|h| h.is_null(i))
}

/// A null where the field is not nullable (and no enclosing null covers it).
pub(crate) fn check_nulls(
    nulls: Option<&NullBuffer>,
    holes: Option<&NullBuffer>,
    at: &At<'_>,
) -> Result<()> {
    let Some(n) = nulls.filter(|n| n.null_count() > 0) else {
        return Ok(());
    };
    match (0..n.len()).find(|&i| n.is_null(i) && !hole(holes, i)) {
        Some(i) => Err(null_value(at, i)),
        None => Ok(()),
    }
}

pub(crate) fn null_value(at: &At<'_>, i: usize) -> Error {
    Error::mismatch(
        at.row(i),
        "a value (the field is not nullable: SPEC.md section 11)",
        "null",
    )
}

pub(crate) fn wrong_array(at: &At<'_>, what: &str, arr: &dyn Array) -> Error {
    Error::mismatch(at.path, format!("Arrow values for {what}"), arr.data_type())
}
