//! Per-field pieces of a record's expansion: the helper trait that carries
//! a field's requirement on its type, and its storage settings.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{format_ident, quote, quote_spanned, ToTokens};

use crate::internals::ast::{member_text, Field};
use crate::internals::attr::Via;
use crate::internals::storage::{Comp, Storage};

/// One helper trait per field, private to the generated `const _` block.
///
/// Every field's requirement is written as a where-clause `Ty: Helper` on
/// the generated impls, and everything the impls need from the field type
/// goes through the helper. So a field type that does not fit gives exactly
/// one error, at the field's type, whose message (the helper's
/// `on_unimplemented`) names the field and says what to do.
pub struct FieldHelper {
    /// The trait's definition and blanket impl.
    pub def: TokenStream,
    /// The where-clause predicate `Ty: Helper`, spanned over the type.
    pub pred: TokenStream,
    /// `<Ty as Helper>` spanned over the type, to call the helper through.
    pub qself: TokenStream,
}

/// The spans of the first and last token of `tokens`: an item built with
/// the first span on its first token and the last span on its last one
/// covers all of `tokens` in diagnostics (`Span::join` is not stable).
pub fn span_range(tokens: &impl ToTokens) -> (Span, Span) {
    let mut it = tokens.to_token_stream().into_iter();
    let first = it.next().map_or_else(Span::call_site, |t| t.span());
    let last = it.last().map_or(first, |t| match t {
        TokenTree::Group(g) => g.span_close(),
        t => t.span(),
    });
    (first, last)
}

pub fn helper(owner: &syn::Ident, f: &Field<'_>) -> FieldHelper {
    let field = member_text(&f.member);
    let trait_ident = format_ident!("__H5Vector_field_{}", field);
    helper_as(trait_ident, format!("field `{field}` of `{owner}`"), f)
}

/// [`helper`] for field `f` of variant `variant` of enum `owner`: the
/// trait is named after both, so the same field name in two variants
/// gives two traits.
pub fn variant_helper(owner: &syn::Ident, variant: &syn::Ident, f: &Field<'_>) -> FieldHelper {
    let field = member_text(&f.member);
    let trait_ident = format_ident!("__H5Vector_field_{}_{}", variant, field);
    helper_as(
        trait_ident,
        format!("field `{field}` of variant `{variant}` of `{owner}`"),
        f,
    )
}

/// The helper named `trait_ident` of field `f`, described in messages as `what`.
fn helper_as(trait_ident: syn::Ident, what: String, f: &Field<'_>) -> FieldHelper {
    let ty = f.ty;
    let (first, last) = span_range(ty);
    // The same trait, named with the span of the type's last token, so
    // that `Ty: Helper` is one span over the type in diagnostics.
    let trait_at_ty = syn::Ident::new(&trait_ident.to_string(), last);
    let pred = {
        let colon = quote_spanned!(last=> : #trait_at_ty);
        quote!(#ty #colon)
    };
    let qself = {
        let open = quote_spanned!(first=> <);
        let close = quote_spanned!(last=> as #trait_at_ty>);
        quote!(#open #ty #close)
    };
    let def = if f.attrs.skip() {
        skipped_def(&trait_ident, &what)
    } else {
        stored_def(&trait_ident, &what, f.attrs.via())
    };
    FieldHelper { def, pred, qself }
}

/// The helper of a `skip`ped field: its type's `Default`, which loading
/// fills it with.
fn skipped_def(trait_ident: &syn::Ident, what: &str) -> TokenStream {
    let private = quote!(::h5vec::__private);
    let message = format!(
        "{what} is `#[h5vec(skip)]`, so loading fills it with `Default::default()`, \
         but `{{Self}}` does not implement `Default`"
    );
    let note =
        "implement or derive `Default` for `{Self}`, or store the field instead of skipping it";
    quote! {
        #[diagnostic::on_unimplemented(message = #message, label = "`{Self}` has no `Default`", note = #note)]
        #[allow(non_camel_case_types)] // named after the field, which shows in diagnostics
        pub trait #trait_ident: #private::std::marker::Sized {
            fn __h5vec_default() -> Self;
        }
        impl<T: #private::std::default::Default> #trait_ident for T {
            #[inline]
            fn __h5vec_default() -> T {
                <T as #private::std::default::Default>::default()
            }
        }
    }
}

/// The helper of a stored field: the codec it is stored with.
fn stored_def(trait_ident: &syn::Ident, what: &str, via: Via) -> TokenStream {
    let private = quote!(::h5vec::__private);
    let (message, label, note, codec, bound) = match via {
        Via::Default => (
            format!("{what} has no h5vec storage kind: `{{Self}}` does not implement `H5Vector`"),
            "no h5vec layout for `{Self}`".to_string(),
            "derive `H5Vector` for `{Self}` if it is your type, or store the field through serde \
             with `#[h5vec(blob)]` (bincode bytes) or `#[h5vec(json)]` (JSON text)"
                .to_string(),
            quote!(<T as ::h5vec::H5Vector>::Codec),
            quote!(::h5vec::H5Vector),
        ),
        Via::Blob | Via::Json => {
            let (name, codec) = if via == Via::Blob {
                ("blob", quote!(#private::BlobCodec<T>))
            } else {
                ("json", quote!(#private::JsonCodec<T>))
            };
            (
                format!(
                    "{what} is `#[h5vec({name})]`, but `{{Self}}` does not implement \
                     serde's `Serialize` and `DeserializeOwned`"
                ),
                "not serializable with serde".to_string(),
                format!(
                    "derive `serde::Serialize` and `serde::Deserialize` for `{{Self}}`, \
                     or derive `H5Vector` for it and remove `#[h5vec({name})]`"
                ),
                codec,
                quote!(#private::serde::Serialize + #private::serde::de::DeserializeOwned),
            )
        }
        Via::Vls => (
            format!("{what} is `#[h5vec(vls)]`, which stores only `String` and `Option<String>`, not `{{Self}}`"),
            "not a string type".to_string(),
            "remove `#[h5vec(vls)]` to store `{Self}` with its own layout".to_string(),
            quote!(<T as #private::VlsField>::Codec),
            quote!(#private::VlsField),
        ),
    };
    quote! {
        #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
        #[allow(non_camel_case_types)] // named after the field, which shows in diagnostics
        pub trait #trait_ident: #private::std::marker::Sized + 'static {
            type Codec: #private::Codec<Value = Self> + 'static;
        }
        impl<T: #bound + 'static> #trait_ident for T {
            type Codec = #codec;
        }
    }
}

/// A field's storage settings as an `h5vec::__private::FieldStorage` expression.
pub fn storage(storage: &Storage) -> TokenStream {
    let option = quote!(::h5vec::__private::std::option::Option);
    let chunk = match storage.chunk_length {
        Some(n) => quote!(#option::Some(#n)),
        None => quote!(#option::None),
    };
    let compression = match storage.compression {
        None => quote!(#option::None),
        Some(comp) => {
            let comp = compression(comp);
            quote!(#option::Some(#comp))
        }
    };
    let vls = if storage.vlen_strings {
        quote!(#option::Some(false))
    } else {
        quote!(#option::None)
    };
    quote!(::h5vec::__private::FieldStorage {
        chunk_length: #chunk,
        compression: #compression,
        vls_strings: #vls,
    })
}

/// A compression as an `h5vec::Compression` expression.
fn compression(comp: Comp) -> TokenStream {
    let c = quote!(::h5vec::Compression);
    match comp {
        Comp::None => quote!(#c::None),
        Comp::Lzf => quote!(#c::Lzf),
        Comp::Deflate(l) => quote!(#c::deflate(#l)),
        Comp::Blosc {
            compressor,
            level,
            shuffle,
        } => {
            let compressor = syn::Ident::new(compressor, Span::call_site());
            let shuffle = syn::Ident::new(shuffle, Span::call_site());
            quote!(#c::blosc(::h5vec::BloscCompressor::#compressor, #level, ::h5vec::BloscShuffle::#shuffle))
        }
    }
}
