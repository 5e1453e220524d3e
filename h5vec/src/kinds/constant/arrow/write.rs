//! The `constant` kind's Arrow writer: a constant column (unit types,
//! fieldless variants) stores no values, so the Arrow values (nulls) are
//! not written; appending checks the stored field as a typed append does
//! (SPEC.md sections 3.4 and 11).

use hdf5::Group;

use crate::codec::Codec;
use crate::error::Result;
use crate::kinds::constant::ConstantCodec;
use crate::options::WriteCtx;
use crate::schema::Stored;

/// Checks constant field `node` of `count` rows in `group` for appending.
pub(crate) fn append_constant(
    group: &Group,
    node: &Stored,
    path: &str,
    count: u64,
    ctx: &WriteCtx<'_>,
) -> Result<()> {
    ConstantCodec::<()>::append(group, node, path, count, ctx)?;
    Ok(())
}
