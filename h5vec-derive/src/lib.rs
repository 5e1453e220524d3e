//! `#[derive(H5Vector)]` for h5vec.
//!
//! The macro only describes the type: which fields there are, what they are
//! called on disk and which codec each one uses. Every layout decision lives
//! in the `h5vec` runtime crate, behind its `Record`, `Constant` and `Scalar`
//! traits.

mod ast;
mod attr;

use proc_macro::TokenStream;
use proc_macro2::Span;
use proc_macro2::TokenStream as TokenStream2;
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::ext::IdentExt;

use ast::{Input, Shape, Style};
use attr::{Ctxt, Via};

/// Derives `h5vec::H5Vector`.
///
/// - Structs with named fields, tuple structs: stored as records, one
///   column per field (tuple-struct fields are named `1`, `2`, ...).
/// - Unit structs (and structs whose fields are all skipped): constants.
/// - Fieldless enums with `#[repr(u8)]` (or another integer): scalars.
///
/// Field attributes: `#[h5vec(rename = "name")]`, `#[h5vec(skip)]` (not
/// stored, `Default` on load), `#[h5vec(blob)]` (serde + bincode),
/// `#[h5vec(json)]` (serde + JSON text), `#[h5vec(vls)]` (compressed VLS strings).
#[proc_macro_derive(H5Vector, attributes(h5vec))]
pub fn derive_h5vector(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    expand(&input).unwrap_or_else(|e| e).into()
}

fn expand(input: &syn::DeriveInput) -> Result<TokenStream2, TokenStream2> {
    let mut cx = Ctxt::default();
    let parsed = Input::from_ast(&mut cx, input);
    cx.check()?;
    let Some(parsed) = parsed else {
        return Err(quote!(compile_error!("h5vec: cannot derive H5Vector here");));
    };
    let body = match &parsed.shape {
        Shape::Struct { fields, style } => expand_struct(&parsed, fields, *style),
        Shape::Enum { repr, variants } => expand_enum(&parsed, repr, variants),
    };
    Ok(quote! {
        #[doc(hidden)]
        #[allow(non_upper_case_globals, unused_qualifications)] // generated names and fully qualified paths
        const _: () = {
            #body
        };
    })
}

/// The spans of the first and last token of `tokens`: an item built with
/// the first span on its first token and the last span on its last one
/// covers all of `tokens` in diagnostics (`Span::join` is not stable).
fn span_range(tokens: &impl ToTokens) -> (Span, Span) {
    let mut it = tokens.to_token_stream().into_iter();
    let first = it.next().map_or_else(Span::call_site, |t| t.span());
    let last = it.last().map_or(first, |t| match t {
        proc_macro2::TokenTree::Group(g) => g.span_close(),
        t => t.span(),
    });
    (first, last)
}

/// One helper trait per field, private to the generated `const _` block.
///
/// Every field's requirement is written as a where-clause `Ty: Helper` on
/// the generated impls, and everything the impls need from the field type
/// goes through the helper. So a field type that does not fit gives exactly
/// one error, at the field's type, whose message (the helper's
/// `on_unimplemented`) names the field and says what to do.
struct FieldHelper {
    /// The trait's definition and blanket impl.
    def: TokenStream2,
    /// The where-clause predicate `Ty: Helper`, spanned over the type.
    pred: TokenStream2,
    /// `<Ty as Helper>` spanned over the type, to call the helper through.
    qself: TokenStream2,
}

fn field_helper(owner: &syn::Ident, f: &ast::Field) -> FieldHelper {
    let ty = &f.ty;
    let field = ast::member_text(&f.member);
    let trait_ident = format_ident!("__H5Vector_field_{}", field);
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
    let what = format!("field `{field}` of `{owner}`");
    let private = quote!(::h5vec::__private);
    let def = if f.skip {
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
    } else {
        let (message, label, note, codec, bound) = match f.via {
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
                let (name, codec) = if f.via == Via::Blob {
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
                type Codec: ::h5vec::Codec<Value = Self> + 'static;
            }
            impl<T: #bound + 'static> #trait_ident for T {
                type Codec = #codec;
            }
        }
    };
    FieldHelper { def, pred, qself }
}

/// The impl generics and a where clause with the given extra predicates,
/// plus `'static` on every type parameter.
fn generics_with(
    input: &Input<'_>,
    extra: Vec<TokenStream2>,
) -> (TokenStream2, TokenStream2, TokenStream2) {
    let (impl_g, ty_g, where_g) = input.generics.split_for_impl();
    let mut preds: Vec<TokenStream2> = where_g
        .map(|w| w.predicates.iter().map(|p| quote!(#p)).collect())
        .unwrap_or_default();
    for tp in input.generics.type_params() {
        let id = &tp.ident;
        preds.push(quote!(#id: 'static));
    }
    preds.extend(extra);
    (quote!(#impl_g), quote!(#ty_g), quote!(where #(#preds,)*))
}

fn expand_struct(input: &Input<'_>, fields: &[ast::Field], style: Style) -> TokenStream2 {
    let ident = input.ident;
    let helpers: Vec<FieldHelper> = fields.iter().map(|f| field_helper(ident, f)).collect();
    let defs = helpers.iter().map(|h| &h.def);
    let preds: Vec<TokenStream2> = helpers.iter().map(|h| h.pred.clone()).collect();
    let (impl_g, ty_g, where_c) = generics_with(input, preds);
    let stored: Vec<(&ast::Field, &FieldHelper)> = fields
        .iter()
        .zip(&helpers)
        .filter(|(f, _)| !f.skip)
        .collect();

    // Build `Self { a: <expr>, .. }` / `Self(<expr>, ..)` / `Self`.
    let construct = |value_of: &dyn Fn(usize) -> TokenStream2| -> TokenStream2 {
        match style {
            Style::Unit => quote!(Self),
            Style::Named => {
                let inits = fields.iter().enumerate().map(|(i, f)| {
                    let m = &f.member;
                    let v = value_of(i);
                    quote!(#m: #v)
                });
                quote!(Self { #(#inits,)* })
            }
            Style::Tuple => {
                let inits = (0..fields.len()).map(value_of);
                quote!(Self( #(#inits,)* ))
            }
        }
    };
    let default_of = |i: usize| {
        let q = &helpers[i].qself;
        quote!(#q::__h5vec_default())
    };

    if stored.is_empty() {
        let value = construct(&default_of);
        return quote! {
            #(#defs)*
            #[automatically_derived]
            impl #impl_g ::h5vec::__private::Constant for #ident #ty_g #where_c {
                fn value() -> Self { #value }
            }
            #[automatically_derived]
            impl #impl_g ::h5vec::H5Vector for #ident #ty_g #where_c {
                type Codec = ::h5vec::__private::ConstantCodec<Self>;
            }
        };
    }

    let codecs: Vec<TokenStream2> = stored
        .iter()
        .map(|(_, h)| {
            let q = &h.qself;
            quote!(#q::Codec)
        })
        .collect();
    let fields_ty = codecs
        .iter()
        .rev()
        .fold(quote!(()), |acc, c| quote!((#c, #acc)));
    let names: Vec<&str> = stored.iter().map(|(f, _)| f.name.as_str()).collect();
    // Per-field storage settings, only when a field has any.
    let storage = if stored
        .iter()
        .any(|(f, _)| f.storage != attr::Storage::default())
    {
        let items = stored.iter().map(|(f, _)| {
            let chunk = match f.storage.chunk_length {
                Some(n) => quote!(::h5vec::__private::std::option::Option::Some(#n)),
                None => quote!(::h5vec::__private::std::option::Option::None),
            };
            let c = quote!(::h5vec::Compression);
            let compression = match f.storage.compression {
                None => quote!(::h5vec::__private::std::option::Option::None),
                Some(comp) => {
                    let comp = match comp {
                        attr::Comp::None => quote!(#c::None),
                        attr::Comp::Lzf => quote!(#c::Lzf),
                        attr::Comp::Deflate(l) => quote!(#c::deflate(#l)),
                        attr::Comp::Blosc {
                            compressor,
                            level,
                            shuffle,
                        } => {
                            let compressor = syn::Ident::new(compressor, proc_macro2::Span::call_site());
                            let shuffle = syn::Ident::new(shuffle, proc_macro2::Span::call_site());
                            quote!(#c::blosc(::h5vec::BloscCompressor::#compressor, #level, ::h5vec::BloscShuffle::#shuffle))
                        }
                    };
                    quote!(::h5vec::__private::std::option::Option::Some(#comp))
                }
            };
            quote!(::h5vec::FieldStorage { chunk_length: #chunk, compression: #compression })
        });
        quote!(const FIELD_STORAGE: &'static [::h5vec::FieldStorage] = &[#(#items),*];)
    } else {
        quote!()
    };
    let members: Vec<&syn::Member> = stored.iter().map(|(f, _)| &f.member).collect();
    let refs = members
        .iter()
        .rev()
        .fold(quote!(()), |acc, m| quote!((&self.#m, #acc)));
    let binding = |i: usize| format_ident!("__h5vec_f{}", i);
    let stored_index: Vec<Option<usize>> = {
        let mut k = 0;
        fields
            .iter()
            .map(|f| {
                if f.skip {
                    None
                } else {
                    k += 1;
                    Some(k - 1)
                }
            })
            .collect()
    };
    let pattern = (0..stored.len()).rev().fold(quote!(()), |acc, i| {
        let b = binding(i);
        quote!((#b, #acc))
    });
    let value = construct(&|i| match stored_index[i] {
        Some(k) => {
            let b = binding(k);
            quote!(#b)
        }
        None => default_of(i),
    });
    quote! {
        #(#defs)*
        #[automatically_derived]
        impl #impl_g ::h5vec::__private::Record for #ident #ty_g #where_c {
            type Fields = #fields_ty;
            const CODEC: &'static str = ::h5vec::__private::ids::STRUCT;
            const FIELD_NAMES: &'static [&'static str] = &[#(#names),*];
            #storage
            #[inline]
            fn parts(&self) -> <Self::Fields as ::h5vec::__private::FieldList>::Refs<'_> {
                #refs
            }
            #[inline]
            fn from_parts(__h5vec_parts: <Self::Fields as ::h5vec::__private::FieldList>::Values) -> Self {
                let #pattern = __h5vec_parts;
                #value
            }
        }
        #[automatically_derived]
        impl #impl_g ::h5vec::H5Vector for #ident #ty_g #where_c {
            type Codec = ::h5vec::__private::RecordCodec<Self>;
        }
        #[automatically_derived]
        impl #impl_g ::h5vec::__private::ListItem for #ident #ty_g #where_c {
            type Item = ::h5vec::__private::RecordItem<Self>;
        }
    }
}

fn expand_enum(input: &Input<'_>, repr: &syn::Ident, variants: &[syn::Ident]) -> TokenStream2 {
    let ident = input.ident;
    // Spelled out in full: a user type named `u8` must not be picked up.
    let repr = quote!(::h5vec::__private::std::primitive::#repr);
    let to_raw = variants
        .iter()
        .map(|v| quote!(Self::#v => Self::#v as #repr));
    let from_raw = variants.iter().map(|v| {
        quote! {
            if __h5vec_raw == Self::#v as #repr {
                return ::h5vec::__private::std::option::Option::Some(Self::#v);
            }
        }
    });
    let first = &variants[0];
    let list = variants
        .iter()
        .map(|v| v.unraw().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let expected = format!("a discriminant of `{ident}` ({list})");
    quote! {
        #[automatically_derived]
        impl ::h5vec::__private::Scalar for #ident {
            type Raw = #repr;
            const CODEC: &'static str = ::h5vec::__private::ids::ENUM;
            #[inline]
            fn to_raw(&self) -> #repr {
                match self { #(#to_raw,)* }
            }
            #[inline]
            fn from_raw(__h5vec_raw: #repr) -> ::h5vec::__private::std::option::Option<Self> {
                #(#from_raw)*
                ::h5vec::__private::std::option::Option::None
            }
            fn placeholder() -> Self { Self::#first }
            fn expected() -> ::h5vec::__private::std::string::String {
                ::h5vec::__private::std::borrow::ToOwned::to_owned(#expected)
            }
        }
        #[automatically_derived]
        impl ::h5vec::H5Vector for #ident {
            type Codec = ::h5vec::__private::ScalarCodec<Self>;
        }
        #[automatically_derived]
        impl ::h5vec::__private::ListItem for #ident {
            type Item = ::h5vec::__private::LeafItem<Self>;
        }
        ::h5vec::__private::dense_leaf!(#ident);
    }
}
