//! The derive input, reduced to what h5vec needs.

use proc_macro2::Span;
use syn::spanned::Spanned;

use crate::attr::{check_container, reject, Ctxt, FieldAttrs, Via};

pub struct Field {
    /// How to reach the field: `a` or `0`.
    pub member: syn::Member,
    pub ty: syn::Type,
    /// The stored name (`rename`, the field name, or "1", "2", ... for tuple structs).
    pub name: String,
    pub name_span: Span,
    pub skip: bool,
    pub via: Via,
    pub storage: crate::attr::Storage,
}

pub enum Shape {
    /// Named fields (`Some(fields)`), tuple fields, or a unit struct (no fields).
    Struct { fields: Vec<Field>, style: Style },
    /// A fieldless enum with an integer `#[repr]`.
    Enum {
        repr: syn::Ident,
        variants: Vec<syn::Ident>,
    },
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Named,
    Tuple,
    Unit,
}

pub struct Input<'a> {
    pub ident: &'a syn::Ident,
    pub generics: &'a syn::Generics,
    pub shape: Shape,
}

const REPRS: &[&str] = &["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"];

impl<'a> Input<'a> {
    pub fn from_ast(cx: &mut Ctxt, input: &'a syn::DeriveInput) -> Option<Input<'a>> {
        check_container(cx, &input.attrs);
        if let Some(lt) = input.generics.lifetimes().next() {
            cx.syn_error(syn::Error::new_spanned(
                lt,
                "H5Vector cannot be derived for a type with a lifetime parameter: loaded values own \
                 their data (use `String` for `&str`, `Vec<T>` for `&[T]`)",
            ));
        }
        let shape = match &input.data {
            syn::Data::Struct(s) => {
                let style = match s.fields {
                    syn::Fields::Named(_) => Style::Named,
                    syn::Fields::Unnamed(_) => Style::Tuple,
                    syn::Fields::Unit => Style::Unit,
                };
                let mut fields = Vec::new();
                for (i, f) in s.fields.iter().enumerate() {
                    let attrs = FieldAttrs::parse(cx, &f.attrs);
                    let (member, default_name) = match &f.ident {
                        Some(id) => (
                            syn::Member::Named(id.clone()),
                            id.to_string().trim_start_matches("r#").to_string(),
                        ),
                        None => (
                            syn::Member::Unnamed(syn::Index::from(i)),
                            (i + 1).to_string(),
                        ),
                    };
                    let (name, name_span) = match attrs.rename {
                        Some((n, s)) => (n, s),
                        None => (
                            default_name,
                            f.ident.as_ref().map_or_else(|| f.ty.span(), |id| id.span()),
                        ),
                    };
                    fields.push(Field {
                        member,
                        ty: f.ty.clone(),
                        name,
                        name_span,
                        skip: attrs.skip,
                        via: attrs.via,
                        storage: attrs.storage,
                    });
                }
                let mut seen: Vec<&Field> = Vec::new();
                for f in fields.iter().filter(|f| !f.skip) {
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
                Shape::Struct { fields, style }
            }
            syn::Data::Enum(e) => {
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
                    reject(cx, &v.attrs, "an enum variant");
                    for f in &v.fields {
                        reject(cx, &f.attrs, "a field of an enum variant");
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
                    variants.push(v.ident.clone());
                }
                if variants.is_empty() {
                    cx.error(
                        input.ident.span(),
                        "H5Vector cannot store an enum without variants",
                    );
                }
                if !input.generics.params.is_empty() {
                    cx.syn_error(syn::Error::new_spanned(
                        &input.generics,
                        "H5Vector cannot be derived for a generic enum: it is stored as its integer discriminant",
                    ));
                }
                let repr = match repr {
                    Some(r) => r,
                    None => {
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
                        syn::Ident::new("u8", Span::call_site())
                    }
                };
                Shape::Enum { repr, variants }
            }
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

/// A field's name in messages: `started`, `type` (for `r#type`), `0`.
pub fn member_text(m: &syn::Member) -> String {
    match m {
        syn::Member::Named(id) => syn::ext::IdentExt::unraw(id).to_string(),
        syn::Member::Unnamed(i) => i.index.to_string(),
    }
}
