//! `#[h5vec(...)]` attributes: parsed one at a time, every error reported
//! to the [`Ctxt`]. Rules that span several attributes (conflicts, `skip`
//! with storage settings, rename collisions) are in `check.rs`.

use proc_macro2::Span;
use quote::ToTokens;
use syn::spanned::Spanned;

use super::ctxt::path_text;
use super::storage::{self, Storage, COMPRESSION_KEYS};
use super::Ctxt;

/// Every field attribute, for error messages.
const FIELD_ATTRS: &str = "`rename = \"...\"`, `alias = \"...\"`, `default`, `default = \"path::to::fn\"`, `skip`, `blob`, `json`, `vls`, `vlen_strings`, `chunk_length = N`, `deflate = 0..=9`, `lzf`, `zstd = 0..=9`, `blosc(compressor = \"...\", level = 0..=9, shuffle = \"...\")`, `no_compression`";

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

impl Via {
    /// The attribute that selects it.
    pub fn name(self) -> &'static str {
        match self {
            Via::Default => "default",
            Via::Blob => "blob",
            Via::Json => "json",
            Via::Vls => "vls",
        }
    }
}

/// An attribute that means something only for a stored field, as given.
#[derive(Clone, Copy)]
pub enum Setting {
    Rename,
    /// `alias = "..."`: another name the field may be stored under.
    Alias,
    /// `default` or `default = "path"`: the value for a file without the field.
    Default,
    Via(Via),
    ChunkLength,
    /// `vlen_strings`: HDF5 variable-length strings whatever the compression.
    VlenStrings,
    /// One of [`COMPRESSION_KEYS`].
    Compression(&'static str),
}

impl Setting {
    /// The attribute's name, as written.
    pub fn name(self) -> &'static str {
        match self {
            Setting::Rename => "rename",
            Setting::Alias => "alias",
            Setting::Default => "default",
            Setting::Via(via) => via.name(),
            Setting::ChunkLength => "chunk_length",
            Setting::VlenStrings => "vlen_strings",
            Setting::Compression(key) => key,
        }
    }
}

/// What a field takes when the file lacks it (SPEC.md section 12).
#[derive(Clone)]
pub enum FieldDefault {
    /// `default`: `Default::default()`.
    Trait,
    /// `default = "path::to::fn"`: the function's value.
    Path(syn::ExprPath),
}

/// The `#[h5vec(...)]` attributes of one field.
pub struct Field {
    rename: Option<String>,
    /// `alias = "..."` values, in source order, with their spans.
    aliases: Vec<(String, Span)>,
    default: Option<FieldDefault>,
    skip: bool,
    via: Option<Via>,
    storage: Storage,
    /// Every setting given other than `skip`, in source order, with the
    /// span to report it at: what `check.rs` validates.
    settings: Vec<(Setting, Span)>,
}

impl Field {
    /// Parses the `#[h5vec(...)]` attributes among `attrs`.
    pub fn from_ast(cx: &Ctxt, attrs: &[syn::Attribute]) -> Field {
        let mut out = Field {
            rename: None,
            aliases: Vec::new(),
            default: None,
            skip: false,
            via: None,
            storage: Storage::default(),
            settings: Vec::new(),
        };
        for attr in attrs.iter().filter(|a| a.path().is_ident("h5vec")) {
            if let Err(e) = attr.parse_nested_meta(|meta| out.parse_one(cx, &meta)) {
                cx.syn_error(e);
            }
        }
        out
    }

    /// One `key`, `key = value` or `key(...)` inside `#[h5vec(...)]`.
    fn parse_one(&mut self, cx: &Ctxt, meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<()> {
        let span = meta.path.span();
        let key = path_text(&meta.path);
        match key.as_str() {
            "rename" => self.parse_rename(cx, meta)?,
            "alias" => self.parse_alias(cx, meta)?,
            "default" => self.parse_default(cx, meta)?,
            "skip" => {
                if self.skip {
                    cx.error(span, "`skip` is given twice for this field; keep one");
                }
                self.skip = true;
            }
            "blob" | "json" | "vls" => {
                let via = match key.as_str() {
                    "blob" => Via::Blob,
                    "json" => Via::Json,
                    _ => Via::Vls,
                };
                self.via.get_or_insert(via);
                self.settings.push((Setting::Via(via), span));
            }
            "vlen_strings" => {
                if self.given(|s| matches!(s, Setting::VlenStrings)) {
                    cx.error(
                        span,
                        "`vlen_strings` is given twice for this field; keep one",
                    );
                }
                self.settings.push((Setting::VlenStrings, span));
                self.storage.vlen_strings = true;
            }
            "chunk_length" => {
                if self.given(|s| matches!(s, Setting::ChunkLength)) {
                    cx.error(
                        span,
                        "`chunk_length` is given twice for this field; keep one",
                    );
                }
                self.settings.push((Setting::ChunkLength, span));
                if let Some(n) = storage::parse_chunk_length(cx, meta)? {
                    self.storage.chunk_length.get_or_insert(n);
                }
            }
            _ => {
                match COMPRESSION_KEYS.iter().find(|k| **k == key) {
                    Some(key) => {
                        self.settings.push((Setting::Compression(key), span));
                        if let Some(c) = storage::parse_compression(cx, key, meta)? {
                            self.storage.compression.get_or_insert(c);
                        }
                    }
                    None => {
                        cx.error_spanned_by(
                        &meta.path,
                        format!("unknown h5vec field attribute `{key}`; expected one of {FIELD_ATTRS}"),
                    );
                        // Consume a value, if any, so parsing can go on.
                        if meta.input.peek(syn::Token![=]) {
                            let _: syn::Expr = meta.value()?.parse()?;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// `rename = "name"`.
    fn parse_rename(
        &mut self,
        cx: &Ctxt,
        meta: &syn::meta::ParseNestedMeta<'_>,
    ) -> syn::Result<()> {
        let span = meta.path.span();
        if !meta.input.peek(syn::Token![=]) {
            cx.error(
                span,
                "`rename` needs the stored name: `#[h5vec(rename = \"name\")]`",
            );
            return Ok(());
        }
        let lit = match meta.value()?.parse()? {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(lit),
                ..
            }) => lit,
            other => {
                cx.error_spanned_by(
                    other,
                    "`rename` takes a string literal: `#[h5vec(rename = \"name\")]`",
                );
                return Ok(());
            }
        };
        let name = lit.value();
        if let Some(why) = bad_name(&name) {
            cx.error(
                lit.span(),
                format!(
                    "{name:?} cannot be a stored field name: {why}; HDF5 names must be non-empty, \
                     not `.` or `..`, without `/` or NUL"
                ),
            );
        }
        if self.rename.is_some() {
            cx.error(span, "`rename` is given twice for this field; keep one");
        }
        self.rename = Some(name);
        self.settings.push((Setting::Rename, lit.span()));
        Ok(())
    }

    /// `alias = "name"` (repeatable).
    fn parse_alias(&mut self, cx: &Ctxt, meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<()> {
        let span = meta.path.span();
        let usage =
            "`alias` takes the name a field was stored under: `#[h5vec(alias = \"old_name\")]`";
        if !meta.input.peek(syn::Token![=]) {
            cx.error(span, usage);
            return Ok(());
        }
        let lit = match meta.value()?.parse()? {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(lit),
                ..
            }) => lit,
            other => {
                cx.error_spanned_by(other, usage);
                return Ok(());
            }
        };
        let name = lit.value();
        if let Some(why) = bad_name(&name) {
            cx.error(
                lit.span(),
                format!(
                    "{name:?} cannot be a stored field name: {why}; HDF5 names must be non-empty, \
                     not `.` or `..`, without `/` or NUL"
                ),
            );
        } else if self.aliases.iter().any(|(a, _)| *a == name) {
            cx.error(
                lit.span(),
                format!("alias {name:?} is given twice for this field; keep one"),
            );
        }
        self.aliases.push((name, lit.span()));
        self.settings.push((Setting::Alias, lit.span()));
        Ok(())
    }

    /// `default` or `default = "path::to::fn"`.
    fn parse_default(
        &mut self,
        cx: &Ctxt,
        meta: &syn::meta::ParseNestedMeta<'_>,
    ) -> syn::Result<()> {
        let span = meta.path.span();
        if self.default.is_some() {
            cx.error(span, "`default` is given twice for this field; keep one");
        }
        let value = if meta.input.peek(syn::Token![=]) {
            let usage = "`default` takes the path of a function without arguments, as a string: \
                         `#[h5vec(default = \"path::to::fn\")]`, or nothing for `Default::default()`";
            let lit = match meta.value()?.parse()? {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(lit),
                    ..
                }) => lit,
                other => {
                    cx.error_spanned_by(other, usage);
                    return Ok(());
                }
            };
            match lit.parse_with(syn::Path::parse_mod_style) {
                Ok(path) if !path.segments.is_empty() => {
                    // The path keeps the literal's span, so errors in it
                    // (an unknown function, a wrong return type) point there.
                    let path = respan_path(path, lit.span());
                    FieldDefault::Path(syn::ExprPath {
                        attrs: Vec::new(),
                        qself: None,
                        path,
                    })
                }
                _ => {
                    cx.error(lit.span(), usage);
                    return Ok(());
                }
            }
        } else {
            FieldDefault::Trait
        };
        self.default.get_or_insert(value);
        self.settings.push((Setting::Default, span));
        Ok(())
    }

    fn given(&self, pred: impl Fn(Setting) -> bool) -> bool {
        self.settings.iter().any(|(s, _)| pred(*s))
    }

    /// The stored name, if renamed (the last `rename` given).
    pub fn rename(&self) -> Option<&str> {
        self.rename.as_deref()
    }

    /// The span of the (last) `rename` value.
    pub fn rename_span(&self) -> Option<Span> {
        self.settings
            .iter()
            .rev()
            .find(|(s, _)| matches!(s, Setting::Rename))
            .map(|(_, span)| *span)
    }

    pub fn skip(&self) -> bool {
        self.skip
    }

    /// The `alias` values and their spans, in source order.
    pub fn aliases(&self) -> &[(String, Span)] {
        &self.aliases
    }

    /// The `default` given, if any.
    pub fn default(&self) -> Option<&FieldDefault> {
        self.default.as_ref()
    }

    /// How the field is stored (the first of `blob`, `json`, `vls` given).
    pub fn via(&self) -> Via {
        self.via.unwrap_or(Via::Default)
    }

    pub fn storage(&self) -> Storage {
        self.storage
    }

    /// Every setting other than `skip`, in source order.
    pub fn settings(&self) -> &[(Setting, Span)] {
        &self.settings
    }
}

/// Rejects container-level `#[h5vec(...)]`: none are defined.
pub fn reject_container(cx: &Ctxt, attrs: &[syn::Attribute]) {
    for attr in attrs.iter().filter(|a| a.path().is_ident("h5vec")) {
        cx.error_spanned_by(
            attr,
            format!(
                "h5vec has no attributes for the type itself; `#[h5vec(...)]` goes on a field: {FIELD_ATTRS}"
            ),
        );
    }
}

/// Rejects `#[h5vec(...)]` where it means nothing (enum variants and their
/// fields).
pub fn reject(cx: &Ctxt, attrs: &[syn::Attribute], what: &str) {
    for attr in attrs.iter().filter(|a| a.path().is_ident("h5vec")) {
        cx.error_spanned_by(attr, format!("`#[h5vec(...)]` has no meaning on {what}"));
    }
}

/// `path` with every token at `span`.
fn respan_path(path: syn::Path, span: Span) -> syn::Path {
    let tokens = path
        .to_token_stream()
        .into_iter()
        .map(|mut t| {
            t.set_span(span);
            t
        })
        .collect::<proc_macro2::TokenStream>();
    // The same tokens parse again; should they not, the path as written.
    syn::parse2(tokens).unwrap_or(path)
}

/// Why a stored field name is unusable as an HDF5 link name, if it is
/// (SPEC.md section 1, "Names").
fn bad_name(name: &str) -> Option<&'static str> {
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
