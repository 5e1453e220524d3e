//! `#[h5vec(...)]` attributes, parsed with every error collected.

use proc_macro2::Span;
use quote::ToTokens;
use syn::spanned::Spanned;

/// Collects errors so all of them are reported at once.
#[derive(Default)]
pub struct Ctxt {
    errors: Vec<syn::Error>,
}

impl Ctxt {
    pub fn error(&mut self, span: Span, msg: impl std::fmt::Display) {
        self.errors.push(syn::Error::new(span, msg));
    }

    pub fn syn_error(&mut self, e: syn::Error) {
        self.errors.push(e);
    }

    pub fn check(self) -> Result<(), proc_macro2::TokenStream> {
        let mut it = self.errors.into_iter();
        match it.next() {
            None => Ok(()),
            Some(mut first) => {
                for e in it {
                    first.combine(e);
                }
                Err(first.to_compile_error())
            }
        }
    }
}

/// How a field is stored.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Via {
    /// The field type's own `H5Vector` impl.
    Default,
    /// serde + bincode blob.
    Blob,
    /// serde + JSON strings.
    Json,
    /// Compressed VLS strings.
    Vls,
}

/// Attributes of one field.
pub struct FieldAttrs {
    pub rename: Option<(String, Span)>,
    pub skip: bool,
    pub via: Via,
    pub via_span: Option<Span>,
    pub storage: Storage,
}

/// Storage settings of one field.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub struct Storage {
    pub chunk_length: Option<usize>,
    /// `Some(None)`: no compression; `Some(Some(l))`: deflate at `l`.
    pub deflate: Option<Option<u8>>,
    pub lzf: bool,
}

const FIELD_ATTRS: &str = "`rename = \"...\"`, `skip`, `blob`, `json`, `vls`, `chunk_length = N`, `deflate = 0..=9`, `lzf`, `no_compression`";

impl FieldAttrs {
    pub fn parse(cx: &mut Ctxt, attrs: &[syn::Attribute]) -> FieldAttrs {
        let mut out = FieldAttrs {
            rename: None,
            skip: false,
            via: Via::Default,
            via_span: None,
            storage: Storage::default(),
        };
        let mut compression_given = false;
        for attr in attrs.iter().filter(|a| a.path().is_ident("h5vec")) {
            let res = attr.parse_nested_meta(|meta| {
                let span = meta.path.span();
                let mut set_via = |cx: &mut Ctxt, v: Via| {
                    if out.via != Via::Default {
                        cx.error(
                            span,
                            format!(
                                "`{}` conflicts with `{}` given before: a field is stored one way; keep one of `blob`, `json`, `vls`",
                                via_name(v),
                                via_name(out.via)
                            ),
                        );
                    }
                    out.via = v;
                    out.via_span = Some(span);
                };
                if meta.path.is_ident("rename") {
                    if !meta.input.peek(syn::Token![=]) {
                        cx.error(span, "`rename` needs the stored name: `#[h5vec(rename = \"name\")]`");
                        return Ok(());
                    }
                    let value: syn::Expr = meta.value()?.parse()?;
                    let lit = match value {
                        syn::Expr::Lit(syn::ExprLit {
                            lit: syn::Lit::Str(lit), ..
                        }) => lit,
                        other => {
                            cx.syn_error(syn::Error::new_spanned(
                                other,
                                "`rename` takes a string literal: `#[h5vec(rename = \"name\")]`",
                            ));
                            return Ok(());
                        }
                    };
                    let name = lit.value();
                    if let Some(why) = bad_name(&name) {
                        cx.error(
                            lit.span(),
                            format!("{name:?} cannot be a stored field name: {why}; HDF5 names must be non-empty, not `.` or `..`, without `/` or NUL"),
                        );
                    }
                    if out.rename.is_some() {
                        cx.error(span, "`rename` is given twice for this field; keep one");
                    }
                    out.rename = Some((name, lit.span()));
                } else if meta.path.is_ident("skip") {
                    if out.skip {
                        cx.error(span, "`skip` is given twice for this field; keep one");
                    }
                    out.skip = true;
                } else if meta.path.is_ident("blob") {
                    set_via(cx, Via::Blob);
                } else if meta.path.is_ident("json") {
                    set_via(cx, Via::Json);
                } else if meta.path.is_ident("vls") {
                    set_via(cx, Via::Vls);
                } else if meta.path.is_ident("chunk_length") {
                    let lit: syn::LitInt = meta.value()?.parse()?;
                    match lit.base10_parse::<usize>() {
                        Ok(n) if n > 0 => out.storage.chunk_length = Some(n),
                        _ => cx.error(lit.span(), "`chunk_length` is a number of rows, at least 1"),
                    }
                } else if meta.path.is_ident("deflate")
                    || meta.path.is_ident("lzf")
                    || meta.path.is_ident("no_compression")
                {
                    if compression_given {
                        cx.error(span, "give at most one of `deflate = ..`, `lzf` and `no_compression` for a field");
                    }
                    compression_given = true;
                    if meta.path.is_ident("deflate") {
                        let lit: syn::LitInt = meta.value()?.parse()?;
                        match lit.base10_parse::<u8>() {
                            Ok(l) if l <= 9 => out.storage.deflate = Some(Some(l)),
                            _ => cx.error(lit.span(), "`deflate` takes a zlib level from 0 to 9"),
                        }
                    } else if meta.path.is_ident("lzf") {
                        out.storage.lzf = true;
                    } else {
                        out.storage.deflate = Some(None);
                    }
                } else {
                    let name = meta.path.to_token_stream().to_string().replace(' ', "");
                    cx.syn_error(syn::Error::new_spanned(
                        &meta.path,
                        format!("unknown h5vec field attribute `{name}`; expected one of {FIELD_ATTRS}"),
                    ));
                    // Consume a value, if any, so parsing can go on.
                    if meta.input.peek(syn::Token![=]) {
                        let _: syn::Expr = meta.value()?.parse()?;
                    }
                }
                Ok(())
            });
            if let Err(e) = res {
                cx.syn_error(e);
            }
        }
        if out.skip {
            if let Some(span) = out.via_span {
                cx.error(
                    span,
                    format!(
                        "`{}` has no effect on a `skip`ped field, which is not stored; remove one of them",
                        via_name(out.via)
                    ),
                );
            }
            if let Some((_, span)) = &out.rename {
                cx.error(*span, "`rename` has no effect on a `skip`ped field, which is not stored; remove one of them");
            }
        }
        out
    }
}

/// Rejects container-level `#[h5vec(...)]`: none are defined yet.
pub fn check_container(cx: &mut Ctxt, attrs: &[syn::Attribute]) {
    for attr in attrs.iter().filter(|a| a.path().is_ident("h5vec")) {
        cx.syn_error(syn::Error::new_spanned(
            attr,
            format!("h5vec has no attributes for the type itself; `#[h5vec(...)]` goes on a field: {FIELD_ATTRS}"),
        ));
    }
}

/// Rejects `#[h5vec(...)]` where it means nothing (enum variants and their fields).
pub fn reject(cx: &mut Ctxt, attrs: &[syn::Attribute], what: &str) {
    for attr in attrs.iter().filter(|a| a.path().is_ident("h5vec")) {
        cx.syn_error(syn::Error::new_spanned(
            attr,
            format!("`#[h5vec(...)]` has no meaning on {what}"),
        ));
    }
}

fn via_name(v: Via) -> &'static str {
    match v {
        Via::Default => "default",
        Via::Blob => "blob",
        Via::Json => "json",
        Via::Vls => "vls",
    }
}

/// Why a stored field name is unusable as an HDF5 link name, if it is.
pub fn bad_name(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("it is empty")
    } else if name == "." || name == ".." {
        Some("`.` and `..` are not names")
    } else if name.contains('/') {
        Some("it contains `/`")
    } else if name.contains('\0') {
        Some("it contains NUL")
    } else {
        None
    }
}
