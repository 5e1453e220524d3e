//! The schema check of a [`Dataset`](super::Dataset): every file's stored
//! schema tree against the first file's, the first difference named by its
//! field path (`$.a.b`), expected (the first file's) against found.
//!
//! Compared: each node's kind, schema, codec, encoded type, dimensions,
//! enum labels, time unit and zone, and its children (a record's by field
//! name). Not compared: `logical_type`, the writer's name for the type
//! (a Rust struct's name, Python's dtype), which does not change what is
//! stored. [`LoadFlags`] relax the check as a typed load would:
//! `ignore_extra_fields` lets records differ in their fields (those both
//! have are compared), `widen_numbers` lets numbers differ in their type;
//! each file is then checked against the Rust type when it is read.

use crate::evolution::{LoadFlags, Number};
use crate::schema::{Kind, Stored};

/// Where two schema trees differ: the field path, what the first file has
/// there, what the other has.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Difference {
    pub(crate) path: String,
    pub(crate) expected: String,
    pub(crate) found: String,
}

/// The first difference between `first` and `other` at `path` that
/// `flags` do not allow; `None` when there is none.
pub(crate) fn difference(
    first: &Stored,
    other: &Stored,
    flags: LoadFlags,
    path: &str,
) -> Option<Difference> {
    let differ = |expected: String, found: String| {
        Some(Difference {
            path: path.to_owned(),
            expected,
            found,
        })
    };
    if first.kind != other.kind {
        return differ(describe(first), describe(other));
    }
    if first.kind == Kind::Record {
        return record_difference(first, other, flags, path);
    }
    if first.encoded_type != other.encoded_type && !(flags.widen_numbers && numbers(first, other)) {
        return differ(describe(first), describe(other));
    }
    fn cmp<T: PartialEq + std::fmt::Debug>(name: &str, a: &T, b: &T) -> Option<(String, String)> {
        (a != b).then(|| (format!("{name} {a:?}"), format!("{name} {b:?}")))
    }
    let here = cmp("schema", &first.schema, &other.schema)
        .or_else(|| cmp("codec", &first.codec, &other.codec))
        .or_else(|| cmp("dimensions", &first.dimensions, &other.dimensions))
        .or_else(|| cmp("variant_names", &first.variant_names, &other.variant_names))
        .or_else(|| {
            cmp(
                "variant_values",
                &first.variant_values,
                &other.variant_values,
            )
        })
        .or_else(|| cmp("time_unit", &first.time_unit, &other.time_unit))
        .or_else(|| cmp("time_zone", &first.time_zone, &other.time_zone))
        .or_else(|| {
            let (a, b) = (first.children.len(), other.children.len());
            (a != b).then(|| (format!("{a} children"), format!("{b} children")))
        });
    if let Some((expected, found)) = here {
        return differ(expected, found);
    }
    first
        .children
        .iter()
        .zip(&other.children)
        .enumerate()
        .find_map(|(i, (a, b))| difference(a, b, flags, &format!("{path}[child {}]", i + 1)))
}

/// Two records: their fields by name (in the same order unless
/// `ignore_extra_fields`), then each field both have.
fn record_difference(
    first: &Stored,
    other: &Stored,
    flags: LoadFlags,
    path: &str,
) -> Option<Difference> {
    let none: &[String] = &[];
    let a = first.field_names.as_deref().unwrap_or(none);
    let b = other.field_names.as_deref().unwrap_or(none);
    if !flags.ignore_extra_fields {
        if let Some(name) = a.iter().find(|n| !b.contains(n)) {
            return Some(Difference {
                path: format!("{path}.{name}"),
                expected: format!("a field `{name}`"),
                found: "no such field".into(),
            });
        }
        if let Some(name) = b.iter().find(|n| !a.contains(n)) {
            return Some(Difference {
                path: format!("{path}.{name}"),
                expected: "no such field".into(),
                found: format!("a field `{name}`"),
            });
        }
        if a != b {
            return Some(Difference {
                path: path.to_owned(),
                expected: format!("fields in the order {a:?}"),
                found: format!("{b:?}"),
            });
        }
    }
    a.iter().enumerate().find_map(|(i, name)| {
        let j = b.iter().position(|n| n == name)?;
        let (x, y) = (first.children.get(i)?, other.children.get(j)?);
        difference(x, y, flags, &format!("{path}.{name}"))
    })
}

/// Both nodes hold numbers (of possibly different types).
fn numbers(a: &Stored, b: &Stored) -> bool {
    let number = |s: &Stored| s.encoded_type.as_deref().and_then(Number::parse).is_some();
    number(a) && number(b)
}

/// `scalar Int32`, `record`, `list`: a node's kind and encoded type.
fn describe(node: &Stored) -> String {
    match &node.encoded_type {
        Some(t) => format!("{} {t}", node.kind),
        None => node.kind.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scalar(t: &str) -> Stored {
        Stored {
            kind: Kind::Scalar,
            encoded_type: Some(t.into()),
            ..Stored::default()
        }
    }

    fn record(fields: &[(&str, Stored)]) -> Stored {
        Stored {
            kind: Kind::Record,
            field_names: Some(fields.iter().map(|(n, _)| n.to_string()).collect()),
            children: fields.iter().map(|(_, s)| s.clone()).collect(),
            ..Stored::default()
        }
    }

    #[test]
    fn differences_name_the_field() {
        let strict = LoadFlags::default();
        let a = record(&[("x", scalar("Int32")), ("y", scalar("Float64"))]);
        assert_eq!(difference(&a, &a, strict, "$"), None);
        let b = record(&[("x", scalar("Int64")), ("y", scalar("Float64"))]);
        let d = difference(&a, &b, strict, "$").unwrap();
        assert_eq!(d.path, "$.x");
        assert_eq!(
            (d.expected.as_str(), d.found.as_str()),
            ("scalar Int32", "scalar Int64")
        );
        let widen = LoadFlags {
            widen_numbers: true,
            ..strict
        };
        assert_eq!(difference(&a, &b, widen, "$"), None);
        let c = record(&[("x", scalar("Int32"))]);
        let d = difference(&a, &c, strict, "$").unwrap();
        assert_eq!(
            (d.path.as_str(), d.found.as_str()),
            ("$.y", "no such field")
        );
        let extra = LoadFlags {
            ignore_extra_fields: true,
            ..strict
        };
        assert_eq!(difference(&a, &c, extra, "$"), None);
        let swapped = record(&[("y", scalar("Float64")), ("x", scalar("Int32"))]);
        assert_eq!(difference(&a, &swapped, strict, "$").unwrap().path, "$");
        assert_eq!(difference(&a, &swapped, extra, "$"), None);
    }
}
