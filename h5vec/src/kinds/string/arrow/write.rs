//! The `string` kind's Arrow writer: Arrow strings (any string type,
//! dictionaries decoded) into a `String` column, variable-length or VLS as
//! the node says (`with_vls`), created and opened by `StringCodec`; a row
//! under an enclosing null gets the typed encoder's placeholder (SPEC.md
//! sections 3.1, 4.1 and 11).

use arrow_array::Array;
use arrow_buffer::NullBuffer;
use hdf5::Group;

use crate::arrow::write::col::{bad_key, hole, null_value, wrong_array, At, Texts};
use crate::codec::{Codec, Encoder};
use crate::error::Result;
use crate::kinds::string::{StringCodec, StringEncoder};
use crate::options::WriteCtx;

/// The options of `ctx` with `vls_strings` as a node says, so that
/// `StringCodec` creates the layout of that node.
pub(crate) fn with_vls<R>(ctx: &WriteCtx<'_>, vls: bool, f: impl FnOnce(&WriteCtx<'_>) -> R) -> R {
    let opts = ctx.opts.clone().vls_strings(vls);
    f(&WriteCtx {
        opts: &opts,
        len_hint: ctx.len_hint,
    })
}

/// Creates a `String` field in its data group `group`, VLS if `vls`.
pub(crate) fn create_str(
    group: &Group,
    path: &str,
    vls: bool,
    ctx: &WriteCtx<'_>,
) -> Result<StringEncoder> {
    with_vls(ctx, vls, |c| StringCodec::create(group, path, c))
}

/// Buffers strings; a null is an error unless an enclosing null covers it.
pub(crate) fn write_str(
    e: &mut StringEncoder,
    arr: &dyn Array,
    holes: Option<&NullBuffer>,
    at: &At<'_>,
) -> Result<()> {
    let texts = Texts::of(arr).ok_or_else(|| wrong_array(at, "strings", arr))?;
    let nulls = arr.logical_nulls();
    for i in 0..arr.len() {
        if hole(holes, i) {
            Encoder::<String>::push_null(e)?;
        } else if nulls.as_ref().is_some_and(|n| n.is_null(i)) {
            return Err(null_value(at, i));
        } else {
            e.push_str(texts.get(i).ok_or_else(|| bad_key(at, i))?)?;
        }
    }
    Ok(())
}
