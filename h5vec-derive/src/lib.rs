//! `#[derive(H5Vector)]` for h5vec.
//!
//! The macro only describes the type: which fields there are, what they are
//! called on disk and which codec each one uses. Every layout decision lives
//! in the `h5vec` runtime crate, behind its `Record`, `Constant` and `Scalar`
//! traits.

mod ast;
mod attr;

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

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

fn codec_of(f: &ast::Field) -> TokenStream2 {
    let ty = &f.ty;
    match f.via {
        Via::Default => quote_spanned!(ty.span()=> <#ty as ::h5vec::H5Vector>::Codec),
        Via::Blob => quote_spanned!(ty.span()=> ::h5vec::__private::BlobCodec<#ty>),
        Via::Json => quote_spanned!(ty.span()=> ::h5vec::__private::JsonCodec<#ty>),
        Via::Vls => quote_spanned!(ty.span()=> <#ty as ::h5vec::__private::VlsField>::Codec),
    }
}

fn bound_of(f: &ast::Field) -> TokenStream2 {
    let ty = &f.ty;
    match f.via {
        Via::Default => quote_spanned!(ty.span()=> #ty: ::h5vec::H5Vector + 'static),
        Via::Blob | Via::Json => quote_spanned!(ty.span()=>
            #ty: ::h5vec::__private::serde::Serialize + ::h5vec::__private::serde::de::DeserializeOwned + 'static),
        Via::Vls => quote_spanned!(ty.span()=> #ty: ::h5vec::__private::VlsField + 'static),
    }
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
    let stored: Vec<&ast::Field> = fields.iter().filter(|f| !f.skip).collect();
    let bounds: Vec<TokenStream2> = stored.iter().map(|f| bound_of(f)).collect();
    let skipped_bounds: Vec<TokenStream2> = fields
        .iter()
        .filter(|f| f.skip)
        .map(|f| {
            let ty = &f.ty;
            quote_spanned!(ty.span()=> #ty: ::h5vec::__private::std::default::Default)
        })
        .collect();
    let mut all = bounds.clone();
    all.extend(skipped_bounds);
    let (impl_g, ty_g, where_c) = generics_with(input, all);

    // Build `Self { a: <expr>, .. }` / `Self(<expr>, ..)` / `Self`.
    let construct = |value_of: &dyn Fn(usize, &ast::Field) -> TokenStream2| -> TokenStream2 {
        match style {
            Style::Unit => quote!(#ident),
            Style::Named => {
                let inits = fields.iter().enumerate().map(|(i, f)| {
                    let m = &f.member;
                    let v = value_of(i, f);
                    quote!(#m: #v)
                });
                quote!(#ident { #(#inits,)* })
            }
            Style::Tuple => {
                let inits = fields.iter().enumerate().map(|(i, f)| value_of(i, f));
                quote!(#ident( #(#inits,)* ))
            }
        }
    };
    let default = quote!(::h5vec::__private::std::default::Default::default());

    if stored.is_empty() {
        let value = construct(&|_, _| default.clone());
        return quote! {
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

    let codecs: Vec<TokenStream2> = stored.iter().map(|f| codec_of(f)).collect();
    let fields_ty = codecs
        .iter()
        .rev()
        .fold(quote!(()), |acc, c| quote!((#c, #acc)));
    let names: Vec<&str> = stored.iter().map(|f| f.name.as_str()).collect();
    let members: Vec<&syn::Member> = stored.iter().map(|f| &f.member).collect();
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
    let value = construct(&|i, _| match stored_index[i] {
        Some(k) => {
            let b = binding(k);
            quote!(#b)
        }
        None => default.clone(),
    });
    quote! {
        #[automatically_derived]
        impl #impl_g ::h5vec::__private::Record for #ident #ty_g #where_c {
            type Fields = #fields_ty;
            const CODEC: &'static str = ::h5vec::__private::ids::STRUCT;
            const FIELD_NAMES: &'static [&'static str] = &[#(#names),*];
            #[inline]
            fn parts(&self) -> <Self::Fields as ::h5vec::__private::FieldList>::Refs<'_> {
                #refs
            }
            #[inline]
            fn from_parts(parts: <Self::Fields as ::h5vec::__private::FieldList>::Values) -> Self {
                let #pattern = parts;
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
    let to_raw = variants
        .iter()
        .map(|v| quote!(#ident::#v => #ident::#v as #repr));
    let from_raw = variants.iter().map(|v| quote!(if raw == #ident::#v as #repr { return ::h5vec::__private::std::option::Option::Some(#ident::#v); }));
    let first = &variants[0];
    let names = variants.iter().map(|v| v.to_string());
    let list = names.collect::<Vec<_>>().join(", ");
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
            fn from_raw(raw: #repr) -> ::h5vec::__private::std::option::Option<Self> {
                #(#from_raw)*
                ::h5vec::__private::std::option::Option::None
            }
            fn placeholder() -> Self { #ident::#first }
            fn expected() -> ::h5vec::__private::std::string::String {
                ::h5vec::__private::std::string::String::from(#expected)
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
