//! [`Dataset`]: one vector name over many files, read as one vector.
//!
//! Loggers roll a file per hour, simulations write a file per job: each
//! holds a vector of the same name and schema, and the dataset reads them
//! as their concatenation, in file order. Opening reads each file's row
//! count and schema tree once, through the checks of every load (the walk
//! over the vector, the metadata; SPEC.md section 7), checks the schema
//! against the first file's (`compare`), and closes the file again: a
//! dataset of 10,000 files holds no file open. The row counts are a
//! snapshot: reads read exactly those rows of each file (rows appended
//! later are not seen; a file that has fewer rows at read time than at
//! open is an error naming it). Reads open one file at a time.
//!
//! Files: `set` the dataset, its open and its whole loads, `files` the glob and
//! one file's open, `compare` the schema check, `reader` the streaming
//! reader [`DatasetReader`], `arrow` the Arrow record batches (feature
//! `arrow`), `query` `select_rows`, `count_where` and `load_where` over the
//! files.

#[cfg(feature = "arrow")]
mod arrow;
mod compare;
mod files;
mod query;
mod reader;
mod set;

#[cfg(feature = "arrow")]
pub use arrow::DatasetBatches;
pub use reader::DatasetReader;
pub use set::{Dataset, FileSpan};
