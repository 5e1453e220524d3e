//! The `vls_string` kind's Arrow writer for `Option<String>` (codec
//! `PlaceholderCodec`, SPEC.md sections 4.1 and 11): Arrow strings (any
//! string type, dictionaries decoded) into a VLS column made by
//! `OptVlsStringCodec`, a null (its own or an enclosing one) as the
//! missing value. (`String` and JSON in VLS form are the string and json
//! kinds' writers.)

use arrow_array::Array;
use arrow_buffer::NullBuffer;

use crate::arrow::write::col::{bad_key, hole, wrong_array, At, Texts};
use crate::error::Result;
use crate::kinds::vls::VlsEncoder;

/// Buffers optional strings.
pub(crate) fn write_opt_vls(
    e: &mut VlsEncoder,
    arr: &dyn Array,
    holes: Option<&NullBuffer>,
    at: &At<'_>,
) -> Result<()> {
    let texts = Texts::of(arr).ok_or_else(|| wrong_array(at, "strings", arr))?;
    let nulls = arr.logical_nulls();
    for i in 0..arr.len() {
        if hole(holes, i) || nulls.as_ref().is_some_and(|n| n.is_null(i)) {
            e.push_missing()?;
        } else {
            e.push(texts.get(i).ok_or_else(|| bad_key(at, i))?)?;
        }
    }
    Ok(())
}
