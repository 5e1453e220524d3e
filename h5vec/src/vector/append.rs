//! Appends: rows added to an existing vector by a write session
//! (`session`), and [`repair`].
//!
//! The append protocol (also what a reader must trust):
//! 1. every data dataset is grown and written, values before offsets/stops,
//!    children in field order, masks after the values they cover;
//! 2. the file is flushed;
//! 3. `metadata/count` is rewritten, and the file flushed again.
//!
//! Readers read `count` rows and never trust dataset extents, so a crash
//! before step 3 leaves the old vector intact; the next append (or
//! [`repair`]) trims the unused tails.

use hdf5::Group;

use crate::codec::H5Vector;
use crate::error::Result;
use crate::options::SaveOptions;

use super::writer::VectorWriter;

/// Appends `values` to the existing vector `name`, whose element type must
/// be `T` (checked against the stored schema first; a mismatch writes nothing).
///
/// ```
/// use h5vec::H5Vector;
///
/// #[derive(H5Vector, Clone, Debug, PartialEq)]
/// struct Order { id: u64, symbol: String, qty: i32 }
///
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("orders.h5"))?;
/// let first = vec![Order { id: 1, symbol: "ABC".into(), qty: 10 }];
/// let more = vec![Order { id: 2, symbol: "XYZ".into(), qty: -5 }];
/// h5vec::save_vector(&file, "orders", &first)?;
/// h5vec::append_vector(&file, "orders", &more)?;
/// let all: Vec<Order> = h5vec::load_vector(&file, "orders")?;
/// assert_eq!(all, [first, more].concat());
/// // Another element type is refused before anything is written.
/// assert!(h5vec::append_vector(&file, "orders", &[1u8]).is_err());
/// assert_eq!(h5vec::vector_len(&file, "orders")?, 2);
/// # Ok(()) }
/// ```
pub fn append_vector<T: H5Vector>(parent: &Group, name: &str, values: &[T]) -> Result<()> {
    append_vector_with(parent, name, values, &SaveOptions::default())
}

/// [`append_vector`] with options (dedup of VLS strings; chunking and
/// compression stay as the datasets were created).
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("tags.h5"))?;
/// let opts = h5vec::SaveOptions::default().vls_strings(true).dedup_strings(true);
/// h5vec::save_vector_with(&file, "tags", &["red".to_string()], &opts)?;
/// let more = vec!["red".to_string(); 1000];
/// h5vec::append_vector_with(&file, "tags", &more, &opts)?;
/// assert_eq!(h5vec::vector_len(&file, "tags")?, 1001);
/// # Ok(()) }
/// ```
pub fn append_vector_with<T: H5Vector>(
    parent: &Group,
    name: &str,
    values: &[T],
    opts: &SaveOptions,
) -> Result<()> {
    let mut w = VectorWriter::<T>::open_append(parent, name, opts)?;
    super::save::push_rows(&mut w.s, values)?;
    w.finish().map(drop)
}

/// Trims what an interrupted append left behind: every dataset is cut back
/// to what `count` covers (SPEC.md section 8, "Repair"). Loading never
/// needs this; it reclaims space. The schema is checked against `T` first.
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("f.h5"))?;
/// h5vec::save_vector(&file, "xs", &[1.5f32, 2.5])?;
/// // After a crash during an append (here: nothing to trim), the vector
/// // holds what its last commit covers.
/// h5vec::repair::<f32>(&file, "xs")?;
/// assert_eq!(h5vec::load_vector::<f32>(&file, "xs")?, [1.5, 2.5]);
/// # Ok(()) }
/// ```
pub fn repair<T: H5Vector>(parent: &Group, name: &str) -> Result<()> {
    VectorWriter::<T>::open_append(parent, name, &SaveOptions::default())?
        .s
        .trim()
}
