//! The h5col table group: its attributes, and the order of a commit
//! (SPEC.md section 9, "The table group").
//!
//! Layout on disk:
//! ```text
//! <table>/                 group; attributes (h5col writes them in this order):
//!                            CLASS   = "COLUMN_TABLE"  fixed-length ASCII, null-padded, NUL counted
//!                            VERSION = "1.0"           same type; readers accept major version 1
//!                            column-order              1-D fixed-length UTF-8 strings, the column
//!                                                      names in order (sized longest name + 1)
//!                            NROWS                     scalar uint64, the committed row count,
//!                                                      rewritten last after every append
//!                          (TITLE and other attributes are allowed and ignored)
//! <table>/<col>            one member per column
//! ```

use hdf5::Group;
use hdf5_sys::h5t::H5T_class_t;

use crate::containers::COLUMN_TABLE;
use crate::error::{At, Context, Error, Place, Result};
use crate::guard::{Access, Container, Walked};
use crate::kinds::record::Record;
use crate::options::{SaveOptions, WriteCtx};
use crate::raw;

use super::fields::{Phase, TableFields};

/// `VERSION` h5vec writes.
pub(super) const VERSION: &str = "1.0";
/// Name of the row-count attribute.
pub(super) const NROWS: &str = "NROWS";
/// The table's group of labels datasets, and the attribute of a
/// categorical column that references its labels (`category`).
pub(crate) const CATEGORIES: &str = "CATEGORIES";
/// Name of the column-order attribute.
pub(super) const COLUMN_ORDER: &str = "column-order";

/// Opens table `name` of `parent` for `access`: the walk of SPEC.md
/// section 7 (returned, to be kept while the table is used), then the table
/// attributes. Returns the table, the walk and NROWS.
pub(crate) fn open_checked(
    parent: &Group,
    name: &str,
    access: Access,
) -> Result<(Group, Walked, u64)> {
    let table = open_table(parent, name)?;
    let walked = crate::guard::check(&table, Container::Table, access)?;
    let nrows = check_table(&table)?;
    Ok((table, walked, nrows))
}

/// Opens table group `name` of `parent` (an error names it when it is missing or a dataset).
fn open_table(parent: &Group, name: &str) -> Result<Group> {
    let p = Place::new("$", crate::codec::member_path(parent, name));
    if !parent.link_exists(name) {
        return Err(Error::not_found(
            &p,
            format!("no table `{name}` in `{}`", parent.name()),
        ));
    }
    parent
        .group(name)
        .map_err(|_| Error::mismatch(&p, "an h5col table group", "a dataset"))
}

/// Checks the table attributes and returns NROWS.
fn check_table(table: &Group) -> Result<u64> {
    let path = &table_place(table);
    let class = raw::attr_string(table, "CLASS", path)?;
    if class.as_deref() != Some(COLUMN_TABLE) {
        return Err(Error::mismatch(
            path.attribute("CLASS"),
            format!("\"{COLUMN_TABLE}\""),
            class.map_or("no CLASS attribute".into(), |c| format!("{c:?}")),
        ));
    }
    let vp = path.attribute("VERSION");
    let version = raw::attr_string(table, "VERSION", path)?
        .ok_or_else(|| Error::mismatch(&vp, "a VERSION attribute", "nothing"))?;
    let major = version
        .split('.')
        .next()
        .and_then(|m| m.parse::<u64>().ok());
    if major != Some(1) || !version.contains('.') {
        return Err(Error::mismatch(
            &vp,
            "an h5col version 1.x",
            format!("{version:?}"),
        ));
    }
    let nrows = read_nrows(table, path)?;
    if let Some(order) = read_column_order(table, path)? {
        for c in &order {
            if !table.link_exists(c) {
                return Err(Error::mismatch(
                    column_place(table, c),
                    "the column listed in column-order",
                    "nothing",
                ));
            }
        }
    }
    Ok(nrows)
}

fn read_nrows(table: &Group, path: &Place) -> Result<u64> {
    let p = path.attribute(NROWS);
    if !raw::has_attr(table, NROWS, path)? {
        return Err(Error::mismatch(&p, "a scalar uint64 NROWS", "nothing"));
    }
    let a = table.attr(NROWS).at(&p)?;
    let dt = a.dtype().at(&p)?;
    let ok = raw::unsigned_int_size(&dt).is_some_and(|size| size <= 8);
    if !ok {
        return Err(Error::mismatch(
            &p,
            "an unsigned integer (uint64)",
            format!("{:?}", dt.to_descriptor().map(|d| d.to_string())),
        ));
    }
    if !a.is_scalar() {
        return Err(Error::mismatch(
            &p,
            "a scalar",
            format!("shape {:?}", a.shape()),
        ));
    }
    a.read_scalar::<u64>().at(&p)
}

fn write_nrows(table: &Group, n: u64, path: &Place) -> Result<()> {
    let p = path.attribute(NROWS);
    if raw::has_attr(table, NROWS, &p)? {
        table.attr(NROWS).at(&p)?.write_scalar(&n).at(&p)
    } else {
        table
            .new_attr::<u64>()
            .shape(())
            .create(NROWS)
            .at(&p)?
            .write_scalar(&n)
            .at(&p)
    }
}

/// Reads `column-order` if present: a 1-D array of strings.
pub(crate) fn read_column_order(table: &Group, path: &Place) -> Result<Option<Vec<String>>> {
    if !raw::has_attr(table, COLUMN_ORDER, path)? {
        return Ok(None);
    }
    let p = path.attribute(COLUMN_ORDER);
    crate::raw::gheap::check_attr(table, COLUMN_ORDER, &p)?;
    let a = table.attr(COLUMN_ORDER).at(&p)?;
    let dt = a.dtype().at(&p)?;
    let (class, size, var) = raw::string_facts(&dt);
    if class != H5T_class_t::H5T_STRING || a.ndim() != 1 {
        return Err(Error::mismatch(
            &p,
            "a 1-D array of strings",
            format!("class {class:?}, shape {:?}", a.shape()),
        ));
    }
    if var {
        let v = a
            .read_raw::<hdf5::types::VarLenUnicode>()
            .or_else(|_| {
                a.read_raw::<hdf5::types::VarLenAscii>().map(|v| {
                    v.into_iter()
                        .map(|s| s.as_str().parse().unwrap_or_default())
                        .collect()
                })
            })
            .at(&p)?;
        return Ok(Some(v.into_iter().map(|s| s.as_str().to_owned()).collect()));
    }
    let n = a.size();
    // The attribute's own storage holds every byte of its value.
    let stored = raw::attr_storage_size(&a);
    let total = n
        .checked_mul(size)
        .filter(|&t| t as u64 <= stored)
        .ok_or_else(|| {
            Error::invalid(
                &p,
                format!("{n} names of {size} bytes do not fit the {stored} bytes stored"),
            )
        })?;
    let mut buf = vec![0u8; total];
    // `buf` holds `n * size` bytes: all `n` values of the attribute in its
    // own type `dt` (`size` bytes each).
    raw::read_attr_bytes(&a, &dt, &mut buf, &p)?;
    let mut out = Vec::with_capacity(n);
    for chunk in buf.chunks(size.max(1)) {
        let end = chunk.iter().position(|&b| b == 0).unwrap_or(chunk.len());
        out.push(
            String::from_utf8(chunk[..end].to_vec())
                .map_err(|_| Error::invalid(&p, "column name is not valid UTF-8"))?,
        );
    }
    Ok(Some(out))
}

/// Writes `column-order` as h5col does: 1-D fixed-length UTF-8 strings,
/// null-padded, sized to the longest name plus one byte.
fn write_column_order(table: &Group, names: &[&str], path: &Place) -> Result<()> {
    let size = names.iter().map(|n| n.len()).max().unwrap_or(0) + 1;
    let mut buf = vec![0u8; size * names.len()];
    for (i, n) in names.iter().enumerate() {
        buf[i * size..i * size + n.len()].copy_from_slice(n.as_bytes());
    }
    let p = path.attribute(COLUMN_ORDER);
    let dt = fixed_string_type(size, true, &p)?;
    let a = table
        .new_attr_builder()
        .empty_as(&dt)
        .shape(names.len())
        .create(COLUMN_ORDER)
        .at(&p)?;
    // `buf` holds `names.len()` values of `dt` (`size` bytes each), the
    // attribute's type and shape.
    raw::write_attr_bytes(&a, &dt, &buf, &p)
}

/// Fixed-length, null-padded string type of `size` bytes.
pub(super) fn fixed_string_type(size: usize, utf8: bool, path: impl At) -> Result<hdf5::Datatype> {
    raw::nullpad_string_type(size, utf8, path)
}

/// Writes the attributes and columns of new table `table` holding `rows`.
pub(super) fn write_new_table<T>(table: &Group, rows: &[T], opts: &SaveOptions) -> Result<()>
where
    T: Record,
    T::Fields: TableFields,
{
    let path = table_place(table);
    raw::write_attr_ascii(table, "CLASS", COLUMN_TABLE, &path)?;
    raw::write_attr_ascii(table, "VERSION", VERSION, &path)?;
    write_column_order(table, T::FIELD_NAMES, &path)?;
    write_nrows(table, 0, &path)?;
    let ctx = WriteCtx {
        opts,
        len_hint: rows.len() as u64,
    };
    let mut w = T::Fields::table_create(table, T::FIELD_NAMES, &ctx)?;
    push_and_commit::<T>(table, &mut w, rows, 0, false)
}

/// Pushes `rows` after the `nrows` committed ones and commits them in
/// h5col's order: values, masks, offsets; flush; then, for an `append` of
/// at least one row to a table with `GENERATION` (or search indexes), the
/// next generation and a flush (`generation`: read, and repaired, once
/// every row was accepted); then NROWS.
pub(super) fn push_and_commit<T>(
    table: &Group,
    w: &mut <T::Fields as TableFields>::Writers,
    rows: &[T],
    nrows: u64,
    append: bool,
) -> Result<()>
where
    T: Record,
    T::Fields: TableFields,
{
    let path = table_place(table);
    for r in rows {
        T::Fields::table_push(w, r.parts())?;
    }
    let generation = if append && !rows.is_empty() {
        super::generation::mutation_generation(table, &path)?
    } else {
        None
    };
    // h5col's order: values, then masks, then offsets; flush; then NROWS.
    T::Fields::table_flush(w, Phase::Values)?;
    T::Fields::table_flush(w, Phase::Masks)?;
    T::Fields::table_flush(w, Phase::Offsets)?;
    crate::column::complete_file(table)?;
    table.file().at(&path)?.flush().at(&path)?;
    if let Some(g) = generation {
        super::generation::bump(table, g, &path)?;
    }
    let n = nrows
        .checked_add(rows.len() as u64)
        .ok_or_else(|| Error::encode(&path, "row count overflows"))?;
    write_nrows(table, n, &path)?;
    table.file().at(&path)?.flush().at(&path)
}

/// Whether `name` is one of the groups HEP001 reserves in a table group
/// (`CATEGORIES`, `SEARCH_INDEXES`): not a column.
pub(crate) fn is_reserved_member(name: &str) -> bool {
    name == CATEGORIES || name == super::generation::SEARCH_INDEXES
}

/// The table's members that are columns, sorted.
pub(crate) fn column_members(table: &Group, path: &Place) -> Result<Vec<String>> {
    let mut m = table.member_names().at(path)?;
    m.retain(|n| !is_reserved_member(n));
    m.sort();
    Ok(m)
}

/// Where table `table` is, for errors: `$` at its HDF5 path.
pub(crate) fn table_place(table: &Group) -> Place {
    Place::new("$", table.name())
}

/// The logical path of column `name`: `$.name` (a field of the row).
pub(crate) fn column_path(name: &str) -> String {
    format!("$.{name}")
}

/// Where column `name` of `table` is, for errors: `$.name` at
/// `/table/name`.
pub(super) fn column_place(table: &Group, name: &str) -> Place {
    Place::new(column_path(name), crate::codec::member_path(table, name))
}
