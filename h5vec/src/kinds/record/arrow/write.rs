//! The `record` kind's Arrow writer: `RecordCol`, a struct's fields each
//! into its field group, written by child writers (generic over
//! `ChildCol`, so that this file names no other kind's writer); created
//! and opened with the checks the typed record makes (SPEC.md sections
//! 3.3 and 11).

use arrow_array::cast::AsArray;
use arrow_array::Array;
use arrow_buffer::NullBuffer;
use hdf5::Group;

use crate::arrow::write::col::{check_nulls, wrong_array, At, ChildCol};
use crate::codec::{child_path, expect_members, open_group};
use crate::error::{Context, Error, ErrorKind, Place, Result};
use crate::kinds::list::{create_record_values, open_record_values};
use crate::options::WriteCtx;
use crate::schema::{ids, Schema, Stored};

/// A record's field names and their writers, in order.
pub(crate) struct RecordCol<C> {
    names: Vec<String>,
    cols: Vec<C>,
}

/// The field names of record node `node`, one per child.
fn record_names<'a>(node: &'a Schema, path: &str) -> Result<&'a [String]> {
    let names = node.field_names.as_deref().unwrap_or(&[]);
    if names.len() != node.children.len() {
        return Err(Error::mismatch(
            path,
            format!("{} field names (one per child schema)", node.children.len()),
            names.len(),
        ));
    }
    Ok(names)
}

/// Checks a record field name as a vector name is checked (SPEC.md
/// section 1, "Names"), with the field's path in the error.
fn check_field_name(group: &Group, name: &str, path: &str) -> Result<()> {
    crate::containers::check_name(group, name, "record field").map_err(|e| match e.kind() {
        ErrorKind::BadName(m) => Error::bad_name(
            Place::new(
                path,
                crate::codec::member_path(group, &name.escape_debug().to_string()),
            ),
            m,
        ),
        _ => e,
    })
}

impl<C: ChildCol> RecordCol<C> {
    /// Creates record field `node` in its data group `group`: a group per field.
    pub(crate) fn create(
        node: &Schema,
        group: &Group,
        path: &str,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self> {
        let names = record_names(node, path)?;
        let mut cols = Vec::with_capacity(names.len());
        for (i, (name, child)) in names.iter().zip(&node.children).enumerate() {
            let p = child_path(path, name);
            check_field_name(group, name, &p)?;
            if names[..i].contains(name) {
                return Err(Error::bad_name(p, format!("two fields named {name:?}")));
            }
            let g = group.create_group(name).at(&p)?;
            cols.push(C::create(child, &g, &p, ctx)?);
        }
        Ok(RecordCol {
            names: names.to_vec(),
            cols,
        })
    }

    /// Creates a record list element: a `RECORD_VALUES` group `name` of `parent`.
    pub(crate) fn create_item(
        node: &Schema,
        parent: &Group,
        name: &str,
        path: &str,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self> {
        let g = create_record_values(parent, name, path)?;
        RecordCol::create(node, &g, path, ctx)
    }

    /// Opens record field `node` (as schema: `schema`) of `count` rows in
    /// `group` for appending, after the typed append's checks.
    pub(crate) fn append(
        node: &Stored,
        schema: &Schema,
        group: &Group,
        path: &str,
        count: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self> {
        let names = record_names(schema, path)?;
        if node.codec != ids::STRUCT
            && node.codec != ids::TUPLE
            && node.codec != ids::OFFSET_DATE_TIME_CODEC
        {
            return Err(Error::mismatch(
                path,
                format!("codec `{}` or `{}`", ids::STRUCT, ids::TUPLE),
                format!("`{}`", node.codec),
            ));
        }
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        expect_members(group, &refs, node, path)?;
        let mut cols = Vec::with_capacity(names.len());
        for (name, child) in names.iter().zip(&node.children) {
            let p = child_path(path, name);
            let g = open_group(group, name, &p)?;
            cols.push(C::append(child, &g, &p, count, ctx)?);
        }
        Ok(RecordCol {
            names: names.to_vec(),
            cols,
        })
    }

    /// Opens record list element group `name` of `parent` (`rows` elements)
    /// for appending.
    pub(crate) fn append_item(
        node: &Stored,
        schema: &Schema,
        parent: &Group,
        name: &str,
        path: &str,
        rows: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self> {
        let g = open_record_values(parent, name, path)?;
        RecordCol::append(node, schema, &g, path, rows, ctx)
    }

    /// Buffers a struct array: each column by its field's writer.
    pub(crate) fn write(
        &mut self,
        arr: &dyn Array,
        holes: Option<&NullBuffer>,
        at: &At<'_>,
    ) -> Result<()> {
        let s = arr
            .as_struct_opt()
            .ok_or_else(|| wrong_array(at, "a record", arr))?;
        check_nulls(arr.logical_nulls().as_ref(), holes, at)?;
        if s.num_columns() != self.cols.len() {
            return Err(Error::mismatch(
                at.path,
                format!("a struct of {} fields", self.cols.len()),
                s.num_columns(),
            ));
        }
        for ((c, name), a) in self.cols.iter_mut().zip(self.names.iter()).zip(s.columns()) {
            let p = child_path(at.path, name);
            c.write(
                a.as_ref(),
                holes,
                &At {
                    path: &p,
                    base: at.base,
                },
            )?;
        }
        Ok(())
    }

    /// The fields in order (SPEC.md section 8).
    pub(crate) fn flush(&mut self) -> Result<()> {
        self.cols.iter_mut().try_for_each(C::flush)
    }
}
