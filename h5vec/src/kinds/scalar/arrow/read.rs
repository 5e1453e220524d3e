//! The `scalar` kind's Arrow reader (SPEC.md section 11): numbers as the
//! same Arrow primitive (bit for bit), `Bool` as `Boolean` (a code other
//! than 0 or 1 is an error naming the row), `char` as one-character `Utf8`,
//! a labelled enum as `Dictionary(Int32, Utf8)` (through the union kind's
//! `Labels`). The same readers serve dense leaves (inside the
//! `FixedSizeList` levels `kinds/dense/arrow/read.rs` gives them), list
//! elements, `fill_nullable` numbers and h5col number, bool and
//! fixed-length string columns (`FixedStrs`: the fill value is null).

use std::ops::Range;
use std::sync::Arc;

use arrow_array::types::ArrowPrimitiveType;
use arrow_array::{ArrayRef, BooleanArray, PrimitiveArray, StringArray};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::DataType;
use hdf5::Group;

use crate::arrow::mapping::{self, number_type};
use crate::arrow::read::nodes::{
    arrow_err, both, check_nulls, ends_to_offsets, length, utf8_array, validity, with_prim,
    BoxNode, Levels, Node,
};
use crate::column::{open_values, PodReader};
use crate::error::{Error, Place, Result};
use crate::h5col::FixedStrReader;
use crate::kinds::dense::bad_entry;
use crate::kinds::list::{open_leaf_values, FillNumber};
use crate::kinds::scalar::{bad_value, bool_refused, first_non_bool};
use crate::kinds::union::arrow::read::Labels;
use crate::raw::{Bits8, Pod};
use crate::schema::{ids, Kind, Schema, Stored};

// ---------------------------------------------------------------------------
// Numbers (scalar, dense leaves, enums, fill_nullable, h5col numbers).

/// Numbers of Arrow type `A`, read straight into the array's buffer; with
/// `fill`, an element equal to it is null.
pub(crate) struct Prim<A: ArrowPrimitiveType>
where
    A::Native: FillNumber,
{
    pub(crate) col: PodReader<A::Native>,
    pub(crate) fill: Option<A::Native>,
    pub(crate) levels: Levels,
    /// The buffer of the last array read: the next read reuses it if the
    /// caller has dropped that array (batch by batch readers).
    pub(crate) lent: Option<Buffer>,
}

impl<A: ArrowPrimitiveType> Node for Prim<A>
where
    A::Native: FillNumber,
{
    fn read(&mut self, rows: Range<u64>, nulls: Option<NullBuffer>) -> Result<ArrayRef> {
        let at = self.col.place().clone();
        let n = length(&rows, &at)?;
        let mut v = match self.lent.take().map(Buffer::into_vec::<A::Native>) {
            Some(Ok(v)) => v,
            _ => Vec::new(),
        };
        self.col.read_into(rows.start, n as u64, &mut v)?;
        let own = self
            .fill
            .and_then(|f| validity(BooleanBuffer::collect_bool(v.len(), |i| !v[i].is_fill(f))));
        let len = v.len();
        let buf = Buffer::from_vec(v);
        self.lent = Some(buf.clone());
        let values = ScalarBuffer::new(buf, 0, len);
        if self.levels.0.is_empty() {
            let nulls = both(nulls, own, n, &at)?;
            let arr = PrimitiveArray::<A>::try_new(values, nulls).map_err(arrow_err(&at))?;
            return Ok(Arc::new(arr));
        }
        let leaf = PrimitiveArray::<A>::try_new(values, None).map_err(arrow_err(&at))?;
        self.levels.wrap(Arc::new(leaf), n, nulls, &at)
    }
}

/// Booleans (bitfield, h5col bool, 1-byte integers): 0 is false, 1 is
/// true, any other code is an error naming the row (SPEC.md section 7).
pub(crate) struct Bools {
    pub(crate) col: PodReader<Bits8>,
    pub(crate) levels: Levels,
}

impl Node for Bools {
    fn read(&mut self, rows: Range<u64>, nulls: Option<NullBuffer>) -> Result<ArrayRef> {
        let at = self.col.place().clone();
        let n = length(&rows, &at)?;
        let leaves = self.levels.leaves(&at)?;
        let total = (n as u64)
            .checked_mul(leaves)
            .ok_or_else(|| Error::invalid(&at, "rows too large"))?;
        let v = self.col.read(rows.start, n as u64)?;
        if v.len() as u64 != total {
            return Err(crate::codec::exhausted(&at));
        }
        if let Some((i, code)) = first_non_bool(&v) {
            let i = i as u64;
            let row = rows.start + i.checked_div(leaves).unwrap_or(0);
            let msg = bool_refused(code);
            // As the typed decoders say it: an array's entry is named.
            return Err(if leaves > 1 {
                Error::invalid(
                    self.col.element(row),
                    format!("entry {}: {msg}", i.checked_rem(leaves).unwrap_or(0)),
                )
            } else {
                Error::invalid(self.col.element(row), msg)
            });
        }
        let values = BooleanBuffer::collect_bool(v.len(), |i| v[i].0 != 0);
        check_nulls(nulls.as_ref(), n, &at)?;
        if self.levels.0.is_empty() {
            return Ok(Arc::new(BooleanArray::new(values, nulls)));
        }
        let leaf = BooleanArray::new(values, None);
        self.levels.wrap(Arc::new(leaf), n, nulls, &at)
    }
}

/// `char`s (Int32 code points) as one-character `Utf8` strings.
pub(crate) struct Chars {
    pub(crate) col: PodReader<i32>,
    pub(crate) levels: Levels,
}

impl Node for Chars {
    fn read(&mut self, rows: Range<u64>, nulls: Option<NullBuffer>) -> Result<ArrayRef> {
        let at = self.col.place().clone();
        let n = length(&rows, &at)?;
        let leaves = self.levels.leaves(&at)?;
        let mut v = Vec::new();
        self.col.read_into(rows.start, n as u64, &mut v)?;
        let mut values = Vec::new();
        crate::limits::reserve(&mut values, v.len() as u64, &at)?;
        let mut offsets = Vec::new();
        crate::limits::reserve(&mut offsets, v.len() as u64 + 1, &at)?;
        offsets.push(0i32);
        let mut utf8 = [0u8; 4];
        for (i, &c) in v.iter().enumerate() {
            let Some(ch) = u32::try_from(c).ok().and_then(char::from_u32) else {
                let row = rows.start + (i as u64).checked_div(leaves).unwrap_or(0);
                return Err(if self.levels.0.is_empty() {
                    bad_value::<char>(&self.col, row)
                } else {
                    bad_entry::<char>(&self.col, row, &[])
                });
            };
            values.extend_from_slice(ch.encode_utf8(&mut utf8).as_bytes());
            let end = i32::try_from(values.len())
                .map_err(|_| Error::invalid(&at, "more than 2 GiB of characters in one batch"))?;
            offsets.push(end);
        }
        let offs = OffsetBuffer::new(ScalarBuffer::from(offsets));
        let flat_nulls = if self.levels.0.is_empty() {
            nulls.clone()
        } else {
            None
        };
        let arr = StringArray::try_new(offs, Buffer::from_vec(values), flat_nulls)
            .map_err(arrow_err(&at))?;
        if self.levels.0.is_empty() {
            return Ok(Arc::new(arr));
        }
        self.levels.wrap(Arc::new(arr), n, nulls, &at)
    }
}

// ---------------------------------------------------------------------------
// h5col fixed-length strings.

/// A fixed-length string column of an h5col table: the fill value is null.
pub(crate) struct FixedStrs {
    pub(crate) rdr: FixedStrReader,
    pub(crate) at: Place,
}

impl Node for FixedStrs {
    fn read(&mut self, rows: Range<u64>, nulls: Option<NullBuffer>) -> Result<ArrayRef> {
        let n = length(&rows, &self.at)?;
        let mut values = Vec::new();
        let mut ends = Vec::with_capacity(n);
        let mut valid = Vec::with_capacity(n);
        self.rdr.read_each(rows.clone(), |v| {
            values.extend_from_slice(v.unwrap_or("").as_bytes());
            ends.push(values.len());
            valid.push(v.is_some());
        })?;
        if ends.len() != n {
            return Err(crate::codec::exhausted(&self.at));
        }
        let own = validity(BooleanBuffer::collect_bool(n, |i| valid[i]));
        let offsets = ends_to_offsets(&ends, &self.at)?;
        let at = self.at.clone();
        let nulls = both(nulls, own, n, &at)?;
        utf8_array(offsets, values, nulls, &self.at, |i| {
            Error::invalid(
                at.element(rows.start + i as u64),
                "string is not valid UTF-8",
            )
        })
    }
}

// ---------------------------------------------------------------------------
// Opening a leaf.

/// The node a scalar or dense leaf is checked against (kind, identifiers,
/// encoded type, dimensions).
fn leaf_want(node: &Stored) -> Schema {
    let mut want = Schema::new(
        node.kind.clone(),
        if node.kind == Kind::Dense {
            ids::DENSE
        } else {
            ids::SCALAR
        },
        &node.codec,
        "",
    );
    want.encoded_type = node.encoded_type.clone();
    want.dimensions = node.dimensions.clone();
    want
}

/// Where a scalar, dense or leaf node's values are: a `values` dataset in
/// the node's data group, or a list's `VALUES` dataset.
pub(crate) enum LeafAt<'a> {
    Group(&'a Group),
    Member(&'a Group, &'a str),
}

/// Opens the scalar node whose data group is `group`, `count` rows at
/// least, typed `ty` (numbers, `Boolean`, `Utf8` chars, a labels dictionary).
pub(crate) fn open(
    group: &Group,
    node: &Stored,
    path: &str,
    count: u64,
    ty: &DataType,
) -> Result<BoxNode> {
    open_leaf(
        LeafAt::Group(group),
        node,
        path,
        count,
        ty,
        Levels::default(),
        &[],
    )
}

/// Opens the scalar list elements `name` of the list group `parent`,
/// `rows` elements at least, typed `ty`.
pub(crate) fn open_element(
    parent: &Group,
    name: &str,
    node: &Stored,
    path: &str,
    rows: u64,
    ty: &DataType,
) -> Result<BoxNode> {
    open_leaf(
        LeafAt::Member(parent, name),
        node,
        path,
        rows,
        ty,
        Levels::default(),
        &[],
    )
}

/// Opens a numbers, bool or char leaf (scalar, dense, list element) at
/// `at`, `count` rows at least, of Arrow type `leaf` inside `levels`;
/// `inner`: a dense element's dimensions (empty for a scalar).
pub(crate) fn open_leaf(
    at: LeafAt<'_>,
    node: &Stored,
    path: &str,
    count: u64,
    leaf: &DataType,
    levels: Levels,
    inner: &[u64],
) -> Result<BoxNode> {
    let want = leaf_want(node);
    fn col<R: Pod>(
        at: &LeafAt<'_>,
        node: &Stored,
        path: &str,
        count: u64,
        want: &Schema,
        inner: &[u64],
    ) -> Result<PodReader<R>> {
        match at {
            LeafAt::Group(g) => open_values::<R>(g, node, path, count, want, inner),
            LeafAt::Member(g, name) => {
                let (ds, n) = open_leaf_values::<R>(g, name, node, path, count, want, inner)?;
                PodReader::new(ds, inner.to_vec(), n, path)
            }
        }
    }
    if matches!(leaf, DataType::Dictionary(..)) {
        // A labelled enum (SPEC.md section 11): its codes, then their labels.
        let schema = Schema::from(node);
        let Some((names, values)) = mapping::labels(&schema, path)? else {
            return Err(Error::invalid(
                path,
                "a dictionary for an enum without labels",
            ));
        };
        let (names, codes) = Labels::tables(names, values);
        let enc = number_type(node.encoded_type.as_deref().unwrap_or("")).unwrap_or(DataType::Null);
        let per = inner
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(usize::try_from(d).ok()?));
        let per = per.ok_or_else(|| Error::invalid(path, "dense element too large"))?;
        let (inner_node, at) = with_prim!(&enc, T => {
            let c = col::<<T as arrow_array::types::ArrowPrimitiveType>::Native>(&at, node, path, count, &want, inner)?;
            let place = c.place().clone();
            (Box::new(Prim::<T> { col: c, fill: None, levels: Levels::default(), lent: None }) as BoxNode, place)
        }, _ => return Err(Error::mismatch(path, "an enum of integers", format!("encoded type {:?}", node.encoded_type))));
        return Ok(Box::new(Labels {
            inner: inner_node,
            levels,
            per,
            names,
            codes,
            at,
        }));
    }
    Ok(match leaf {
        DataType::Boolean => Box::new(Bools {
            col: col::<Bits8>(&at, node, path, count, &want, inner)?,
            levels,
        }),
        DataType::Utf8 => Box::new(Chars {
            col: col::<i32>(&at, node, path, count, &want, inner)?,
            levels,
        }),
        t => with_prim!(t, T => Box::new(Prim::<T> {
            col: col::<<T as arrow_array::types::ArrowPrimitiveType>::Native>(&at, node, path, count, &want, inner)?,
            fill: None,
            levels,
            lent: None,
        }) as BoxNode, _ => return Err(Error::mismatch(
            path,
            "numbers, Bool or char values",
            format!("a `{}` node", node.kind),
        ))),
    })
}
