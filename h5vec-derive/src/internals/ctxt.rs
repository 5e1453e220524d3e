//! The error context: every error found while reading the input, reported
//! together.

use std::cell::RefCell;
use std::fmt::Display;
use std::thread;

use proc_macro2::Span;
use quote::ToTokens;

/// Gathers the errors of one derive.
///
/// Parsing and validation go on after an error, so one compile reports
/// every attribute error of the type at once, in the order they were found
/// (rustc shows them in that order). [`Ctxt::check`] must be called once
/// at the end; dropping an unchecked `Ctxt` panics, so an error cannot be
/// lost.
pub struct Ctxt {
    /// `None` once checked.
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Ctxt {
    pub fn new() -> Self {
        Ctxt {
            errors: RefCell::new(Some(Vec::new())),
        }
    }

    /// An error at `span`.
    pub fn error(&self, span: Span, msg: impl Display) {
        self.syn_error(syn::Error::new(span, msg));
    }

    /// An error over all the tokens of `obj`.
    pub fn error_spanned_by(&self, obj: impl ToTokens, msg: impl Display) {
        self.syn_error(syn::Error::new_spanned(obj.into_token_stream(), msg));
    }

    /// An error from syn, as it is.
    pub fn syn_error(&self, err: syn::Error) {
        self.errors
            .borrow_mut()
            .as_mut()
            .expect("Ctxt used after check")
            .push(err);
    }

    /// Every error so far, combined into one `syn::Error` (which expands to
    /// one `compile_error!` per error), or `Ok` if there were none.
    pub fn check(self) -> syn::Result<()> {
        let errors = self.errors.borrow_mut().take().expect("Ctxt checked twice");
        let mut it = errors.into_iter();
        let Some(mut combined) = it.next() else {
            return Ok(());
        };
        for err in it {
            combined.combine(err);
        }
        Err(combined)
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        if !thread::panicking() && self.errors.borrow().is_some() {
            panic!("h5vec-derive: a Ctxt was dropped without check()");
        }
    }
}

/// A path as written, without spaces: `rename`, `a::b`.
pub fn path_text(path: &syn::Path) -> String {
    path.to_token_stream().to_string().replace(' ', "")
}
