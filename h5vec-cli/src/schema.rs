//! `schema FILE VECTOR [--json]`: the schema tree.

use std::io::Write;
use std::path::Path;

use anyhow::{bail, Context, Result};
use h5vec::SchemaNode;

use crate::target::{open_read, Target};
use crate::text::Columns;

/// Prints the schema tree of a vector, one node a line (field path, kind,
/// codec, encoded type, dimensions in Julia order as stored, Rust type),
/// or as JSON (the members of SPEC.md section 2 plus `field_path`). h5col
/// tables and VLS arrays store no schema tree: their Arrow columns are
/// printed instead (and `--json` is an error).
pub(crate) fn run(file: &Path, vector: &str, json: bool) -> Result<()> {
    let h5 = open_read(file)?;
    let target = Target::open(&h5, vector)?;
    let at = || format!("{}:{}", file.display(), target.path);
    let info = h5vec::inspect(&target.parent, &target.name).with_context(at)?;
    let mut out = std::io::stdout().lock();
    match (&info.schema, json) {
        (Some(root), true) => {
            serde_json::to_writer_pretty(&mut out, root)?;
            writeln!(out)?;
        }
        (Some(root), false) => {
            let mut table = Columns::new(&[
                ("FIELD", false),
                ("KIND", false),
                ("CODEC", false),
                ("ENCODED", false),
                ("DIMS", false),
                ("LOGICAL TYPE", false),
            ]);
            add_nodes(&mut table, root);
            out.write_all(table.render().as_bytes())?;
        }
        (None, true) => bail!(
            "{} ({}) stores no schema tree (`h5vec schema` without --json lists its columns)",
            at(),
            info.container
        ),
        (None, false) => {
            let schema =
                h5vec::arrow::read_schema(&target.parent, &target.name).with_context(at)?;
            let mut table = Columns::new(&[
                ("COLUMN", false),
                ("ARROW TYPE", false),
                ("NULLABLE", false),
            ]);
            for f in schema.fields() {
                table.push(vec![
                    f.name().clone(),
                    f.data_type().to_string(),
                    if f.is_nullable() { "yes" } else { "no" }.into(),
                ]);
            }
            writeln!(
                out,
                "{} {} (no schema tree); its columns:",
                info.container, target.path
            )?;
            out.write_all(table.render().as_bytes())?;
        }
    }
    out.flush()?;
    Ok(())
}

fn add_nodes(table: &mut Columns, node: &SchemaNode) {
    let dims = node.dimensions.as_ref().map_or(String::new(), |d| {
        let d: Vec<String> = d.iter().map(i64::to_string).collect();
        format!("[{}]", d.join(", "))
    });
    table.push(vec![
        node.field_path.clone(),
        node.kind.clone(),
        node.codec.clone(),
        node.encoded_type.clone().unwrap_or_default(),
        dims,
        node.logical_type.clone(),
    ]);
    for child in &node.children {
        add_nodes(table, child);
    }
}
