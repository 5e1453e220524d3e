//! The hand-written hdf5-metno code h5vec is measured against.
//!
//! What a competent user writes without h5vec: transpose `Vec<Record>` into
//! one `Vec` per field (whole columns), create one chunked dataset per field
//! with `new_dataset_builder` and write it with one call; reading does the
//! reverse and rebuilds `Vec<Record>`. Dataset paths follow the HDF5Vectors
//! `data/<field>/values` layout, without the schema metadata.

use hdf5::{File, H5Type, Result};

use crate::data::{Event, Measurement, Timestamp};

/// Rows per chunk of the baseline (65,536, as in the peer measurements).
pub const CHUNK_ROWS: usize = 1 << 16;

/// How the baseline stores its datasets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Chunked (`CHUNK_ROWS`), no filter.
    Chunked,
    /// Chunked (`CHUNK_ROWS`), shuffle + deflate(level).
    Deflate(u8),
    /// One contiguous block (no chunking).
    Contiguous,
}

/// Writes `data` as a new dataset `path` of `shape`; intermediate groups
/// are created.
fn put<T: H5Type>(
    file: &File,
    path: &str,
    data: &[T],
    shape: &[usize],
    layout: Layout,
) -> Result<()> {
    let mut b = file.new_dataset_builder();
    if shape[0] > 0 {
        let mut chunk = shape.to_vec();
        chunk[0] = chunk[0].min(CHUNK_ROWS);
        b = match layout {
            Layout::Contiguous => b,
            Layout::Chunked => b.chunk(chunk),
            Layout::Deflate(level) => b.chunk(chunk).shuffle().deflate(level),
        };
    }
    b.empty::<T>().shape(shape).create(path)?.write_raw(data)
}

fn put_count(file: &File, path: &str, n: usize) -> Result<()> {
    file.new_dataset::<i64>()
        .create(path)?
        .write_scalar(&(n as i64))
}

fn get<T: H5Type>(file: &File, path: &str) -> Result<Vec<T>> {
    file.dataset(path)?.read_raw::<T>()
}

fn get_count(file: &File, path: &str) -> Result<usize> {
    Ok(file.dataset(path)?.read_scalar::<i64>()? as usize)
}

// ---------------------------------------------------------------------------
// W1
// ---------------------------------------------------------------------------

/// Saves W1 column by column in `file` under `name/`.
pub fn save_w1(file: &File, name: &str, recs: &[Measurement], layout: Layout) -> Result<()> {
    let n = recs.len();
    let weeks: Vec<i32> = recs.iter().map(|r| r.timestamp.weeks).collect();
    let micros: Vec<i64> = recs.iter().map(|r| r.timestamp.microseconds).collect();
    let temp: Vec<f64> = recs.iter().map(|r| r.temperature).collect();
    let pos: Vec<f64> = recs.iter().flat_map(|r| r.position).collect();
    let d = format!("{name}/data");
    put(
        file,
        &format!("{d}/timestamp/weeks/values"),
        &weeks,
        &[n],
        layout,
    )?;
    put(
        file,
        &format!("{d}/timestamp/microseconds/values"),
        &micros,
        &[n],
        layout,
    )?;
    put(
        file,
        &format!("{d}/temperature/values"),
        &temp,
        &[n],
        layout,
    )?;
    put(file, &format!("{d}/position/values"), &pos, &[n, 3], layout)?;
    put_count(file, &format!("{name}/metadata/count"), n)
}

/// Loads what [`save_w1`] wrote.
pub fn load_w1(file: &File, name: &str) -> Result<Vec<Measurement>> {
    let n = get_count(file, &format!("{name}/metadata/count"))?;
    let d = format!("{name}/data");
    let weeks: Vec<i32> = get(file, &format!("{d}/timestamp/weeks/values"))?;
    let micros: Vec<i64> = get(file, &format!("{d}/timestamp/microseconds/values"))?;
    let temp: Vec<f64> = get(file, &format!("{d}/temperature/values"))?;
    let pos: Vec<f64> = get(file, &format!("{d}/position/values"))?;
    if weeks.len() != n || micros.len() != n || temp.len() != n || pos.len() != 3 * n {
        return Err("column length differs from count".into());
    }
    Ok(weeks
        .iter()
        .zip(&micros)
        .zip(&temp)
        .zip(pos.chunks_exact(3))
        .map(|(((&weeks, &microseconds), &temperature), p)| Measurement {
            timestamp: Timestamp {
                weeks,
                microseconds,
            },
            temperature,
            position: [p[0], p[1], p[2]],
        })
        .collect())
}

/// Reference: the whole `Vec` as one native compound dataset, written
/// straight from memory (no transposition, includes the 4 padding bytes).
pub fn save_w1_compound(
    file: &File,
    name: &str,
    recs: &[Measurement],
    layout: Layout,
) -> Result<()> {
    put(
        file,
        &format!("{name}/records"),
        recs,
        &[recs.len()],
        layout,
    )?;
    put_count(file, &format!("{name}/metadata/count"), recs.len())
}

/// Loads what [`save_w1_compound`] wrote.
pub fn load_w1_compound(file: &File, name: &str) -> Result<Vec<Measurement>> {
    let n = get_count(file, &format!("{name}/metadata/count"))?;
    let v: Vec<Measurement> = get(file, &format!("{name}/records"))?;
    if v.len() != n {
        return Err("record count differs from count".into());
    }
    Ok(v)
}

// ---------------------------------------------------------------------------
// W2: offsets + bytes
// ---------------------------------------------------------------------------

/// Saves W2 as flat columns: `id/values`, `name/{OFFSETS,CHARS}`,
/// `tags/{OFFSETS, VALUES/OFFSETS, VALUES/CHARS}`, `values/{OFFSETS,VALUES}`.
/// OFFSETS have N+1 entries starting at 0.
pub fn save_w2(file: &File, name: &str, events: &[Event], layout: Layout) -> Result<()> {
    let n = events.len();
    let ids: Vec<u64> = events.iter().map(|e| e.id).collect();
    let mut name_off = Vec::with_capacity(n + 1);
    let mut name_chars = Vec::new();
    let mut tag_off = Vec::with_capacity(n + 1);
    let mut tag_char_off = vec![0u64];
    let mut tag_chars = Vec::new();
    let mut val_off = Vec::with_capacity(n + 1);
    let mut vals = Vec::new();
    name_off.push(0u64);
    tag_off.push(0u64);
    val_off.push(0u64);
    for e in events {
        name_chars.extend_from_slice(e.name.as_bytes());
        name_off.push(name_chars.len() as u64);
        for t in &e.tags {
            tag_chars.extend_from_slice(t.as_bytes());
            tag_char_off.push(tag_chars.len() as u64);
        }
        tag_off.push(tag_char_off.len() as u64 - 1);
        vals.extend_from_slice(&e.values);
        val_off.push(vals.len() as u64);
    }
    let d = format!("{name}/data");
    put(file, &format!("{d}/id/values"), &ids, &[n], layout)?;
    put(
        file,
        &format!("{d}/name/OFFSETS"),
        &name_off,
        &[n + 1],
        layout,
    )?;
    put(
        file,
        &format!("{d}/name/CHARS"),
        &name_chars,
        &[name_chars.len()],
        layout,
    )?;
    put(
        file,
        &format!("{d}/tags/OFFSETS"),
        &tag_off,
        &[n + 1],
        layout,
    )?;
    put(
        file,
        &format!("{d}/tags/VALUES/OFFSETS"),
        &tag_char_off,
        &[tag_char_off.len()],
        layout,
    )?;
    put(
        file,
        &format!("{d}/tags/VALUES/CHARS"),
        &tag_chars,
        &[tag_chars.len()],
        layout,
    )?;
    put(
        file,
        &format!("{d}/values/OFFSETS"),
        &val_off,
        &[n + 1],
        layout,
    )?;
    put(
        file,
        &format!("{d}/values/VALUES"),
        &vals,
        &[vals.len()],
        layout,
    )?;
    put_count(file, &format!("{name}/metadata/count"), n)
}

fn utf8(bytes: &[u8]) -> Result<String> {
    String::from_utf8(bytes.to_vec()).map_err(|_| "invalid UTF-8".into())
}

/// Loads what [`save_w2`] wrote.
pub fn load_w2(file: &File, name: &str) -> Result<Vec<Event>> {
    let n = get_count(file, &format!("{name}/metadata/count"))?;
    let d = format!("{name}/data");
    let ids: Vec<u64> = get(file, &format!("{d}/id/values"))?;
    let name_off: Vec<u64> = get(file, &format!("{d}/name/OFFSETS"))?;
    let name_chars: Vec<u8> = get(file, &format!("{d}/name/CHARS"))?;
    let tag_off: Vec<u64> = get(file, &format!("{d}/tags/OFFSETS"))?;
    let tag_char_off: Vec<u64> = get(file, &format!("{d}/tags/VALUES/OFFSETS"))?;
    let tag_chars: Vec<u8> = get(file, &format!("{d}/tags/VALUES/CHARS"))?;
    let val_off: Vec<u64> = get(file, &format!("{d}/values/OFFSETS"))?;
    let vals: Vec<f32> = get(file, &format!("{d}/values/VALUES"))?;
    if ids.len() != n || name_off.len() != n + 1 || tag_off.len() != n + 1 || val_off.len() != n + 1
    {
        return Err("column length differs from count".into());
    }
    let slice = |off: &[u64], i: usize| -> Result<std::ops::Range<usize>> {
        let (a, b) = (off[i] as usize, off[i + 1] as usize);
        if a <= b {
            Ok(a..b)
        } else {
            Err("decreasing offsets".into())
        }
    };
    let mut out = Vec::with_capacity(n);
    for (i, &id) in ids.iter().enumerate() {
        let name = utf8(
            name_chars
                .get(slice(&name_off, i)?)
                .ok_or("offset out of range")?,
        )?;
        let tags = slice(&tag_off, i)?
            .map(|t| {
                utf8(
                    tag_chars
                        .get(slice(&tag_char_off, t)?)
                        .ok_or("offset out of range")?,
                )
            })
            .collect::<Result<Vec<String>>>()?;
        let values = vals
            .get(slice(&val_off, i)?)
            .ok_or("offset out of range")?
            .to_vec();
        out.push(Event {
            id,
            name,
            tags,
            values,
        });
    }
    Ok(out)
}
