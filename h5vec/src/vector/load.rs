//! Loading: whole vectors, row ranges and single columns, with or without
//! [`LoadOptions`] (SPEC.md section 12).

use std::ops::Range;

use hdf5::Group;

use crate::codec::{open_group, Codec, Decoder, H5Vector};
use crate::error::{Error, Result};
use crate::evolution::LoadOptions;
use crate::guard::Access;
use crate::schema::{Kind, Stored};

use super::open::open_vector;

/// Loads the whole vector `name` from `parent` as `Vec<T>`.
///
/// Everything is checked before values are produced: the metadata, the
/// schema tree against `T`, the members of every data group, the rank,
/// shape, datatype and length of every dataset. Errors name the field path.
///
/// ```
/// use h5vec::{ErrorKind, H5Vector};
///
/// #[derive(H5Vector, Debug, PartialEq)]
/// struct Reading { sensor: u16, value: f32, note: Option<String> }
///
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("r.h5"))?;
/// let rows = vec![
///     Reading { sensor: 1, value: 0.5, note: None },
///     Reading { sensor: 2, value: 1.5, note: Some("recalibrated".into()) },
/// ];
/// h5vec::save_vector(&file, "readings", &rows)?;
/// let back: Vec<Reading> = h5vec::load_vector(&file, "readings")?;
/// assert_eq!(back, rows);
///
/// // Another type is refused, naming the field.
/// let err = h5vec::load_vector::<(u16, f64)>(&file, "readings").unwrap_err();
/// assert!(matches!(err.kind(), ErrorKind::Mismatch { .. }), "{err}");
/// // A missing vector is `NotFound`.
/// let err = h5vec::load_vector::<Reading>(&file, "nope").unwrap_err();
/// assert!(matches!(err.kind(), ErrorKind::NotFound(_)));
/// # Ok(()) }
/// ```
pub fn load_vector<T: H5Vector>(parent: &Group, name: &str) -> Result<Vec<T>> {
    let v = open_vector(parent, name, Access::Read)?;
    let mut dec = T::Codec::open(&v.data, &v.schema, "$", v.count)?;
    read_rows(&mut dec, 0..v.count)
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
    let v = open_vector(parent, name, Access::Read)?;
    let mut dec = T::Codec::open_with(&v.data, &v.schema, "$", v.count, opts.flags())?;
    read_rows(&mut dec, 0..v.count)
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
    let v = open_vector(parent, name, Access::Read)?;
    check_range(&range, v.count)?;
    let mut dec = T::Codec::open_with(&v.data, &v.schema, "$", v.count, opts.flags())?;
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
    let (group, node, path) = find_field(&v.data, &v.schema, field, "")?;
    let mut dec = F::Codec::open(&group, &node, &path, v.count)?;
    read_rows(&mut dec, 0..v.count)
}

/// Walks `field` (dotted) through record schema nodes and data groups;
/// `context` ends what an error says was expected (e.g. which filter
/// column asked).
pub(crate) fn find_field(
    data: &Group,
    schema: &Stored,
    field: &str,
    context: &str,
) -> Result<(Group, Stored, String)> {
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
                    format!("a record with a field `{seg}`{context}"),
                    format!("a `{}` node", node.kind),
                ))
            }
        };
        let i = names.iter().position(|n| n == seg).ok_or_else(|| {
            Error::mismatch(
                &path,
                format!("a field `{seg}`{context}"),
                format!("fields {names:?}"),
            )
        })?;
        path = format!("{path}.{seg}");
        group = open_group(&group, seg, &path)?;
        node = node.child(i, &path)?.clone();
    }
    Ok((group, node, path))
}

/// Most bytes allocated up front for the result before any row is read.
const MAX_PREALLOC_BYTES: u64 = 1 << 30;

pub(crate) fn read_rows<T, D: Decoder<T>>(
    dec: &mut D,
    rows: std::ops::Range<u64>,
) -> Result<Vec<T>> {
    let n = rows.end.saturating_sub(rows.start);
    let mut out = Vec::new();
    prealloc(&mut out, n)?;
    read_rows_into(dec, rows, &mut out, n)?;
    Ok(out)
}

/// Reserves room for `n` more rows in `out` up front (at most
/// [`MAX_PREALLOC_BYTES`]; the rest grows as rows come), after the cap on
/// rows of a type without data.
pub(crate) fn prealloc<T>(out: &mut Vec<T>, n: u64) -> Result<()> {
    // Rows of a type without data cost time and nothing else: capped.
    crate::limits::check_empty_rows::<T>(n, "$")?;
    let size = std::mem::size_of::<T>() as u64;
    let cap = if size == 0 || n.saturating_mul(size) <= MAX_PREALLOC_BYTES {
        n
    } else {
        MAX_PREALLOC_BYTES / size
    };
    crate::limits::reserve(out, (out.len() as u64).saturating_add(cap), "$")
}

/// Appends rows `rows` from `dec` to `out`, which will hold `total` rows
/// in all when the caller is done (how far it may grow at once).
pub(crate) fn read_rows_into<T, D: Decoder<T>>(
    dec: &mut D,
    rows: std::ops::Range<u64>,
    out: &mut Vec<T>,
    total: u64,
) -> Result<()> {
    // Several chunks per batch, so compressed chunks decompress in parallel.
    let batch = crate::options::READ_BATCH_ROWS;
    let mut start = rows.start;
    while start < rows.end {
        let end = rows.end.min(start + batch);
        // Grown batch by batch without aborting when memory runs out.
        crate::limits::grow(out, end - start, total, "$")?;
        dec.load(start..end)?;
        for _ in start..end {
            out.push(dec.next()?);
        }
        start = end;
    }
    Ok(())
}
