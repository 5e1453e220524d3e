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
    pub compression: Option<Comp>,
}

/// A field's compression, as `h5vec::Compression` will get it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Comp {
    /// `no_compression`.
    None,
    /// `deflate = L`: shuffle + deflate.
    Deflate(u8),
    /// `lzf`.
    Lzf,
    /// `zstd = L` or `blosc(...)`: variant names of `h5vec::BloscCompressor`
    /// and `h5vec::BloscShuffle`.
    Blosc {
        compressor: &'static str,
        level: u8,
        shuffle: &'static str,
    },
}

/// Blosc compressors: attribute name, `h5vec::BloscCompressor` variant.
const BLOSC_COMPRESSORS: [(&str, &str); 5] = [
    ("blosclz", "BloscLz"),
    ("lz4", "Lz4"),
    ("lz4hc", "Lz4hc"),
    ("zlib", "Zlib"),
    ("zstd", "Zstd"),
];

/// Blosc shuffles: attribute name, `h5vec::BloscShuffle` variant.
const BLOSC_SHUFFLES: [(&str, &str); 3] = [("none", "None"), ("byte", "Byte"), ("bit", "Bit")];

const BLOSC_SYNTAX: &str = "`blosc(compressor = \"zstd\", level = 5, shuffle = \"byte\")`";

const ONE_COMPRESSION: &str = "give at most one of `deflate = ..`, `lzf`, `zstd = ..`, `blosc(..)` and `no_compression` for a field";

const FIELD_ATTRS: &str = "`rename = \"...\"`, `skip`, `blob`, `json`, `vls`, `chunk_length = N`, `deflate = 0..=9`, `lzf`, `zstd = 0..=9`, `blosc(compressor = \"...\", level = 0..=9, shuffle = \"...\")`, `no_compression`";

fn quoted_names(table: &[(&str, &str)]) -> String {
    table
        .iter()
        .map(|(n, _)| format!("\"{n}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A string literal naming one entry of `table` (its variant), or an error.
fn parse_choice(
    cx: &mut Ctxt,
    value: syn::Expr,
    key: &str,
    table: &[(&str, &'static str)],
) -> Option<&'static str> {
    let choices = quoted_names(table);
    match value {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(lit),
            ..
        }) => {
            let v = lit.value();
            let found = table
                .iter()
                .find(|(n, _)| *n == v)
                .map(|(_, variant)| *variant);
            if found.is_none() {
                cx.error(
                    lit.span(),
                    format!("unknown Blosc {key} {v:?}; expected one of {choices}"),
                );
            }
            found
        }
        other => {
            cx.syn_error(syn::Error::new_spanned(
                other,
                format!("`{key}` takes a string: one of {choices}"),
            ));
            None
        }
    }
}

/// A Blosc level 0..=9 from an integer literal, or an error naming `what`.
fn parse_level(cx: &mut Ctxt, value: syn::Expr, what: &str) -> Option<u8> {
    if let syn::Expr::Lit(syn::ExprLit {
        lit: syn::Lit::Int(lit),
        ..
    }) = &value
    {
        if let Ok(l @ 0..=9) = lit.base10_parse::<u8>() {
            return Some(l);
        }
    }
    cx.syn_error(syn::Error::new_spanned(
        value,
        format!("{what} takes a Blosc level from 0 to 9"),
    ));
    None
}

/// The inside of `blosc(...)`; `None` after an error (reported to `cx`).
fn parse_blosc(cx: &mut Ctxt, meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<Option<Comp>> {
    let span = meta.path.span();
    if !meta.input.peek(syn::token::Paren) {
        cx.error(
            span,
            format!("`blosc` takes its settings in parentheses: {BLOSC_SYNTAX}"),
        );
        if meta.input.peek(syn::Token![=]) {
            let _: syn::Expr = meta.value()?.parse()?;
        }
        return Ok(None);
    }
    let mut compressor: Option<Option<&'static str>> = None;
    let mut level: Option<Option<u8>> = None;
    let mut shuffle: Option<Option<&'static str>> = None;
    meta.parse_nested_meta(|inner| {
        let key_span = inner.path.span();
        let key = inner.path.to_token_stream().to_string().replace(' ', "");
        if !inner.input.peek(syn::Token![=]) {
            cx.error(key_span, format!("`{key}` in `blosc(...)` needs a value: {BLOSC_SYNTAX}"));
            return Ok(());
        }
        let value: syn::Expr = inner.value()?.parse()?;
        let slot_given = match key.as_str() {
            "compressor" => {
                let given = compressor.is_some();
                compressor = Some(parse_choice(cx, value, "compressor", &BLOSC_COMPRESSORS));
                given
            }
            "level" => {
                let given = level.is_some();
                level = Some(parse_level(cx, value, "`level`"));
                given
            }
            "shuffle" => {
                let given = shuffle.is_some();
                shuffle = Some(parse_choice(cx, value, "shuffle", &BLOSC_SHUFFLES));
                given
            }
            _ => {
                cx.error(
                    key_span,
                    format!("unknown `blosc` setting `{key}`; expected `compressor = \"...\"`, `level = 0..=9`, `shuffle = \"...\"`"),
                );
                false
            }
        };
        if slot_given {
            cx.error(key_span, format!("`{key}` is given twice in `blosc(...)`; keep one"));
        }
        Ok(())
    })?;
    let Some(compressor) = compressor else {
        cx.error(
            span,
            format!(
                "`blosc(...)` needs `compressor = \"...\"`, one of {}: {BLOSC_SYNTAX}",
                quoted_names(&BLOSC_COMPRESSORS)
            ),
        );
        return Ok(None);
    };
    // Defaults: Blosc level 5 and byte shuffle (as hdf5plugin.Blosc's).
    Ok(
        match (
            compressor,
            level.unwrap_or(Some(5)),
            shuffle.unwrap_or(Some("Byte")),
        ) {
            (Some(compressor), Some(level), Some(shuffle)) => Some(Comp::Blosc {
                compressor,
                level,
                shuffle,
            }),
            _ => None,
        },
    )
}

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
                } else if ["deflate", "lzf", "zstd", "blosc", "no_compression"]
                    .iter()
                    .any(|k| meta.path.is_ident(k))
                {
                    if compression_given {
                        cx.error(span, ONE_COMPRESSION);
                    }
                    compression_given = true;
                    let c = if meta.path.is_ident("deflate") {
                        let lit: syn::LitInt = meta.value()?.parse()?;
                        match lit.base10_parse::<u8>() {
                            Ok(l) if l <= 9 => Some(Comp::Deflate(l)),
                            _ => {
                                cx.error(lit.span(), "`deflate` takes a zlib level from 0 to 9");
                                None
                            }
                        }
                    } else if meta.path.is_ident("zstd") {
                        if meta.input.peek(syn::Token![=]) {
                            let value: syn::Expr = meta.value()?.parse()?;
                            parse_level(cx, value, "`zstd` (Blosc's Zstandard)").map(|level| Comp::Blosc {
                                compressor: "Zstd",
                                level,
                                shuffle: "Byte",
                            })
                        } else {
                            cx.error(span, "`zstd` needs a Blosc level: `#[h5vec(zstd = 5)]`");
                            None
                        }
                    } else if meta.path.is_ident("blosc") {
                        parse_blosc(cx, &meta)?
                    } else if meta.path.is_ident("lzf") {
                        Some(Comp::Lzf)
                    } else {
                        Some(Comp::None)
                    };
                    if out.storage.compression.is_none() {
                        out.storage.compression = c;
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
