//! The columns a filter names: a dotted path resolved through a vector's
//! records to one leaf, what its values mean ([`Domain`]), and reading its
//! values for a range of rows ([`Vals`]), with its missing rows.
//!
//! A leaf is a scalar column (numbers, `bool`, fieldless enums, instants,
//! dates, times of day, durations, strings) below records only, or the
//! same under an `Option` (its MASK says which rows are missing). Lists,
//! unions, maps, arrays and blobs have no single value per row to compare:
//! a filter on them is an error naming the column.
//!
//! A leaf is also a column of an h5col table ([`Leaf::open_table`], SPEC.md
//! section 14.7), read as h5col's query layer reads it: numbers (a row equal
//! to the dataset's user-defined fill value is missing; a NaN fill makes
//! every NaN row missing), h5col bools (never missing), fixed-length strings
//! (trailing NUL padding, and the spaces of space-padded ones, stripped; the
//! fill value marks missing rows), variable-length strings (with a
//! user-defined fill value, h5py's empty string, the empty ones are
//! missing), and categorical
//! columns (compared by label, ordered by code; the fill code is missing).
//! List columns are an error naming the column, as in h5col.

use std::ops::Range;

use hdf5::{Dataset, Group};
use hdf5_sys::h5t::H5T_class_t;

use crate::codec::{expect_members, open_column, Codec, Decoder, H5Vector};
use crate::column::PodReader;
use crate::error::{Error, Place, Result};
use crate::h5col::Categorical;
use crate::kinds::list::FillNumber;
use crate::kinds::vls::VlsField;
use crate::raw::{self, Bits8, Pod};
use crate::schema::{ids, Kind, Stored};

/// What a leaf's values are.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Domain {
    /// Signed integers (Int8 .. Int64).
    Int,
    /// Unsigned integers (UInt8 .. UInt64).
    UInt,
    /// Floats (Float32, Float64).
    Float,
    /// `bool`.
    Bool,
    /// Text.
    Str,
    /// A fieldless enum: its labels and their stored values.
    Enum(Vec<(String, i64)>),
    /// Instants in nanoseconds since 1970; `utc` when the zone is UTC.
    Instant { utc: bool },
    /// Days since 1970-01-01.
    Date,
    /// Nanoseconds since midnight.
    TimeOfDay,
    /// Nanoseconds.
    Duration,
}

impl Domain {
    /// A short description for errors.
    pub(crate) fn describe(&self) -> &'static str {
        match self {
            Domain::Int | Domain::UInt => "an integer column",
            Domain::Float => "a float column",
            Domain::Bool => "a bool column",
            Domain::Str => "a text column",
            Domain::Enum(_) => "an enum column (compare with its labels)",
            Domain::Instant { utc: true } => "an instant column (UTC)",
            Domain::Instant { utc: false } => "a date-time column without a zone",
            Domain::Date => "a date column",
            Domain::TimeOfDay => "a time-of-day column",
            Domain::Duration => "a duration column",
        }
    }
}

/// Values of a range of rows, widened without loss.
pub(crate) enum Vals {
    I(Vec<i64>),
    U(Vec<u64>),
    F(Vec<f64>),
    /// `bool` as 0 / 1.
    B(Vec<u8>),
    /// Text; `None` under a null of an `Option<String>`.
    S(Vec<Option<String>>),
}

/// One leaf, opened.
pub(crate) struct Leaf {
    /// The column as the filter names it.
    pub(crate) column: String,
    /// Its logical path (`$.a.b`).
    pub(crate) path: String,
    /// The path of its values dataset below the vector group
    /// (`data/a/b/values`); empty for text (no statistics).
    pub(crate) source: String,
    pub(crate) domain: Domain,
    reader: Reader,
    /// The MASK of an `Option` around the values (numbers only; text
    /// decodes its own).
    mask: Option<PodReader<Bits8>>,
    /// A table's number column: its fill value, which marks missing rows.
    fill: Option<Fill>,
    /// A table column's dataset (every kind of column).
    column_ds: Option<Dataset>,
}

/// The user-defined fill value of a table's number column, widened as its
/// values are: rows equal to it are missing (a NaN fill: every NaN row).
#[derive(Clone, Copy, Debug)]
enum Fill {
    I(i64),
    U(u64),
    F(f64),
}

/// A fixed-length string column of a table.
struct FixedText {
    ds: Dataset,
    at: Place,
    /// The fill value without its trailing NULs (rows equal to it, so
    /// compared, are missing); `None`: the column has no user-defined one.
    fill: Option<Vec<u8>>,
    /// Space-padded: trailing spaces are padding too.
    spacepad: bool,
}

impl FixedText {
    /// Rows `a..a + n`: `None` where missing, else the text without its
    /// padding (invalid UTF-8 is an error naming the row).
    fn read(&self, a: u64, n: u64) -> Result<Vec<Option<String>>> {
        let (buf, size) = raw::read_rows_own_type(&self.ds, a, n, &self.at)?;
        let mut out = Vec::with_capacity(n as usize);
        for (i, v) in buf.chunks(size.max(1)).take(n as usize).enumerate() {
            let v = trim_end(v, 0);
            if self.fill.as_deref() == Some(v) {
                out.push(None);
                continue;
            }
            let v = if self.spacepad { trim_end(v, b' ') } else { v };
            let s = std::str::from_utf8(v).map_err(|_| {
                Error::invalid(self.at.element(a + i as u64), "string is not valid UTF-8")
            })?;
            out.push(Some(s.to_owned()));
        }
        Ok(out)
    }
}

/// `b` without its trailing bytes equal to `pad`.
fn trim_end(b: &[u8], pad: u8) -> &[u8] {
    &b[..b.iter().rposition(|&c| c != pad).map_or(0, |i| i + 1)]
}

impl Vals {
    /// Which values equal the fill value `fill` (NaN equals a NaN fill).
    fn equal_to(&self, fill: Fill) -> Vec<bool> {
        match (self, fill) {
            (Vals::I(v), Fill::I(f)) => v.iter().map(|&x| x == f).collect(),
            (Vals::U(v), Fill::U(f)) => v.iter().map(|&x| x == f).collect(),
            (Vals::F(v), Fill::F(f)) if f.is_nan() => v.iter().map(|x| x.is_nan()).collect(),
            (Vals::F(v), Fill::F(f)) => v.iter().map(|&x| x == f).collect(),
            (v, _) => vec![false; v.len()],
        }
    }

    fn len(&self) -> usize {
        match self {
            Vals::I(v) => v.len(),
            Vals::U(v) => v.len(),
            Vals::F(v) => v.len(),
            Vals::B(v) => v.len(),
            Vals::S(v) => v.len(),
        }
    }
}

/// Opens number column `name` of a table of `nrows` rows as `R`, with its
/// user-defined fill value.
fn open_table_pod<R: FillNumber>(
    table: &Group,
    name: &str,
    path: &str,
    nrows: u64,
) -> Result<(PodReader<R>, Option<R>)> {
    let (ds, n) = open_column(table, name, path, &[], nrows, |t| R::accepts(t), R::ENCODED)?;
    let fill = raw::user_fill(&ds, R::mem_type(), std::mem::size_of::<R>(), path)?
        .and_then(|b| R::from_bytes(&b));
    Ok((PodReader::new(ds, Vec::new(), n, path)?, fill))
}

enum Reader {
    I8(PodReader<i8>),
    I16(PodReader<i16>),
    I32(PodReader<i32>),
    I64(PodReader<i64>),
    U8(PodReader<u8>),
    U16(PodReader<u16>),
    U32(PodReader<u32>),
    U64(PodReader<u64>),
    F32(PodReader<f32>),
    F64(PodReader<f64>),
    Bool(PodReader<Bits8>),
    Text(Box<dyn Decoder<Option<String>>>),
    /// A table's fixed-length string column.
    Fixed(FixedText),
    /// A table's variable-length string column; `true`: it has a
    /// user-defined fill value (h5py's: the empty string), whose rows are
    /// missing.
    Vlen(Dataset, Place, bool),
    /// A table's categorical column: its codes.
    Codes(Box<Categorical>),
}

/// Reads strings as `Option<String>` from a decoder of `String`.
struct Some_<D>(D);

impl<D: Decoder<String>> Decoder<Option<String>> for Some_<D> {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        self.0.load(rows)
    }
    fn next(&mut self) -> Result<Option<String>> {
        self.0.next().map(Some)
    }
    fn skip(&mut self) -> Result<()> {
        self.0.skip()
    }
}

/// Walks `column` (dotted) through record nodes from the vector's `data`:
/// its group, node, logical path and the path of its group below the
/// vector group (`data/a/b`).
fn walk(data: &Group, schema: &Stored, column: &str) -> Result<(Group, Stored, String, String)> {
    let context = format!(" (filter column `{column}`)");
    let (group, node, path) = crate::vector::find_field(data, schema, column, &context)?;
    let source = match column {
        "" => "data".to_owned(),
        c => format!("data/{}", c.replace('.', "/")),
    };
    Ok((group, node, path, source))
}

/// The domain of a scalar node, from its codec, encoded type and labels.
fn domain_of(node: &Stored, path: &str) -> Result<Domain> {
    let enc = node.encoded_type.as_deref().unwrap_or("");
    let int = enc.starts_with("Int");
    let uint = enc.starts_with("UInt");
    let d = match node.codec.as_str() {
        ids::IDENTITY | ids::FILL_CODEC => match enc {
            "Bool" => Some(Domain::Bool),
            "String" => Some(Domain::Str),
            "Float32" | "Float64" => Some(Domain::Float),
            _ if uint => Some(Domain::UInt),
            _ if int => Some(Domain::Int),
            _ => None,
        },
        ids::ENUM => match (&node.variant_names, &node.variant_values) {
            (Some(n), Some(v)) if n.len() == v.len() && (int || uint) => Some(Domain::Enum(
                n.iter().cloned().zip(v.iter().copied()).collect(),
            )),
            _ => None,
        },
        ids::INSTANT_CODEC if enc == "Int64" && node.time_unit.as_deref() == Some("ns") => {
            match node.time_zone.as_deref() {
                Some("UTC") => Some(Domain::Instant { utc: true }),
                None => Some(Domain::Instant { utc: false }),
                Some(_) => None,
            }
        }
        ids::DATE_CODEC if enc == "Int32" => Some(Domain::Date),
        ids::TIME_OF_DAY_CODEC if enc == "Int64" => Some(Domain::TimeOfDay),
        ids::DURATION_CODEC if enc == "Int64" => Some(Domain::Duration),
        _ => None,
    };
    d.ok_or_else(|| {
        Error::mismatch(
            path,
            "a column a filter can compare: numbers, bool, enums, text, instants, dates, times of day, durations",
            format!("codec `{}` with encoded type `{enc}`", node.codec),
        )
    })
}

fn open_pod<R: Pod>(group: &Group, path: &str, count: u64) -> Result<PodReader<R>> {
    let (ds, rows) = open_column(
        group,
        "values",
        path,
        &[],
        count,
        |t| R::accepts(t),
        R::ENCODED,
    )?;
    PodReader::new(ds, Vec::new(), rows, path)
}

impl Leaf {
    /// Opens the leaf `column` of the vector whose `data` group and schema
    /// are given, for `count` rows.
    pub(crate) fn open(data: &Group, schema: &Stored, column: &str, count: u64) -> Result<Leaf> {
        let (group, node, path, source) = walk(data, schema, column)?;
        let (node, mask) = match node.kind {
            Kind::Nullable => {
                crate::kinds::nullable::check_nullable(&node, &path)?;
                let child = crate::kinds::nullable::child_with_mask(&node, &path)?;
                (child, true)
            }
            _ => (node, false),
        };
        let not_leaf = |kind: &Kind| {
            Error::mismatch(
                &path,
                format!("a column with one value per row for filter column `{column}`"),
                format!("a `{kind}` node"),
            )
        };
        let text = |dec: Box<dyn Decoder<Option<String>>>| Leaf {
            column: column.to_owned(),
            path: path.clone(),
            source: String::new(),
            domain: Domain::Str,
            reader: Reader::Text(dec),
            mask: None,
            fill: None,
            column_ds: None,
        };
        match node.kind {
            Kind::VlsString => {
                let dec: Box<dyn Decoder<Option<String>>> = if mask {
                    return Err(not_leaf(&Kind::Nullable));
                } else if node.codec == ids::PLACEHOLDER_CODEC {
                    Box::new(<Option<String> as VlsField>::Codec::open(
                        &group, &node, &path, count,
                    )?)
                } else {
                    Box::new(Some_(<String as VlsField>::Codec::open(
                        &group, &node, &path, count,
                    )?))
                };
                return Ok(text(dec));
            }
            Kind::Scalar => {}
            k => return Err(not_leaf(&k)),
        }
        let domain = domain_of(&node, &path)?;
        if domain == Domain::Str {
            let dec: Box<dyn Decoder<Option<String>>> = if mask {
                // The Option's whole node, read as Option<String>.
                let (g, n, p, _) = walk(data, schema, column)?;
                Box::new(<Option<String> as H5Vector>::Codec::open(
                    &g, &n, &p, count,
                )?)
            } else {
                Box::new(Some_(<String as H5Vector>::Codec::open(
                    &group, &node, &path, count,
                )?))
            };
            return Ok(text(dec));
        }
        expect_members(&group, &["values"], &node, &path)?;
        let enc = node.encoded_type.as_deref().unwrap_or("");
        let reader = match enc {
            "Int8" => Reader::I8(open_pod(&group, &path, count)?),
            "Int16" => Reader::I16(open_pod(&group, &path, count)?),
            "Int32" => Reader::I32(open_pod(&group, &path, count)?),
            "Int64" => Reader::I64(open_pod(&group, &path, count)?),
            "UInt8" => Reader::U8(open_pod(&group, &path, count)?),
            "UInt16" => Reader::U16(open_pod(&group, &path, count)?),
            "UInt32" => Reader::U32(open_pod(&group, &path, count)?),
            "UInt64" => Reader::U64(open_pod(&group, &path, count)?),
            "Float32" => Reader::F32(open_pod(&group, &path, count)?),
            "Float64" => Reader::F64(open_pod(&group, &path, count)?),
            "Bool" => Reader::Bool(open_pod(&group, &path, count)?),
            other => {
                return Err(Error::mismatch(
                    &path,
                    "a number or bool encoded type",
                    format!("`{other}`"),
                ))
            }
        };
        let mask = if mask {
            Some(crate::kinds::nullable::open_mask(&group, &path, count)?)
        } else {
            None
        };
        Ok(Leaf {
            column: column.to_owned(),
            path,
            source: format!("{source}/values"),
            domain,
            reader,
            mask,
            fill: None,
            column_ds: None,
        })
    }

    /// Opens column `column` of h5col table `table` (`nrows` rows, checked
    /// by the caller) as a leaf: see the module's documentation for what
    /// each kind of column reads as.
    pub(crate) fn open_table(table: &Group, column: &str, nrows: u64) -> Result<Leaf> {
        let path = crate::h5col::column_path(column);
        let at = Place::new(&path, crate::error::member_path(table, column));
        let tp = crate::h5col::table_place(table);
        let named = format!("filter column `{column}`");
        let exists = !column.is_empty()
            && !column.contains('/')
            && !crate::h5col::is_reserved_member(column)
            && table.link_exists(column);
        if !exists {
            let cols = crate::h5col::column_members(table, &tp)?;
            return Err(Error::not_found(
                &at,
                format!(
                    "no column `{column}` in table `{}` (its columns: {})",
                    table.name(),
                    cols.join(", ")
                ),
            ));
        }
        if table.group(column).is_ok() {
            return Err(Error::mismatch(
                &at,
                format!("a scalar column for {named} (h5col's query layer has no predicates on list columns)"),
                "a list column",
            ));
        }
        let ds = table.dataset(column).map_err(|_| {
            Error::mismatch(
                &at,
                format!("a column dataset for {named}"),
                crate::guard::describe_member(table, column),
            )
        })?;
        let info = raw::type_info(&ds, &at)?;
        let leaf = |domain, reader, fill, ds| Leaf {
            column: column.to_owned(),
            path: path.clone(),
            source: column.to_owned(),
            domain,
            reader,
            mask: None,
            fill,
            column_ds: Some(ds),
        };
        let not_comparable = || {
            Error::mismatch(
                &at,
                format!(
                    "a column a filter can compare for {named}: numbers, h5col bools, strings, categorical codes"
                ),
                info.describe(),
            )
        };
        Ok(match info.class {
            H5T_class_t::H5T_ENUM if info.size == 1 => {
                let r = crate::h5col::open_bool_col(table, column, nrows)?;
                leaf(Domain::Bool, Reader::Bool(r), None, ds)
            }
            H5T_class_t::H5T_STRING if info.vlen_str => {
                open_column(
                    table,
                    column,
                    &path,
                    &[],
                    nrows,
                    |t| t.class == H5T_class_t::H5T_STRING && t.vlen_str,
                    "variable-length strings",
                )?;
                let fill = raw::has_user_fill(&ds, &at)?;
                leaf(
                    Domain::Str,
                    Reader::Vlen(ds.clone(), at.clone(), fill),
                    None,
                    ds,
                )
            }
            H5T_class_t::H5T_STRING => {
                open_column(
                    table,
                    column,
                    &path,
                    &[],
                    nrows,
                    |t| t.class == H5T_class_t::H5T_STRING && !t.vlen_str,
                    "fixed-length strings",
                )?;
                let dt = raw::dataset_type(&ds, &at)?;
                let fill =
                    raw::user_fill(&ds, dt.id(), dt.size(), &at)?.map(|f| trim_end(&f, 0).to_vec());
                let text = FixedText {
                    ds: ds.clone(),
                    at: at.clone(),
                    fill,
                    spacepad: raw::is_spacepad(&dt),
                };
                leaf(Domain::Str, Reader::Fixed(text), None, ds)
            }
            H5T_class_t::H5T_INTEGER if crate::h5col::is_categorical(table, column)? => {
                let cat = Categorical::open(table, column, nrows)?;
                let labels = cat
                    .labels()
                    .iter()
                    .enumerate()
                    .map(|(i, l)| (l.clone(), i as i64))
                    .collect();
                leaf(Domain::Enum(labels), Reader::Codes(Box::new(cat)), None, ds)
            }
            H5T_class_t::H5T_INTEGER | H5T_class_t::H5T_FLOAT => {
                macro_rules! num {
                    ($t:ty, $r:ident, $f:ident, $d:ident) => {{
                        let (r, f) = open_table_pod::<$t>(table, column, &path, nrows)?;
                        #[allow(clippy::useless_conversion)]
                        let f = f.map(|f| Fill::$f(f.into()));
                        leaf(Domain::$d, Reader::$r(r), f, ds)
                    }};
                }
                match (info.class, info.size, info.signed) {
                    (H5T_class_t::H5T_INTEGER, 1, true) => num!(i8, I8, I, Int),
                    (H5T_class_t::H5T_INTEGER, 2, true) => num!(i16, I16, I, Int),
                    (H5T_class_t::H5T_INTEGER, 4, true) => num!(i32, I32, I, Int),
                    (H5T_class_t::H5T_INTEGER, 8, true) => num!(i64, I64, I, Int),
                    (H5T_class_t::H5T_INTEGER, 1, false) => num!(u8, U8, U, UInt),
                    (H5T_class_t::H5T_INTEGER, 2, false) => num!(u16, U16, U, UInt),
                    (H5T_class_t::H5T_INTEGER, 4, false) => num!(u32, U32, U, UInt),
                    (H5T_class_t::H5T_INTEGER, 8, false) => num!(u64, U64, U, UInt),
                    (H5T_class_t::H5T_FLOAT, 4, _) => num!(f32, F32, F, Float),
                    (H5T_class_t::H5T_FLOAT, 8, _) => num!(f64, F64, F, Float),
                    _ => return Err(not_comparable()),
                }
            }
            _ => return Err(not_comparable()),
        })
    }

    /// The values dataset of a number leaf outside an `Option` (the one
    /// statistics describe); `None` for text and `Option`s. For a table
    /// column: its dataset, whatever its kind (the one its indexes
    /// describe).
    pub(crate) fn dataset(&self) -> Option<&hdf5::Dataset> {
        if let Some(ds) = &self.column_ds {
            return Some(ds);
        }
        if self.mask.is_some() {
            return None;
        }
        self.values_dataset()
    }

    /// The values dataset of a number leaf, under an `Option` too (the
    /// one search indexes describe); `None` for text.
    pub(crate) fn values_dataset(&self) -> Option<&hdf5::Dataset> {
        Some(match &self.reader {
            Reader::I8(r) => &r.ds,
            Reader::I16(r) => &r.ds,
            Reader::I32(r) => &r.ds,
            Reader::I64(r) => &r.ds,
            Reader::U8(r) => &r.ds,
            Reader::U16(r) => &r.ds,
            Reader::U32(r) => &r.ds,
            Reader::U64(r) => &r.ds,
            Reader::F32(r) => &r.ds,
            Reader::F64(r) => &r.ds,
            Reader::Bool(r) => &r.ds,
            Reader::Text(_) | Reader::Fixed(_) | Reader::Vlen(..) | Reader::Codes(_) => {
                return None
            }
        })
    }

    /// Reads rows `rows`: the values, and which rows are missing (`None`:
    /// no row is).
    pub(crate) fn read(&mut self, rows: Range<u64>) -> Result<(Vals, Option<Vec<bool>>)> {
        let (a, n) = (rows.start, rows.end - rows.start);
        fn wide<T: Pod, U>(r: &PodReader<T>, a: u64, n: u64, f: impl Fn(T) -> U) -> Result<Vec<U>> {
            Ok(r.read(a, n)?.into_iter().map(f).collect())
        }
        let vals = match &mut self.reader {
            Reader::I8(r) => Vals::I(wide(r, a, n, i64::from)?),
            Reader::I16(r) => Vals::I(wide(r, a, n, i64::from)?),
            Reader::I32(r) => Vals::I(wide(r, a, n, i64::from)?),
            Reader::I64(r) => Vals::I(r.read(a, n)?),
            Reader::U8(r) => Vals::U(wide(r, a, n, u64::from)?),
            Reader::U16(r) => Vals::U(wide(r, a, n, u64::from)?),
            Reader::U32(r) => Vals::U(wide(r, a, n, u64::from)?),
            Reader::U64(r) => Vals::U(r.read(a, n)?),
            Reader::F32(r) => Vals::F(wide(r, a, n, f64::from)?),
            Reader::F64(r) => Vals::F(r.read(a, n)?),
            Reader::Bool(r) => {
                let v = r.read(a, n)?;
                if let Some(i) = v.iter().position(|b| b.0 > 1) {
                    return Err(Error::invalid(
                        r.element(a + i as u64),
                        format!("a bool must be stored as 0 or 1, found {}", v[i].0),
                    ));
                }
                Vals::B(v.into_iter().map(|b| b.0).collect())
            }
            Reader::Text(d) => {
                d.load(rows.clone())?;
                let mut out = Vec::with_capacity(n as usize);
                for _ in 0..n {
                    out.push(d.next()?);
                }
                let missing = out.iter().map(Option::is_none).collect();
                return Ok((Vals::S(out), Some(missing)));
            }
            Reader::Fixed(f) => {
                let out = f.read(a, n)?;
                let missing = out.iter().map(Option::is_none).collect();
                return Ok((Vals::S(out), Some(missing)));
            }
            Reader::Vlen(ds, at, fill) => {
                let out = raw::read_vlen_strings(ds, a, n, &*at)?;
                let fill = *fill;
                let out: Vec<_> = out
                    .into_iter()
                    .map(|s| (!(fill && s.is_empty())).then_some(s))
                    .collect();
                let missing = out.iter().map(Option::is_none).collect();
                return Ok((Vals::S(out), Some(missing)));
            }
            Reader::Codes(c) => {
                let codes = c.read_codes(rows.clone())?;
                let missing = codes.iter().map(Option::is_none).collect();
                let vals = codes.into_iter().map(|c| c.map_or(-1, i64::from)).collect();
                return Ok((Vals::I(vals), Some(missing)));
            }
        };
        if let Some(fill) = self.fill {
            let missing = vals.equal_to(fill);
            return Ok((vals, Some(missing)));
        }
        let missing = match &self.mask {
            Some(m) => Some(
                crate::kinds::nullable::read_mask(m, &rows)?
                    .into_iter()
                    .map(|b| b.0 == 0)
                    .collect(),
            ),
            None => None,
        };
        Ok((vals, missing))
    }
}
