//! Structs: records, one column per stored field (SPEC.md section 3.3),
//! through `h5vec::__private::Record`; a struct with no stored field is a
//! constant (section 3.4), through `h5vec::__private::Constant`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::field::{self, FieldHelper};
use crate::internals::ast::{Field, Input, Style};
use crate::internals::storage::Storage;

pub fn expand(input: &Input<'_>, fields: &[Field<'_>], style: Style) -> TokenStream {
    let ident = input.ident;
    let helpers: Vec<FieldHelper> = fields.iter().map(|f| field::helper(ident, f)).collect();
    let defs = helpers.iter().map(|h| &h.def);
    let preds: Vec<TokenStream> = helpers.iter().map(|h| h.pred.clone()).collect();
    let (impl_g, ty_g, where_c) = generics_with(input, preds);
    let stored: Vec<(&Field<'_>, &FieldHelper)> = fields
        .iter()
        .zip(&helpers)
        .filter(|(f, _)| !f.attrs.skip())
        .collect();
    // A skipped field's value on load: `<Ty as Helper>::__h5vec_default()`.
    let default_of = |i: usize| {
        let q = &helpers[i].qself;
        quote!(#q::__h5vec_default())
    };

    if stored.is_empty() {
        let value = construct(style, fields, &default_of);
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

    // The stored fields' codecs as a cons list `(A, (B, ()))`.
    let fields_ty = stored.iter().rev().fold(quote!(()), |acc, (_, h)| {
        let q = &h.qself;
        quote!((#q::Codec, #acc))
    });
    let names: Vec<&str> = stored.iter().map(|(f, _)| f.name.as_str()).collect();
    // Per-field storage settings, only when a field has any.
    let storage = if stored
        .iter()
        .any(|(f, _)| f.attrs.storage() != Storage::default())
    {
        let items = stored
            .iter()
            .map(|(f, _)| field::storage(&f.attrs.storage()));
        quote!(const FIELD_STORAGE: &'static [::h5vec::__private::FieldStorage] = &[#(#items),*];)
    } else {
        quote!()
    };
    // `parts`: references to the stored fields, as a cons list.
    let refs = stored.iter().rev().fold(quote!(()), |acc, (f, _)| {
        let m = &f.member;
        quote!((&self.#m, #acc))
    });
    // `from_parts`: the stored values bound to `__h5vec_f0`, `__h5vec_f1`,
    // ..., skipped fields filled with their default.
    let binding = |k: usize| format_ident!("__h5vec_f{}", k);
    let pattern = (0..stored.len()).rev().fold(quote!(()), |acc, k| {
        let b = binding(k);
        quote!((#b, #acc))
    });
    let stored_index = stored_indices(fields);
    let value = construct(style, fields, &|i| match stored_index[i] {
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

/// `Self { a: <expr>, .. }`, `Self(<expr>, ..)` or `Self`, with the value
/// of field `i` from `value_of(i)`.
fn construct(
    style: Style,
    fields: &[Field<'_>],
    value_of: &dyn Fn(usize) -> TokenStream,
) -> TokenStream {
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
}

/// For each field, its position among the stored fields (`None` if skipped).
fn stored_indices(fields: &[Field<'_>]) -> Vec<Option<usize>> {
    let mut k = 0;
    fields
        .iter()
        .map(|f| {
            (!f.attrs.skip()).then(|| {
                k += 1;
                k - 1
            })
        })
        .collect()
}

/// The impl generics and a where clause with the given extra predicates,
/// plus `'static` on every type parameter.
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
