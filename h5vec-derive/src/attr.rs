//! `#[h5vec(...)]` attributes, parsed with every error collected.

use proc_macro2::Span;
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
}

const FIELD_ATTRS: &str = "`rename = \"...\"`, `skip`, `blob`, `json`, `vls`";

impl FieldAttrs {
    pub fn parse(cx: &mut Ctxt, attrs: &[syn::Attribute]) -> FieldAttrs {
        let mut out = FieldAttrs {
            rename: None,
            skip: false,
            via: Via::Default,
            via_span: None,
        };
        for attr in attrs.iter().filter(|a| a.path().is_ident("h5vec")) {
            let res = attr.parse_nested_meta(|meta| {
                let span = meta.path.span();
                let mut set_via = |cx: &mut Ctxt, v: Via| {
                    if out.via != Via::Default {
                        cx.error(
                            span,
                            "only one of `blob`, `json` and `vls` may be given for a field",
                        );
                    }
                    out.via = v;
                    out.via_span = Some(span);
                };
                if meta.path.is_ident("rename") {
                    let lit: syn::LitStr = meta.value()?.parse()?;
                    let name = lit.value();
                    if let Some(why) = bad_name(&name) {
                        cx.error(
                            lit.span(),
                            format!("invalid h5vec field name {name:?}: {why}"),
                        );
                    }
                    if out.rename.is_some() {
                        cx.error(span, "duplicate `rename`");
                    }
                    out.rename = Some((name, lit.span()));
                } else if meta.path.is_ident("skip") {
                    out.skip = true;
                } else if meta.path.is_ident("blob") {
                    set_via(cx, Via::Blob);
                } else if meta.path.is_ident("json") {
                    set_via(cx, Via::Json);
                } else if meta.path.is_ident("vls") {
                    set_via(cx, Via::Vls);
                } else {
                    let name = meta
                        .path
                        .get_ident()
                        .map(|i| i.to_string())
                        .unwrap_or_else(|| "?".into());
                    cx.error(
                        span,
                        format!(
                            "unknown h5vec field attribute `{name}`; expected one of {FIELD_ATTRS}"
                        ),
                    );
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
        if out.skip && (out.via != Via::Default || out.rename.is_some()) {
            cx.error(
                out.via_span.or(out.rename.as_ref().map(|r| r.1)).unwrap_or_else(Span::call_site),
                "a `skip`ped field is not stored: `rename`, `blob`, `json` and `vls` make no sense with it",
            );
        }
        out
    }
}

/// Rejects container-level `#[h5vec(...)]`: none are defined yet.
pub fn check_container(cx: &mut Ctxt, attrs: &[syn::Attribute]) {
    for attr in attrs.iter().filter(|a| a.path().is_ident("h5vec")) {
        cx.error(
            attr.span(),
            format!("`#[h5vec(...)]` goes on fields (one of {FIELD_ATTRS}), not on the type"),
        );
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
