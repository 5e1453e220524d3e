//! Writing unions (enums with data) and labelled enums from Arrow (SPEC.md
//! sections 4.4 and 11): a dense `Union` into TAG, INDEX and the variants'
//! columns, created and resumed by the typed union's own functions; a
//! dictionary of labels into the enum's stored codes.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{new_null_array, Array, ArrayRef, FixedSizeListArray, PrimitiveArray};
use arrow_buffer::{NullBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field};
use hdf5::Group;

use crate::codec::{child_path, open_group};
use crate::column::PodWriter;
use crate::error::{Context, Error, Result};
use crate::kinds::list::check_class;
use crate::kinds::union::{
    check_union, committed_rows, create_tag_index, open_index, open_tags, resume_tag_index,
    TagWriter, INDEX, TAG, UNION_VALUES,
};
use crate::options::WriteCtx;
use crate::schema::{Schema, Stored};

use crate::arrow::mapping::{field_of, labels};
use crate::arrow::write::col::{check_nulls, hole, wrong_array, At, ChildCol};

/// A union's writers: TAG, INDEX, each variant's rows so far, and one
/// column writer per variant (a record, or a constant).
pub(crate) struct UnionCol<C> {
    tags: TagWriter,
    index: PodWriter<u64>,
    next: Vec<u64>,
    names: Vec<String>,
    /// Each variant's Arrow type, for the placeholder rows of enclosing nulls.
    types: Vec<DataType>,
    variants: Vec<C>,
}

/// The variant names of union node `node`, checked as a typed save checks
/// them (none beside TAG and INDEX).
fn variant_names(node: &Schema, path: &str) -> Result<Vec<String>> {
    let names = node.variant_names.clone().unwrap_or_default();
    if names.len() != node.children.len() || names.is_empty() {
        return Err(Error::mismatch(
            path,
            format!("one variant name per variant ({})", node.children.len()),
            names.len(),
        ));
    }
    for (i, n) in names.iter().enumerate() {
        if n == TAG || n == INDEX || names[..i].contains(n) {
            return Err(Error::bad_name(
                child_path(path, n),
                format!("a variant named `{n}` twice or beside the union's {TAG} and {INDEX}"),
            ));
        }
    }
    Ok(names)
}

/// The Arrow types of the variants, as the mapping gives them.
fn variant_types(node: &Schema, path: &str) -> Result<Vec<DataType>> {
    let f = field_of("", node, false, path)?;
    match f.data_type() {
        DataType::Union(fields, _) => {
            Ok(fields.iter().map(|(_, f)| f.data_type().clone()).collect())
        }
        t => Err(Error::invalid(path, format!("a union node typed {t}"))),
    }
}

impl<C: ChildCol> UnionCol<C> {
    /// Creates union field `node` in its data group `group`.
    pub(crate) fn create(
        node: &Schema,
        group: &Group,
        path: &str,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self> {
        let names = variant_names(node, path)?;
        let types = variant_types(node, path)?;
        let mut variants = Vec::with_capacity(names.len());
        for (name, child) in names.iter().zip(&node.children) {
            let p = child_path(path, name);
            let g = group.create_group(name).at(&p)?;
            variants.push(C::create(child, &g, &p, ctx)?);
        }
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let (tags, index) = create_tag_index(group, &refs, path, ctx)?;
        Ok(UnionCol {
            tags,
            index,
            next: vec![0; names.len()],
            names,
            types,
            variants,
        })
    }

    /// Creates a union list element: a `UNION_VALUES` group `name` of `parent`.
    pub(crate) fn create_item(
        node: &Schema,
        parent: &Group,
        name: &str,
        path: &str,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self> {
        let g = parent.create_group(name).at(path)?;
        crate::raw::write_attr_ascii(&g, "CLASS", UNION_VALUES, path)?;
        UnionCol::create(node, &g, path, ctx)
    }

    /// Opens union field `node` of `count` rows for appending, after the
    /// typed append's checks; each variant resumes after its committed rows.
    pub(crate) fn append(
        node: &Stored,
        group: &Group,
        path: &str,
        count: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self> {
        let schema = Schema::from(node);
        let names = variant_names(&schema, path)?;
        let types = variant_types(&schema, path)?;
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        check_union(group, node, &refs, path)?;
        let tags = open_tags(group, &refs, path, count)?;
        let index = open_index(group, path, count)?;
        let next = committed_rows(&tags, &index, count, &refs)?;
        let mut variants = Vec::with_capacity(names.len());
        for (i, name) in refs.iter().enumerate() {
            let p = child_path(path, name);
            let g = open_group(group, name, &p)?;
            variants.push(C::append(node.child(i, path)?, &g, &p, next[i], ctx)?);
        }
        let (tags, index) = resume_tag_index(tags, index, &refs, count, path)?;
        Ok(UnionCol {
            tags,
            index,
            next,
            names,
            types,
            variants,
        })
    }

    /// Opens a union list element group `name` of `parent` for appending.
    pub(crate) fn append_item(
        node: &Stored,
        parent: &Group,
        name: &str,
        path: &str,
        rows: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self> {
        let g = open_group(parent, name, path)?;
        check_class(&g, UNION_VALUES, path)?;
        UnionCol::append(node, &g, path, rows, ctx)
    }

    /// Buffers a dense `Union`: each row's tag and index, and each
    /// variant's rows as runs of consecutive child rows (one write per
    /// run); rows under an enclosing null are placeholder rows of the
    /// first variant, as the typed encoder writes them.
    pub(crate) fn write(
        &mut self,
        arr: &dyn Array,
        holes: Option<&NullBuffer>,
        at: &At<'_>,
    ) -> Result<()> {
        let u = arr
            .as_union_opt()
            .ok_or_else(|| wrong_array(at, "a union (enum with data)", arr))?;
        let Some(offsets) = u.offsets() else {
            return Err(Error::mismatch(
                at.path,
                "a dense Union (SPEC.md section 11)",
                "a sparse Union",
            ));
        };
        check_nulls(arr.logical_nulls().as_ref(), holes, at)?;
        let n = self.variants.len();
        let lens: Vec<usize> = (0..n).map(|k| u.child(k as i8).len()).collect();
        // Per variant: runs of child rows (`Some(start)`) or of placeholders (`None`).
        let mut runs: Vec<Vec<(Option<usize>, usize)>> = vec![Vec::new(); n];
        for (i, (&t, &off)) in u.type_ids().iter().zip(offsets.iter()).enumerate() {
            let (k, src) = if hole(holes, i) {
                (0, None)
            } else {
                let k = usize::try_from(t).ok().filter(|&k| k < n).ok_or_else(|| {
                    Error::invalid(
                        at.row(i),
                        format!("union type id {t} is not a variant (0..{n})"),
                    )
                })?;
                let off = usize::try_from(off)
                    .ok()
                    .filter(|&o| o < lens[k])
                    .ok_or_else(|| {
                        Error::invalid(
                            at.row(i),
                            format!(
                                "union offset {off} outside variant `{}`'s {} rows",
                                self.names[k], lens[k]
                            ),
                        )
                    })?;
                (k, Some(off))
            };
            match (runs[k].last_mut(), src) {
                (Some((Some(a), len)), Some(o)) if *a + *len == o => *len += 1,
                (Some((None, len)), None) => *len += 1,
                (_, s) => runs[k].push((s, 1)),
            }
            self.tags.push(k);
            self.index.buf.push(self.next[k]);
            self.next[k] += 1;
        }
        for (k, runs) in runs.iter().enumerate() {
            let p = child_path(at.path, &self.names[k]);
            let child = u.child(k as i8);
            for &(src, len) in runs {
                let vat = At {
                    path: &p,
                    base: src.unwrap_or(0) as u64,
                };
                match src {
                    Some(a) => self.variants[k].write(child.slice(a, len).as_ref(), None, &vat)?,
                    None => {
                        let blank = new_null_array(&self.types[k], len);
                        let all = NullBuffer::new_null(len);
                        self.variants[k].write(blank.as_ref(), Some(&all), &vat)?
                    }
                }
            }
        }
        Ok(())
    }

    /// The variants' values, then INDEX, then TAG (SPEC.md section 8).
    pub(crate) fn flush(&mut self) -> Result<()> {
        for v in &mut self.variants {
            v.flush()?;
        }
        self.index.flush()?;
        self.tags.flush()
    }
}

// ---------------------------------------------------------------------------
// Labels.

/// A labelled enum's codes from a dictionary of its labels (any key type,
/// any string values: matched by name), written by `inner`.
pub(crate) struct LabelsCol<C> {
    pub(crate) inner: C,
    names: Vec<String>,
    values: Vec<i64>,
    enc: DataType,
    per: usize,
}

impl<C: ChildCol> LabelsCol<C> {
    /// `col` (the codes' writer of scalar or dense node `node`) with the
    /// node's labels, or `Err(col)` for an enum without labels.
    pub(crate) fn wrap(node: &Schema, col: C, path: &str) -> Result<std::result::Result<Self, C>> {
        let Some((names, values)) = labels(node, path)? else {
            return Ok(Err(col));
        };
        let enc = crate::arrow::mapping::number_type(node.encoded_type.as_deref().unwrap_or(""))
            .filter(|t| t.is_integer())
            .ok_or_else(|| {
                Error::mismatch(
                    path,
                    "an enum of integers",
                    format!("{:?}", node.encoded_type),
                )
            })?;
        let per = node
            .dimensions
            .as_deref()
            .unwrap_or(&[])
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(usize::try_from(d).ok()?))
            .ok_or_else(|| Error::invalid(path, "dense element too large"))?;
        Ok(Ok(LabelsCol {
            inner: col,
            names: names.to_vec(),
            values: values.to_vec(),
            enc,
            per,
        }))
    }

    /// The codes of `arr` (a dictionary, or `FixedSizeList`s of one), in
    /// the same shape with the codes' integer type, written by `inner`.
    pub(crate) fn write(
        &mut self,
        arr: &dyn Array,
        holes: Option<&NullBuffer>,
        at: &At<'_>,
    ) -> Result<()> {
        let codes = self.codes(arr, at)?;
        self.inner.write(codes.as_ref(), holes, at)
    }

    fn codes(&self, arr: &dyn Array, at: &At<'_>) -> Result<ArrayRef> {
        if let Some(l) = arr.as_fixed_size_list_opt() {
            let values = self.codes(l.values().as_ref(), at)?;
            let field = Arc::new(Field::new(
                crate::arrow::mapping::ITEM,
                values.data_type().clone(),
                true,
            ));
            return FixedSizeListArray::try_new(
                field,
                l.value_length(),
                values,
                l.nulls().cloned(),
            )
            .map(|a| Arc::new(a) as ArrayRef)
            .map_err(|e| Error::invalid(at.path, format!("cannot rebuild the array: {e}")));
        }
        let d = arr
            .as_any_dictionary_opt()
            .ok_or_else(|| wrong_array(at, "a labelled enum (a Dictionary of its labels)", arr))?;
        let dict = d.values();
        // Each dictionary value's code, by label name.
        let text = |j: usize| -> Option<String> {
            if dict.is_null(j) {
                return None;
            }
            if let Some(s) = dict.as_string_opt::<i32>() {
                return Some(s.value(j).to_owned());
            }
            if let Some(s) = dict.as_string_opt::<i64>() {
                return Some(s.value(j).to_owned());
            }
            dict.as_string_view_opt().map(|s| s.value(j).to_owned())
        };
        let mut by_key: Vec<Result<i64, String>> = Vec::with_capacity(dict.len());
        for j in 0..dict.len() {
            by_key.push(match text(j) {
                Some(t) => match self.names.iter().position(|n| *n == t) {
                    Some(p) => Ok(self.values[p]),
                    None => Err(t),
                },
                None => Err(String::from("(null)")),
            });
        }
        let nulls = arr.logical_nulls();
        let keys = crate::arrow::flat::dictionary_keys(d.keys());
        let per = self.per.max(1);
        let mut codes = Vec::with_capacity(keys.len());
        for (i, &key) in keys.iter().enumerate() {
            if nulls.as_ref().is_some_and(|n| n.is_null(i)) {
                codes.push(0);
                continue;
            }
            match by_key.get(key) {
                Some(Ok(v)) => codes.push(*v),
                Some(Err(t)) => {
                    return Err(Error::encode(
                        at.row(i / per),
                        format!(
                            "{t:?} is not a label of the enum ({})",
                            self.names.join(", ")
                        ),
                    ))
                }
                None => {
                    return Err(Error::invalid(
                        at.row(i / per),
                        "dictionary key out of range of the dictionary's values",
                    ))
                }
            }
        }
        macro_rules! build {
            ($($dt:ident => $t:ty),*) => {
                match &self.enc {
                    $(DataType::$dt => {
                        let mut v = Vec::with_capacity(codes.len());
                        for (i, &c) in codes.iter().enumerate() {
                            // Labels come from the typed enum: they fit its type.
                            v.push(<<$t as arrow_array::ArrowPrimitiveType>::Native>::try_from(c).map_err(|_| {
                                Error::encode(at.row(i / per), format!("enum value {c} does not fit {}", self.enc))
                            })?);
                        }
                        Arc::new(PrimitiveArray::<$t>::new(ScalarBuffer::from(v), nulls.clone())) as ArrayRef
                    })*
                    t => return Err(Error::mismatch(at.path, "an enum of integers", t)),
                }
            };
        }
        Ok(
            build!(Int8 => Int8Type, Int16 => Int16Type, Int32 => Int32Type, Int64 => Int64Type,
            UInt8 => UInt8Type, UInt16 => UInt16Type, UInt32 => UInt32Type, UInt64 => UInt64Type),
        )
    }
}
