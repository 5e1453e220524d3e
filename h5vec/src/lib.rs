//! # h5vec
//!
//! Store vectors of Rust values in HDF5, field by field, in the documented
//! HDF5Vectors layout: a `Vec<T>` of a derived struct becomes one group per
//! field and one dataset per column, which h5py, HDF5.jl and C read without
//! Rust. Loads check everything against `T` first and return exactly what
//! was saved, or an [`Error`] naming the field (`$.timestamp.weeks`).
//!
//! ```
//! use h5vec::H5Vector;
//!
//! #[derive(H5Vector, Debug, PartialEq)]
//! struct GpsTimeStamp { weeks: i32, microseconds: i64 }
//!
//! #[derive(H5Vector, Debug, PartialEq)]
//! struct Measurement { timestamp: GpsTimeStamp, temperature: f64, position: [f64; 3] }
//!
//! # fn main() -> h5vec::Result<()> {
//! # let dir = tempfile::tempdir().unwrap();
//! let file = h5vec::create_file(dir.path().join("m.h5"))?;
//! let ms = vec![Measurement {
//!     timestamp: GpsTimeStamp { weeks: 2300, microseconds: 5 },
//!     temperature: 21.5,
//!     position: [1.0, 2.0, 3.0],
//! }];
//! h5vec::save_vector(&file, "measurements", &ms)?;
//! // h5py: f["measurements/data/position/values"].shape == (1, 3)
//! let back: Vec<Measurement> = h5vec::load_vector(&file, "measurements")?;
//! assert_eq!(back, ms);
//! h5vec::append_vector(&file, "measurements", &ms)?;
//! assert_eq!(h5vec::vector_len(&file, "measurements")?, 2);
//! let weeks: Vec<i32> = h5vec::load_column(&file, "measurements", "timestamp.weeks")?;
//! assert_eq!(weeks, [2300, 2300]);
//! # Ok(()) }
//! ```
//!
//! `SPEC.md` in the repository describes every byte h5vec writes, and what
//! it checks when it reads; `ARCHITECTURE.md` the way through the code.
//!
//! # The public API
//!
//! - [`H5Vector`], the trait and its derive: which types can be stored
//!   (numbers, `bool`, `char`, `String`, arrays, tuples, `Vec<T>`,
//!   `Option<T>`, derived structs, fieldless enums and enums with data;
//!   any serde type as a field with `#[h5vec(blob)]` or `#[h5vec(json)]`,
//!   or as a vector of [`Json`] or [`Blob`]); the derive's attributes are
//!   listed at [`macro@H5Vector`];
//! - whole vectors: [`save_vector`], [`save_vector_with`], [`load_vector`];
//!   growing and partial access: [`append_vector`], [`append_vector_with`],
//!   [`load_range`], [`load_column`], [`vector_len`], [`repair`]; streaming
//!   with bounded memory: [`VectorWriter`], [`VectorReader`]; what a group
//!   holds: [`list_vectors`], [`vector_exists`];
//! - many files as one vector: [`Dataset`] (a glob or a list of files
//!   holding a vector of the same name and schema; [`FileSpan`] each
//!   file's rows, [`DatasetReader`] its batches, and with the feature
//!   `arrow` `DatasetBatches` its Arrow record batches);
//! - which rows match (SPEC.md section 14): [`col`] builds a [`Filter`]
//!   (also parsed from text), [`select_rows`], [`count_where`],
//!   [`load_where`], [`explain`] ([`Explain`]); per-chunk statistics are
//!   written by every save ([`SaveOptions::statistics`]); the same on h5col
//!   tables ([`h5col::load_table_where`], section 14.7);
//! - what a file holds, without the Rust types: [`inspect`] (a container's
//!   rows, schema tree and datasets: [`VectorInfo`], [`SchemaNode`],
//!   [`DatasetInfo`]) and [`find_containers`] (every vector, h5col table
//!   and VLS array below a group: [`ContainerInfo`], [`ContainerKind`]);
//! - how datasets are written: [`SaveOptions`], [`Compression`],
//!   [`BloscCompressor`], [`BloscShuffle`], [`DatasetRole`];
//! - [`create_file`] and [`create_group`], which make files and groups with
//!   the properties the crash protocol relies on (SPEC.md section 8);
//!   [`open_file`] (read-only) and [`open_file_rw`];
//! - untrusted files (Unix): [`open_untrusted`] checks a file completely in
//!   a child process, within the budgets of an [`Isolation`], before this
//!   process opens it; [`check_isolated`] reports every container;
//! - [`Error`], [`ErrorKind`], [`Result`];
//! - the other containers h5vec reads and writes: [`h5col`] tables and
//!   [`vls`] string arrays;
//! - with the feature `arrow`, `arrow`: any vector, table or VLS array read
//!   into Apache Arrow record batches without its Rust type (SPEC.md section 11);
//! - with the feature `mpi` (instead of the default `bundled`: it links the
//!   system's parallel HDF5), `mpi`: many MPI ranks write one vector of one
//!   file (SPEC.md section 16);
//! - [`hdf5`], the HDF5 crate the functions take files and groups of.
//!
//! That is all. The storage kinds, their codecs, the schema tree and the
//! HDF5 layer are private: `H5Vector` is implemented by the derive and by
//! h5vec itself, not by hand, and its `Codec` machinery (the `Codec`,
//! `Encoder` and `Decoder` traits) is not an extension point, so that
//! kinds and their checks can change without a breaking release. The
//! derive's generated code reaches what it needs through the hidden
//! `h5vec::__private` module, which belongs to the derive of the same
//! version and is not an API.
//!
//! # Architecture
//!
//! A save turns values into columns in three layers: a *codec* per storage
//! kind knows a layout, *column* writers batch rows of one dataset, and the
//! *raw* layer talks to HDF5. A load runs the same layers the other way,
//! after a *guard* walk and the *schema* check have made sure the file holds
//! what the type needs. `ARCHITECTURE.md` follows a save, a load and an
//! append through them.
//!
//! | module | what it does |
//! |---|---|
//! | `error`, `limits`, `forked` | leaves: [`Error`] (the logical path, the HDF5 object, expected against found); bounds on what a hostile file can make h5vec allocate or loop over (SPEC 7); the isolated check's child |
//! | `raw/` | every HDF5 C call, behind checked and locked helpers: datatypes, hyperslab row I/O, direct chunk I/O, links, attributes, crash-safety flushes, filters, SWMR, copies, the guard's and the limits' queries, global heap collections read from the file's bytes (SPEC 7) |
//! | `pipeline/` | the compression pipeline: deflate, shuffle, Blosc and Fletcher32 of whole chunks on all cores, bypassing HDF5's single-threaded filter pipeline (SPEC 6.3, 6.4); row I/O that picks the direct chunk path, read-ahead, deferred writes finished by each commit, worker and buffer pools |
//! | `guard`, `live`, `schema`, `options`, `file` | the walk over every object below a container before anything is read (SPEC 7); live (SWMR) readers and writers; the schema tree (`Kind`, identifiers, the node written and read back; SPEC 2); [`SaveOptions`], [`Compression`]; [`create_file`], [`open_file`], [`open_file_rw`], [`create_group`] |
//! | `codec`, `column`, `evolution`, `bincode_codec` | the traits every kind implements and the checks kinds share; one dataset of rows written and read in batches; [`LoadOptions`] (SPEC 12); blob encoding |
//! | `kinds/` | one folder per storage kind, opening with its layout on disk (SPEC 3, 4) and holding its typed codec and its Arrow reader and writer (`arrow/read.rs`, `arrow/write.rs`); `kinds/adapters/` the Rust types stored on a kind under a codec of their own (times, instants with offsets, UUIDs, f16, complex numbers, maps), each owning every path |
//! | `containers`, `vector/`, `h5col/`, `vls`, `inspect`, `compact` | container names and what a group is; the vector group, a file per verb (save, load, append, writer, reader) and the one write session every writer shares (SPEC 1, 8): [`save_vector`], [`load_vector`], [`append_vector`], [`VectorWriter`], [`VectorReader`], [`repair`]; [`h5col`] tables (SPEC 9); [`vls`] string arrays (SPEC 10); [`inspect`], [`find_containers`]; [`compact_vector`], [`copy_vector`] |
//! | `query/` | filters, their text syntax, the scan and its `CHUNK_MINMAX` statistics (written through the write session, read to skip chunks; SPEC 14): [`col`], [`Filter`], [`select_rows`], [`load_where`], [`explain`] |
//! | `arrow/`, `serde/`, `serde_value`, `untrusted` | vectors without their Rust type as Arrow batches (SPEC 11: the public API, batch plumbing, the mapping rules and the dispatch to the kinds' readers and writers); any serde type by columns (SPEC 13); [`Json`], [`Blob`]; [`open_untrusted`], [`check_isolated`] (SPEC 7) |
//!
//! `ARCHITECTURE.md` has the full module table, the import rule (no file
//! imports a file that imports it back; `raw/` imports nothing above
//! `error`, `limits` and `forked`), and the recipes for a new adapter (a
//! folder under `kinds/adapters/` and three one-line registrations) and a
//! new storage kind. HDF5 calls a kind needs that hdf5-metno does not offer
//! go in `raw/`, behind its locked helpers.

#![warn(missing_docs)]
// Every `pub` item outside the public modules must be `pub(crate)`, or
// reachable from the public API (the derive's support through `__private`).
#![warn(unreachable_pub)]

#[cfg(feature = "arrow")]
pub mod arrow;
mod bincode_codec;
mod codec;
mod column;
mod compact;
mod containers;
mod dataset;
mod error;
mod evolution;
mod file;
mod forked;
mod guard;
pub mod h5col;
mod inspect;
mod kinds;
mod limits;
mod live;
#[cfg(all(feature = "lock-audit", target_os = "linux"))]
#[doc(hidden)]
pub mod lock_audit;
#[cfg(feature = "mpi")]
pub mod mpi;
mod options;
mod pipeline;
mod query;
mod raw;
mod schema;
#[cfg(feature = "serde-columns")]
pub mod serde;
mod serde_value;
#[cfg(unix)]
mod untrusted;
mod vector;
pub mod vls;

pub use codec::H5Vector;
pub use compact::{compact_vector, copy_vector};
#[cfg(feature = "arrow")]
pub use dataset::DatasetBatches;
pub use dataset::{Dataset, DatasetReader, FileSpan};
pub use error::{Error, ErrorKind, Result};
pub use evolution::LoadOptions;
pub use file::{
    create_file, create_file_live, create_group, open_file, open_file_live, open_file_rw,
};
pub use inspect::{
    find_containers, inspect, ContainerInfo, ContainerKind, DatasetInfo, SchemaNode, VectorInfo,
};
pub use options::{BloscCompressor, BloscShuffle, Compression, DatasetRole, SaveOptions};
pub use query::{
    build_index, col, count_where, drop_index, explain, list_indexes, load_where, select_rows,
    Column, Explain, Filter, IndexInfo, IndexKind, Value,
};
pub use serde_value::{Blob, Json};
#[cfg(unix)]
pub use untrusted::{check_isolated, open_untrusted, open_untrusted_with, Isolation};
// For the command's `validate --in-process` and the isolated check's tests.
#[cfg(unix)]
#[doc(hidden)]
pub use untrusted::{__check_in_process, Fault as __IsolationFault};
pub use vector::{
    append_vector, append_vector_with, list_vectors, load_column, load_range, load_range_with,
    load_vector, load_vector_with, repair, save_vector, save_vector_with, vector_exists,
    vector_len, VectorReader, VectorWriter, COMMIT_BATCHES, FORMAT_NAME, FORMAT_VERSION,
};

/// The derive macro: `#[derive(H5Vector)]` on structs (named, tuple and
/// unit), fieldless enums with an integer `#[repr]`, and enums with data.
///
/// The examples here are compiled and run; the reference (what each shape
/// becomes on disk, every `#[h5vec(...)]` attribute with its meaning, and
/// what is refused) follows them.
///
/// # Example: every attribute
///
/// Every field attribute at work. Storage settings apply to every dataset
/// of the field, in place of the vector's [`SaveOptions`]; serde fields
/// load on their own as [`Json`] and [`Blob`] columns.
///
/// ```
/// use h5vec::{Blob, H5Vector, Json, SaveOptions};
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Serialize, Deserialize, Debug, PartialEq)]
/// struct Meta { source: String, gain: f64 }
///
/// #[derive(H5Vector, Debug, PartialEq)]
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
///     #[h5vec(vlen_strings)]
///     note: String,
///     #[h5vec(lzf)]
///     counts: [u32; 4],
///     #[h5vec(no_compression)]
///     flag: bool,
///     #[h5vec(skip)]
///     cache: Option<Vec<u8>>,
/// }
///
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("samples.h5"))?;
/// let s = Sample {
///     time: 0.5,
///     spectrum: vec![1.0, 2.0],
///     meta: Meta { source: "probe".into(), gain: 2.0 },
///     tags: vec!["calibrated".into()],
///     label: "a".into(),
///     note: "plain HDF5 string".into(),
///     counts: [1, 2, 3, 4],
///     flag: true,
///     cache: Some(vec![9]),
/// };
/// h5vec::save_vector_with(&file, "samples", &[s], &SaveOptions::default().deflate(1))?;
/// let back: Vec<Sample> = h5vec::load_vector(&file, "samples")?;
/// assert_eq!(back[0].cache, None); // skipped: not stored
/// assert_eq!(back[0].meta, Meta { source: "probe".into(), gain: 2.0 });
///
/// // Columns by their stored names; serde fields through `Json` and `Blob`.
/// let t: Vec<f64> = h5vec::load_column(&file, "samples", "t")?;
/// let tags: Vec<Json<Vec<String>>> = h5vec::load_column(&file, "samples", "tags")?;
/// let meta: Vec<Blob<Meta>> = h5vec::load_column(&file, "samples", "meta")?;
/// assert_eq!((t[0], &tags[0].0[0], meta[0].0.gain), (0.5, &"calibrated".to_string(), 2.0));
/// let info = h5vec::inspect(&file, "samples")?;
/// let filters = |p: &str| info.datasets.iter().find(|d| d.path == p).unwrap().filters.clone();
/// assert_eq!(filters("/samples/data/flag/values"), Vec::<String>::new());
/// assert_eq!(filters("/samples/data/counts/values"), ["lzf"]);
/// # Ok(()) }
/// ```
///
/// # Example: files written by another version of the type
///
/// `alias` (repeatable), `default` and `default = "path"` on struct fields;
/// see also [`LoadOptions`] and [`load_vector_with`] (SPEC.md section 12).
///
/// ```
/// use h5vec::H5Vector;
///
/// #[derive(H5Vector)]
/// struct V1 { id: u32, px: f64 }
///
/// fn unknown() -> String { "unknown".into() }
///
/// #[derive(H5Vector, Debug, PartialEq)]
/// struct V2 {
///     id: u32,
///     #[h5vec(alias = "px", alias = "price_eur")]
///     price: f64,
///     #[h5vec(default)]
///     discount: Option<f64>,
///     #[h5vec(default = "unknown")]
///     venue: String,
/// }
///
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("v.h5"))?;
/// h5vec::save_vector(&file, "orders", &[V1 { id: 7, px: 9.5 }])?;
/// let back: Vec<V2> = h5vec::load_vector(&file, "orders")?;
/// assert_eq!(back, [V2 { id: 7, price: 9.5, discount: None, venue: "unknown".into() }]);
/// # Ok(()) }
/// ```
///
/// # Example: enums
///
/// ```
/// use h5vec::H5Vector;
///
/// // Fieldless: stored as its `#[repr]` integer, labelled with its variant names.
/// #[derive(H5Vector, Clone, Copy, Debug, PartialEq)]
/// #[repr(i16)]
/// enum Level { Low = -1, Mid = 0, High = 300 }
///
/// // With data: a tag per row and one record per variant.
/// #[derive(H5Vector, Debug, PartialEq)]
/// enum Shape<T> {
///     Point,
///     Circle(T),
///     #[h5vec(rename = "rect")]
///     Rect {
///         #[h5vec(rename = "width", deflate = 4)]
///         w: T,
///         h: T,
///         #[h5vec(json)]
///         tags: Vec<String>,
///     },
/// }
///
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("e.h5"))?;
/// let levels = vec![Level::High, Level::Low, Level::Mid];
/// h5vec::save_vector(&file, "levels", &levels)?;
/// assert_eq!(h5vec::load_vector::<Level>(&file, "levels")?, levels);
/// // h5py: f["levels/data/values"][:] == [300, -1, 0]
/// assert_eq!(h5vec::inspect(&file, "levels")?.datasets[0].dtype, "int16");
///
/// let shapes = vec![
///     Shape::Point,
///     Shape::Circle(1.5f32),
///     Shape::Rect { w: 2.0, h: 3.0, tags: vec!["big".into()] },
/// ];
/// h5vec::save_vector(&file, "shapes", &shapes)?;
/// assert_eq!(h5vec::load_vector::<Shape<f32>>(&file, "shapes")?, shapes);
/// # Ok(()) }
/// ```
///
/// # Example: refused uses
///
/// Invalid uses are compile errors, all reported at once (the full list is
/// in the reference below). A few:
///
/// ```compile_fail
/// #[derive(h5vec::H5Vector)]
/// #[h5vec(rename = "sample")] // the type takes no attributes
/// struct Sample { x: f64 }
/// ```
///
/// ```compile_fail
/// #[derive(h5vec::H5Vector)]
/// enum Level { Low, High } // a fieldless enum needs `#[repr(u8)]` (or another integer)
/// ```
///
/// ```compile_fail
/// #[derive(h5vec::H5Vector)]
/// enum Event {
///     Start = 1, // an enum with data stores positions: no discriminants
///     Stop(u32),
/// }
/// ```
///
/// ```compile_fail
/// #[derive(h5vec::H5Vector)]
/// struct Reading {
///     #[h5vec(blob, json)] // one of blob, json, vls
///     raw: Vec<u8>,
/// }
/// ```
///
/// ```compile_fail
/// #[derive(h5vec::H5Vector)]
/// struct Cell { value: Option<Option<u8>> } // no layout for nested options
/// ```
pub use h5vec_derive::H5Vector;

/// The HDF5 crate h5vec is built on (hdf5-metno), for opening files and groups.
pub use hdf5;

/// What the code `#[derive(H5Vector)]` generates refers to; not a public API
/// (no semver promise: it changes with the derive macro of the same version).
#[doc(hidden)]
pub mod __private {
    pub use crate::__dense_leaf as dense_leaf;
    pub use crate::codec::Codec;
    pub use crate::evolution::LoadFlags;
    pub use crate::h5col::TableEnum;
    pub use crate::kinds::blob::BlobCodec;
    pub use crate::kinds::constant::{Constant, ConstantCodec};
    pub use crate::kinds::dense::DenseElem;
    pub use crate::kinds::json::JsonCodec;
    pub use crate::kinds::list::{LeafItem, ListItem, RecordItem};
    pub use crate::kinds::record::{FieldList, Record, RecordCodec};
    pub use crate::kinds::scalar::{Scalar, ScalarCodec};
    pub use crate::kinds::union::{At, Union, UnionCodec, UnionItem, Variant, VariantFns};
    pub use crate::kinds::vls::{VlsField, VlsStringCodec};
    pub use crate::options::FieldStorage;
    pub use crate::schema::ids;
    pub use serde;
    pub use std;
}
