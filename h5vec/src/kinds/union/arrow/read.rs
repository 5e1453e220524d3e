//! Unions (enums with data) and labelled enums in the schema-driven reader
//! (SPEC.md sections 4.4 and 11): a union as a dense Arrow `Union` on the
//! typed decoder's TAG/INDEX checks, labels as `Dictionary(Int32, Utf8)`.

use std::ops::Range;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{
    new_empty_array, Array, ArrayRef, ArrowPrimitiveType, DictionaryArray, Int32Array, StringArray,
    UnionArray,
};
use arrow_buffer::{ArrowNativeType, BooleanBufferBuilder, NullBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, FieldRef, UnionFields};
use hdf5::Group;

use crate::codec::{child_path, open_group};
use crate::column::PodReader;
use crate::error::{Error, Place, Result};
use crate::kinds::union::{check_union, open_index, open_tags, variant_spans, TagReader};
use crate::schema::Stored;

use crate::arrow::read::nodes::{
    arrow_err, check_len, check_nulls, length, BoxNode, Levels, Node, OpenNode,
};

// ---------------------------------------------------------------------------
// Labels.

/// A labelled enum: its codes read by `inner` (one flat primitive array of
/// every leaf), each mapped to its position in `variant_names`; a code
/// without a label is an error naming the row.
pub(crate) struct Labels {
    pub(crate) inner: BoxNode,
    pub(crate) levels: Levels,
    /// Leaves per row (dense arrays of enums), at least 1 when rows have any.
    pub(crate) per: usize,
    /// The variant names, the dictionary's values.
    pub(crate) names: ArrayRef,
    /// `(value, position)` sorted by value.
    pub(crate) codes: Vec<(i64, i32)>,
    pub(crate) at: Place,
}

impl Labels {
    /// The labels of a node: the dictionary values and the sorted codes.
    pub(crate) fn tables(names: &[String], values: &[i64]) -> (ArrayRef, Vec<(i64, i32)>) {
        let dict: ArrayRef = Arc::new(StringArray::from_iter_values(names));
        // `labels` checked that the positions fit an i32.
        let mut codes: Vec<(i64, i32)> = values
            .iter()
            .enumerate()
            .map(|(i, &v)| (v, i as i32))
            .collect();
        codes.sort_unstable();
        (dict, codes)
    }

    fn key(&self, v: i64) -> Option<i32> {
        self.codes
            .binary_search_by_key(&v, |c| c.0)
            .ok()
            .map(|i| self.codes[i].1)
    }

    fn keys_of<T: ArrowPrimitiveType>(
        &self,
        arr: &dyn Array,
        valid: &dyn Fn(usize) -> bool,
        start: u64,
        out: &mut Vec<i32>,
    ) -> Result<()> {
        let a = arr
            .as_primitive_opt::<T>()
            .ok_or_else(|| Error::invalid(&self.at, "enum codes did not read as integers"))?;
        let per = self.per.max(1);
        for (i, v) in a.values().iter().enumerate() {
            let row = i / per;
            if !valid(row) {
                out.push(0);
                continue;
            }
            let key = v.to_i64().and_then(|v| self.key(v)).ok_or_else(|| {
                let labels = self
                    .codes
                    .iter()
                    .map(|(v, k)| {
                        let names = self.names.as_string::<i32>();
                        format!("{}={v}", names.value(*k as usize))
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
                Error::invalid(
                    self.at.element(start + row as u64),
                    format!("enum code {v:?} is not one of the stored labels ({labels})"),
                )
            })?;
            out.push(key);
        }
        Ok(())
    }
}

impl Node for Labels {
    fn read(&mut self, rows: Range<u64>, nulls: Option<NullBuffer>) -> Result<ArrayRef> {
        let n = length(&rows, &self.at)?;
        check_nulls(nulls.as_ref(), n, &self.at)?;
        let leaves = self.inner.read(rows.clone(), None)?;
        let mut keys = Vec::new();
        crate::limits::reserve(&mut keys, leaves.len() as u64, &self.at)?;
        let valid = |row: usize| nulls.as_ref().is_none_or(|nb| nb.is_valid(row));
        let s = rows.start;
        match leaves.data_type() {
            DataType::Int8 => self.keys_of::<Int8Type>(&leaves, &valid, s, &mut keys)?,
            DataType::Int16 => self.keys_of::<Int16Type>(&leaves, &valid, s, &mut keys)?,
            DataType::Int32 => self.keys_of::<Int32Type>(&leaves, &valid, s, &mut keys)?,
            DataType::Int64 => self.keys_of::<Int64Type>(&leaves, &valid, s, &mut keys)?,
            DataType::UInt8 => self.keys_of::<UInt8Type>(&leaves, &valid, s, &mut keys)?,
            DataType::UInt16 => self.keys_of::<UInt16Type>(&leaves, &valid, s, &mut keys)?,
            DataType::UInt32 => self.keys_of::<UInt32Type>(&leaves, &valid, s, &mut keys)?,
            DataType::UInt64 => self.keys_of::<UInt64Type>(&leaves, &valid, s, &mut keys)?,
            t => {
                return Err(Error::invalid(
                    &self.at,
                    format!("enum codes read as {t}, not integers"),
                ))
            }
        }
        let flat = self.levels.0.is_empty();
        let key_nulls = if flat { nulls.clone() } else { None };
        let dict = DictionaryArray::<Int32Type>::try_new(
            Int32Array::new(ScalarBuffer::from(keys), key_nulls),
            self.names.clone(),
        )
        .map_err(arrow_err(&self.at))?;
        if flat {
            return Ok(Arc::new(dict));
        }
        self.levels.wrap(Arc::new(dict), n, nulls, &self.at)
    }
}

// ---------------------------------------------------------------------------
// Unions.

/// A union group: TAG and INDEX, and one reader per variant, (re)opened
/// for the rows a read needs (a variant's row count is known only from the
/// rows that use it, as in the typed decoder).
pub(crate) struct Union {
    /// The reader of a schema node (`open::open_node`), for the variants.
    open_node: OpenNode,
    tags: TagReader,
    index: PodReader<u64>,
    names: Vec<String>,
    fields: UnionFields,
    children: Vec<FieldRef>,
    variants: Vec<BoxNode>,
    opened: Vec<u64>,
    groups: Vec<Group>,
    nodes: Vec<Stored>,
    path: String,
    at: Place,
    buf: Vec<u16>,
    ibuf: Vec<u64>,
}

/// Opens the union whose group is `group`, `count` rows at least, typed as
/// `field` (a dense `Union` of the mapping), after the typed load's checks;
/// `open_node` opens each variant.
pub(crate) fn open_union(
    group: &Group,
    node: &Stored,
    path: &str,
    count: u64,
    field: &Field,
    open_node: OpenNode,
) -> Result<BoxNode> {
    let names: Vec<String> = node.variant_names.clone().unwrap_or_default();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    check_union(group, node, &refs, path)?;
    let tags = open_tags(group, &refs, path, count)?;
    let index = open_index(group, path, count)?;
    let DataType::Union(fields, _) = field.data_type() else {
        return Err(Error::invalid(path, "a union without a union type"));
    };
    let children: Vec<FieldRef> = fields.iter().map(|(_, f)| f.clone()).collect();
    if children.len() != names.len() {
        return Err(Error::invalid(
            path,
            "a union type of another variant count",
        ));
    }
    let (mut variants, mut groups, mut nodes) = (Vec::new(), Vec::new(), Vec::new());
    for (i, name) in refs.iter().enumerate() {
        let p = child_path(path, name);
        let g = open_group(group, name, &p)?;
        let child = node.child(i, path)?;
        variants.push(open_node(&g, child, &p, 0, &children[i])?);
        groups.push(g);
        nodes.push(child.clone());
    }
    Ok(Box::new(Union {
        open_node,
        at: index.place().clone(),
        tags,
        index,
        opened: vec![0; names.len()],
        names,
        fields: fields.clone(),
        children,
        variants,
        groups,
        nodes,
        path: path.to_owned(),
        buf: Vec::new(),
        ibuf: Vec::new(),
    }))
}

impl Node for Union {
    fn read(&mut self, rows: Range<u64>, nulls: Option<NullBuffer>) -> Result<ArrayRef> {
        let n = length(&rows, &self.at)?;
        check_nulls(nulls.as_ref(), n, &self.at)?;
        self.tags.read_into(rows.start, n as u64, &mut self.buf)?;
        self.index.read_into(rows.start, n as u64, &mut self.ibuf)?;
        if self.buf.len() != n || self.ibuf.len() != n {
            return Err(crate::codec::exhausted(&self.at));
        }
        let refs: Vec<&str> = self.names.iter().map(String::as_str).collect();
        let spans = variant_spans(
            &self.buf,
            &self.ibuf,
            rows.start,
            &refs,
            self.tags.place(),
            self.index.place(),
        )?;
        // Each variant's validity, in its rows' order (which is row order).
        let mut valid: Vec<Option<BooleanBufferBuilder>> = match &nulls {
            Some(_) => spans
                .iter()
                .map(|s| Some(BooleanBufferBuilder::new((s.end - s.start) as usize)))
                .collect(),
            None => (0..spans.len()).map(|_| None).collect(),
        };
        let mut offsets = Vec::new();
        crate::limits::reserve(&mut offsets, n as u64, &self.at)?;
        for (i, (&t, &ix)) in self.buf.iter().zip(&self.ibuf).enumerate() {
            // `t` is a variant and `ix` in its span: checked by `variant_spans`.
            let k = t as usize;
            let off = i32::try_from(ix - spans[k].start)
                .map_err(|_| Error::invalid(&self.at, "too many rows of one variant"))?;
            offsets.push(off);
            if let (Some(b), Some(nb)) = (valid[k].as_mut(), nulls.as_ref()) {
                b.append(nb.is_valid(i));
            }
        }
        let mut children = Vec::with_capacity(spans.len());
        for (k, span) in spans.iter().enumerate() {
            let len = length(span, &self.at)?;
            if len == 0 {
                children.push(new_empty_array(self.children[k].data_type()));
                continue;
            }
            if span.end > self.opened[k] {
                let p = child_path(&self.path, &self.names[k]);
                self.variants[k] = (self.open_node)(
                    &self.groups[k],
                    &self.nodes[k],
                    &p,
                    span.end,
                    &self.children[k],
                )?;
                self.opened[k] = span.end;
            }
            let child_nulls = valid[k]
                .as_mut()
                .map(|b| NullBuffer::new(b.finish()))
                .filter(|nb| nb.null_count() > 0);
            let arr = self.variants[k].read(span.clone(), child_nulls)?;
            check_len(&arr, len, &self.at)?;
            children.push(arr);
        }
        // Every tag is below the variant count, at most 128 (the mapping).
        let type_ids: Vec<i8> = self.buf.iter().map(|&t| t as i8).collect();
        let arr = UnionArray::try_new(
            self.fields.clone(),
            ScalarBuffer::from(type_ids),
            Some(ScalarBuffer::from(offsets)),
            children,
        )
        .map_err(arrow_err(&self.at))?;
        Ok(Arc::new(arr))
    }
}
