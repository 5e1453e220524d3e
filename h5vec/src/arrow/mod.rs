//! Reading and writing vectors without their Rust type, as Apache Arrow
//! record batches (crate feature `arrow`; SPEC.md section 11).
//!
//! [`read_vector`], [`read_range`], [`batches`] and [`read_schema`] read any
//! vector from its schema tree alone, and also h5col tables (section 9) and
//! VLS string arrays (section 10): numbers become the same Arrow primitive,
//! `bool` Boolean, `char` Utf8, strings LargeUtf8, blobs LargeBinary, fixed
//! arrays FixedSizeList, records Struct (the top record is the batch's
//! columns), lists LargeList, `Option` validity, constants Null. Every
//! field carries its schema node in its metadata (`h5vec.schema`), so the
//! batch says how to write the same layout back. Every check of a typed
//! load applies: a malformed file is an error naming the field path. A
//! field whose kind or codec this version does not know (a file from a
//! newer h5vec) is listed as a `Null` field marked `h5vec.unknown`, and is
//! an error only when read: [`batches_columns`] reads the others.
//! [`read_where`] and [`batches_where`] read only the rows a
//! [`Filter`](crate::Filter) selects (SPEC.md section 14).
//! [`flatten_unions`] gives enums with data a form without Arrow unions
//! (for Parquet, polars, CSV), which the writers store as the enum again.
//!
//! ```
//! use h5vec::arrow::arrow_array::{cast::AsArray, types::Float64Type, Array};
//!
//! #[derive(h5vec::H5Vector)]
//! struct Reading { station: String, celsius: Option<f64>, tags: Vec<u16> }
//!
//! # fn main() -> h5vec::Result<()> {
//! # let dir = tempfile::tempdir().unwrap();
//! let file = h5vec::create_file(dir.path().join("r.h5"))?;
//! let rows = [
//!     Reading { station: "north".into(), celsius: Some(21.5), tags: vec![1, 2] },
//!     Reading { station: "south".into(), celsius: None, tags: vec![] },
//! ];
//! h5vec::save_vector(&file, "readings", &rows)?;
//!
//! // No Rust type needed to read it back:
//! let batch = h5vec::arrow::read_vector(&file, "readings")?;
//! let schema = batch.schema();
//! let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
//! assert_eq!(names, ["station", "celsius", "tags"]);
//! let celsius = batch.column(1).as_primitive::<Float64Type>();
//! assert_eq!((celsius.value(0), celsius.is_null(1)), (21.5, true));
//! assert_eq!(batch.column(2).as_list::<i64>().value_length(0), 2);
//! // The schema node of each field, for writing the same layout back:
//! assert!(schema.field(0).metadata()["h5vec.schema"].contains("\"kind\":\"scalar\""));
//!
//! // Large vectors: bounded memory, one batch at a time.
//! for batch in h5vec::arrow::batches(&file, "readings", 1)? {
//!     assert_eq!(batch?.num_rows(), 1);
//! }
//! # Ok(()) }
//! ```

pub(crate) mod flat;
pub(crate) mod mapping;
pub(crate) mod numbers;
pub(crate) mod read;
pub(crate) mod write;

pub use flat::flatten_unions;
pub use read::{
    batches, batches_columns, batches_range, batches_where, read_range, read_schema, read_vector,
    read_where, Batches,
};
pub use write::{append_record_batch, repair, save_batches, save_record_batch};

/// The arrow-array crate h5vec builds its batches with (the same version).
pub use arrow_array;
/// The arrow-schema crate of the batches' schemas (the same version).
pub use arrow_schema;
