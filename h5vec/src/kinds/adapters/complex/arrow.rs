//! Complex numbers without the Rust type (SPEC.md section 11): a
//! `ComplexF32` / `ComplexF64` node is Arrow's `Struct { r, i }` of
//! `Float32` / `Float64`, read from and written to the `{r, i}` compound.
//! Its codec is the identity and its leaves are number leaves of the column
//! writers (`arrow/write/col/numbers.rs`), so it is no
//! [`ArrowAdapter`](crate::kinds::adapters::ArrowAdapter); these are the
//! parts of the reader and the writers that are the complex adapter's own
//! (its Arrow type stays with the number types in `arrow/mapping.rs`, which
//! the reader here depends on).

use std::ops::Range;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, ArrowPrimitiveType, Float32Array, Float64Array, StructArray};
use arrow_buffer::{NullBuffer, ScalarBuffer};
use arrow_schema::Fields;
use hdf5::Group;

use crate::arrow::read::nodes::{arrow_err, check_nulls, leaf_column, length, BoxNode, Node};
use crate::column::PodReader;
use crate::error::Result;
use crate::raw::Pod;
use crate::schema::Stored;

use super::ReIm;

/// The reader of a complex node read as `Struct` `fields`, or `None` when
/// the node is not complex.
pub(crate) fn open_reader(
    group: &Group,
    member: Option<&str>,
    node: &Stored,
    path: &str,
    count: u64,
    fields: &Fields,
) -> Result<Option<BoxNode>> {
    Ok(Some(match node.encoded_type.as_deref() {
        Some("ComplexF32") => Box::new(Complex::<f32> {
            col: leaf_column::<ReIm<f32>>(group, member, node, path, count, &[])?,
            fields: fields.clone(),
        }),
        Some("ComplexF64") => Box::new(Complex::<f64> {
            col: leaf_column::<ReIm<f64>>(group, member, node, path, count, &[])?,
            fields: fields.clone(),
        }),
        _ => return Ok(None),
    }))
}

/// Complex numbers as `Struct { r, i }`.
struct Complex<T>
where
    ReIm<T>: Pod,
{
    col: PodReader<ReIm<T>>,
    fields: Fields,
}

macro_rules! complex_node {
    ($t:ty, $arr:ty) => {
        impl Node for Complex<$t> {
            fn read(&mut self, rows: Range<u64>, nulls: Option<NullBuffer>) -> Result<ArrayRef> {
                let at = self.col.place().clone();
                let n = length(&rows, &at)?;
                check_nulls(nulls.as_ref(), n, &at)?;
                let mut v = Vec::new();
                self.col.read_into(rows.start, n as u64, &mut v)?;
                if v.len() != n {
                    return Err(crate::codec::exhausted(&at));
                }
                let r: Vec<$t> = v.iter().map(|c| c.r).collect();
                let i: Vec<$t> = v.iter().map(|c| c.i).collect();
                let parts: Vec<ArrayRef> = vec![
                    Arc::new(<$arr>::new(ScalarBuffer::from(r), None)),
                    Arc::new(<$arr>::new(ScalarBuffer::from(i), None)),
                ];
                let arr = StructArray::try_new_with_length(self.fields.clone(), parts, nulls, n)
                    .map_err(arrow_err(&at))?;
                Ok(Arc::new(arr))
            }
        }
    };
}
complex_node!(f32, Float32Array);
complex_node!(f64, Float64Array);

/// The real and imaginary parts of a complex column.
type Parts<'a, T> = (
    &'a [<T as ArrowPrimitiveType>::Native],
    &'a [<T as ArrowPrimitiveType>::Native],
);

/// The `r` and `i` values of complex numbers given as `Struct { r, i }`
/// of `T` without nulls in either part; `None` for any other array.
fn complex_parts<T: ArrowPrimitiveType>(arr: &dyn Array) -> Option<Parts<'_, T>> {
    let s = arr.as_struct_opt()?;
    if s.num_columns() != 2 || s.column_names() != ["r", "i"] {
        return None;
    }
    let r = s.column(0).as_primitive_opt::<T>()?;
    let i = s.column(1).as_primitive_opt::<T>()?;
    if r.null_count() > 0 || i.null_count() > 0 || r.len() != s.len() || i.len() != s.len() {
        return None;
    }
    Some((r.values(), i.values()))
}

/// Appends the complex numbers of `arr`, a `Struct { r, i }` of `T`
/// without nulls in either part, to `buf`; `None` (nothing appended) for
/// any other array.
pub(crate) fn push_parts<T: ArrowPrimitiveType>(
    arr: &dyn Array,
    buf: &mut Vec<ReIm<T::Native>>,
) -> Option<()> {
    let (r, i) = complex_parts::<T>(arr)?;
    buf.extend(r.iter().zip(i).map(|(&r, &i)| ReIm { r, i }));
    Some(())
}
