//! Appends, partial reads, column reads and streaming.
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
//!
//! This file holds the appends and the partial and column reads;
//! `writer` holds [`VectorWriter`] and [`repair`], `reader`
//! [`VectorReader`].

mod reader;
mod writer;

use std::ops::Range;

use hdf5::Group;

use crate::codec::{open_group, Codec, H5Vector};
use crate::error::{Error, Result};
use crate::evolution::LoadOptions;
use crate::guard::Access;
use crate::options::SaveOptions;
use crate::schema::{Kind, Stored};
use crate::vector::{open_vector, read_rows};

pub use reader::VectorReader;
pub use writer::{repair, VectorWriter, COMMIT_BATCHES};

/// The number of elements of vector `name`: its `metadata/count`, after the
/// checks every read makes of the metadata (the schema tree, a checksummed
/// schema, and the count against the root's stored rows: a count larger
/// than the rows stored is an error, SPEC.md 6.4). No value is read.
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("f.h5"))?;
/// h5vec::save_vector(&file, "xs", &[1u16, 2, 3])?;
/// assert_eq!(h5vec::vector_len(&file, "xs")?, 3);
/// # Ok(()) }
/// ```
pub fn vector_len(parent: &Group, name: &str) -> Result<u64> {
    // The whole metadata check (schema tree, a checksummed schema, the
    // count against the stored rows): a length the loads would refuse is
    // an error here too.
    Ok(open_vector(parent, name, Access::Read)?.count)
}

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
    w.extend(values)?;
    w.finish().map(drop)
}

/// Loads rows `range` of vector `name`, reading only what those rows need.
/// A range past `count` is an error.
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("f.h5"))?;
/// h5vec::save_vector(&file, "xs", &(0..10u32).collect::<Vec<_>>())?;
/// let some: Vec<u32> = h5vec::load_range(&file, "xs", 2..5)?;
/// assert_eq!(some, [2, 3, 4]);
/// assert!(h5vec::load_range::<u32>(&file, "xs", 8..12).is_err());
/// # Ok(()) }
/// ```
pub fn load_range<T: H5Vector>(parent: &Group, name: &str, range: Range<u64>) -> Result<Vec<T>> {
    load_range_with(parent, name, range, &LoadOptions::default())
}

/// Loads the whole vector `name` as `Vec<T>` where `T` may differ from the
/// type that wrote it as `opts` allows (SPEC.md section 12): extra stored
/// fields skipped, numbers widened. Fields are always matched by name, then
/// by `#[h5vec(alias = "...")]`, and take their `#[h5vec(default)]` when the
/// file lacks them; with `LoadOptions::default()` this is [`load_vector`](crate::load_vector).
///
/// ```
/// use h5vec::{H5Vector, LoadOptions};
///
/// #[derive(H5Vector)]
/// struct V1 { id: u32, cost: f32 }
///
/// fn no_coupon() -> String { "none".into() }
///
/// #[derive(H5Vector, Debug, PartialEq)]
/// struct V2 {
///     #[h5vec(alias = "cost")]
///     price: f64,
///     id: u32,
///     #[h5vec(default = "no_coupon")]
///     coupon: String,
/// }
///
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("o.h5"))?;
/// h5vec::save_vector(&file, "orders", &[V1 { id: 1, cost: 0.5 }])?;
/// let opts = LoadOptions::default().widen_numbers(true);
/// let back: Vec<V2> = h5vec::load_vector_with(&file, "orders", &opts)?;
/// assert_eq!(back, [V2 { price: 0.5, id: 1, coupon: "none".into() }]);
/// # Ok(()) }
/// ```
pub fn load_vector_with<T: H5Vector>(
    parent: &Group,
    name: &str,
    opts: &LoadOptions,
) -> Result<Vec<T>> {
    let mut v = open_vector(parent, name, Access::Read)?;
    v.schema.set_load(opts.flags());
    let mut dec = T::Codec::open(&v.data, &v.schema, "$", v.count)?;
    read_rows(&mut dec, 0..v.count)
}

/// [`load_range`] with [`LoadOptions`], as [`load_vector_with`] reads:
/// only the rows `range` of the columns `T` takes are read.
///
/// ```
/// # use h5vec::{H5Vector, LoadOptions};
/// #[derive(H5Vector)]
/// struct Wide { a: u16, b: String }
/// #[derive(H5Vector, Debug, PartialEq)]
/// struct Narrow { a: u32 }
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// # let file = h5vec::create_file(dir.path().join("o.h5"))?;
/// let rows: Vec<Wide> = (0..5).map(|a| Wide { a, b: a.to_string() }).collect();
/// h5vec::save_vector(&file, "v", &rows)?;
/// let opts = LoadOptions::default().ignore_extra_fields(true).widen_numbers(true);
/// let back: Vec<Narrow> = h5vec::load_range_with(&file, "v", 1..3, &opts)?;
/// assert_eq!(back, [Narrow { a: 1 }, Narrow { a: 2 }]);
/// # Ok(()) }
/// ```
pub fn load_range_with<T: H5Vector>(
    parent: &Group,
    name: &str,
    range: Range<u64>,
    opts: &LoadOptions,
) -> Result<Vec<T>> {
    let mut v = open_vector(parent, name, Access::Read)?;
    check_range(&range, v.count)?;
    v.schema.set_load(opts.flags());
    let mut dec = T::Codec::open(&v.data, &v.schema, "$", v.count)?;
    read_rows(&mut dec, range)
}

/// Refuses a row range that is not within `count` rows.
pub(crate) fn check_range(range: &Range<u64>, count: u64) -> Result<()> {
    if range.start > range.end || range.end > count {
        return Err(Error::invalid(
            "$",
            format!(
                "row range {}..{} is outside the vector's {count} rows",
                range.start, range.end
            ),
        ));
    }
    Ok(())
}

/// Loads one field of a record vector, by dotted path (`"timestamp.weeks"`),
/// as its own `Vec<F>`, without reading the other fields.
///
/// `F` is the field's own type; a field stored with `#[h5vec(json)]` or
/// `#[h5vec(blob)]` loads as [`Json<F>`](crate::Json) or
/// [`Blob<F>`](crate::Blob).
///
/// ```
/// use h5vec::H5Vector;
///
/// #[derive(H5Vector)]
/// struct Point { x: f64, y: f64 }
///
/// #[derive(H5Vector)]
/// struct Sample { at: Point, label: String }
///
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("s.h5"))?;
/// let rows = vec![
///     Sample { at: Point { x: 1.0, y: 2.0 }, label: "a".into() },
///     Sample { at: Point { x: 3.0, y: 4.0 }, label: "b".into() },
/// ];
/// h5vec::save_vector(&file, "samples", &rows)?;
/// let xs: Vec<f64> = h5vec::load_column(&file, "samples", "at.x")?;
/// assert_eq!(xs, [1.0, 3.0]);
/// let labels: Vec<String> = h5vec::load_column(&file, "samples", "label")?;
/// assert_eq!(labels, ["a", "b"]);
/// let err = h5vec::load_column::<f64>(&file, "samples", "at.z").unwrap_err();
/// assert_eq!(err.path(), "$.at");
/// # Ok(()) }
/// ```
pub fn load_column<F: H5Vector>(parent: &Group, name: &str, field: &str) -> Result<Vec<F>> {
    let v = open_vector(parent, name, Access::Read)?;
    let (group, node, path) = find_field(&v.data, &v.schema, field)?;
    let mut dec = F::Codec::open(&group, &node, &path, v.count)?;
    read_rows(&mut dec, 0..v.count)
}

/// Walks `field` (dotted) through record schema nodes and data groups.
fn find_field(data: &Group, schema: &Stored, field: &str) -> Result<(Group, Stored, String)> {
    let mut group = data.clone();
    let mut node = schema.clone();
    let mut path = String::from("$");
    if field.is_empty() {
        return Ok((group, node, path));
    }
    for seg in field.split('.') {
        let names = match (&node.kind, &node.field_names) {
            (Kind::Record, Some(n)) => n.clone(),
            _ => {
                return Err(Error::mismatch(
                    &path,
                    format!("a record with a field `{seg}`"),
                    format!("a `{}` node", node.kind),
                ))
            }
        };
        let i = names.iter().position(|n| n == seg).ok_or_else(|| {
            Error::mismatch(
                &path,
                format!("a field `{seg}`"),
                format!("fields {names:?}"),
            )
        })?;
        path = format!("{path}.{seg}");
        group = open_group(&group, seg, &path)?;
        node = node.child(i, &path)?.clone();
    }
    Ok((group, node, path))
}
