//! Readers of the nodes of SPEC.md sections 4.5 to 4.8 (maps, instants,
//! dates, times of day, durations, f16, complex numbers; the adapters' own
//! readers through `kinds::adapters`) into the
//! Arrow types of section 11, on the same open checks as the typed load.

use std::ops::Range;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{make_array, Array, ArrayRef, Float32Array, Float64Array, MapArray, StructArray};
use arrow_buffer::{Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_data::ArrayDataBuilder;
use arrow_schema::{DataType, Field, FieldRef, Fields};
use hdf5::Group;

use crate::column::PodReader;
use crate::error::{Error, Place, Result};
use crate::kinds::adapters::complex::ReIm;
use crate::kinds::adapters::half::F16Bits;
use crate::kinds::adapters::time::check_time_of_day;
use crate::kinds::list::open_list_group_with;
use crate::raw::Pod;
use crate::schema::{ids, Stored};

use super::nodes::{arrow_err, check_nulls, leaf_column, length, BoxNode, List, Node};

/// Whether a scalar or dense node typed `ty` is read here.
pub(super) fn is_typed(ty: &DataType) -> bool {
    crate::kinds::adapters::reading(ty).is_some()
        || matches!(
            ty,
            DataType::Timestamp(..)
                | DataType::Date32
                | DataType::Time64(_)
                | DataType::Duration(_)
                | DataType::Float16
                | DataType::Struct(_)
        )
}

/// Opens the reader of a scalar or dense node typed `ty` ([`is_typed`]).
pub(super) fn open_typed(
    group: &Group,
    member: Option<&str>,
    node: &Stored,
    path: &str,
    count: u64,
    ty: &DataType,
) -> Result<BoxNode> {
    if let Some(adapter) = crate::kinds::adapters::reading(ty) {
        return adapter.open_reader(group, member, node, path, count);
    }
    Ok(match ty {
        DataType::Timestamp(..) | DataType::Time64(_) | DataType::Duration(_) => {
            Box::new(Retyped {
                col: leaf_column::<i64>(group, member, node, path, count, &[])?,
                ty: ty.clone(),
                check: matches!(ty, DataType::Time64(_)).then_some(time_of_day as fn(i64) -> _),
            })
        }
        DataType::Date32 => Box::new(Retyped {
            col: leaf_column::<i32>(group, member, node, path, count, &[])?,
            ty: ty.clone(),
            check: None,
        }),
        DataType::Float16 => Box::new(Retyped {
            col: leaf_column::<F16Bits>(group, member, node, path, count, &[])?,
            ty: ty.clone(),
            check: None,
        }),
        DataType::Struct(fields) if node.encoded_type.as_deref() == Some("ComplexF32") => {
            Box::new(Complex::<f32> {
                col: leaf_column::<ReIm<f32>>(group, member, node, path, count, &[])?,
                fields: fields.clone(),
            })
        }
        DataType::Struct(fields) if node.encoded_type.as_deref() == Some("ComplexF64") => {
            Box::new(Complex::<f64> {
                col: leaf_column::<ReIm<f64>>(group, member, node, path, count, &[])?,
                fields: fields.clone(),
            })
        }
        other => {
            return Err(Error::mismatch(
                path,
                "a time, UUID, f16 or complex column",
                format!("Arrow type {other} for a `{}` node", node.kind),
            ))
        }
    })
}

fn time_of_day(ns: i64) -> std::result::Result<(), String> {
    check_time_of_day(ns).map(|_| ())
}

/// Plain numbers given another Arrow type of the same width (timestamps,
/// dates, times, durations, Float16); `check` refuses values that are not
/// valid (a time of day outside the day).
struct Retyped<R: Pod> {
    col: PodReader<R>,
    ty: DataType,
    check: Option<fn(i64) -> std::result::Result<(), String>>,
}

/// The native bytes of the numbers, for Arrow's buffer.
trait Native: Pod {
    fn buffer(v: Vec<Self>) -> Buffer;
    fn as_i64(self) -> i64;
}
impl Native for i64 {
    fn buffer(v: Vec<i64>) -> Buffer {
        Buffer::from_vec(v)
    }
    fn as_i64(self) -> i64 {
        self
    }
}
impl Native for i32 {
    fn buffer(v: Vec<i32>) -> Buffer {
        Buffer::from_vec(v)
    }
    fn as_i64(self) -> i64 {
        self.into()
    }
}
impl Native for F16Bits {
    fn buffer(v: Vec<F16Bits>) -> Buffer {
        Buffer::from_vec(v.into_iter().map(|b| b.0).collect::<Vec<u16>>())
    }
    fn as_i64(self) -> i64 {
        self.0.into()
    }
}

impl<R: Native> Node for Retyped<R> {
    fn read(&mut self, rows: Range<u64>, nulls: Option<NullBuffer>) -> Result<ArrayRef> {
        let at = self.col.place().clone();
        let n = length(&rows, &at)?;
        check_nulls(nulls.as_ref(), n, &at)?;
        let mut v = Vec::new();
        self.col.read_into(rows.start, n as u64, &mut v)?;
        if v.len() != n {
            return Err(crate::codec::exhausted(&at));
        }
        if let Some(check) = self.check {
            for (i, x) in v.iter().enumerate() {
                if let Err(msg) = check(x.as_i64()) {
                    return Err(Error::invalid(
                        self.col.element(rows.start + i as u64),
                        format!("{msg} in {at}"),
                    ));
                }
            }
        }
        let data = ArrayDataBuilder::new(self.ty.clone())
            .len(n)
            .nulls(nulls)
            .add_buffer(R::buffer(v))
            .build()
            .map_err(arrow_err(&at))?;
        Ok(make_array(data))
    }
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

// ---------------------------------------------------------------------------
// Maps.

/// Opens a map node (a list with `h5vec.MapCodec`) typed `field` (an
/// Arrow `Map`): the list of its entry records, read as a `LargeList` and
/// handed out as a `MapArray`. `item` opens the entry record member
/// `VALUES` as the reader of any list element.
pub(super) fn open_map(
    group: &Group,
    node: &Stored,
    path: &str,
    count: u64,
    field: &Field,
    item: impl FnOnce(&Group, &str, &Stored, &str, u64, &FieldRef) -> Result<BoxNode>,
) -> Result<BoxNode> {
    let (offsets, total) = open_list_group_with(group, node, path, count, ids::MAP_CODEC)?;
    let DataType::Map(entries, _) = field.data_type() else {
        return Err(Error::invalid(path, "a map without a map type"));
    };
    let child = node.child(0, path)?;
    let ipath = format!("{path}[]");
    let inner = item(group, "VALUES", child, &ipath, total, entries)?;
    Ok(Box::new(MapNode {
        list: List {
            offsets,
            total,
            item: inner,
            field: entries.clone(),
            offs: Vec::new(),
        },
        entries: entries.clone(),
        at: Place::new(path, group.name()),
    }))
}

struct MapNode {
    list: List,
    entries: FieldRef,
    at: Place,
}

impl Node for MapNode {
    fn read(&mut self, rows: Range<u64>, nulls: Option<NullBuffer>) -> Result<ArrayRef> {
        let arr = self.list.read(rows, nulls)?;
        let list = arr
            .as_list_opt::<i64>()
            .ok_or_else(|| Error::invalid(&self.at, "map entries not read as a list"))?;
        let offs = list
            .offsets()
            .iter()
            .map(|&o| i32::try_from(o))
            .collect::<std::result::Result<Vec<i32>, _>>()
            .map_err(|_| {
                Error::invalid(
                    &self.at,
                    "more than 2^31 map entries in one batch (Arrow maps have 32-bit offsets): \
                     read fewer rows at a time",
                )
            })?;
        let entries = list
            .values()
            .as_struct_opt()
            .ok_or_else(|| Error::invalid(&self.at, "map entries not read as records"))?
            .clone();
        let arr = MapArray::try_new(
            self.entries.clone(),
            OffsetBuffer::new(ScalarBuffer::from(offs)),
            entries,
            list.nulls().cloned(),
            false,
        )
        .map_err(arrow_err(&self.at))?;
        Ok(Arc::new(arr))
    }
}
