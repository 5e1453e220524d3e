//! Rules that span several attributes or fields. Each attribute on its own
//! was checked when it was parsed (`attr.rs`, `storage.rs`).

use super::ast::{member_text, Field};
use super::attr::{self, Setting, Via};
use super::Ctxt;

const ONE_COMPRESSION: &str = "give at most one of `deflate = ..`, `lzf`, `zstd = ..`, `blosc(..)` and `no_compression` for a field";

/// The rules within one field's attributes:
///
/// - at most one of `blob`, `json`, `vls` (a field is stored one way);
/// - at most one compression attribute (SPEC.md section 6);
/// - a `skip`ped field is not stored, so it takes no `rename`, `alias`,
///   `default` (it always takes `Default::default()`), storage kind,
///   chunk length or compression.
pub fn field(cx: &Ctxt, attrs: &attr::Field) {
    let mut via: Option<Via> = None;
    let mut compression_given = false;
    for &(setting, span) in attrs.settings() {
        match setting {
            Setting::Via(v) => {
                if let Some(before) = via {
                    cx.error(
                        span,
                        format!(
                            "`{}` conflicts with `{}` given before: a field is stored one way; \
                             keep one of `blob`, `json`, `vls`",
                            v.name(),
                            before.name()
                        ),
                    );
                }
                via = Some(v);
            }
            Setting::Compression(_) => {
                if compression_given {
                    cx.error(span, ONE_COMPRESSION);
                }
                compression_given = true;
            }
            Setting::Rename | Setting::ChunkLength | Setting::Alias | Setting::Default => {}
            Setting::VlenStrings => {}
        }
    }
    if let v @ (Via::Vls | Via::Blob) = attrs.via() {
        for &(setting, span) in attrs.settings() {
            if matches!(setting, Setting::VlenStrings) {
                cx.error(
                    span,
                    format!(
                        "`vlen_strings` conflicts with `{}`: it stores strings and JSON text as \
                         HDF5 variable-length strings; keep one",
                        v.name()
                    ),
                );
            }
        }
    }
    if attrs.skip() {
        for &(setting, span) in attrs.settings() {
            cx.error(
                span,
                format!(
                    "`{}` has no effect on a `skip`ped field, which is not stored; remove one of them",
                    setting.name()
                ),
            );
        }
    }
}

/// The rules across a struct's fields: no two stored fields share a
/// stored name (SPEC.md section 3.3: one column per field, named after it),
/// and a stored name in a file means one field (section 12): an alias is
/// not a stored field's name (its own included) nor another field's alias.
pub fn record(cx: &Ctxt, fields: &[Field<'_>]) {
    aliases(cx, fields);
    let mut seen: Vec<&Field<'_>> = Vec::new();
    for f in fields.iter().filter(|f| !f.attrs.skip()) {
        match seen.iter().find(|g| g.name == f.name) {
            Some(g) => cx.error(
                f.name_span,
                format!(
                    "field `{}` would be stored as {:?}, which field `{}` already uses; \
                     give one of them another name with `#[h5vec(rename = \"...\")]`",
                    member_text(&f.member),
                    f.name,
                    member_text(&g.member),
                ),
            ),
            None => seen.push(f),
        }
    }
}

/// Each `alias` names one field only: not a stored field's name (another
/// field's, which the file would then hold twice over, or its own, which
/// is matched anyway) and not another field's alias.
fn aliases(cx: &Ctxt, fields: &[Field<'_>]) {
    let stored: Vec<&Field<'_>> = fields.iter().filter(|f| !f.attrs.skip()).collect();
    for (k, f) in stored.iter().enumerate() {
        for (alias, span) in f.attrs.aliases() {
            if *alias == f.name {
                cx.error(
                    *span,
                    format!(
                        "alias {alias:?} is the stored name of field `{}` itself; remove the alias",
                        member_text(&f.member)
                    ),
                );
            } else if let Some(g) = stored.iter().find(|g| g.name == *alias) {
                cx.error(
                    *span,
                    format!(
                        "alias {alias:?} of field `{}` is the stored name of field `{}`: \
                         a stored field would match both; remove the alias or rename `{}`",
                        member_text(&f.member),
                        member_text(&g.member),
                        member_text(&g.member),
                    ),
                );
            } else if let Some(g) = stored[..k]
                .iter()
                .find(|g| g.attrs.aliases().iter().any(|(a, _)| a == alias))
            {
                cx.error(
                    *span,
                    format!(
                        "alias {alias:?} of field `{}` is also an alias of field `{}`: \
                         a stored field would match both; keep it on one of them",
                        member_text(&f.member),
                        member_text(&g.member),
                    ),
                );
            }
        }
    }
}
