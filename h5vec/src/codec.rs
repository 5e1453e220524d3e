//! The traits every storage kind implements, and the checks they share.
//!
//! A Rust type picks how it is stored through [`H5Vector::Codec`]. A codec
//! is a zero-sized type that describes one layout (one schema kind): it
//! creates the datasets under a field's data group and hands out an
//! [`Encoder`] that buffers values and writes them in bulk, or validates an
//! existing data group against the stored schema and hands out a
//! [`Decoder`] that reads rows in bulk and yields values one by one.
//!
//! Encoders and decoders work in batches: `push` values, then `flush` them
//! with one HDF5 write per dataset; `load` a row range with one HDF5 read per
//! dataset, then take values with `next`. Saving, appending and streaming
//! are all the same loop over batches.

use std::ops::Range;

use hdf5::{Dataset, Group};

use crate::error::{Context, Error, Place, Result};
use crate::evolution::LoadFlags;
use crate::options::WriteCtx;
use crate::raw::{self, TypeInfo};
use crate::schema::{Schema, Stored};

/// A type that h5vec can store as a vector, or as a field of a derived record.
///
/// Implemented for numbers, `bool`, `char`, `String`, fixed-size arrays,
/// tuples, `()`, `PhantomData`, `Vec<T>`, `Option<T>`, and every type with
/// `#[derive(H5Vector)]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no h5vec storage kind",
    label = "`{Self}` does not implement `H5Vector`",
    note = "derive `H5Vector` for `{Self}` if it is your type; as a field of a derived struct it can be stored through serde with `#[h5vec(blob)]` or `#[h5vec(json)]`"
)]
pub trait H5Vector: Sized {
    /// The layout values of this type use by default.
    type Codec: Codec<Value = Self>;
}

/// One storage layout for values of type [`Codec::Value`].
pub trait Codec {
    /// The Rust type stored.
    type Value;
    /// Buffers values and writes them.
    type Encoder: Encoder<Self::Value>;
    /// Reads rows and yields values.
    type Decoder: Decoder<Self::Value>;

    /// The schema node this codec writes, with its children.
    fn schema(ctx: &WriteCtx<'_>) -> Schema;

    /// Creates the (empty) datasets of this layout inside `group`, the
    /// field's data group, and returns an encoder that appends to them.
    fn create(group: &Group, path: &str, ctx: &WriteCtx<'_>) -> Result<Self::Encoder>;

    /// Opens the datasets of an existing vector of `count` rows for
    /// appending, after checking them as [`open`](Self::open) does.
    fn append(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self::Encoder>;

    /// Validates `group` (the field's data group) against the stored schema
    /// `node` and the vector length `count`, and returns a decoder; `load`
    /// says what the load allows beyond an exact match (SPEC.md section
    /// 12), and goes to the children's `open_with`.
    fn open_with(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        load: LoadFlags,
    ) -> Result<Self::Decoder>;

    /// [`open_with`](Self::open_with) allowing nothing beyond an exact
    /// match (appends, and loads without [`LoadOptions`](crate::LoadOptions)).
    fn open(group: &Group, node: &Stored, path: &str, count: u64) -> Result<Self::Decoder> {
        Self::open_with(group, node, path, count, LoadFlags::default())
    }
}

/// Buffers values of one column and writes them in bulk.
pub trait Encoder<T> {
    /// Whether [`push_all`](Self::push_all) appends a batch column by
    /// column: a record whose every field does is pushed field by field
    /// (one pass over the batch per field); a record with any other field
    /// (strings, lists, ...) row by row, which measured faster for them.
    const BY_COLUMN: bool = false;
    /// Adds one value to the buffer.
    fn push(&mut self, value: &T) -> Result<()>;
    /// Adds every value of `values`, in order: the same as [`push`](Self::push)
    /// on each (what the provided method does). Column encoders override it
    /// to append a whole batch per column, not row by row. After an error
    /// the buffered rows are unspecified: the caller abandons the write.
    fn push_all<'a, I>(&mut self, values: I) -> Result<()>
    where
        I: Iterator<Item = &'a T> + Clone,
        T: 'a,
        Self: Sized,
    {
        for v in values {
            self.push(v)?;
        }
        Ok(())
    }
    /// Adds a placeholder row (under a null in an enclosing mask).
    fn push_null(&mut self) -> Result<()>;
    /// Writes everything buffered (one HDF5 call per dataset) and empties the buffer.
    fn flush(&mut self) -> Result<()>;
}

/// Reads rows of one column in bulk and yields them one by one.
pub trait Decoder<T> {
    /// Reads rows `rows` (one HDF5 call per dataset). Values are then taken
    /// in order with [`next`](Self::next) / [`skip`](Self::skip).
    fn load(&mut self, rows: Range<u64>) -> Result<()>;
    /// The next loaded value.
    fn next(&mut self) -> Result<T>;
    /// Skips the next loaded value (a row under a null in an enclosing mask).
    fn skip(&mut self) -> Result<()>;
    /// Skips a value that an enclosing mask marks null; layouts with rules
    /// for null rows (a list's null row has an empty span) check them here.
    fn skip_null(&mut self) -> Result<()> {
        self.skip()
    }
}

/// The logical path of a field: `$.a` below `$`.
pub(crate) fn child_path(path: &str, field: &str) -> String {
    format!("{path}.{field}")
}

/// Checks that `group` has exactly the members `expected` plus the stored
/// node's `extra_members` (set by an enclosing layout, e.g. a null mask
/// beside the values), in any order.
pub(crate) fn expect_members(
    group: &Group,
    expected: &[&str],
    node: &Stored,
    path: &str,
) -> Result<()> {
    let mut names = group.member_names().at(path)?;
    names.sort();
    let mut want: Vec<&str> = expected.to_vec();
    want.extend(node.extra_members.iter().map(String::as_str));
    want.sort();
    if names != want {
        return Err(Error::mismatch(
            Place::new(path, group.name()),
            format!("members {want:?}"),
            format!("{names:?}"),
        ));
    }
    Ok(())
}

/// The HDF5 path of a group's member (defined beside [`Place`], which
/// carries it into errors).
pub(crate) use crate::error::member_path;

/// Opens the child group `name` of `group`, or says what is there instead.
pub(crate) fn open_group(group: &Group, name: &str, path: &str) -> Result<Group> {
    let full = member_path(group, name);
    if !group.link_exists(name) {
        return Err(Error::mismatch(
            Place::new(path, &full),
            format!("group `{full}`"),
            "nothing",
        ));
    }
    group.group(name).map_err(|_| {
        Error::mismatch(
            Place::new(path, &full),
            format!("`{full}` to be a group"),
            crate::guard::describe_member(group, name),
        )
    })
}

/// Opens dataset `name` and checks its rank, trailing shape, datatype and
/// that it holds at least `min_rows` rows. Returns the dataset and its rows.
pub(crate) fn open_column(
    group: &Group,
    name: &str,
    path: &str,
    inner: &[u64],
    min_rows: u64,
    type_ok: impl Fn(&TypeInfo) -> bool,
    type_desc: &str,
) -> Result<(Dataset, u64)> {
    let full = member_path(group, name);
    if !group.link_exists(name) {
        return Err(Error::mismatch(
            path,
            format!("dataset `{full}`"),
            "nothing",
        ));
    }
    let ds = group.dataset(name).map_err(|_| {
        Error::mismatch(
            path,
            format!("`{full}` to be a dataset"),
            crate::guard::describe_member(group, name),
        )
    })?;
    let p = Place::new(path, full);
    let shape = raw::shape(&ds, &p)?;
    if shape.len() != 1 + inner.len() || shape[1..] != *inner {
        let mut want = vec!["N".to_string()];
        want.extend(inner.iter().map(|d| d.to_string()));
        return Err(Error::mismatch(
            &p,
            format!("shape ({})", want.join(", ")),
            format!("{shape:?}"),
        ));
    }
    if let Some(found) = raw::unavailable_filter(&ds) {
        return Err(Error::mismatch(
            &p,
            raw::FILTERS_EXPECTED,
            format!("{found}, which is not available"),
        ));
    }
    let info = raw::type_info(&ds, &p)?;
    if !type_ok(&info) {
        return Err(Error::mismatch(&p, type_desc, info.describe()));
    }
    if shape[0] < min_rows {
        return Err(Error::mismatch(
            &p,
            format!("at least {min_rows} rows"),
            shape[0],
        ));
    }
    if !raw::is_standard_number(&ds, &info, &p)? {
        return Err(crate::limits::inexact_number(&p, &info.describe()));
    }
    crate::limits::check_stored(min_rows, &shape, info.size, &p, || {
        raw::stored_rows(&ds, &shape, &p)
    })?;
    Ok((ds, shape[0]))
}

/// Rows `range` as a length, checked.
pub(crate) fn range_len(range: &Range<u64>, path: impl Into<Place>) -> Result<u64> {
    range
        .end
        .checked_sub(range.start)
        .ok_or_else(|| Error::invalid(path, format!("bad row range {range:?}")))
}

/// Error for a decoder asked for more values than it loaded.
pub(crate) fn exhausted(path: impl Into<Place>) -> Error {
    Error::invalid(
        path,
        "fewer values loaded than requested (internal bookkeeping error)",
    )
}
