//! # h5vec
//!
//! Store vectors of Rust values in HDF5 in the documented, field-oriented
//! HDF5Vectors layout, readable from Python (h5py), Julia and C without Rust.
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
//! let file = h5vec::hdf5::File::create(dir.path().join("m.h5")).unwrap();
//! let ms = vec![Measurement {
//!     timestamp: GpsTimeStamp { weeks: 2300, microseconds: 5 },
//!     temperature: 21.5,
//!     position: [1.0, 2.0, 3.0],
//! }];
//! h5vec::save_vector(&file, "measurements", &ms)?;
//! // h5py: f["measurements/data/position/values"].shape == (1, 3)
//! let back: Vec<Measurement> = h5vec::load_vector(&file, "measurements")?;
//! assert_eq!(back, ms);
//! # Ok(()) }
//! ```
//!
//! See `SPEC.md` in the repository for the on-disk format.

#![warn(missing_docs)]

mod bincode_codec;
pub mod codec;
pub mod column;
mod deferred;
mod error;
mod file;
mod gheap;
mod guard;
pub mod h5col;
pub mod kinds;
mod limits;
#[cfg(all(feature = "lock-audit", target_os = "linux"))]
#[doc(hidden)]
pub mod lock_audit;
mod options;
pub mod parallel;
pub mod raw;
pub mod schema;
mod stream;
mod vector;
pub mod vls;

pub use codec::{Codec, Decoder, Encoder, H5Vector};
pub use error::{Error, ErrorKind, Result};
pub use file::{create_file, create_group, COMPACT_LINKS, PREALLOCATED_LINKS};
pub use options::{
    BloscCompressor, BloscShuffle, Compression, DatasetRole, FieldStorage, SaveOptions, WriteCtx,
};
pub use schema::Schema;
pub use stream::{
    append_vector, append_vector_with, load_column, load_range, repair, vector_len, VectorReader,
    VectorWriter, COMMIT_BATCHES,
};
pub use vector::{load_vector, save_vector, save_vector_with, FORMAT_NAME, FORMAT_VERSION};

/// The derive macro: `#[derive(H5Vector)]` on structs and fieldless enums.
pub use h5vec_derive::H5Vector;

/// The HDF5 crate h5vec is built on (hdf5-metno), for opening files and groups.
pub use hdf5;

/// Support for the derive macro; not a public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::__dense_leaf as dense_leaf;
    pub use crate::kinds::blob::BlobCodec;
    pub use crate::kinds::constant::{Constant, ConstantCodec};
    pub use crate::kinds::dense::DenseElem;
    pub use crate::kinds::json::JsonCodec;
    pub use crate::kinds::list::{LeafItem, ListItem, RecordItem};
    pub use crate::kinds::record::{FieldList, Record, RecordCodec};
    pub use crate::kinds::scalar::{Scalar, ScalarCodec};
    pub use crate::kinds::vls::{VlsField, VlsStringCodec};
    pub use crate::schema::ids;
    pub use serde;
    pub use std;
}
