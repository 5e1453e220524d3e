//! A union's TAG and INDEX columns: their names, the check of a stored
//! union node, creating, opening and resuming them, and turning a range
//! of tags and indices into each variant's row range.

use std::ops::Range;

use hdf5::Group;

use crate::codec::{expect_members, open_column};
use crate::column::{PodReader, PodWriter};
use crate::error::{Error, Place, Result};
use crate::options::WriteCtx;
use crate::raw::{self, MemType};
use crate::schema::{ids, Kind, Schema, Stored};

/// The CLASS of a union's group as a list element (SPEC.md section 4.2).
pub(crate) const UNION_VALUES: &str = "UNION_VALUES";
/// Name of the tag dataset.
pub(crate) const TAG: &str = "TAG";
/// Name of the per-row index dataset.
pub(crate) const INDEX: &str = "INDEX";
/// Rows of TAG and INDEX read at a time when an append looks for each
/// variant's last row.
const SCAN_ROWS: u64 = 1 << 16;

/// Whether `n` variants need 16-bit tags.
fn wide(n: usize) -> bool {
    n > 256
}

/// Checks a stored union node against `names` (kind, identifiers, the
/// variant names with the values 0, 1, ..., one child per variant) and
/// the members of its data group (`TAG`, `INDEX`, one group per variant).
pub(crate) fn check_union(group: &Group, node: &Stored, names: &[&str], path: &str) -> Result<()> {
    let mut want = Schema::new(Kind::Union, ids::UNION, ids::H5VEC_CODEC, "");
    want.children = vec![Schema::new(Kind::default(), "", "", ""); names.len()];
    node.expect(&want, path)?;
    let want_names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    if node.variant_names.as_ref() != Some(&want_names) {
        return Err(Error::mismatch(
            path,
            format!("variant names {want_names:?}"),
            format!("{:?}", node.variant_names.as_deref().unwrap_or(&[])),
        ));
    }
    let want_values: Vec<i64> = (0..names.len() as i64).collect();
    if node.variant_values.as_ref() != Some(&want_values) {
        return Err(Error::mismatch(
            path,
            format!("variant values {want_values:?}"),
            format!("{:?}", node.variant_values.as_deref().unwrap_or(&[])),
        ));
    }
    let mut members = vec![TAG, INDEX];
    members.extend_from_slice(names);
    expect_members(group, &members, node, path)
}

/// The TAG column: `u8` or `u16` rows of the variant enum.
pub(crate) enum TagReader {
    Narrow(PodReader<u8>),
    Wide(PodReader<u16>),
}

impl TagReader {
    /// Where the tags are, for errors.
    pub(crate) fn place(&self) -> &Place {
        match self {
            TagReader::Narrow(r) => r.place(),
            TagReader::Wide(r) => r.place(),
        }
    }
    /// Rows `start..start + n` as tag values (not yet checked against the variants).
    pub(crate) fn read_into(&self, start: u64, n: u64, out: &mut Vec<u16>) -> Result<()> {
        out.clear();
        match self {
            TagReader::Narrow(r) => out.extend(r.read(start, n)?.into_iter().map(u16::from)),
            TagReader::Wide(r) => r.read_into(start, n, out)?,
        }
        Ok(())
    }
}

/// The TAG column's writer.
pub(crate) enum TagWriter {
    Narrow(PodWriter<u8>),
    Wide(PodWriter<u16>),
}

impl TagWriter {
    /// Buffers one row's tag (`tag` < the number of variants).
    #[inline]
    pub(crate) fn push(&mut self, tag: usize) {
        match self {
            // `tag` < the number of variants, which fits the width chosen.
            TagWriter::Narrow(w) => w.buf.push(tag as u8),
            TagWriter::Wide(w) => w.buf.push(tag as u16),
        }
    }
    pub(crate) fn flush(&mut self) -> Result<()> {
        match self {
            TagWriter::Narrow(w) => w.flush(),
            TagWriter::Wide(w) => w.flush(),
        }
    }
}

/// Opens `TAG` (at least `count` rows), checked to be exactly the enum of `names`.
pub(crate) fn open_tags(
    group: &Group,
    names: &[&str],
    path: &str,
    count: u64,
) -> Result<TagReader> {
    let wide = wide(names.len());
    let size = if wide { 2 } else { 1 };
    let want = raw::tag_type(names, wide, false, path)?;
    let desc = format!(
        "an enum over uint{} with the members {}",
        size * 8,
        names
            .iter()
            .enumerate()
            .map(|(i, n)| format!("{n}={i}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let (ds, rows) = open_column(
        group,
        TAG,
        path,
        &[],
        count,
        |t| t.class == hdf5_sys::h5t::H5T_class_t::H5T_ENUM && t.size == size,
        &desc,
    )?;
    let p = Place::new(path, ds.name());
    if !raw::dataset_type_is(&ds, &want, &p)? {
        let (found, _) = raw::describe_dtype(&ds, &p)?;
        return Err(Error::mismatch(p, desc, found));
    }
    let mem = raw::tag_type(names, wide, true, path)?;
    // `mem` is an enum over the native u8 / u16, exactly the layout of the
    // reader's element type (`MemType::checked` checks its size).
    let at = Place::new(path, ds.name());
    Ok(if wide {
        TagReader::Wide(PodReader::with_type(
            ds,
            MemType::checked(mem, &at)?,
            Vec::new(),
            rows,
            path,
        )?)
    } else {
        TagReader::Narrow(PodReader::with_type(
            ds,
            MemType::checked(mem, &at)?,
            Vec::new(),
            rows,
            path,
        )?)
    })
}

/// Opens `INDEX` (at least `count` rows).
pub(crate) fn open_index(group: &Group, path: &str, count: u64) -> Result<PodReader<u64>> {
    let (ds, rows) = open_column(
        group,
        INDEX,
        path,
        &[],
        count,
        <u64 as raw::Pod>::accepts,
        "uint64",
    )?;
    PodReader::new(ds, Vec::new(), rows, path)
}

/// For rows `start..` with tags `tags` and indices `index`: each
/// variant's first row and number of rows, checked (a tag past the
/// variants, an index out of row order or overflowing, are errors naming
/// the row at `tag_place`).
pub(crate) fn variant_spans(
    tags: &[u16],
    index: &[u64],
    start: u64,
    names: &[&str],
    tag_place: &Place,
    index_place: &Place,
) -> Result<Vec<Range<u64>>> {
    let mut spans: Vec<Option<Range<u64>>> = vec![None; names.len()];
    for (i, (&t, &ix)) in tags.iter().zip(index).enumerate() {
        let row = start + i as u64;
        let span = spans.get_mut(t as usize).ok_or_else(|| {
            Error::invalid(
                tag_place.element(row),
                format!(
                    "tag value {t} is not a variant (0..{}: {})",
                    names.len(),
                    names.join(", ")
                ),
            )
        })?;
        match span {
            None => {
                let end = ix.checked_add(1).ok_or_else(|| {
                    Error::invalid(index_place.element(row), format!("INDEX {ix} out of range"))
                })?;
                *span = Some(ix..end);
            }
            Some(r) => {
                if ix != r.end {
                    return Err(Error::invalid(
                        index_place.element(row),
                        format!(
                            "INDEX {ix} of variant `{}`, expected {} (each variant's rows are in row order)",
                            names[t as usize], r.end
                        ),
                    ));
                }
                r.end += 1;
            }
        }
    }
    Ok(spans.into_iter().map(|s| s.unwrap_or(0..0)).collect())
}

/// Creates `TAG` (the enum of `names`) and `INDEX` in `group`.
pub(crate) fn create_tag_index(
    group: &Group,
    names: &[&str],
    path: &str,
    ctx: &WriteCtx<'_>,
) -> Result<(TagWriter, PodWriter<u64>)> {
    let wide = wide(names.len());
    let file = raw::tag_type(names, wide, false, path)?;
    let mem = raw::tag_type(names, wide, true, path)?;
    let chunk = ctx.chunk_rows(if wide { 2 } else { 1 });
    let comp = ctx.compression_for(TAG);
    // `mem` is an enum over the native u8 / u16, exactly the layout of the
    // writer's element type (`MemType::checked` checks its size).
    let tags = if wide {
        TagWriter::Wide(PodWriter::create_typed(
            group,
            TAG,
            &file,
            Some(MemType::checked(mem, path)?),
            &[],
            chunk,
            comp,
            ctx.checksum(),
            path,
        )?)
    } else {
        TagWriter::Narrow(PodWriter::create_typed(
            group,
            TAG,
            &file,
            Some(MemType::checked(mem, path)?),
            &[],
            chunk,
            comp,
            ctx.checksum(),
            path,
        )?)
    };
    let index = PodWriter::create(group, INDEX, &[], ctx.chunk_rows(8), path, ctx)?;
    Ok((tags, index))
}

/// Writers resuming `TAG` and `INDEX` (opened and checked by
/// [`open_tags`] and [`open_index`]) after `count` committed rows.
pub(crate) fn resume_tag_index(
    tags: TagReader,
    index: PodReader<u64>,
    names: &[&str],
    count: u64,
    path: &str,
) -> Result<(TagWriter, PodWriter<u64>)> {
    let mem = raw::tag_type(names, wide(names.len()), true, path)?;
    // `mem` is an enum over the native u8 / u16, exactly the layout of the
    // writer's element type (`MemType::checked` checks its size).
    let tags = match tags {
        TagReader::Narrow(r) => TagWriter::Narrow(PodWriter::resume_typed(
            r.ds,
            Some(MemType::checked(mem, path)?),
            Vec::new(),
            count,
            path,
        )?),
        TagReader::Wide(r) => TagWriter::Wide(PodWriter::resume_typed(
            r.ds,
            Some(MemType::checked(mem, path)?),
            Vec::new(),
            count,
            path,
        )?),
    };
    Ok((tags, PodWriter::resume(index.ds, Vec::new(), count, path)?))
}

/// Each variant's committed rows in the first `count` rows: one more than
/// the INDEX of its last row (0 if it has none), found by reading TAG and
/// INDEX backwards from `count` until every variant has been seen.
pub(crate) fn committed_rows(
    tags: &TagReader,
    index: &PodReader<u64>,
    count: u64,
    names: &[&str],
) -> Result<Vec<u64>> {
    let mut next: Vec<Option<u64>> = vec![None; names.len()];
    let mut missing = names.len();
    let (mut end, mut tbuf, mut ibuf) = (count, Vec::new(), Vec::new());
    while end > 0 && missing > 0 {
        let start = end.saturating_sub(SCAN_ROWS);
        tags.read_into(start, end - start, &mut tbuf)?;
        index.read_into(start, end - start, &mut ibuf)?;
        for i in (0..tbuf.len()).rev() {
            let row = start + i as u64;
            let slot = next.get_mut(tbuf[i] as usize).ok_or_else(|| {
                Error::invalid(
                    tags.place().element(row),
                    format!(
                        "tag value {} is not a variant (0..{})",
                        tbuf[i],
                        names.len()
                    ),
                )
            })?;
            if slot.is_none() {
                *slot = Some(ibuf[i].checked_add(1).ok_or_else(|| {
                    Error::invalid(
                        index.element(row),
                        format!("INDEX {} out of range", ibuf[i]),
                    )
                })?);
                missing -= 1;
            }
        }
        end = start;
    }
    Ok(next.into_iter().map(|n| n.unwrap_or(0)).collect())
}
