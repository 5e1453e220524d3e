//! Matching a stored record to the type's fields on open: by name, then by
//! alias, defaults for missing fields, extra stored fields only when the
//! load allows them (SPEC.md section 12), with every difference listed in
//! the error.

use hdf5::Group;

use crate::codec::expect_members;
use crate::error::{Error, Place, Result};
use crate::evolution::LoadFlags;
use crate::options::WriteCtx;
use crate::schema::{ids, Kind, Schema, Stored};

use super::fields::{FieldList, Record};

/// What a record is matched for: a load (aliases, defaults and, if the
/// load allows, extra stored fields) or an append (exactly the stored fields).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Use {
    /// A load, with what it allows beyond an exact match.
    Load(LoadFlags),
    Append,
}

/// Checks a record node (kind, identifiers, one name per child, no name
/// twice) and the members of its data group (exactly the stored names),
/// and matches the type's fields to the stored ones (SPEC.md section 12):
/// for field `i`, the index of the stored field it reads, or `None` where
/// the file lacks it and `has_default[i]`. Stored fields are matched by
/// name first, then by the field's aliases (loads only). Missing fields
/// without a default, and stored fields no field takes (unless the load
/// ignores extra fields), are one error listing the differences.
pub(super) fn match_record<R: Record>(
    group: &Group,
    node: &Stored,
    path: &str,
    has_default: &[bool],
    use_: Use,
    changed: &dyn Fn(&[Option<usize>]) -> Vec<Error>,
) -> Result<Vec<Option<usize>>> {
    let mut want = Schema::new(Kind::Record, ids::RECORD, R::CODEC, "");
    // Children are checked one by one by their own codecs, and matched by
    // name below; here only that each has a name.
    want.children = vec![Schema::new(Kind::default(), "", "", ""); node.children.len()];
    node.expect(&want, path)?;
    let stored = node.field_names.as_deref().unwrap_or(&[]);
    if stored.len() != node.children.len() {
        return Err(Error::mismatch(
            path,
            format!("{} field names", node.children.len()),
            stored.len(),
        ));
    }
    for (j, n) in stored.iter().enumerate() {
        if stored[..j].contains(n) {
            return Err(Error::invalid(
                path,
                format!("field name `{n}` is stored twice"),
            ));
        }
    }
    let names: Vec<&str> = stored.iter().map(String::as_str).collect();
    expect_members(group, &names, node, path)?;

    let position = |n: &str| stored.iter().position(|s| s == n);
    let mut found = Vec::with_capacity(R::FIELD_NAMES.len());
    let mut missing = Vec::new();
    for (i, name) in R::FIELD_NAMES.iter().enumerate() {
        let mut at = position(name);
        if at.is_none() && matches!(use_, Use::Load(_)) {
            let aliases = R::FIELD_ALIASES.get(i).copied().unwrap_or(&[]);
            let hits: Vec<&str> = aliases
                .iter()
                .copied()
                .filter(|a| position(a).is_some())
                .collect();
            if hits.len() > 1 {
                return Err(Error::mismatch(
                    path,
                    format!("one stored field for `{name}`"),
                    format!(
                        "its aliases {} all stored",
                        hits.iter()
                            .map(|a| format!("`{a}`"))
                            .collect::<Vec<_>>()
                            .join(" and ")
                    ),
                ));
            }
            at = hits.first().and_then(|a| position(a));
        }
        let default = matches!(use_, Use::Load(_)) && has_default.get(i).copied().unwrap_or(false);
        if at.is_none() && !default {
            missing.push(i);
        }
        found.push(at);
    }
    let taken: Vec<usize> = found.iter().flatten().copied().collect();
    let unclaimed: Vec<usize> = (0..stored.len()).filter(|j| !taken.contains(j)).collect();
    let extra_ok = matches!(use_, Use::Load(f) if f.ignore_extra_fields);
    if missing.is_empty() && (unclaimed.is_empty() || extra_ok) {
        return Ok(found);
    }
    let changed = changed(&found);
    Err(field_differences::<R>(
        node, path, &missing, &changed, &unclaimed, extra_ok, use_, group,
    ))
}

/// The plural ending and pronoun for `n` fields: `("", "it")` or
/// `("s", "them")`.
fn plural(n: usize) -> (&'static str, &'static str) {
    if n == 1 {
        ("", "it")
    } else {
        ("s", "them")
    }
}

/// The error for fields that do not match: each missing field (with the
/// stored fields of its type that it may have been renamed from), then
/// each extra stored field; never the two whole lists.
#[allow(clippy::too_many_arguments)] // the three lists of differences and what opening the record had
fn field_differences<R: Record>(
    node: &Stored,
    path: &str,
    missing: &[usize],
    changed: &[Error],
    unclaimed: &[usize],
    extra_ok: bool,
    use_: Use,
    group: &Group,
) -> Error {
    let stored = node.field_names.as_deref().unwrap_or(&[]);
    let opts = crate::options::SaveOptions::default();
    let ctx = WriteCtx {
        opts: &opts,
        len_hint: 0,
    };
    let mut want = Vec::new();
    R::Fields::schemas(&ctx, R::FIELD_STORAGE, &mut want);
    let mut parts = Vec::new();
    let mut named = Vec::new();
    // Missing fields first, then fields whose type changed, then extra
    // stored fields; each hint once.
    let mut plain = Vec::new();
    for &i in missing {
        let name = R::FIELD_NAMES[i];
        let like: Vec<usize> = unclaimed
            .iter()
            .copied()
            .filter(|&j| {
                want.get(i)
                    .is_some_and(|w| same_layout(w, &Schema::from(&node.children[j])))
            })
            .collect();
        if like.is_empty() || use_ == Use::Append {
            plain.push(format!("`{name}`"));
            continue;
        }
        let which = like
            .iter()
            .map(|&j| format!("#[h5vec(alias = \"{}\")]", stored[j]))
            .collect::<Vec<_>>()
            .join(" or ");
        let stored_like = like
            .iter()
            .map(|&j| format!("`{}`", stored[j]))
            .collect::<Vec<_>>()
            .join(", ");
        parts.push(format!(
            "missing field `{name}`, and {stored_like} stored with its type: did you mean {which} on `{name}`?"
        ));
        named.extend(like);
    }
    if !plain.is_empty() {
        let (s, it) = plural(plain.len());
        let list = plain.join(", ");
        parts.insert(
            0,
            match use_ {
                Use::Load(_) => format!(
                    "missing field{s} {list} (#[h5vec(default)] fills {it} in files without {it})"
                ),
                Use::Append => format!("missing field{s} {list}"),
            },
        );
    }
    parts.extend(changed.iter().map(|e| e.to_string()));
    if !extra_ok {
        let extra: Vec<String> = unclaimed
            .iter()
            .filter(|j| !named.contains(j))
            .map(|&j| format!("`{}`", stored[j]))
            .collect();
        if !extra.is_empty() {
            let (s, it) = plural(extra.len());
            let list = extra.join(", ");
            parts.push(match use_ {
                Use::Load(_) => format!(
                    "extra stored field{s} {list} (LoadOptions::ignore_extra_fields(true) skips {it})"
                ),
                Use::Append => format!("extra stored field{s} {list}"),
            });
        }
    }
    let expected = match use_ {
        Use::Load(_) => format!("the fields of `{}`", std::any::type_name::<R>()),
        Use::Append => format!(
            "the fields of `{}` (an append needs exactly the stored fields: \
             no defaults, aliases or extra fields)",
            std::any::type_name::<R>()
        ),
    };
    Error::mismatch(Place::new(path, group.name()), expected, parts.join("; "))
}

/// Whether two schema nodes describe the same layout (the Rust type names
/// aside): a stored field a missing one may have been renamed from.
fn same_layout(a: &Schema, b: &Schema) -> bool {
    a.kind == b.kind
        && a.schema == b.schema
        && a.codec == b.codec
        && a.encoded_type == b.encoded_type
        && a.dimensions == b.dimensions
        && a.field_names == b.field_names
        && a.variant_names == b.variant_names
        && a.time_unit == b.time_unit
        && a.time_zone == b.time_zone
        && a.children.len() == b.children.len()
        && a.children
            .iter()
            .zip(&b.children)
            .all(|(x, y)| same_layout(x, y))
}
