//! Structs: records, one column per stored field (SPEC.md section 3.3),
//! through `h5vec::__private::Record`; a struct with no stored field is a
//! constant (section 3.4), through `h5vec::__private::Constant`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};

use super::field::{self, span_range, FieldHelper};
use crate::internals::ast::{member_text, Field, Input, Style};
use crate::internals::attr::FieldDefault;
use crate::internals::storage::Storage;

pub fn expand(input: &Input<'_>, fields: &[Field<'_>], style: Style) -> TokenStream {
    let ident = input.ident;
    let helpers: Vec<FieldHelper> = fields.iter().map(|f| field::helper(ident, f)).collect();
    let defaults: Vec<Option<DefaultHelper>> =
        fields.iter().map(|f| default_helper(ident, f)).collect();
    let defs = helpers
        .iter()
        .map(|h| &h.def)
        .chain(defaults.iter().flatten().filter_map(|d| d.def.as_ref()));
    let preds: Vec<TokenStream> = helpers
        .iter()
        .map(|h| h.pred.clone())
        .chain(defaults.iter().flatten().filter_map(|d| d.pred.clone()))
        .collect();
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
    // Other stored names, only when a field has any (SPEC.md section 12).
    let aliases = if stored.iter().any(|(f, _)| !f.attrs.aliases().is_empty()) {
        let items = stored.iter().map(|(f, _)| {
            let names = f.attrs.aliases().iter().map(|(a, _)| a);
            quote!(&[#(#names),*])
        });
        quote!(const FIELD_ALIASES: &'static [&'static [&'static str]] = &[#(#items),*];)
    } else {
        quote!()
    };
    // Each stored field's value for a file without it, only when a field
    // has a default: a cons list of `Option<fn() -> Ty>`.
    let defaults_fn = if stored.iter().any(|(f, _)| f.attrs.default().is_some()) {
        let option = quote!(::h5vec::__private::std::option::Option);
        let list = fields
            .iter()
            .zip(&defaults)
            .filter(|(f, _)| !f.attrs.skip())
            .rev()
            .fold(quote!(()), |acc, (f, d)| {
                let ty = f.ty;
                match d {
                    Some(d) => {
                        // The cast at the attribute's span: a function of
                        // another type is reported at its name.
                        let value = &d.value;
                        let cast = quote_spanned!(d.span=> #value as fn() -> #ty);
                        quote!((#option::Some(#cast), #acc))
                    }
                    None => quote!((#option::None, #acc)),
                }
            });
        quote! {
            fn defaults() -> <Self::Fields as ::h5vec::__private::FieldList>::Defaults {
                #list
            }
        }
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
            #aliases
            #defaults_fn
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

/// What a stored field with `#[h5vec(default)]` or `#[h5vec(default =
/// "path")]` takes when the file lacks it.
struct DefaultHelper {
    /// For `default`: a helper trait carrying `Ty: Default` with a message
    /// naming the field (as the `skip` helper does).
    def: Option<TokenStream>,
    /// Its where-clause predicate.
    pred: Option<TokenStream>,
    /// A function without arguments returning the field's type.
    value: TokenStream,
    /// Where the default is given.
    span: proc_macro2::Span,
}

fn default_helper(owner: &syn::Ident, f: &Field<'_>) -> Option<DefaultHelper> {
    if f.attrs.skip() {
        return None;
    }
    let ty = f.ty;
    match f.attrs.default()? {
        FieldDefault::Path(path) => Some(DefaultHelper {
            def: None,
            pred: None,
            value: quote!(#path),
            span: syn::spanned::Spanned::span(path),
        }),
        FieldDefault::Trait => {
            let private = quote!(::h5vec::__private);
            let field = member_text(&f.member);
            let trait_ident = format_ident!("__H5Vector_default_{}", field);
            let message = format!(
                "field `{field}` of `{owner}` is `#[h5vec(default)]`, so a file without it fills \
                 it with `Default::default()`, but `{{Self}}` does not implement `Default`"
            );
            let note = "implement or derive `Default` for `{Self}`, or name a function with \
                        `#[h5vec(default = \"path::to::fn\")]`";
            let (first, last) = span_range(ty);
            let trait_at_ty = syn::Ident::new(&trait_ident.to_string(), last);
            let colon = quote_spanned!(last=> : #trait_at_ty);
            let open = quote_spanned!(first=> <);
            let close = quote_spanned!(last=> as #trait_at_ty>);
            Some(DefaultHelper {
                def: Some(quote! {
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
                }),
                pred: Some(quote!(#ty #colon)),
                value: quote!(#open #ty #close::__h5vec_default),
                span: last,
            })
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
