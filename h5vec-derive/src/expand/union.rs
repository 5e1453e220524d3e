//! Enums with data: unions (SPEC.md section 4.4), through
//! `h5vec::__private::Union` and one `Variant<At<I>>` impl per variant,
//! which lists the variant's fields as a record lists its own.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::field::{self, FieldHelper};
use crate::internals::ast::{Input, Style, Variant};
use crate::internals::storage::Storage;

pub fn expand(input: &Input<'_>, variants: &[Variant<'_>]) -> TokenStream {
    let ident = input.ident;
    let private = quote!(::h5vec::__private);
    let helpers: Vec<Vec<FieldHelper>> = variants
        .iter()
        .map(|v| {
            v.fields
                .iter()
                .map(|f| field::variant_helper(ident, v.ident, f))
                .collect()
        })
        .collect();
    let defs = helpers.iter().flatten().map(|h| &h.def);
    let preds: Vec<TokenStream> = helpers.iter().flatten().map(|h| h.pred.clone()).collect();
    let (impl_g, ty_g, where_c) = generics_with(input, preds);

    let variant_impls = variants.iter().zip(&helpers).enumerate().map(|(i, (v, hs))| {
        let vid = v.ident;
        let stored: Vec<usize> = (0..v.fields.len())
            .filter(|&k| !v.fields[k].attrs.skip())
            .collect();
        let fields_ty = stored.iter().rev().fold(quote!(()), |acc, &k| {
            let q = &hs[k].qself;
            quote!((#q::Codec, #acc))
        });
        let names = stored.iter().map(|&k| v.fields[k].name.as_str());
        let codec = if stored.is_empty() {
            quote!(#private::ids::CONSTANT_CODEC)
        } else if v.style == Style::Named {
            quote!(#private::ids::STRUCT)
        } else {
            quote!(#private::ids::TUPLE)
        };
        let storage = if stored
            .iter()
            .any(|&k| v.fields[k].attrs.storage() != Storage::default())
        {
            let items = stored
                .iter()
                .map(|&k| field::storage(&v.fields[k].attrs.storage()));
            quote!(const FIELD_STORAGE: &'static [#private::FieldStorage] = &[#(#items),*];)
        } else {
            quote!()
        };
        let binding = |k: usize| format_ident!("__h5vec_f{}", k);
        // `Self::V { a: __h5vec_f0, 1: __h5vec_f1, .. }`: braces match
        // every variant style.
        let binds = stored.iter().map(|&k| {
            let m = &v.fields[k].member;
            let b = binding(k);
            quote!(#m: #b)
        });
        let refs = stored.iter().rev().fold(quote!(()), |acc, &k| {
            let b = binding(k);
            quote!((#b, #acc))
        });
        let pattern = stored.iter().rev().fold(quote!(()), |acc, &k| {
            let b = binding(k);
            quote!((#b, #acc))
        });
        let inits = v.fields.iter().enumerate().map(|(k, f)| {
            let m = &f.member;
            if f.attrs.skip() {
                let q = &hs[k].qself;
                quote!(#m: #q::__h5vec_default())
            } else {
                let b = binding(k);
                quote!(#m: #b)
            }
        });
        quote! {
            #[automatically_derived]
            impl #impl_g #private::Variant<#private::At<#i>> for #ident #ty_g #where_c {
                type Fields = #fields_ty;
                const CODEC: &'static str = #codec;
                const FIELD_NAMES: &'static [&'static str] = &[#(#names),*];
                #storage
                #[inline]
                #[allow(unreachable_patterns)] // an enum of one variant
                fn parts(&self) -> #private::std::option::Option<<Self::Fields as #private::FieldList>::Refs<'_>> {
                    match self {
                        Self::#vid { #(#binds,)* .. } => #private::std::option::Option::Some(#refs),
                        _ => #private::std::option::Option::None,
                    }
                }
                #[inline]
                fn from_parts(__h5vec_parts: <Self::Fields as #private::FieldList>::Values) -> Self {
                    let #pattern = __h5vec_parts;
                    Self::#vid { #(#inits,)* }
                }
            }
        }
    });
    let names = variants.iter().map(|v| v.name.as_str());
    let tags = variants.iter().enumerate().map(|(i, v)| {
        let vid = v.ident;
        quote!(Self::#vid { .. } => #i)
    });
    let fns = (0..variants.len()).map(|i| quote!(#private::VariantFns::of::<#private::At<#i>>()));
    quote! {
        #(#defs)*
        #(#variant_impls)*
        #[automatically_derived]
        impl #impl_g #private::Union for #ident #ty_g #where_c {
            const VARIANT_NAMES: &'static [&'static str] = &[#(#names),*];
            #[inline]
            fn tag(&self) -> usize {
                match self { #(#tags,)* }
            }
            fn variants() -> #private::std::vec::Vec<#private::VariantFns<Self>> {
                #private::std::vec![#(#fns),*]
            }
        }
        #[automatically_derived]
        impl #impl_g ::h5vec::H5Vector for #ident #ty_g #where_c {
            type Codec = #private::UnionCodec<Self>;
        }
        #[automatically_derived]
        impl #impl_g #private::ListItem for #ident #ty_g #where_c {
            type Item = #private::UnionItem<Self>;
        }
    }
}

/// The impl generics and a where clause with the given extra predicates,
/// plus `'static` on every type parameter (as for records).
fn generics_with(
    input: &Input<'_>,
    extra: Vec<TokenStream>,
) -> (TokenStream, TokenStream, TokenStream) {
    let (impl_g, ty_g, where_g) = input.generics.split_for_impl();
    let mut preds: Vec<TokenStream> = where_g
        .map(|w| w.predicates.iter().map(|p| quote!(#p)).collect())
        .unwrap_or_default();
    for tp in input.generics.type_params() {
        let id = &tp.ident;
        preds.push(quote!(#id: 'static));
    }
    preds.extend(extra);
    (quote!(#impl_g), quote!(#ty_g), quote!(where #(#preds,)*))
}
