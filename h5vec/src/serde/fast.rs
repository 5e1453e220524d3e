//! What the direct serde path's two sides share. The direct path covers
//! the common shapes (SPEC.md section 13): structs, tuples and fixed-size
//! arrays of numbers, `bool`, strings, lists and `Option`s of these.
//! Saving (`ser/fast`) fills a plain buffer per leaf of the h5vec fields
//! through a `Serializer` that follows a per-field plan (the buffers are
//! lent to each batch's arrays and reused); loading (`de/fast`)
//! deserializes straight from the arrays `h5vec::arrow` reads. Shapes
//! outside this set (enums, maps, bytes, times, UUIDs, units, flattened
//! structs, optional records) go through serde_arrow (`Plan::new` and
//! `Reader::new` return `None` for them).
//!
//! Here: the error with its field path ([`PathError`]), which serde fields
//! the direct path takes as their type says ([`plain`]), and how serde
//! serializes an enum variant ([`Shape`]).

use std::fmt::Display;

use ::serde::{de, ser};
use arrow_schema::{DataType, Field};
use serde_arrow::schema::STRATEGY_KEY;

use super::fields::{is_tuple, UUID_TEXT};

/// A serde error with the field path, innermost segment first. Boxed:
/// every value (de)serialized returns a `Result` of it, which stays one
/// pointer wide.
#[derive(Debug)]
pub(crate) struct PathError(Box<PathErrorInner>);

#[derive(Debug)]
struct PathErrorInner {
    segments: Vec<String>,
    msg: String,
}

impl PathError {
    pub(super) fn msg(m: impl Display) -> Self {
        PathError(Box::new(PathErrorInner {
            segments: Vec::new(),
            msg: m.to_string(),
        }))
    }
    pub(super) fn at(mut self, seg: &str) -> Self {
        self.0.segments.push(seg.to_owned());
        self
    }
    /// The same error with `prefix` before its message.
    pub(super) fn prefixed(mut self, prefix: impl Display) -> Self {
        self.0.msg = format!("{prefix}: {}", self.0.msg);
        self
    }
    /// The logical path (`$.a.b[]`) of the error.
    pub(crate) fn path(&self) -> String {
        let mut p = String::from("$");
        for s in self.0.segments.iter().rev() {
            if s == "[]" {
                p.push_str("[]");
            } else {
                p.push('.');
                p.push_str(s);
            }
        }
        p
    }
}

impl Display for PathError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.msg)
    }
}
impl std::error::Error for PathError {}
impl ser::Error for PathError {
    fn custom<T: Display>(msg: T) -> Self {
        PathError::msg(msg)
    }
}
impl de::Error for PathError {
    fn custom<T: Display>(msg: T) -> Self {
        PathError::msg(msg)
    }
}

pub(super) type R<T = ()> = std::result::Result<T, PathError>;

/// Whether `f` carries no serde_arrow strategy but a tuple's, and no
/// h5vec serde marker: a field the direct path handles as its type says.
pub(super) fn plain(f: &Field) -> bool {
    !f.metadata().contains_key(UUID_TEXT)
        && (!f.metadata().contains_key(STRATEGY_KEY) || is_tuple(f))
}

/// How serde serializes a variant (serde_arrow's child of the union).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Shape {
    Unit,
    Newtype,
    Tuple,
    Struct,
}

impl Shape {
    pub(super) fn of(sf: &Field) -> Self {
        match sf.data_type() {
            DataType::Null => Shape::Unit,
            DataType::Struct(_) if is_tuple(sf) => Shape::Tuple,
            DataType::Struct(_) => Shape::Struct,
            _ => Shape::Newtype,
        }
    }
    pub(super) fn name(self) -> &'static str {
        match self {
            Shape::Unit => "a unit variant",
            Shape::Newtype => "a newtype variant",
            Shape::Tuple => "a tuple variant",
            Shape::Struct => "a struct variant",
        }
    }
}
