//! The vector group: `<name>/data` and `<name>/metadata`.
//!
//! Layout on disk:
//! ```text
//! <name>/data/...                      the values, laid out by the element's kind
//! <name>/metadata/format_name          "HDF5Vectors" (scalar fixed-length UTF-8 string)
//! <name>/metadata/format_version       1 (scalar Int64)
//! <name>/metadata/logical_type         the Rust element type name
//! <name>/metadata/serialized_schema    1-D uint8: the schema tree as JSON
//! <name>/metadata/schema_was_inferred  false (scalar Bool, H5T_STD_B8LE; SPEC.md section 1)
//! <name>/metadata/schema/...           the schema tree (see `schema.rs`)
//! <name>/metadata/count                number of elements (scalar Int64), written last
//! ```
//!
//! One file per verb: `save` ([`save_vector`], [`save_vector_with`]),
//! `load` ([`load_vector`], [`load_vector_with`], [`load_range`],
//! [`load_range_with`], [`load_column`]), `append` ([`append_vector`],
//! [`append_vector_with`], [`repair`]), `writer` ([`VectorWriter`]),
//! `reader` ([`VectorReader`]); `open` opens and checks a vector and lists
//! them ([`list_vectors`], [`vector_exists`], [`vector_len`]), `metadata`
//! reads and writes its `metadata` group, and `session` is the write
//! protocol every writer shares (SPEC.md section 8).

mod append;
mod load;
pub(crate) mod metadata;
pub(crate) mod open;
mod reader;
mod save;
pub(crate) mod session;
mod writer;

pub use crate::containers::{FORMAT_NAME, FORMAT_VERSION};
pub use append::{append_vector, append_vector_with, repair};
pub(crate) use load::find_field;
pub(crate) use load::{check_range, prealloc, read_rows, read_rows_into};
pub use load::{load_column, load_range, load_range_with, load_vector, load_vector_with};
pub(crate) use open::open_vector;
pub(crate) use open::Opened;
pub use open::{list_vectors, vector_exists, vector_len};
pub use reader::VectorReader;
#[cfg(feature = "mpi")]
pub(crate) use save::start_new;
pub use save::{save_vector, save_vector_with};
pub use session::COMMIT_BATCHES;
pub use writer::VectorWriter;
