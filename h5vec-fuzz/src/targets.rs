//! Seed files of every kind, and the loads the fuzzer runs on their mutants.
//!
//! Shared by the fuzzer (`h5vec-fuzz`) and the regression test
//! (`tests/fuzz_regressions.rs`, which includes this file), so a saved input
//! is replayed through exactly the loads that found it. A seed is a small
//! valid file holding one vector, table or VLS array named [`NAME`]; its
//! values are rebuilt from the seed's name, so an input file alone is enough
//! to tell what a load should return.
//!
//! Every seed also goes through the untyped entry points (`h5vec::arrow`,
//! `h5vec::inspect`, `h5vec::find_containers`, [`UNTYPED_ENTRIES`]): their
//! results on a mutant are compared with their results on the intact seed,
//! which each process builds once ([`pristine`]).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use h5vec::arrow::arrow_array::RecordBatch;

use h5vec::hdf5::{File, Group};
use h5vec::{BloscCompressor, BloscShuffle, Compression, H5Vector, SaveOptions, VectorReader};
use serde::{Deserialize, Serialize};

/// The name of the one object in every seed file.
pub const NAME: &str = "v";

/// What one load returned: `Ok(true)` the original values, `Ok(false)`
/// different values (a silent change), `Err` an error message.
pub type Check = Result<bool, String>;

/// What writing a seed file returned (an h5vec or an HDF5 error).
pub type Built = Result<(), Box<dyn std::error::Error>>;

/// One kind of seed file.
pub struct Seed {
    /// Short name, used in file names of saved inputs.
    pub name: &'static str,
    /// Writes the valid file.
    pub build: fn(&Path) -> Built,
    /// The load entry points run on each mutant.
    pub entries: &'static [&'static str],
    /// Runs one entry point on the file at `path`; `scratch` is a path the
    /// entry may write (appends run on a copy there).
    pub run: fn(entry: &str, path: &Path, scratch: &Path) -> Check,
}

/// Entry points of a vector seed.
pub const VECTOR_ENTRIES: &[&str] = &[
    "load_vector",
    "load_range",
    "vector_len",
    "reader",
    "column",
    "append",
    "arrow_read",
    "arrow_range",
    "arrow_batches",
    "arrow_schema",
    "inspect",
    "find_containers",
];
/// Entry points of an h5col table seed.
pub const TABLE_ENTRIES: &[&str] = &[
    "load_table",
    "append_table",
    "arrow_read",
    "arrow_range",
    "arrow_batches",
    "arrow_schema",
    "inspect",
    "find_containers",
];
/// Entry points of a VLS string array seed.
pub const VLS_ARRAY_ENTRIES: &[&str] = &[
    "load_strings",
    "arrow_read",
    "arrow_range",
    "arrow_batches",
    "arrow_schema",
    "inspect",
    "find_containers",
];
/// The entry points every seed has that need no Rust type:
/// `h5vec::arrow::{read_vector, read_range (rows 1..n-1), batches (3 rows
/// each), read_schema}`, `h5vec::inspect` and `h5vec::find_containers`
/// (of the file's root group).
pub const UNTYPED_ENTRIES: &[&str] = &[
    "arrow_read",
    "arrow_range",
    "arrow_batches",
    "arrow_schema",
    "inspect",
    "find_containers",
];

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

// ---------------------------------------------------------------------------
// Element types: one field of every kind.

#[repr(u8)]
#[derive(H5Vector, Debug, Clone, Copy, PartialEq)]
pub enum Color {
    Red = 1,
    Green = 2,
    Blue = 200,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
pub struct Scalars {
    a: i8,
    b: u16,
    c: i32,
    d: u64,
    e: f32,
    f: f64,
    g: bool,
    h: char,
    color: Color,
}

fn scalars(n: usize) -> Vec<Scalars> {
    (0..n)
        .map(|i| Scalars {
            a: (i as i8).wrapping_mul(37),
            b: (i * 1000) as u16,
            c: -(i as i32) * 99_999,
            d: (i as u64) << 40,
            e: i as f32 / 3.0,
            f: -(i as f64) * 1e100,
            g: i % 3 == 0,
            h: char::from_u32(0x3b1 + i as u32).unwrap_or('x'),
            color: [Color::Red, Color::Green, Color::Blue][i % 3],
        })
        .collect()
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
pub struct Named {
    id: u32,
    name: String,
}

fn named(n: usize) -> Vec<Named> {
    (0..n)
        .map(|i| Named {
            id: i as u32 * 7,
            name: format!("name-{i}-{}", "é".repeat(i % 5)),
        })
        .collect()
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
pub struct Dense {
    v: [f64; 3],
    m: [[i16; 2]; 3],
    b: [u8; 4],
}

fn dense(n: usize) -> Vec<Dense> {
    (0..n)
        .map(|i| Dense {
            v: [i as f64, -0.5, 1e-300],
            m: [[i as i16, 2], [3, -(i as i16)], [5, 6]],
            b: [i as u8, 0x80, 0xff, 0],
        })
        .collect()
}

#[derive(H5Vector, Debug, Clone, Copy, PartialEq)]
pub struct Marker;

#[derive(H5Vector, Debug, Clone, PartialEq)]
pub struct Stamp {
    weeks: i32,
    us: i64,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
pub struct Nested {
    ts: Stamp,
    pair: (i32, f64),
    unit: (),
    mark: Marker,
    temp: f32,
}

fn nested(n: usize) -> Vec<Nested> {
    (0..n)
        .map(|i| Nested {
            ts: Stamp {
                weeks: 2000 + i as i32,
                us: i as i64 * 123_456_789,
            },
            pair: (-(i as i32), i as f64 / 8.0),
            unit: (),
            mark: Marker,
            temp: 20.5 + i as f32,
        })
        .collect()
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
pub struct Point {
    x: f32,
    y: f32,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
pub struct Lists {
    ints: Vec<i32>,
    words: Vec<String>,
    pts: Vec<Point>,
    deep: Vec<Vec<u8>>,
}

fn lists(n: usize) -> Vec<Lists> {
    (0..n)
        .map(|i| Lists {
            ints: (0..i as i32 % 4).map(|k| k * 1000 - 7).collect(),
            words: (0..i % 3)
                .map(|k| format!("w{k}{}", "ü".repeat(i % 2)))
                .collect(),
            pts: (0..i % 2)
                .map(|k| Point {
                    x: k as f32,
                    y: -(i as f32),
                })
                .collect(),
            deep: vec![vec![i as u8; i % 3], vec![]],
        })
        .collect()
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
pub struct Nulls {
    a: Option<f64>,
    s: Option<String>,
    l: Option<Vec<u16>>,
    p: Option<Point>,
}

fn nulls(n: usize) -> Vec<Nulls> {
    (0..n)
        .map(|i| Nulls {
            a: (i % 2 == 0).then_some(i as f64 * 0.25),
            s: (i % 3 != 0).then(|| format!("s{i}")),
            l: (i % 4 != 1).then(|| vec![i as u16; i % 3]),
            p: (i % 2 == 1).then_some(Point {
                x: 1.0,
                y: i as f32,
            }),
        })
        .collect()
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
pub struct Vls {
    #[h5vec(vls)]
    text: String,
    #[h5vec(vls)]
    maybe: Option<String>,
    k: u8,
}

fn vls(n: usize) -> Vec<Vls> {
    (0..n)
        .map(|i| Vls {
            text: "vls-ü".repeat(i % 4),
            maybe: (i % 3 != 2).then(|| format!("m{i}")),
            k: i as u8,
        })
        .collect()
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub enum Shape {
    Circle(f64),
    Poly {
        corners: Vec<(i32, i32)>,
        name: String,
    },
    Empty,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
pub struct Blob {
    #[h5vec(blob)]
    tree: BTreeMap<String, Vec<i64>>,
    #[h5vec(blob)]
    shape: Shape,
    k: i16,
}

fn blob(n: usize) -> Vec<Blob> {
    (0..n)
        .map(|i| Blob {
            tree: (0..i % 3)
                .map(|k| (format!("k{k}"), vec![k as i64 - 5; i % 4]))
                .collect(),
            shape: match i % 3 {
                0 => Shape::Circle(i as f64),
                1 => Shape::Poly {
                    corners: vec![(1, 2), (i as i32, -3)],
                    name: "p".repeat(i),
                },
                _ => Shape::Empty,
            },
            k: -(i as i16),
        })
        .collect()
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Doc {
    title: String,
    scores: Vec<f64>,
    meta: BTreeMap<String, i32>,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
pub struct Json {
    #[h5vec(json)]
    doc: Doc,
    n: i32,
}

fn json(n: usize) -> Vec<Json> {
    (0..n)
        .map(|i| Json {
            doc: Doc {
                title: format!("doc {i}"),
                scores: vec![i as f64 / 7.0, -0.1],
                meta: [("a".to_string(), i as i32)].into_iter().collect(),
            },
            n: i as i32,
        })
        .collect()
}

/// One field of every schema kind (SPEC.md sections 3 and 4): numbers,
/// bool, char, enum, String, JSON, blob, VLS strings, dense arrays, records,
/// tuples, constants, lists of every element kind, nullable and
/// fill_nullable values.
#[derive(H5Vector, Debug, Clone, PartialEq)]
pub struct Every {
    i: i64,
    b: bool,
    c: char,
    color: Color,
    s: String,
    #[h5vec(json)]
    j: Doc,
    #[h5vec(blob)]
    shape: Shape,
    #[h5vec(vls)]
    v: String,
    #[h5vec(vls)]
    vo: Option<String>,
    d: [[u16; 2]; 3],
    db: [bool; 2],
    rec: Point,
    tup: (i8, String),
    unit: (),
    mark: Marker,
    ounit: Option<()>,
    of: Option<f64>,
    os: Option<String>,
    od: Option<[i32; 2]>,
    orec: Option<Point>,
    ol: Option<Vec<i32>>,
    li: Vec<i32>,
    lb: Vec<bool>,
    ls: Vec<String>,
    lp: Vec<Point>,
    ll: Vec<Vec<u8>>,
    ld: Vec<[f32; 2]>,
    lof: Vec<Option<f64>>,
    los: Vec<Option<String>>,
    lol: Vec<Option<Vec<u8>>>,
}

fn every(n: usize) -> Vec<Every> {
    (0..n)
        .map(|i| {
            let k = i as i32;
            Every {
                i: -(i as i64) << 33,
                b: i % 2 == 0,
                c: ['a', 'é', '€', '𝄞'][i % 4],
                color: [Color::Blue, Color::Red, Color::Green][i % 3],
                s: "s".repeat(i % 3),
                j: Doc {
                    title: format!("t{i}"),
                    scores: vec![f64::from(k)],
                    meta: BTreeMap::new(),
                },
                shape: if i % 2 == 0 {
                    Shape::Circle(f64::from(k))
                } else {
                    Shape::Empty
                },
                v: format!("v{i}"),
                vo: (i % 3 != 1).then(|| "vo".repeat(i % 2)),
                d: [[i as u16, 1], [2, 3], [4, i as u16 * 2]],
                db: [i % 2 == 1, true],
                rec: Point {
                    x: i as f32,
                    y: 0.5,
                },
                tup: (-(i as i8), format!("{i}")),
                unit: (),
                mark: Marker,
                ounit: (i % 3 == 0).then_some(()),
                of: (i % 2 == 1).then_some(f64::from(k) / 4.0),
                os: (i % 4 != 0).then(|| format!("o{i}")),
                od: (i % 3 != 2).then_some([k, -k]),
                orec: (i % 2 == 0).then_some(Point { x: 1.0, y: 2.0 }),
                ol: (i % 3 != 0).then(|| vec![k; i % 3]),
                li: (0..k % 4).collect(),
                lb: vec![i % 2 == 0; i % 3],
                ls: (0..i % 3).map(|j| format!("l{j}")).collect(),
                lp: vec![Point { x: 0.0, y: 1.0 }; i % 2],
                ll: vec![vec![i as u8; i % 2], vec![]],
                ld: vec![[1.5, -(i as f32)]; i % 3],
                lof: vec![Some(f64::from(k)), None],
                los: vec![None, Some(format!("x{i}"))],
                lol: vec![(i % 2 == 0).then(|| vec![7u8; i % 4])],
            }
        })
        .collect()
}

/// An enum with data (a union, SPEC.md section 4.4).
#[derive(H5Vector, Debug, Clone, PartialEq)]
pub enum Ev {
    Idle,
    Tick(f64),
    Fill { qty: i32, note: String },
    Many(Vec<u16>),
}

/// Unions as a field, under `Option`, in a list; a labelled enum beside them.
#[derive(H5Vector, Debug, Clone, PartialEq)]
pub struct Unions {
    ev: Ev,
    oev: Option<Ev>,
    lev: Vec<Ev>,
    color: Color,
}

fn ev(i: usize) -> Ev {
    match i % 4 {
        0 => Ev::Idle,
        1 => Ev::Tick(i as f64 / 8.0),
        2 => Ev::Fill {
            qty: -(i as i32),
            note: format!("n{i}"),
        },
        _ => Ev::Many(vec![i as u16; i % 3]),
    }
}

fn unions(n: usize) -> Vec<Unions> {
    (0..n)
        .map(|i| Unions {
            ev: ev(i),
            oev: (i % 3 != 0).then(|| ev(i + 1)),
            lev: (0..i % 3).map(|k| ev(i + k)).collect(),
            color: [Color::Blue, Color::Red, Color::Green][i % 3],
        })
        .collect()
}

/// A row of an h5col table.
#[derive(H5Vector, Debug, Clone, PartialEq)]
pub struct Event {
    id: i64,
    score: Option<f64>,
    flag: bool,
    name: String,
    tags: Option<Vec<Option<String>>>,
    values: Vec<f32>,
}

fn events(n: usize) -> Vec<Event> {
    (0..n)
        .map(|i| Event {
            id: i as i64 * 3 - 1,
            score: (i % 2 == 0).then_some(i as f64 / 2.0),
            flag: i % 3 == 1,
            name: format!("ev{}", i % 10),
            tags: (i % 3 != 0).then(|| vec![Some(format!("t{i}")), None]),
            values: vec![i as f32; i % 3],
        })
        .collect()
}

fn vls_array(n: usize) -> Vec<Option<String>> {
    (0..n)
        .map(|i| match i % 4 {
            0 => None,
            1 => Some(String::new()),
            2 => Some("NA".into()),
            _ => Some(format!("héllo {i}")),
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Building and checking vectors.

/// Saves `values[..saved]`, then appends the rest in two steps.
/// A new seed file: `h5vec::create_file` when `create_file` or in checksum
/// mode, else HDF5's defaults. Checksum mode promises "0 silently different
/// loads" only where SPEC.md 6.4 does: checksummed saves in `create_file`
/// files, whose object headers (attributes, dataspaces, layouts) carry
/// HDF5's own checksums; HDF5's default (1.0-format) headers carry none.
fn new_file(path: &Path, create_file: bool) -> Result<File, Box<dyn std::error::Error>> {
    if create_file || checksum() {
        Ok(h5vec::create_file(path)?)
    } else {
        Ok(File::create(path)?)
    }
}

fn build_vector<T: H5Vector>(
    path: &Path,
    values: &[T],
    saved: usize,
    opts: &SaveOptions,
    create_file: bool,
) -> Built {
    let file = new_file(path, create_file)?;
    h5vec::save_vector_with(&file, NAME, &values[..saved], opts)?;
    let mid = saved + (values.len() - saved) / 2;
    for part in [&values[saved..mid], &values[mid..]] {
        if !part.is_empty() {
            h5vec::append_vector_with(&file, NAME, part, opts)?;
        }
    }
    Ok(())
}

fn same<T: PartialEq>(got: h5vec::Result<Vec<T>>, want: &[T]) -> Check {
    got.map(|v| v == want).map_err(err)
}

/// Loads field `field` of every row and compares it with `want`.
pub fn column<F: H5Vector + PartialEq>(g: &Group, field: &str, want: Vec<F>) -> Check {
    same(h5vec::load_column::<F>(g, NAME, field), &want)
}

fn run_vector<T: H5Vector + PartialEq + Clone>(
    seed: &str,
    entry: &str,
    path: &Path,
    scratch: &Path,
    values: &[T],
    extra: &[T],
    col: fn(&Group, &[T]) -> Check,
) -> Check {
    if UNTYPED_ENTRIES.contains(&entry) {
        return run_untyped(entry, path, seed);
    }
    let n = values.len() as u64;
    let f = File::open(path).map_err(err)?;
    match entry {
        "load_vector" => same(h5vec::load_vector::<T>(&f, NAME), values),
        "load_range" => same(
            h5vec::load_range::<T>(&f, NAME, 1..n - 1),
            &values[1..values.len() - 1],
        ),
        "vector_len" => h5vec::vector_len(&f, NAME).map(|l| l == n).map_err(err),
        "reader" => {
            let mut all = Vec::new();
            for batch in VectorReader::<T>::open(&f, NAME, 3).map_err(err)? {
                all.extend(batch.map_err(err)?);
            }
            Ok(all == values)
        }
        "column" => col(&f, values),
        "append" => {
            drop(f);
            std::fs::copy(path, scratch).map_err(err)?;
            let f = File::open_rw(scratch).map_err(err)?;
            h5vec::append_vector(&f, NAME, extra).map_err(err)?;
            let want: Vec<T> = values.iter().chain(extra).cloned().collect();
            same(h5vec::load_vector::<T>(&f, NAME), &want)
        }
        _ => Err(format!("unknown entry {entry}")),
    }
}

fn run_table(entry: &str, path: &Path, scratch: &Path) -> Check {
    if UNTYPED_ENTRIES.contains(&entry) {
        return run_untyped(entry, path, "h5col_table");
    }
    let values = events(TABLE_ROWS);
    match entry {
        "load_table" => {
            let f = File::open(path).map_err(err)?;
            same(h5vec::h5col::load_table::<Event>(&f, NAME), &values)
        }
        "append_table" => {
            std::fs::copy(path, scratch).map_err(err)?;
            let f = File::open_rw(scratch).map_err(err)?;
            let extra = &events(TABLE_ROWS + 2)[TABLE_ROWS..];
            h5vec::h5col::append_table(&f, NAME, extra).map_err(err)?;
            same(
                h5vec::h5col::load_table::<Event>(&f, NAME),
                &events(TABLE_ROWS + 2),
            )
        }
        _ => Err(format!("unknown entry {entry}")),
    }
}

fn run_vls_array(entry: &str, path: &Path, _scratch: &Path) -> Check {
    if UNTYPED_ENTRIES.contains(&entry) {
        return run_untyped(entry, path, "vls_array");
    }
    let f = File::open(path).map_err(err)?;
    match entry {
        "load_strings" => {
            let g = f.group(NAME).map_err(err)?;
            same(h5vec::vls::load_strings(&g), &vls_array(VLS_ROWS))
        }
        _ => Err(format!("unknown entry {entry}")),
    }
}

// ---------------------------------------------------------------------------
// The untyped entry points, compared with their results on the intact seed.

/// What the untyped entry points return on an intact seed file.
pub struct Pristine {
    /// `h5vec::arrow::read_vector`, [`normalized`].
    pub batch: RecordBatch,
    /// `h5vec::inspect`: container kind and rows.
    pub info: (h5vec::ContainerKind, u64),
    /// `h5vec::find_containers` of the root: kind and rows of each.
    pub found: Vec<(h5vec::ContainerKind, u64)>,
}

static PRISTINE: Mutex<BTreeMap<String, Arc<Pristine>>> = Mutex::new(BTreeMap::new());

/// The untyped results of seed `name`, from a file this process builds
/// once (in the temp directory, removed after reading).
pub fn pristine(name: &str) -> Result<Arc<Pristine>, String> {
    let mut cache = PRISTINE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = cache.get(name) {
        return Ok(p.clone());
    }
    let seed = seed_named(name).ok_or_else(|| format!("no seed {name}"))?;
    let path = std::env::temp_dir().join(format!(
        "h5vec-fuzz-pristine-{}-{name}.h5",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&path);
    let built = (|| -> Result<Pristine, String> {
        (seed.build)(&path).map_err(err)?;
        let f = File::open(&path).map_err(err)?;
        let info = h5vec::inspect(&f, NAME).map_err(err)?;
        let batch = h5vec::arrow::read_vector(&f, NAME).map_err(err)?;
        Ok(Pristine {
            batch: normalized(&batch).ok_or("cannot normalize the batch")?,
            info: (info.container, info.rows),
            found: found_of(h5vec::find_containers(&f).map_err(err)?)?,
        })
    })();
    let _ = std::fs::remove_file(&path);
    let p = Arc::new(built.map_err(|e| format!("intact seed {name}: {e}"))?);
    cache.insert(name.to_owned(), p.clone());
    Ok(p)
}

/// Kind and rows of each container found; the first problem, or finding
/// none, is the error.
fn found_of(v: Vec<h5vec::ContainerInfo>) -> Result<Vec<(h5vec::ContainerKind, u64)>, String> {
    if let Some(p) = v.iter().find_map(|c| c.problem.clone()) {
        return Err(p);
    }
    if v.is_empty() {
        return Err("no container found".into());
    }
    Ok(v.into_iter().map(|c| (c.kind, c.rows)).collect())
}

mod norm {
    //! Batches compared without the `logical_type` of their schema nodes:
    //! the writer's type name, which no load checks, so a mutant may
    //! change it and still load right.

    use std::collections::HashMap;
    use std::sync::Arc;

    use h5vec::arrow::arrow_array::cast::AsArray;
    use h5vec::arrow::arrow_array::{
        Array, ArrayRef, FixedSizeListArray, LargeListArray, RecordBatch, RecordBatchOptions,
        StructArray,
    };
    use h5vec::arrow::arrow_schema::{DataType, Field, FieldRef, Fields, Schema, SchemaRef};

    fn meta<'a>(m: impl IntoIterator<Item = (&'a String, &'a String)>) -> HashMap<String, String> {
        fn walk(v: &mut serde_json::Value) {
            match v {
                serde_json::Value::Object(m) => {
                    m.remove("logical_type");
                    m.values_mut().for_each(walk);
                }
                serde_json::Value::Array(a) => a.iter_mut().for_each(walk),
                _ => {}
            }
        }
        m.into_iter()
            .map(|(k, v)| {
                let v = match serde_json::from_str::<serde_json::Value>(v) {
                    Ok(mut j) if k == "h5vec.schema" => {
                        walk(&mut j);
                        j.to_string()
                    }
                    _ => v.clone(),
                };
                (k.clone(), v)
            })
            .collect()
    }

    fn field(f: &Field) -> FieldRef {
        Arc::new(
            Field::new(f.name(), data_type(f.data_type()), f.is_nullable())
                .with_metadata(meta(f.metadata().iter())),
        )
    }

    fn data_type(t: &DataType) -> DataType {
        match t {
            DataType::Struct(fs) => DataType::Struct(fs.iter().map(|f| field(f)).collect()),
            DataType::LargeList(f) => DataType::LargeList(field(f)),
            DataType::FixedSizeList(f, n) => DataType::FixedSizeList(field(f), *n),
            t => t.clone(),
        }
    }

    pub(super) fn schema(s: &Schema) -> SchemaRef {
        let fields: Fields = s.fields().iter().map(|f| field(f)).collect();
        Arc::new(Schema::new_with_metadata(fields, meta(s.metadata().iter())))
    }

    fn array(a: &ArrayRef) -> Option<ArrayRef> {
        Some(match a.data_type() {
            DataType::Struct(fs) => {
                let s = a.as_struct_opt()?;
                let fields: Fields = fs.iter().map(|f| field(f)).collect();
                let cols = s.columns().iter().map(array).collect::<Option<Vec<_>>>()?;
                Arc::new(
                    StructArray::try_new_with_length(fields, cols, s.nulls().cloned(), s.len())
                        .ok()?,
                )
            }
            DataType::LargeList(f) => {
                let l = a.as_list_opt::<i64>()?;
                Arc::new(
                    LargeListArray::try_new(
                        field(f),
                        l.offsets().clone(),
                        array(l.values())?,
                        l.nulls().cloned(),
                    )
                    .ok()?,
                )
            }
            DataType::FixedSizeList(f, n) => {
                let l = a.as_fixed_size_list_opt()?;
                Arc::new(
                    FixedSizeListArray::try_new_with_length(
                        field(f),
                        *n,
                        array(l.values())?,
                        l.nulls().cloned(),
                        l.len(),
                    )
                    .ok()?,
                )
            }
            _ => a.clone(),
        })
    }

    /// `b` without `logical_type` in its metadata; `None` if it cannot be rebuilt.
    pub fn normalized(b: &RecordBatch) -> Option<RecordBatch> {
        let cols = b.columns().iter().map(array).collect::<Option<Vec<_>>>()?;
        let opts = RecordBatchOptions::new().with_row_count(Some(b.num_rows()));
        RecordBatch::try_new_with_options(schema(&b.schema()), cols, &opts).ok()
    }
}

pub use norm::normalized;

/// Whether batch `got` equals rows `at..at + got.num_rows()` of `want`
/// (both without `logical_type`s).
fn same_rows(got: &RecordBatch, want: &RecordBatch, at: usize) -> bool {
    let fits = at
        .checked_add(got.num_rows())
        .is_some_and(|end| end <= want.num_rows());
    fits && normalized(got).is_some_and(|g| g == want.slice(at, got.num_rows()))
}

/// Runs untyped entry `entry` on the file at `path`, a mutant of seed
/// `seed`: `Ok(true)` when it returns what it returns on the intact seed.
/// `inspect` and `find_containers` describe what a file says, schema and
/// storage included, even where a load then refuses it: only the kind of
/// container and its rows are compared.
pub fn run_untyped(entry: &str, path: &Path, seed: &str) -> Check {
    let want = pristine(seed)?;
    let f = File::open(path).map_err(err)?;
    let n = want.batch.num_rows();
    match entry {
        "arrow_read" => {
            let got = h5vec::arrow::read_vector(&f, NAME).map_err(err)?;
            Ok(got.num_rows() == n && same_rows(&got, &want.batch, 0))
        }
        "arrow_range" => {
            let (a, b) = (1, n.saturating_sub(1).max(1));
            let got = h5vec::arrow::read_range(&f, NAME, a as u64..b as u64).map_err(err)?;
            Ok(got.num_rows() == b - a && same_rows(&got, &want.batch, a))
        }
        "arrow_batches" => {
            // Every batch is read (an error in a later one is the result),
            // as the typed `reader` entry does.
            let (mut at, mut equal) = (0usize, true);
            for b in h5vec::arrow::batches(&f, NAME, 3).map_err(err)? {
                let b = b.map_err(err)?;
                equal &= (1..=3).contains(&b.num_rows()) && same_rows(&b, &want.batch, at);
                at = at.saturating_add(b.num_rows());
            }
            Ok(equal && at == n)
        }
        "arrow_schema" => {
            let got = h5vec::arrow::read_schema(&f, NAME).map_err(err)?;
            Ok(norm::schema(&got) == want.batch.schema())
        }
        "inspect" => {
            let i = h5vec::inspect(&f, NAME).map_err(err)?;
            Ok((i.container, i.rows) == want.info)
        }
        "find_containers" => Ok(found_of(h5vec::find_containers(&f).map_err(err)?)? == want.found),
        _ => Err(format!("unknown entry {entry}")),
    }
}

const ROWS: usize = 12;
const TABLE_ROWS: usize = 9;
const VLS_ROWS: usize = 10;

/// Whether seeds are written with checksums (`--checksum`): see
/// [`set_checksum`].
static CHECKSUM: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Writes every seed with `SaveOptions::checksum(true)` and strings in the
/// VLS layout (`vls_strings(true)`: HDF5 variable-length strings keep their
/// characters in the global heap, which no checksum covers), so that every
/// byte of every value is checksummed: then no mutant may load different
/// values without an error. Call before the seeds are built.
pub fn set_checksum(on: bool) {
    CHECKSUM.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// Whether seeds are written with checksums.
pub fn checksum() -> bool {
    CHECKSUM.load(std::sync::atomic::Ordering::Relaxed)
}

/// The save options of every seed: chunks of 4 rows, and checksums in
/// checksum mode.
fn plain() -> SaveOptions {
    with_checksum(SaveOptions::default().chunk_length(4))
}

/// `o`, with checksums and VLS strings in checksum mode.
fn with_checksum(o: SaveOptions) -> SaveOptions {
    if checksum() {
        o.checksum(true).vls_strings(true)
    } else {
        o
    }
}

/// A vector seed: element type, values, rows saved before the appends,
/// options, `create_file` or a default file, and a column check.
macro_rules! vector_seed {
    ($name:literal, $ty:ty, $values:expr, $saved:expr, $opts:expr, $create:expr, $col:expr) => {
        Seed {
            name: $name,
            build: |p| build_vector::<$ty>(p, &$values, $saved, &$opts, $create),
            entries: VECTOR_ENTRIES,
            run: |e, p, s| {
                let all: Vec<$ty> = $values;
                let extra: Vec<$ty> = all[..3].to_vec();
                run_vector::<$ty>($name, e, p, s, &all, &extra, $col)
            },
        }
    };
}

/// Every seed, in a fixed order (a mutant's index picks one).
pub fn seeds() -> Vec<Seed> {
    vec![
        vector_seed!(
            "scalars",
            Scalars,
            scalars(ROWS),
            ROWS,
            plain(),
            false,
            |g, v| { column(g, "color", v.iter().map(|r| r.color).collect()) }
        ),
        vector_seed!(
            "scalars_appended_deflate",
            Scalars,
            scalars(ROWS),
            3,
            plain().deflate(4),
            true,
            |g, v| column(g, "f", v.iter().map(|r| r.f).collect())
        ),
        vector_seed!(
            "strings",
            Named,
            named(ROWS),
            ROWS,
            plain(),
            false,
            |g, v| { column(g, "name", v.iter().map(|r| r.name.clone()).collect()) }
        ),
        vector_seed!(
            "strings_appended_zstd",
            Named,
            named(ROWS),
            5,
            plain().zstd(3),
            true,
            |g, v| column(g, "name", v.iter().map(|r| r.name.clone()).collect())
        ),
        vector_seed!("dense", Dense, dense(ROWS), ROWS, plain(), false, |g, v| {
            column(g, "m", v.iter().map(|r| r.m).collect())
        }),
        vector_seed!(
            "nested",
            Nested,
            nested(ROWS),
            ROWS,
            plain(),
            false,
            |g, v| { column(g, "ts.us", v.iter().map(|r| r.ts.us).collect()) }
        ),
        vector_seed!("lists", Lists, lists(ROWS), ROWS, plain(), false, |g, v| {
            column(g, "words", v.iter().map(|r| r.words.clone()).collect())
        }),
        vector_seed!(
            "lists_appended_blosc",
            Lists,
            lists(ROWS),
            4,
            plain().compression(Compression::Blosc {
                compressor: BloscCompressor::Lz4,
                level: 5,
                shuffle: BloscShuffle::Byte,
            }),
            true,
            |g, v| column(g, "deep", v.iter().map(|r| r.deep.clone()).collect())
        ),
        vector_seed!("nulls", Nulls, nulls(ROWS), ROWS, plain(), false, |g, v| {
            column(g, "l", v.iter().map(|r| r.l.clone()).collect())
        }),
        vector_seed!(
            "nulls_appended_lzf",
            Nulls,
            nulls(ROWS),
            6,
            plain().compression(Compression::Lzf),
            false,
            |g, v| column(g, "s", v.iter().map(|r| r.s.clone()).collect())
        ),
        vector_seed!("vls", Vls, vls(ROWS), ROWS, plain(), false, |g, v| {
            column(g, "maybe", v.iter().map(|r| r.maybe.clone()).collect())
        }),
        vector_seed!("blob", Blob, blob(ROWS), 7, plain(), true, |g, v| {
            column(g, "k", v.iter().map(|r| r.k).collect())
        }),
        vector_seed!("json", Json, json(ROWS), ROWS, plain(), false, |g, v| {
            column(g, "n", v.iter().map(|r| r.n).collect())
        }),
        vector_seed!("every", Every, every(ROWS), 5, plain(), true, |g, v| {
            column(g, "lol", v.iter().map(|r| r.lol.clone()).collect())
        }),
        vector_seed!("unions", Unions, unions(ROWS), 6, plain(), true, |g, v| {
            column(g, "ev", v.iter().map(|r| r.ev.clone()).collect())
        }),
        Seed {
            name: "h5col_table",
            build: |p| {
                let f = new_file(p, false)?;
                let rows = events(TABLE_ROWS);
                let opts = with_checksum(SaveOptions::default());
                h5vec::h5col::save_table_with(&f, NAME, &rows[..5], &opts)?;
                Ok(h5vec::h5col::append_table(&f, NAME, &rows[5..])?)
            },
            entries: TABLE_ENTRIES,
            run: run_table,
        },
        Seed {
            name: "vls_array",
            build: |p| {
                let f = new_file(p, false)?;
                Ok(h5vec::vls::save_strings_with(
                    &f,
                    NAME,
                    &vls_array(VLS_ROWS),
                    &with_checksum(SaveOptions::default()),
                )?)
            },
            entries: VLS_ARRAY_ENTRIES,
            run: run_vls_array,
        },
    ]
}

/// The seed called `name`.
pub fn seed_named(name: &str) -> Option<Seed> {
    seeds().into_iter().find(|s| s.name == name)
}
