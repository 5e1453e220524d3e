//! The derive input, reduced to what h5vec needs: a record (struct) with
//! its fields' stored names and attributes, or a fieldless enum with its
//! integer representation.

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::spanned::Spanned;

use super::{attr, check, Ctxt};

/// A type `#[derive(H5Vector)]` can describe.
pub struct Input<'a> {
    pub ident: &'a syn::Ident,
    pub generics: &'a syn::Generics,
    pub shape: Shape<'a>,
}

pub enum Shape<'a> {
    /// A struct: named fields, tuple fields, or none.
    Struct {
        fields: Vec<Field<'a>>,
        style: Style,
    },
    /// A fieldless enum with an integer `#[repr]`.
    Enum {
        repr: syn::Ident,
        variants: Vec<&'a syn::Ident>,
    },
    /// An enum with data: a union (SPEC.md section 4.4).
    Union { variants: Vec<Variant<'a>> },
}

/// One variant of an enum with data.
pub struct Variant<'a> {
    pub ident: &'a syn::Ident,
    /// The stored name: `rename` or the variant's name.
    pub name: String,
    pub fields: Vec<Field<'a>>,
    pub style: Style,
}

/// How a struct's fields are written.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Named,
    Tuple,
    Unit,
}

/// One field of a struct.
pub struct Field<'a> {
    /// How to reach the field: `a` or `0`.
    pub member: syn::Member,
    pub ty: &'a syn::Type,
    /// The stored name: `rename`, the field name, or "1", "2", ... for
    /// tuple structs (SPEC.md section 3.3).
    pub name: String,
    /// Where the stored name comes from, for collision errors.
    pub name_span: Span,
    pub attrs: attr::Field,
}

/// The `#[repr]`s with a fixed HDF5 integer type.
const REPRS: &[&str] = &["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"];

impl<'a> Input<'a> {
    /// Reads and validates `input`; every error goes to `cx`. `None` if
    /// the input cannot be described at all (a union).
    pub fn from_ast(cx: &Ctxt, input: &'a syn::DeriveInput) -> Option<Input<'a>> {
        attr::reject_container(cx, &input.attrs);
        if let Some(lt) = input.generics.lifetimes().next() {
            cx.error_spanned_by(
                lt,
                "H5Vector cannot be derived for a type with a lifetime parameter: loaded values own \
                 their data (use `String` for `&str`, `Vec<T>` for `&[T]`)",
            );
        }
        let shape = match &input.data {
            syn::Data::Struct(s) => {
                let style = match s.fields {
                    syn::Fields::Named(_) => Style::Named,
                    syn::Fields::Unnamed(_) => Style::Tuple,
                    syn::Fields::Unit => Style::Unit,
                };
                let fields = fields_from_ast(cx, &s.fields);
                check::record(cx, &fields);
                Shape::Struct { fields, style }
            }
            syn::Data::Enum(e) => enum_from_ast(cx, input, e),
            syn::Data::Union(u) => {
                cx.error(
                    u.union_token.span(),
                    "H5Vector cannot be derived for a union: h5vec cannot tell which field is in use; \
                     use a struct, or an enum stored with `#[h5vec(blob)]` or `#[h5vec(json)]` on the field that holds it",
                );
                return None;
            }
        };
        Some(Input {
            ident: &input.ident,
            generics: &input.generics,
            shape,
        })
    }
}

/// The fields of a struct. Each field's own attribute rules are checked
/// as it is read, so its errors come out in source order.
fn fields_from_ast<'a>(cx: &Ctxt, fields: &'a syn::Fields) -> Vec<Field<'a>> {
    let mut out = Vec::new();
    for (i, f) in fields.iter().enumerate() {
        let attrs = attr::Field::from_ast(cx, &f.attrs);
        check::field(cx, &attrs);
        let (member, default_name) = match &f.ident {
            Some(id) => (syn::Member::Named(id.clone()), id.unraw().to_string()),
            None => (
                syn::Member::Unnamed(syn::Index::from(i)),
                (i + 1).to_string(),
            ),
        };
        let (name, name_span) = match (attrs.rename(), attrs.rename_span()) {
            (Some(name), Some(span)) => (name.to_string(), span),
            _ => (
                default_name,
                f.ident.as_ref().map_or_else(|| f.ty.span(), |id| id.span()),
            ),
        };
        out.push(Field {
            member,
            ty: &f.ty,
            name,
            name_span,
            attrs,
        });
    }
    out
}

/// An enum with data (any variant with fields): a union. Variants take
/// `rename`; their fields take the field attributes. Explicit
/// discriminants are refused: tag values are declaration positions.
fn union_from_ast<'a>(cx: &Ctxt, e: &'a syn::DataEnum) -> Shape<'a> {
    let mut variants: Vec<Variant<'a>> = Vec::new();
    for v in &e.variants {
        let attrs = attr::Field::from_ast(cx, &v.attrs);
        for &(setting, span) in attrs.settings() {
            if !matches!(setting, attr::Setting::Rename) {
                cx.error(
                    span,
                    format!(
                        "`{}` has no meaning on an enum variant; a variant takes only `rename = \"...\"` \
                         (field attributes go on the variant's fields)",
                        setting.name()
                    ),
                );
            }
        }
        if attrs.skip() {
            cx.error(
                v.ident.span(),
                "an enum variant cannot be `skip`ped: every value must be stored",
            );
        }
        if let Some((_, d)) = &v.discriminant {
            cx.error_spanned_by(
                d,
                format!(
                    "h5vec stores an enum with data by variant position (its tag is 0, 1, ... in \
                     declaration order), so variant `{}` cannot take an explicit discriminant; remove it",
                    v.ident
                ),
            );
        }
        let style = match v.fields {
            syn::Fields::Named(_) => Style::Named,
            syn::Fields::Unnamed(_) => Style::Tuple,
            syn::Fields::Unit => Style::Unit,
        };
        let fields = fields_from_ast(cx, &v.fields);
        check::record(cx, &fields);
        // A variant's stored fields are matched exactly (SPEC.md section 12):
        // evolution attributes would be accepted and do nothing.
        for f in &fields {
            for &(setting, span) in f.attrs.settings() {
                if matches!(setting, attr::Setting::Alias | attr::Setting::Default) {
                    cx.error(
                        span,
                        format!(
                            "`{}` cannot go on a field of an enum variant: a variant's fields are \
                             read exactly as stored (no aliases, no defaults); remove it",
                            setting.name()
                        ),
                    );
                }
            }
        }
        let (name, name_span) = match (attrs.rename(), attrs.rename_span()) {
            (Some(n), Some(s)) => (n.to_string(), s),
            _ => (v.ident.unraw().to_string(), v.ident.span()),
        };
        if let Some(w) = variants.iter().find(|w| w.name == name) {
            cx.error(
                name_span,
                format!(
                    "variant `{}` would be stored as {name:?}, which variant `{}` already uses; \
                     give one of them another name with `#[h5vec(rename = \"...\")]`",
                    v.ident, w.ident
                ),
            );
        }
        if name == "TAG" || name == "INDEX" {
            cx.error(
                name_span,
                format!(
                    "a variant stored as {name:?} would sit beside the union's own `{name}` dataset; \
                     give it another name with `#[h5vec(rename = \"...\")]`"
                ),
            );
        }
        variants.push(Variant {
            ident: &v.ident,
            name,
            fields,
            style,
        });
    }
    if variants.len() > 1 << 16 {
        cx.error(
            proc_macro2::Span::call_site(),
            "h5vec stores at most 65536 variants (a 16-bit tag)",
        );
    }
    Shape::Union { variants }
}

/// A fieldless enum and its `#[repr]`, or an enum with data.
fn enum_from_ast<'a>(cx: &Ctxt, input: &'a syn::DeriveInput, e: &'a syn::DataEnum) -> Shape<'a> {
    if e.variants
        .iter()
        .any(|v| !matches!(v.fields, syn::Fields::Unit))
    {
        return union_from_ast(cx, e);
    }
    let mut repr = None;
    let mut other_repr = None;
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("repr")) {
        // A malformed `#[repr]` is rustc's to report.
        let _ = attr.parse_nested_meta(|meta| {
            if let Some(id) = meta.path.get_ident() {
                if REPRS.contains(&id.to_string().as_str()) {
                    repr = Some(id.clone());
                } else if id != "C" {
                    other_repr = Some(id.clone());
                }
            }
            if meta.input.peek(syn::token::Paren) {
                let _ = meta.input.parse::<proc_macro2::Group>();
            }
            Ok(())
        });
    }
    let mut variants = Vec::new();
    for v in &e.variants {
        attr::reject(cx, &v.attrs, "an enum variant");
        for f in &v.fields {
            attr::reject(cx, &f.attrs, "a field of an enum variant");
        }
        if !matches!(v.fields, syn::Fields::Unit) {
            cx.error(
                v.ident.span(),
                format!(
                    "H5Vector can store only fieldless enums, but variant `{}` has fields; \
                     store the enum through serde with `#[h5vec(blob)]` or `#[h5vec(json)]` on the field that holds it",
                    v.ident
                ),
            );
        }
        variants.push(&v.ident);
    }
    if variants.is_empty() {
        cx.error(
            input.ident.span(),
            "H5Vector cannot store an enum without variants",
        );
    }
    if !input.generics.params.is_empty() {
        cx.error_spanned_by(
            &input.generics,
            "H5Vector cannot be derived for a generic enum: it is stored as its integer discriminant",
        );
    }
    let repr = repr.unwrap_or_else(|| {
        match other_repr {
            Some(r) => cx.error(
                r.span(),
                format!(
                    "h5vec stores a fieldless enum as its integer representation, but `{r}` \
                     has no fixed HDF5 type; use `#[repr(u8)]` (or i8, i16, i32, i64, u16, u32, u64)"
                ),
            ),
            None => cx.error(
                input.ident.span(),
                format!(
                    "h5vec stores a fieldless enum as its integer representation: add `#[repr(u8)]` \
                     (or i8, i16, i32, i64, u16, u32, u64) to `{}`",
                    input.ident
                ),
            ),
        }
        // Stands in until the error is reported; nothing is expanded.
        syn::Ident::new("u8", Span::call_site())
    });
    Shape::Enum { repr, variants }
}

/// A field's name in messages: `started`, `type` (for `r#type`), `0`.
pub fn member_text(m: &syn::Member) -> String {
    match m {
        syn::Member::Named(id) => id.unraw().to_string(),
        syn::Member::Unnamed(i) => i.index.to_string(),
    }
}
