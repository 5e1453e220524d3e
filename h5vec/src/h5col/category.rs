//! Categorical columns (SPEC.md section 9, "Categorical columns"): integer
//! codes whose meaning is a label in a labels dataset, exactly as h5col
//! writes them. Read as their labels into `String`, `Option<String>`, a
//! fieldless enum ([`TableEnum`]: the variant named by the label) or
//! `Option` of one; written from a fieldless enum field (its variant names
//! are the labels, in declaration order).
//!
//! Layout on disk:
//! ```text
//! <table>/<col>                     1-D integer codes (h5vec writes int8 up to 127
//!                                   labels, int16 up to 32767, else int32), chunked,
//!                                   extendible; fill value = the missing code (-1);
//!                                   @CATEGORIES = scalar H5T_STD_REF_OBJ object reference
//!                                   to the labels dataset
//! <table>/CATEGORIES/               group of the table's labels datasets
//! <table>/CATEGORIES/<col>__CATEGORIES
//!                                   1-D fixed-length UTF-8 strings, null-padded, sized to
//!                                   the longest label (contiguous): label i is code i
//! ```
//! A code equal to the column's (user-defined) fill value is missing; any
//! other code outside `0..labels` is an error naming the row. The
//! reference is compared with references to the datasets of the table's
//! `CATEGORIES` group, never followed (readers also take HDF5 1.12's
//! `H5T_STD_REF`, and variable-length string labels).

use std::collections::HashMap;
use std::ops::Range;

use hdf5::{Dataset, Datatype, Group};
use hdf5_sys::h5t::{self, H5T_class_t};

use crate::codec::{exhausted, open_column, range_len};
use crate::error::{Context, Error, Place, Result};
use crate::options::WriteCtx;
use crate::raw::{self, IntType, RefTarget};

use super::fields::{ColumnReader, ColumnWriter, Phase, TableColumn};
use super::table::{column_place, CATEGORIES};

/// Most labels h5vec reads from one labels dataset.
const MAX_LABELS: u64 = 1 << 24;

/// A fieldless enum as an h5col categorical column: the derive implements
/// it (`#[derive(H5Vector)]` on a fieldless enum); the variant names are
/// the labels.
#[doc(hidden)]
pub trait TableEnum: Sized + 'static {
    /// The variant names, in declaration order.
    const VARIANTS: &'static [&'static str];
    /// The position of `self`'s variant in [`VARIANTS`](Self::VARIANTS).
    fn variant_index(&self) -> usize;
    /// The variant at position `i` of [`VARIANTS`](Self::VARIANTS).
    fn from_variant_index(i: usize) -> Option<Self>;
}

/// Whether member `name` of `table` is a categorical column: a dataset
/// carrying a `CATEGORIES` attribute.
pub(crate) fn is_categorical(table: &Group, name: &str) -> Result<bool> {
    let Ok(ds) = table.dataset(name) else {
        return Ok(false);
    };
    raw::has_attr(&ds, CATEGORIES, &column_place(table, name))
}

/// An opened categorical column: its codes dataset and its labels.
pub(crate) struct Categorical {
    ds: Dataset,
    dt: Datatype,
    int: IntType,
    /// The missing code (the dataset's user-defined fill value), if any.
    fill: Option<i128>,
    labels: Vec<String>,
    /// HDF5 path of the labels dataset, for errors.
    labels_at: String,
    path: Place,
}

impl Categorical {
    /// Opens and checks categorical column `name` of a table of `nrows`
    /// rows, with its labels.
    pub(crate) fn open(table: &Group, name: &str, nrows: u64) -> Result<Categorical> {
        let path = column_place(table, name);
        let (ds, _) = open_column(
            table,
            name,
            path.path(),
            &[],
            nrows,
            |t| t.class == H5T_class_t::H5T_INTEGER,
            "integer category codes",
        )?;
        let dt = raw::dataset_type(&ds, &path)?;
        let int = raw::int_type(&dt).ok_or_else(|| {
            Error::mismatch(&path, "category codes of 8 to 64 bits", "another integer")
        })?;
        let fill = raw::user_fill(&ds, dt.id(), int.size, &path)?.map(|b| int.decode(&b));
        let ap = path.attribute(CATEGORIES);
        if !raw::has_attr(&ds, CATEGORIES, &path)? {
            return Err(Error::mismatch(
                &path,
                "a categorical column (integer codes with a CATEGORIES reference)",
                "no CATEGORIES attribute",
            ));
        }
        let group_at = crate::codec::member_path(table, CATEGORIES);
        let want = format!("a reference to a labels dataset in `{group_at}`");
        if !table.link_exists(CATEGORIES) {
            return Err(Error::mismatch(
                &ap,
                want,
                "no CATEGORIES group in the table",
            ));
        }
        let cats = table.group(CATEGORIES).map_err(|_| {
            Error::mismatch(
                &ap,
                &want,
                format!(
                    "`{group_at}` is {}",
                    crate::guard::describe_member(table, CATEGORIES)
                ),
            )
        })?;
        let mut names = cats.member_names().at(&ap)?;
        names.sort();
        let a = ds.attr(CATEGORIES).at(&ap)?;
        let target = match raw::ref_attr_target(&a, &cats, &names, &ap)? {
            RefTarget::Found(i) => &names[i],
            RefTarget::Null => return Err(Error::mismatch(&ap, want, "a null reference")),
            RefTarget::Elsewhere => {
                return Err(Error::mismatch(
                    &ap,
                    want,
                    "a reference to no member of it (dangling, or another object)",
                ))
            }
        };
        let lds = cats.dataset(target).map_err(|_| {
            Error::mismatch(&ap, &want, format!("a reference to the group `{target}`"))
        })?;
        let labels_at = lds.name();
        let labels = read_labels(&lds, &Place::new(path.path(), &labels_at))?;
        Ok(Categorical {
            ds,
            dt,
            int,
            fill,
            labels,
            labels_at,
            path,
        })
    }

    /// Creates categorical column `name` of new table `table` with `labels`
    /// (code `i` is `labels[i]`), exactly as h5col does: the codes dataset
    /// (the smallest signed integer that holds the codes and the missing
    /// code -1, its fill value), then the labels dataset in the table's
    /// `CATEGORIES` group, then the column's reference to it.
    pub(crate) fn create(
        table: &Group,
        name: &str,
        labels: &[&str],
        ctx: &WriteCtx<'_>,
    ) -> Result<Categorical> {
        let path = column_place(table, name);
        let n = labels.len();
        let (size, file_type) = if n <= 127 {
            (1, *h5t::H5T_STD_I8LE)
        } else if n <= 32767 {
            (2, *h5t::H5T_STD_I16LE)
        } else {
            (4, *h5t::H5T_STD_I32LE)
        };
        let int = IntType {
            size,
            signed: true,
            big: false,
        };
        let dt = raw::copy_type(file_type, &path)?;
        let spec = raw::ColumnSpec {
            dtype: &dt,
            inner: &[],
            chunk_rows: ctx.chunk_rows(size),
            compression: ctx.opts.get_compression(),
            checksum: ctx.checksum(),
        };
        let mut fill = Vec::new();
        int.encode(-1, &mut fill);
        let ds = raw::create_column_with_fill(table, name, &spec, dt.id(), &fill, &path)?;
        let cats = if table.link_exists(CATEGORIES) {
            table.group(CATEGORIES).at(&path)?
        } else {
            table.create_group(CATEGORIES).at(&path)?
        };
        let lname = format!("{name}__{CATEGORIES}");
        let width = labels.iter().map(|l| l.len()).max().unwrap_or(0).max(1);
        let ldt = raw::nullpad_string_type(width, true, &path)?;
        let lds = cats
            .new_dataset_builder()
            .empty_as(&ldt)
            .shape(n)
            .create(lname.as_str())
            .at(&path)?;
        let mut buf = vec![0u8; width * n];
        for (i, l) in labels.iter().enumerate() {
            buf[i * width..i * width + l.len()].copy_from_slice(l.as_bytes());
        }
        let labels_at = lds.name();
        raw::write_plain_rows_bytes(&lds, &ldt, 0, n as u64, &[], &buf, &path)?;
        raw::write_obj_ref_attr(&ds, CATEGORIES, &cats, &lname, &path.attribute(CATEGORIES))?;
        Ok(Categorical {
            ds,
            dt,
            int,
            fill: Some(-1),
            labels: labels.iter().map(|l| (*l).to_owned()).collect(),
            labels_at,
            path,
        })
    }

    /// The labels, in code order (the Arrow reader's dictionary; a
    /// query's label-to-code map).
    pub(crate) fn labels(&self) -> &[String] {
        &self.labels
    }

    /// Whether the column has a missing code (a user-defined fill value).
    pub(crate) fn has_fill(&self) -> bool {
        self.fill.is_some()
    }

    /// The column's place, for errors (the Arrow reader's).
    #[cfg(feature = "arrow")]
    pub(crate) fn place(&self) -> &Place {
        &self.path
    }

    /// The label positions of rows `rows` (`None`: the missing code); a
    /// code that is neither the fill value nor a label's position is an
    /// error naming the row.
    pub(crate) fn read_codes(&self, rows: Range<u64>) -> Result<Vec<Option<u32>>> {
        let n = range_len(&rows, &self.path)?;
        let (buf, size) = raw::read_rows_own_type(&self.ds, rows.start, n, &self.path)?;
        let nl = self.labels.len() as i128;
        let mut out = Vec::with_capacity(buf.len() / size.max(1));
        for (i, b) in buf.chunks_exact(size).enumerate() {
            let v = self.int.decode(b);
            if Some(v) == self.fill {
                out.push(None);
            } else if (0..nl).contains(&v) {
                out.push(Some(v as u32));
            } else {
                let fill = match self.fill {
                    Some(f) => format!("the column's fill value {f}"),
                    None => "a fill value (the column has none)".into(),
                };
                return Err(Error::invalid(
                    self.path.element(rows.start + i as u64),
                    format!(
                        "category code {v} is neither {fill} nor a position in the {nl} labels of `{}`",
                        self.labels_at
                    ),
                ));
            }
        }
        Ok(out)
    }

    /// Writes `codes` (label positions; `None`: the fill value, which the
    /// caller checked exists) at row `start`, growing the dataset.
    fn write_codes(&self, start: u64, codes: &[Option<usize>]) -> Result<()> {
        let mut buf = Vec::with_capacity(codes.len() * self.int.size);
        for (i, c) in codes.iter().enumerate() {
            let v = match c {
                Some(p) => *p as i128,
                None => self.fill.unwrap_or(-1),
            };
            self.int.encode(v, &mut buf).ok_or_else(|| {
                Error::encode(
                    self.path.element(start + i as u64),
                    format!("category code {v} does not fit the column's code type"),
                )
            })?;
        }
        crate::pipeline::rows::write_plain_rows(
            &self.ds,
            &self.dt,
            start,
            codes.len() as u64,
            &[],
            &buf,
            &self.path,
        )
    }
}

/// The labels of labels dataset `lds`: a 1-D dataset of fixed-length
/// (a value ends at its first NUL) or variable-length strings, UTF-8.
fn read_labels(lds: &Dataset, at: &Place) -> Result<Vec<String>> {
    let shape = raw::shape(lds, at)?;
    let [n] = shape[..] else {
        return Err(Error::mismatch(
            at,
            "a 1-D labels dataset",
            format!("shape {shape:?}"),
        ));
    };
    if n > MAX_LABELS {
        return Err(Error::invalid(
            at,
            format!("{n} labels (h5vec reads at most {MAX_LABELS})"),
        ));
    }
    let info = raw::type_info(lds, at)?;
    if info.class != H5T_class_t::H5T_STRING {
        return Err(Error::mismatch(
            at,
            "string labels (h5vec reads categories of strings)",
            info.describe(),
        ));
    }
    if info.vlen_str {
        return raw::read_vlen_strings(lds, 0, n, at);
    }
    let (buf, size) = raw::read_rows_own_type(lds, 0, n, at)?;
    let mut out = Vec::with_capacity(n as usize);
    for (i, b) in buf.chunks(size.max(1)).enumerate() {
        let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
        let s = std::str::from_utf8(&b[..end])
            .map_err(|_| Error::invalid(at.element(i as u64), "label is not valid UTF-8"))?;
        out.push(s.to_owned());
    }
    Ok(out)
}

/// `E`'s name without its module path, for errors.
fn short_name<E>() -> &'static str {
    let full = std::any::type_name::<E>();
    full.rsplit("::").next().unwrap_or(full)
}

/// Reads a categorical column as labels (`String`, `Option<String>`) or
/// variants (a [`TableEnum`], `Option` of one).
pub struct CategoryReader {
    cat: Categorical,
    codes: std::vec::IntoIter<Option<u32>>,
    row: u64,
    /// Per label, the variant of the enum being read (computed at the first read).
    variants: Option<Vec<Option<usize>>>,
}

impl CategoryReader {
    pub(crate) fn open(table: &Group, name: &str, nrows: u64) -> Result<CategoryReader> {
        Ok(CategoryReader {
            cat: Categorical::open(table, name, nrows)?,
            codes: Vec::new().into_iter(),
            row: 0,
            variants: None,
        })
    }

    fn load_rows(&mut self, rows: Range<u64>) -> Result<()> {
        self.row = rows.start;
        self.codes = self.cat.read_codes(rows)?.into_iter();
        Ok(())
    }

    fn next_code(&mut self) -> Result<(u64, Option<u32>)> {
        let c = self.codes.next().ok_or_else(|| exhausted(&self.cat.path))?;
        let row = self.row;
        self.row += 1;
        Ok((row, c))
    }

    fn missing<T>(&self, row: u64, load_as: &str) -> Result<T> {
        Err(Error::invalid(
            self.cat.path.element(row),
            format!("missing value (the column's fill value); load the column as {load_as}"),
        ))
    }

    fn variant<E: TableEnum>(&mut self, row: u64, label: u32) -> Result<E> {
        let labels = &self.cat.labels;
        let map = self.variants.get_or_insert_with(|| {
            labels
                .iter()
                .map(|l| E::VARIANTS.iter().position(|v| v == l))
                .collect()
        });
        match map[label as usize].and_then(E::from_variant_index) {
            Some(v) => Ok(v),
            None => Err(Error::mismatch(
                self.cat.path.element(row),
                format!(
                    "a label naming a variant of `{}` ({})",
                    short_name::<E>(),
                    E::VARIANTS.join(", ")
                ),
                format!("the label {:?}", self.cat.labels[label as usize]),
            )),
        }
    }
}

impl ColumnReader<String> for CategoryReader {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        self.load_rows(rows)
    }
    fn next(&mut self) -> Result<String> {
        match self.next_code()? {
            (_, Some(i)) => Ok(self.cat.labels[i as usize].clone()),
            (row, None) => self.missing(row, "Option<String>"),
        }
    }
}

impl ColumnReader<Option<String>> for CategoryReader {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        self.load_rows(rows)
    }
    fn next(&mut self) -> Result<Option<String>> {
        Ok(self
            .next_code()?
            .1
            .map(|i| self.cat.labels[i as usize].clone()))
    }
}

impl<E: TableEnum> ColumnReader<E> for CategoryReader {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        self.load_rows(rows)
    }
    fn next(&mut self) -> Result<E> {
        match self.next_code()? {
            (row, Some(i)) => self.variant(row, i),
            (row, None) => self.missing(row, &format!("Option<{}>", short_name::<E>())),
        }
    }
}

impl<E: TableEnum> ColumnReader<Option<E>> for CategoryReader {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        self.load_rows(rows)
    }
    fn next(&mut self) -> Result<Option<E>> {
        match self.next_code()? {
            (row, Some(i)) => self.variant(row, i).map(Some),
            (_, None) => Ok(None),
        }
    }
}

/// Writes a categorical column from labels (`String`, `Option<String>`,
/// appended to an existing categorical column) or variants (a
/// [`TableEnum`], `Option` of one).
pub struct CategoryWriter {
    cat: Categorical,
    codes: Vec<Option<usize>>,
    written: u64,
    by_label: Option<HashMap<String, usize>>,
    /// Per variant of the enum being written, its label's position.
    by_variant: Option<Vec<Option<usize>>>,
}

impl CategoryWriter {
    fn new(cat: Categorical, written: u64) -> CategoryWriter {
        CategoryWriter {
            cat,
            codes: Vec::new(),
            written,
            by_label: None,
            by_variant: None,
        }
    }

    pub(crate) fn resume(table: &Group, name: &str, nrows: u64) -> Result<CategoryWriter> {
        Ok(CategoryWriter::new(
            Categorical::open(table, name, nrows)?,
            nrows,
        ))
    }

    fn row(&self) -> u64 {
        self.written + self.codes.len() as u64
    }

    fn push_missing(&mut self) -> Result<()> {
        if !self.cat.has_fill() {
            return Err(Error::encode(
                self.cat.path.element(self.row()),
                "a missing value, but the column has no fill value to store it as",
            ));
        }
        self.codes.push(None);
        Ok(())
    }

    fn unknown(&self, label: &str) -> Error {
        const SHOWN: usize = 20;
        let mut list = self.cat.labels[..self.cat.labels.len().min(SHOWN)]
            .iter()
            .map(|l| format!("{l:?}"))
            .collect::<Vec<_>>()
            .join(", ");
        if self.cat.labels.len() > SHOWN {
            list.push_str(", ...");
        }
        Error::encode(
            self.cat.path.element(self.row()),
            format!("{label:?} is not a category of the column (its labels: {list})"),
        )
    }

    fn push_label(&mut self, label: Option<&str>) -> Result<()> {
        let Some(l) = label else {
            return self.push_missing();
        };
        let labels = &self.cat.labels;
        let map = self.by_label.get_or_insert_with(|| {
            let mut m = HashMap::with_capacity(labels.len());
            for (i, l) in labels.iter().enumerate() {
                m.entry(l.clone()).or_insert(i);
            }
            m
        });
        match map.get(l) {
            Some(&i) => {
                self.codes.push(Some(i));
                Ok(())
            }
            None => Err(self.unknown(l)),
        }
    }

    fn push_variant<E: TableEnum>(&mut self, v: Option<&E>) -> Result<()> {
        let Some(v) = v else {
            return self.push_missing();
        };
        let labels = &self.cat.labels;
        let map = self.by_variant.get_or_insert_with(|| {
            E::VARIANTS
                .iter()
                .map(|n| labels.iter().position(|l| l == n))
                .collect()
        });
        let i = v.variant_index();
        match map.get(i).copied().flatten() {
            Some(p) => {
                self.codes.push(Some(p));
                Ok(())
            }
            None => Err(self.unknown(E::VARIANTS.get(i).copied().unwrap_or("?"))),
        }
    }

    fn flush_values(&mut self) -> Result<()> {
        if self.codes.is_empty() {
            return Ok(());
        }
        self.cat.write_codes(self.written, &self.codes)?;
        self.written += self.codes.len() as u64;
        self.codes.clear();
        Ok(())
    }
}

impl ColumnWriter<String> for CategoryWriter {
    fn push(&mut self, value: &String) -> Result<()> {
        self.push_label(Some(value))
    }
    fn flush(&mut self, phase: Phase) -> Result<()> {
        match phase {
            Phase::Values => self.flush_values(),
            _ => Ok(()),
        }
    }
}

impl ColumnWriter<Option<String>> for CategoryWriter {
    fn push(&mut self, value: &Option<String>) -> Result<()> {
        self.push_label(value.as_deref())
    }
    fn flush(&mut self, phase: Phase) -> Result<()> {
        <Self as ColumnWriter<String>>::flush(self, phase)
    }
}

impl<E: TableEnum> ColumnWriter<E> for CategoryWriter {
    fn push(&mut self, value: &E) -> Result<()> {
        self.push_variant(Some(value))
    }
    fn flush(&mut self, phase: Phase) -> Result<()> {
        <Self as ColumnWriter<String>>::flush(self, phase)
    }
}

impl<E: TableEnum> ColumnWriter<Option<E>> for CategoryWriter {
    fn push(&mut self, value: &Option<E>) -> Result<()> {
        self.push_variant(value.as_ref())
    }
    fn flush(&mut self, phase: Phase) -> Result<()> {
        <Self as ColumnWriter<String>>::flush(self, phase)
    }
}

fn create_enum<E: TableEnum>(
    table: &Group,
    name: &str,
    ctx: &WriteCtx<'_>,
) -> Result<CategoryWriter> {
    let cat = Categorical::create(table, name, E::VARIANTS, ctx)?;
    Ok(CategoryWriter::new(cat, 0))
}

impl<E: TableEnum> TableColumn for E {
    type Writer = CategoryWriter;
    type Reader = CategoryReader;
    fn create(table: &Group, name: &str, ctx: &WriteCtx<'_>) -> Result<Self::Writer> {
        create_enum::<E>(table, name, ctx)
    }
    fn resume(table: &Group, name: &str, nrows: u64, _: &WriteCtx<'_>) -> Result<Self::Writer> {
        CategoryWriter::resume(table, name, nrows)
    }
    fn open(table: &Group, name: &str, nrows: u64) -> Result<Self::Reader> {
        CategoryReader::open(table, name, nrows)
    }
}

impl<E: TableEnum> TableColumn for Option<E> {
    type Writer = CategoryWriter;
    type Reader = CategoryReader;
    fn create(table: &Group, name: &str, ctx: &WriteCtx<'_>) -> Result<Self::Writer> {
        create_enum::<E>(table, name, ctx)
    }
    fn resume(table: &Group, name: &str, nrows: u64, _: &WriteCtx<'_>) -> Result<Self::Writer> {
        CategoryWriter::resume(table, name, nrows)
    }
    fn open(table: &Group, name: &str, nrows: u64) -> Result<Self::Reader> {
        CategoryReader::open(table, name, nrows)
    }
}
