//! `#[derive(H5Vector)]` for h5vec.
//!
//! The macro only describes the type: which fields there are, what they are
//! called on disk and which codec each one uses. Every layout decision lives
//! in the `h5vec` runtime crate, behind its `Record`, `Constant` and `Scalar`
//! traits.
//!
//! The crate is laid out like `serde_derive`:
//!
//! - `lib.rs`: the entry point;
//! - `internals/`: reading the input. `ctxt.rs` collects every error,
//!   `ast.rs` reduces the input to structs, fieldless enums and enums with
//!   data, `attr.rs` and `storage.rs` parse `#[h5vec(...)]`, `check.rs`
//!   holds the rules that span several attributes or fields;
//! - `expand/`: writing the impls. `record.rs` for structs, `enums.rs` for
//!   fieldless enums, `union.rs` for enums with data, `field.rs` for each
//!   field's helper trait and storage settings.

#[cfg(test)]
mod doc_example;
mod expand;
mod internals;

use proc_macro::TokenStream;

/// Derives `h5vec::H5Vector`: how a `Vec` of the type is saved to and
/// loaded from HDF5. Runnable examples of every attribute and shape are in
/// the documentation of `h5vec::H5Vector` (the re-export of this macro).
///
/// # Shapes
///
/// - Structs with named fields and tuple structs are records, one column
///   per field (tuple-struct fields are named `1`, `2`, ...).
/// - Unit structs, and structs whose fields are all skipped, are constants.
/// - Fieldless enums with an integer `#[repr]` (`u8`, `i8`, ... `u64`,
///   `i64`) are stored as their discriminant, labelled in the schema tree
///   with their variant names and values (checked on load).
/// - Enums with data (any variant with fields; unit, tuple and struct
///   variants mixed; generic or not) are unions: a tag per row, the
///   variant's position (0, 1, ...), and one record per variant holding
///   that variant's rows.
///
/// Every field type must itself implement `H5Vector`, unless one of the
/// attributes below says otherwise. The impls of a generic type require
/// of each field's type only what that field needs (`T: H5Vector` for a
/// stored `T`, `W: Default` for a skipped `W`), and `'static` of every type
/// parameter.
///
/// # Attributes
///
/// Attributes go on fields, of structs and of enum variants, as
/// `#[h5vec(...)]`; several can be given in one attribute, separated by
/// commas: `#[h5vec(json, deflate = 4)]`. An enum variant takes only
/// `rename`. The type itself takes none.
///
/// | attribute | on | what it does | example |
/// |---|---|---|---|
/// | `rename = "name"` | field, variant | stores the field (variant) under another name | `#[h5vec(rename = "t")]` |
/// | `skip` | field | does not store the field; loading fills it with `Default::default()` | `#[h5vec(skip)]` |
/// | `blob` | field | stores the field through serde, as bincode bytes | `#[h5vec(blob)]` |
/// | `json` | field | stores the field through serde, as JSON text | `#[h5vec(json)]` |
/// | `vls` | `String`, `Option<String>` field | stores it as compressed VLS strings, whatever the options | `#[h5vec(vls)]` |
/// | `vlen_strings` | field | strings (and JSON text) in it as HDF5 variable-length strings, whatever the compression | `#[h5vec(vlen_strings)]` |
/// | `chunk_length = N` | field | chunk length of the field's datasets: `N` ≥ 1 rows (bytes for byte heaps) | `#[h5vec(chunk_length = 4096)]` |
/// | `deflate = L` | field | shuffle + deflate (gzip) at level `L` 0..=9 | `#[h5vec(deflate = 4)]` |
/// | `lzf` | field | LZF compression | `#[h5vec(lzf)]` |
/// | `zstd = L` | field | Blosc with Zstandard at level `L` 0..=9, byte shuffle | `#[h5vec(zstd = 3)]` |
/// | `blosc(compressor = "..", level = L, shuffle = "..")` | field | Blosc; `compressor` one of `"blosclz"`, `"lz4"`, `"lz4hc"`, `"zlib"`, `"zstd"`; `level` 0..=9 (default 5); `shuffle` `"none"`, `"byte"` (default), `"bit"` | `#[h5vec(blosc(compressor = "lz4", shuffle = "bit"))]` |
/// | `no_compression` | field | no compression, whatever the vector's options say | `#[h5vec(no_compression)]` |
/// | `default` | struct field | a file without the field fills it with `Default::default()` | `#[h5vec(default)]` |
/// | `default = "path"` | struct field | a file without the field fills it with `path()` (a function without arguments) | `#[h5vec(default = "no_coupon")]` |
/// | `alias = "name"` | struct field | also reads the field from a file that stores it as `name` (repeatable; saving keeps the field's own name) | `#[h5vec(alias = "cost", alias = "px")]` |
///
/// Storage settings (`chunk_length` and the compressions) apply to all of
/// the field's datasets, nested fields included, and replace the vector's
/// own settings for them (SPEC.md section 6).
///
/// # Files written by another version of the type
///
/// Loading matches stored fields to the type's fields by name, in any
/// order, then by their `alias`es; a field the file lacks takes its
/// `default`, and is an error without one. That holds for `Option<T>`
/// fields too: they are not `None` by themselves (a missing column is more
/// often a renamed field than a new one), so give them `#[h5vec(default)]`.
/// Stored fields the type does not have are an error unless the load uses
/// `LoadOptions::ignore_extra_fields(true)`; `LoadOptions::widen_numbers(true)`
/// reads numbers into wider types without loss (SPEC.md section 12). The
/// fields of an enum variant are read exactly as stored.
///
/// # What is refused
///
/// Every invalid use is a compile error, all reported at once: an unknown
/// attribute or value; an attribute on the type itself; a stored name HDF5
/// cannot hold (empty, `.`, `..`, with `/` or NUL); an attribute given
/// twice; two of `blob`, `json` and `vls`; two compressions; any other
/// attribute on a `skip`ped field; two stored fields (or variants) with the
/// same stored name; an `alias` that is a stored field's name (another
/// field's or its own), another field's alias, or given twice; on an enum
/// variant, any attribute but `rename`, and `alias` or `default` on its
/// fields; a variant stored as `TAG` or `INDEX`; an explicit discriminant
/// in an enum with data; a fieldless enum without an integer `#[repr]`, or
/// generic; an enum without variants; a union; a lifetime parameter.
///
/// `Option<Option<T>>` has no layout (one `Option` level has one mask)
/// and does not compile; to keep `None` apart from `Some(None)`, put the
/// inner option in a struct: `Option<Inner>` with
/// `#[derive(H5Vector)] struct Inner { value: Option<T> }`.
///
/// # Example
///
/// ```ignore
/// use h5vec::H5Vector;
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Serialize, Deserialize)]
/// struct Meta {
///     source: String,
/// }
///
/// #[derive(H5Vector)]
/// struct Sample {
///     #[h5vec(rename = "t", chunk_length = 4096)]
///     time: f64,
///     #[h5vec(zstd = 3)]
///     spectrum: Vec<f32>,
///     #[h5vec(blob)]
///     meta: Meta,
///     #[h5vec(json, deflate = 4)]
///     tags: Vec<String>,
///     #[h5vec(vls, blosc(compressor = "lz4", level = 5, shuffle = "bit"))]
///     label: String,
///     #[h5vec(lzf)]
///     counts: [u32; 4],
///     #[h5vec(no_compression)]
///     flag: bool,
///     #[h5vec(skip)]
///     cache: Option<Vec<u8>>,
/// }
///
/// #[derive(H5Vector, Clone, Copy)]
/// #[repr(u8)]
/// enum Level {
///     Low,
///     High,
/// }
/// ```
//
// The example needs `h5vec`, which this crate cannot depend on, so rustdoc
// does not build it here; tests/derive-ui/ui/pass_attribute_docs.rs holds the same
// items and is compiled by tests/derive_ui.rs (src/doc_example.rs keeps the
// two equal). h5vec's re-export of the macro carries runnable examples.
#[proc_macro_derive(H5Vector, attributes(h5vec))]
pub fn derive_h5vector(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    expand::derive(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
