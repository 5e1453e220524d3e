//! `--columns a,b.c`: a selection of (nested) columns, checked against the
//! schema before anything is read, then applied to every batch.

use std::sync::Arc;

use anyhow::{bail, Result};
use arrow::array::{Array, ArrayRef, AsArray, RecordBatch, RecordBatchOptions, StructArray};
use arrow::datatypes::{DataType, Field, FieldRef, Fields, Schema, SchemaRef};

/// One selected field: its index among its siblings, and either the whole
/// field (`None`) or some of its record fields.
#[derive(Debug)]
struct Pick {
    index: usize,
    children: Option<Vec<Pick>>,
}

/// The selected columns and the schema of what is left.
#[derive(Debug)]
pub(crate) struct Selection {
    picks: Vec<Pick>,
    schema: SchemaRef,
}

impl Selection {
    /// The selection of `names` (dotted paths, in the order given; a record
    /// named after some of its fields takes them all) from `schema`. A name
    /// that is not a column, or that goes inside something other than a
    /// record, is an error naming it and the columns there are.
    ///
    /// The schema of the result keeps every whole field as it is (with its
    /// metadata). A record cut down to some of its fields loses the
    /// `h5vec.*` metadata that described all of them, and so does the
    /// batch's schema unless every column is selected in order (its
    /// metadata describe the root node, SPEC.md section 11).
    pub(crate) fn new(schema: &SchemaRef, names: &[String]) -> Result<Selection> {
        let mut picks: Vec<Pick> = Vec::new();
        for name in names {
            let name = name.trim();
            if name.is_empty() {
                bail!("--columns: an empty column name");
            }
            add(
                &mut picks,
                schema.fields(),
                name,
                &name.split('.').collect::<Vec<_>>(),
                "",
            )?;
        }
        let fields: Vec<FieldRef> = picks
            .iter()
            .map(|p| select_field(&schema.fields()[p.index], p))
            .collect();
        // The batch's `h5vec.*` metadata describe the root node, with all
        // its columns: kept only when every column is selected, in order.
        let everything = picks.len() == schema.fields().len()
            && picks
                .iter()
                .enumerate()
                .all(|(i, p)| p.index == i && p.children.is_none());
        let mut metadata = schema.metadata().clone();
        if !everything {
            metadata.retain(|k, _| !k.starts_with("h5vec."));
        }
        let schema = Arc::new(Schema::new_with_metadata(Fields::from(fields), metadata));
        Ok(Selection { picks, schema })
    }

    /// The schema of the selected columns.
    pub(crate) fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// The selected columns of `batch` (a batch of the schema given to
    /// [`Selection::new`]).
    pub(crate) fn apply(&self, batch: &RecordBatch) -> Result<RecordBatch> {
        let columns: Vec<ArrayRef> = self
            .picks
            .iter()
            .zip(self.schema.fields())
            .map(|(p, f)| select_array(batch.column(p.index), p, f))
            .collect::<Result<_>>()?;
        let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
        Ok(RecordBatch::try_new_with_options(
            self.schema.clone(),
            columns,
            &options,
        )?)
    }
}

/// Adds the path `segs` (the rest of `full`, below `prefix`) to `picks`.
fn add(
    picks: &mut Vec<Pick>,
    fields: &Fields,
    full: &str,
    segs: &[&str],
    prefix: &str,
) -> Result<()> {
    let Some((seg, rest)) = segs.split_first() else {
        return Ok(());
    };
    let Some(index) = fields.iter().position(|f| f.name() == seg) else {
        let there: Vec<String> = fields
            .iter()
            .map(|f| format!("{prefix}{}", f.name()))
            .collect();
        bail!(
            "--columns: no column `{full}` (the columns{} are: {})",
            if prefix.is_empty() {
                String::new()
            } else {
                format!(" of `{}`", prefix.trim_end_matches('.'))
            },
            there.join(", ")
        );
    };
    let field = &fields[index];
    if !rest.is_empty() && !matches!(field.data_type(), DataType::Struct(_)) {
        bail!(
            "--columns: no column `{full}`: `{prefix}{seg}` is not a record (it is {})",
            field.data_type()
        );
    }
    let pick = match picks.iter_mut().position(|p| p.index == index) {
        Some(i) => &mut picks[i],
        None => {
            picks.push(Pick {
                index,
                children: Some(Vec::new()),
            });
            picks.last_mut().expect("just pushed")
        }
    };
    if rest.is_empty() {
        pick.children = None;
        return Ok(());
    }
    let DataType::Struct(children) = field.data_type() else {
        unreachable!("checked above");
    };
    match &mut pick.children {
        // The whole record is already selected.
        None => Ok(()),
        Some(sub) => add(sub, children, full, rest, &format!("{prefix}{seg}.")),
    }
}

/// The field of `pick` (a whole field as it is; a record of some of its
/// fields without the h5vec metadata of the whole record).
fn select_field(field: &FieldRef, pick: &Pick) -> FieldRef {
    match (&pick.children, field.data_type()) {
        (Some(sub), DataType::Struct(children)) => {
            let fields: Vec<FieldRef> = sub
                .iter()
                .map(|p| select_field(&children[p.index], p))
                .collect();
            Arc::new(Field::new(
                field.name(),
                DataType::Struct(Fields::from(fields)),
                field.is_nullable(),
            ))
        }
        _ => field.clone(),
    }
}

fn select_array(array: &ArrayRef, pick: &Pick, field: &FieldRef) -> Result<ArrayRef> {
    let (Some(sub), DataType::Struct(fields)) = (&pick.children, field.data_type()) else {
        return Ok(array.clone());
    };
    let strukt = array.as_struct();
    let columns: Vec<ArrayRef> = sub
        .iter()
        .zip(fields)
        .map(|(p, f)| select_array(strukt.column(p.index), p, f))
        .collect::<Result<_>>()?;
    Ok(Arc::new(StructArray::try_new_with_length(
        fields.clone(),
        columns,
        strukt.nulls().cloned(),
        strukt.len(),
    )?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int32Array, StringArray};

    fn batch() -> RecordBatch {
        let inner = StructArray::from(vec![
            (
                Arc::new(Field::new("x", DataType::Int32, false)),
                Arc::new(Int32Array::from(vec![1, 2])) as ArrayRef,
            ),
            (
                Arc::new(Field::new("y", DataType::Utf8, false)),
                Arc::new(StringArray::from(vec!["a", "b"])) as ArrayRef,
            ),
        ]);
        RecordBatch::try_from_iter(vec![
            ("id", Arc::new(Int32Array::from(vec![7, 8])) as ArrayRef),
            ("pos", Arc::new(inner) as ArrayRef),
        ])
        .unwrap()
    }

    fn names(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn nested_columns_keep_their_records() {
        let b = batch();
        let sel = Selection::new(&b.schema(), &names(&["pos.y", "id"])).unwrap();
        let out = sel.apply(&b).unwrap();
        assert_eq!(out.schema().field(0).name(), "pos");
        let DataType::Struct(f) = out.schema().field(0).data_type().clone() else {
            panic!("not a struct")
        };
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].name(), "y");
        assert_eq!(out.schema().field(1).name(), "id");
        assert_eq!(out.num_rows(), 2);
        // A record asked for whole after one of its fields is whole.
        let sel = Selection::new(&b.schema(), &names(&["pos.y", "pos"])).unwrap();
        assert_eq!(sel.schema().field(0), b.schema().field(1));
    }

    #[test]
    fn unknown_columns_are_named() {
        let b = batch();
        let err = Selection::new(&b.schema(), &names(&["pos.z"])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--columns: no column `pos.z` (the columns of `pos` are: pos.x, pos.y)"
        );
        let err = Selection::new(&b.schema(), &names(&["id.z"])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--columns: no column `id.z`: `id` is not a record (it is Int32)"
        );
        let err = Selection::new(&b.schema(), &names(&["nope"])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--columns: no column `nope` (the columns are: id, pos)"
        );
    }
}
