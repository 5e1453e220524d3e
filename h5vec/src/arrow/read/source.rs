//! An opened container (vector, h5col table or VLS string array): its
//! batch schema, the reader of its rows, and what keeps the walked objects
//! open; reading a range of its rows into one record batch.

use std::ops::Range;
use std::sync::Arc;

use arrow_array::{Array, RecordBatch, RecordBatchOptions, StructArray};
use arrow_schema::{DataType, Field, Schema as ArrowSchema};
use hdf5::Group;

use crate::arrow::mapping::{self, VALUE_COLUMN};
use crate::containers::{check_name, classify, container_place, ContainerKind};
use crate::error::{Error, Place, Result};
use crate::guard::{self, Access};
use crate::schema::{Kind, Schema};
use crate::vector::open_vector;

use super::container::{Keep, Source};
use crate::kinds::vls::arrow::read::Vls;

use super::nodes::check_len;
use super::open::open_node;
use super::select::{check_value_pick, has_data, select_node, Pick};
use super::table::open_table;

/// What `read_vector` and the others read, for errors.
const EXPECTED: &str = "an h5vec vector, h5col table or VLS string array";

impl Source {
    /// Opens container `name` of `parent`; `select`: only these columns.
    pub(super) fn open(parent: &Group, name: &str, select: Option<&[Pick]>) -> Result<Source> {
        check_name(parent, name, "vector")?;
        let at = container_place(parent, name);
        if !parent.link_exists(name) {
            return Err(Error::not_found(
                &at,
                format!(
                    "no vector, h5col table or VLS array `{name}` in `{}`",
                    parent.name()
                ),
            ));
        }
        let Ok(group) = parent.group(name) else {
            return Err(Error::mismatch(
                &at,
                EXPECTED,
                guard::describe_member(parent, name),
            ));
        };
        let kind = classify(parent, name);
        if kind == Some(ContainerKind::Table) {
            return open_table(parent, name, select);
        }
        if kind == Some(ContainerKind::VlsArray) {
            if let Some(picks) = select {
                check_value_pick(picks)?;
            }
            let (walked, dec) = crate::vls::open_strings(&group)?;
            let field = Arc::new(Field::new(VALUE_COLUMN, DataType::LargeUtf8, true));
            return Ok(Source {
                schema: Arc::new(ArrowSchema::new(vec![field])),
                record_root: false,
                rows: dec.len(),
                root: Box::new(Vls {
                    dec,
                    nullable: true,
                    ptrs: Vec::new(),
                    json: false,
                }),
                no_data: false,
                _keep: Keep::Walk(walked),
            });
        }
        // A group with `metadata` but no `data` is a damaged vector: the
        // vector's checks name what is missing.
        if kind.is_none() && !group.link_exists("metadata") {
            let mut members = group.member_names().unwrap_or_default();
            members.truncate(8);
            return Err(Error::mismatch(
                &at,
                EXPECTED,
                format!("a group that is none of them (members {members:?})"),
            ));
        }
        drop(group);
        let v = open_vector(parent, name, Access::Read)?;
        let selected = match select {
            Some(picks) => Some(select_node(&v.schema, picks)?),
            None => None,
        };
        let stored = selected.as_ref().unwrap_or(&v.schema);
        let root = Schema::from(stored);
        let schema = mapping::schema_for(&root)?;
        let record_root = root.kind == Kind::Record;
        let field = if record_root {
            Field::new("", DataType::Struct(schema.fields().clone()), false)
        } else {
            schema.field(0).clone()
        };
        let node = open_node(&v.data, stored, "$", v.count, &field)?;
        Ok(Source {
            schema,
            record_root,
            root: node,
            rows: v.count,
            no_data: !has_data(stored),
            _keep: Keep::Vector(Box::new(v)),
        })
    }

    pub(super) fn read(&mut self, rows: Range<u64>) -> Result<RecordBatch> {
        let n = crate::codec::range_len(&rows, "$")?;
        if self.no_data {
            crate::limits::check_rows_without_data(n, "a vector without data", "$")?;
        }
        let len = usize::try_from(n).map_err(|_| Error::invalid("$", "too many rows"))?;
        let arr = self.root.read(rows, None)?;
        check_len(&arr, len, &Place::from("$"))?;
        let columns = if self.record_root {
            let s = arr
                .as_any()
                .downcast_ref::<StructArray>()
                .ok_or_else(|| Error::invalid("$", "the root record did not read as a struct"))?;
            s.columns().to_vec()
        } else {
            vec![arr]
        };
        let opts = RecordBatchOptions::new().with_row_count(Some(len));
        RecordBatch::try_new_with_options(self.schema.clone(), columns, &opts)
            .map_err(|e| Error::invalid("$", format!("cannot build the record batch: {e}")))
    }
}
