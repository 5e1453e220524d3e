//! `Col::create`: the datasets of a new vector's field (or list element)
//! made for its schema node, with the typed codecs' create functions.

use hdf5::Group;

use crate::codec::Codec;
use crate::error::Result;
use crate::kinds::blob::arrow::write::create_blob;
use crate::kinds::json::arrow::write::create_json;
use crate::kinds::list::arrow::write::{Fill, ListCol};
use crate::kinds::list::{ItemCodec, StringValuesItem};
use crate::kinds::nullable::arrow::write::{create_masked, create_masked_item};
use crate::kinds::record::arrow::write::RecordCol;
use crate::kinds::scalar::arrow::write::ValuesCol;
use crate::kinds::string::arrow::write::create_str;
use crate::kinds::vls::OptVlsStringCodec;
use crate::options::WriteCtx;
use crate::schema::{ids, Kind, Schema};

use super::{not_here, with_labels, Col};

impl Col {
    /// Creates the datasets of vector field `node` in its data group `group`.
    pub(crate) fn create(
        node: &Schema,
        group: &Group,
        path: &str,
        ctx: &WriteCtx<'_>,
    ) -> Result<Col> {
        match &node.kind {
            Kind::Scalar if node.codec == ids::JSON => {
                create_json(group, path, false, ctx).map(Col::Json)
            }
            Kind::VlsString if node.codec == ids::JSON => {
                create_json(group, path, true, ctx).map(Col::Json)
            }
            Kind::Scalar if node.encoded_type.as_deref() == Some("String") => {
                create_str(group, path, false, ctx).map(Col::Str)
            }
            Kind::Scalar | Kind::Dense => {
                let col = Col::Values(ValuesCol::create(node, group, path, ctx)?);
                with_labels(node, col, path)
            }
            Kind::Union => Ok(Col::Union(Box::new(
                crate::kinds::union::arrow::write::UnionCol::create(node, group, path, ctx)?,
            ))),
            Kind::Record => Ok(Col::Record(RecordCol::create(node, group, path, ctx)?)),
            Kind::Constant => Ok(Col::Constant),
            Kind::Blob => Ok(Col::Blob(create_blob(group, path, ctx)?)),
            Kind::VlsString if node.codec == ids::PLACEHOLDER_CODEC => {
                Ok(Col::OptVls(OptVlsStringCodec::create(group, path, ctx)?))
            }
            Kind::VlsString => create_str(group, path, true, ctx).map(Col::Str),
            Kind::List => Ok(Col::List(Box::new(ListCol::create(
                node, group, path, ctx,
            )?))),
            Kind::Nullable => Ok(Col::Masked(create_masked(node, group, path, ctx)?)),
            k => Err(not_here(k, "a vector field", path)),
        }
    }

    /// Creates list element member `name` of `parent` for element node `node`.
    pub(super) fn create_item(
        node: &Schema,
        parent: &Group,
        name: &str,
        path: &str,
        ctx: &WriteCtx<'_>,
    ) -> Result<Col> {
        match &node.kind {
            Kind::Scalar | Kind::Dense if node.encoded_type.as_deref() != Some("String") => {
                let col = Col::Values(ValuesCol::create_item(node, parent, name, path, ctx)?);
                with_labels(node, col, path)
            }
            Kind::Union => Ok(Col::Union(Box::new(
                crate::kinds::union::arrow::write::UnionCol::create_item(
                    node, parent, name, path, ctx,
                )?,
            ))),
            Kind::FillNullable => Ok(Col::Fill(Fill::create_item(node, parent, name, path, ctx)?)),
            Kind::StringValues => Ok(Col::StrValues(StringValuesItem::create(
                parent, name, path, ctx,
            )?)),
            Kind::List => Ok(Col::List(Box::new(ListCol::create_item(
                node, parent, name, path, ctx,
            )?))),
            Kind::Record => Ok(Col::Record(RecordCol::create_item(
                node, parent, name, path, ctx,
            )?)),
            Kind::Nullable => Ok(Col::Masked(create_masked_item(
                node, parent, name, path, ctx,
            )?)),
            k => Err(not_here(k, "a list element", path)),
        }
    }
}
