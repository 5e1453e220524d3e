//! Storage settings of a field: `chunk_length = N` and the compression
//! attributes (`deflate`, `lzf`, `zstd`, `blosc(...)`, `no_compression`),
//! as `h5vec::__private::FieldStorage` will get them (SPEC.md section 6).

use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;

use super::Ctxt;

/// Storage settings of one field.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub struct Storage {
    pub chunk_length: Option<usize>,
    pub compression: Option<Comp>,
    /// `vlen_strings`: the field's strings are HDF5 variable-length strings.
    pub vlen_strings: bool,
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

/// The compression attributes; a field takes at most one.
pub const COMPRESSION_KEYS: [&str; 5] = ["deflate", "lzf", "zstd", "blosc", "no_compression"];

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

/// `chunk_length = N`, N at least 1; `None` after an error (reported to `cx`).
pub fn parse_chunk_length(cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<Option<usize>> {
    let lit: syn::LitInt = meta.value()?.parse()?;
    Ok(match lit.base10_parse::<usize>() {
        Ok(n) if n > 0 => Some(n),
        _ => {
            cx.error(lit.span(), "`chunk_length` is a number of rows, at least 1");
            None
        }
    })
}

/// The compression attribute `key` (one of [`COMPRESSION_KEYS`]); `None`
/// after an error (reported to `cx`).
pub fn parse_compression(
    cx: &Ctxt,
    key: &str,
    meta: &ParseNestedMeta<'_>,
) -> syn::Result<Option<Comp>> {
    Ok(match key {
        "deflate" => {
            let lit: syn::LitInt = meta.value()?.parse()?;
            match lit.base10_parse::<u8>() {
                Ok(l) if l <= 9 => Some(Comp::Deflate(l)),
                _ => {
                    cx.error(lit.span(), "`deflate` takes a zlib level from 0 to 9");
                    None
                }
            }
        }
        "zstd" => {
            if meta.input.peek(syn::Token![=]) {
                let value: syn::Expr = meta.value()?.parse()?;
                parse_level(cx, value, "`zstd` (Blosc's Zstandard)").map(|level| Comp::Blosc {
                    compressor: "Zstd",
                    level,
                    shuffle: "Byte",
                })
            } else {
                cx.error(
                    meta.path.span(),
                    "`zstd` needs a Blosc level: `#[h5vec(zstd = 5)]`",
                );
                None
            }
        }
        "blosc" => parse_blosc(cx, meta)?,
        "lzf" => Some(Comp::Lzf),
        _ => Some(Comp::None),
    })
}

fn quoted_names(table: &[(&str, &str)]) -> String {
    table
        .iter()
        .map(|(n, _)| format!("\"{n}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A string literal naming one entry of `table` (its variant), or an error.
fn parse_choice(
    cx: &Ctxt,
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
            cx.error_spanned_by(other, format!("`{key}` takes a string: one of {choices}"));
            None
        }
    }
}

/// A Blosc level 0..=9 from an integer literal, or an error naming `what`.
fn parse_level(cx: &Ctxt, value: syn::Expr, what: &str) -> Option<u8> {
    if let syn::Expr::Lit(syn::ExprLit {
        lit: syn::Lit::Int(lit),
        ..
    }) = &value
    {
        if let Ok(l @ 0..=9) = lit.base10_parse::<u8>() {
            return Some(l);
        }
    }
    cx.error_spanned_by(value, format!("{what} takes a Blosc level from 0 to 9"));
    None
}

/// The inside of `blosc(...)`; `None` after an error (reported to `cx`).
fn parse_blosc(cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<Option<Comp>> {
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
    // Each setting: not given (`None`), or given and maybe invalid.
    let mut compressor: Option<Option<&'static str>> = None;
    let mut level: Option<Option<u8>> = None;
    let mut shuffle: Option<Option<&'static str>> = None;
    meta.parse_nested_meta(|inner| {
        let key_span = inner.path.span();
        let key = super::ctxt::path_text(&inner.path);
        if !inner.input.peek(syn::Token![=]) {
            cx.error(
                key_span,
                format!("`{key}` in `blosc(...)` needs a value: {BLOSC_SYNTAX}"),
            );
            return Ok(());
        }
        let value: syn::Expr = inner.value()?.parse()?;
        let given_before = match key.as_str() {
            "compressor" => compressor
                .replace(parse_choice(cx, value, "compressor", &BLOSC_COMPRESSORS))
                .is_some(),
            "level" => level.replace(parse_level(cx, value, "`level`")).is_some(),
            "shuffle" => shuffle
                .replace(parse_choice(cx, value, "shuffle", &BLOSC_SHUFFLES))
                .is_some(),
            _ => {
                cx.error(
                    key_span,
                    format!(
                        "unknown `blosc` setting `{key}`; expected `compressor = \"...\"`, \
                         `level = 0..=9`, `shuffle = \"...\"`"
                    ),
                );
                false
            }
        };
        if given_before {
            cx.error(
                key_span,
                format!("`{key}` is given twice in `blosc(...)`; keep one"),
            );
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
