//! Fieldless enums: stored as their integer discriminant (SPEC.md section
//! 3.1), through `h5vec::__private::Scalar`.

use proc_macro2::TokenStream;
use quote::quote;
use syn::ext::IdentExt;

use crate::internals::ast::Input;

pub fn expand(input: &Input<'_>, repr: &syn::Ident, variants: &[&syn::Ident]) -> TokenStream {
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
    let first = variants[0];
    let list = variants
        .iter()
        .map(|v| v.unraw().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let expected = format!("a discriminant of `{ident}` ({list})");
    // SPEC.md section 2: `variant_values` are Int64 (a `u64` discriminant
    // past `i64::MAX` is stored as its two's-complement bits).
    let labels = variants.iter().map(|v| {
        let name = v.unraw().to_string();
        quote!((#name, Self::#v as #repr as ::h5vec::__private::std::primitive::i64))
    });
    // h5col categorical columns (SPEC.md section 9): the variant names
    // are the labels.
    let names = variants.iter().map(|v| v.unraw().to_string());
    let to_index = variants
        .iter()
        .enumerate()
        .map(|(i, v)| quote!(Self::#v => #i));
    let from_index = variants
        .iter()
        .enumerate()
        .map(|(i, v)| quote!(#i => ::h5vec::__private::std::option::Option::Some(Self::#v)));
    quote! {
        #[automatically_derived]
        impl ::h5vec::__private::TableEnum for #ident {
            const VARIANTS: &'static [&'static str] = &[#(#names),*];
            #[inline]
            fn variant_index(&self) -> ::h5vec::__private::std::primitive::usize {
                match self { #(#to_index,)* }
            }
            fn from_variant_index(
                __h5vec_i: ::h5vec::__private::std::primitive::usize,
            ) -> ::h5vec::__private::std::option::Option<Self> {
                match __h5vec_i {
                    #(#from_index,)*
                    _ => ::h5vec::__private::std::option::Option::None,
                }
            }
        }
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
            const LABELS: &'static [(&'static str, ::h5vec::__private::std::primitive::i64)] = &[#(#labels),*];
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
