//! `Col::append`: a stored field (or list element) of an existing vector
//! opened for appending, after the checks a typed append makes.

use hdf5::Group;

use crate::codec::Codec;
use crate::error::Result;
use crate::kinds::blob::arrow::write::append_blob;
use crate::kinds::constant::arrow::write::append_constant;
use crate::kinds::json::arrow::write::append_json;
use crate::kinds::list::arrow::write::{Fill, ListCol};
use crate::kinds::list::{ItemCodec, StringValuesItem};
use crate::kinds::nullable::arrow::write::{append_masked, append_masked_item};
use crate::kinds::record::arrow::write::RecordCol;
use crate::kinds::scalar::arrow::write::ValuesCol;
use crate::kinds::string::StringCodec;
use crate::kinds::vls::OptVlsStringCodec;
use crate::options::WriteCtx;
use crate::schema::{ids, Kind, Schema, Stored};

use super::{not_here, with_labels, Col};

impl Col {
    /// Opens vector field `node` of `count` rows in `group` for appending,
    /// after the checks a typed append makes.
    pub(crate) fn append(
        node: &Stored,
        group: &Group,
        path: &str,
        count: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Col> {
        let schema = Schema::from(node);
        match &node.kind {
            Kind::Scalar | Kind::VlsString if node.codec == ids::JSON => {
                Ok(Col::Json(append_json(group, node, path, count, ctx)?))
            }
            Kind::Scalar if node.encoded_type.as_deref() == Some("String") => Ok(Col::Str(
                StringCodec::append(group, node, path, count, ctx)?,
            )),
            Kind::Scalar | Kind::Dense => {
                let col = Col::Values(ValuesCol::append(node, &schema, group, path, count)?);
                with_labels(&schema, col, path)
            }
            Kind::Union => Ok(Col::Union(Box::new(
                crate::kinds::union::arrow::write::UnionCol::append(node, group, path, count, ctx)?,
            ))),
            Kind::Record => Ok(Col::Record(RecordCol::append(
                node, &schema, group, path, count, ctx,
            )?)),
            Kind::Constant => {
                append_constant(group, node, path, count, ctx)?;
                Ok(Col::Constant)
            }
            Kind::Blob => Ok(Col::Blob(append_blob(group, node, path, count, ctx)?)),
            Kind::VlsString if node.codec == ids::PLACEHOLDER_CODEC => Ok(Col::OptVls(
                OptVlsStringCodec::append(group, node, path, count, ctx)?,
            )),
            Kind::VlsString => Ok(Col::Str(StringCodec::append(
                group, node, path, count, ctx,
            )?)),
            Kind::List => Ok(Col::List(Box::new(ListCol::append(
                node, group, path, count, ctx,
            )?))),
            Kind::Nullable => Ok(Col::Masked(append_masked(node, group, path, count, ctx)?)),
            k => Err(not_here(k, "a vector field", path)),
        }
    }

    /// Opens list element member `name` of `parent` (`rows` elements) for appending.
    pub(super) fn append_item(
        node: &Stored,
        parent: &Group,
        name: &str,
        path: &str,
        rows: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Col> {
        let schema = Schema::from(node);
        match &node.kind {
            Kind::Scalar | Kind::Dense if node.encoded_type.as_deref() != Some("String") => {
                let col = Col::Values(ValuesCol::append_item(
                    node, &schema, parent, name, path, rows,
                )?);
                with_labels(&schema, col, path)
            }
            Kind::Union => Ok(Col::Union(Box::new(
                crate::kinds::union::arrow::write::UnionCol::append_item(
                    node, parent, name, path, rows, ctx,
                )?,
            ))),
            Kind::FillNullable => Ok(Col::Fill(Fill::append_item(
                node, parent, name, path, rows, ctx,
            )?)),
            Kind::StringValues => Ok(Col::StrValues(StringValuesItem::append(
                parent, name, node, path, rows, ctx,
            )?)),
            Kind::List => Ok(Col::List(Box::new(ListCol::append_item(
                node, parent, name, path, rows, ctx,
            )?))),
            Kind::Record => Ok(Col::Record(RecordCol::append_item(
                node, &schema, parent, name, path, rows, ctx,
            )?)),
            Kind::Nullable => Ok(Col::Masked(append_masked_item(
                node, parent, name, path, rows, ctx,
            )?)),
            k => Err(not_here(k, "a list element", path)),
        }
    }
}
