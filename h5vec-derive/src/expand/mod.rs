//! Expansion: the impls of `h5vec`'s traits for a valid input.
//!
//! The generated code only describes the type (its fields, their stored
//! names and codecs); every layout decision is in the runtime crate,
//! behind the `h5vec::__private` traits. Everything is generated inside
//! one `const _: () = { ... };` block, so the per-field helper traits stay
//! private to it.

mod enums;
mod field;
mod record;
mod union;

use proc_macro2::{Span, TokenStream};
use quote::quote;

use crate::internals::ast::{Input, Shape};
use crate::internals::Ctxt;

/// `#[derive(H5Vector)]` on `input`: the generated items, or every error
/// found in the input.
pub fn derive(input: &syn::DeriveInput) -> syn::Result<TokenStream> {
    let cx = Ctxt::new();
    let parsed = Input::from_ast(&cx, input);
    cx.check()?;
    let Some(parsed) = parsed else {
        // `from_ast` reports why whenever it gives up, so this is not reached.
        return Err(syn::Error::new(
            Span::call_site(),
            "h5vec: cannot derive H5Vector here",
        ));
    };
    let body = match &parsed.shape {
        Shape::Struct { fields, style } => record::expand(&parsed, fields, *style),
        Shape::Enum { repr, variants } => enums::expand(&parsed, repr, variants),
        Shape::Union { variants } => union::expand(&parsed, variants),
    };
    Ok(quote! {
        #[doc(hidden)]
        #[allow(non_upper_case_globals, unused_qualifications)] // generated names and fully qualified paths
        const _: () = {
            #body
        };
    })
}
