//! Reading a vector with another type than the one that wrote it (SPEC.md
//! section 12): the options a load takes ([`LoadOptions`]), the flags they
//! pass to every codec's `open_with` ([`LoadFlags`]), and the one rule for
//! widening numbers. Records match their fields by name in
//! `kinds/record/matching.rs`.

use crate::error::{Error, Result};
use crate::raw::{Pod, TypeInfo};
use crate::schema::{ids, Schema, Stored};

/// What a load allows beyond an exact match (set from [`LoadOptions`]):
/// passed to every codec's `Codec::open_with` (and down to its children's),
/// never part of the stored schema, which describes the file only. Appends
/// and the untyped readers open with the default (nothing allowed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoadFlags {
    /// Records skip stored fields the type does not have.
    pub(crate) ignore_extra_fields: bool,
    /// Numbers may be read into a wider number type.
    pub(crate) widen_numbers: bool,
}

/// How a load may read a vector written by another type: a struct with
/// fewer fields, or wider numbers (SPEC.md section 12).
///
/// The default reads only what the type describes exactly (fields matched
/// by name, then by `#[h5vec(alias = "...")]`, missing fields filled by
/// `#[h5vec(default)]`); each option allows one more difference. Pass it to
/// [`load_vector_with`](crate::load_vector_with),
/// [`load_range_with`](crate::load_range_with) or
/// [`VectorReader::open_with`](crate::VectorReader::open_with). Appends
/// always need the stored fields and types exactly.
///
/// ```
/// use h5vec::{H5Vector, LoadOptions};
///
/// #[derive(H5Vector)]
/// struct Wide { id: u32, price: f32, note: String }
///
/// #[derive(H5Vector, Debug, PartialEq)]
/// struct Narrow { id: u64, price: f64 }
///
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("o.h5"))?;
/// let rows = [Wide { id: 7, price: 2.5, note: "x".into() }];
/// h5vec::save_vector(&file, "orders", &rows)?;
///
/// // `note` is not read from disk at all; u32 and f32 widen without loss.
/// let opts = LoadOptions::default().ignore_extra_fields(true).widen_numbers(true);
/// let back: Vec<Narrow> = h5vec::load_vector_with(&file, "orders", &opts)?;
/// assert_eq!(back, [Narrow { id: 7, price: 2.5 }]);
///
/// // Without the options, each difference is an error.
/// assert!(h5vec::load_vector::<Narrow>(&file, "orders").is_err());
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoadOptions {
    flags: LoadFlags,
}

impl LoadOptions {
    /// Let a struct read a vector whose records have fields it does not
    /// have (in any nested record too): those columns are skipped without
    /// a byte of their data being read. Off by default: an extra stored
    /// field is an error, which catches a struct that lost a field by mistake.
    ///
    /// ```
    /// # use h5vec::H5Vector;
    /// #[derive(H5Vector)]
    /// struct V2 { a: i32, b: i32 }
    /// #[derive(H5Vector, Debug, PartialEq)]
    /// struct V1 { a: i32 }
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let file = h5vec::create_file(dir.path().join("o.h5"))?;
    /// h5vec::save_vector(&file, "v", &[V2 { a: 1, b: 2 }])?;
    /// let opts = h5vec::LoadOptions::default().ignore_extra_fields(true);
    /// assert_eq!(h5vec::load_vector_with::<V1>(&file, "v", &opts)?, [V1 { a: 1 }]);
    /// # Ok(()) }
    /// ```
    pub fn ignore_extra_fields(mut self, on: bool) -> Self {
        self.flags.ignore_extra_fields = on;
        self
    }

    /// Whether extra stored fields are skipped.
    ///
    /// ```
    /// let opts = h5vec::LoadOptions::default();
    /// assert!(!opts.get_ignore_extra_fields());
    /// assert!(opts.ignore_extra_fields(true).get_ignore_extra_fields());
    /// ```
    pub fn get_ignore_extra_fields(&self) -> bool {
        self.flags.ignore_extra_fields
    }

    /// Let a number be read into a wider number type that holds every
    /// value of the stored one exactly: an integer into an integer of the
    /// same signedness and more bits, an unsigned integer into a signed
    /// one of more bits, `f32` into `f64`, an integer of up to 32 bits
    /// into `f64` (SPEC.md section 12 has the table). Applies wherever the
    /// number is: fields, nested records, `Vec`s, `Option`s, arrays. Any
    /// other difference (`i64` into `f64`, `u64` into `i64`, `i8` into
    /// `u8`, `f64` into `f32`) stays an error naming the field and both
    /// types. The conversion happens in the one HDF5 read of each batch.
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let file = h5vec::create_file(dir.path().join("o.h5"))?;
    /// h5vec::save_vector(&file, "v", &[vec![1i32, -2], vec![i32::MIN]])?;
    /// let opts = h5vec::LoadOptions::default().widen_numbers(true);
    /// let back: Vec<Vec<i64>> = h5vec::load_vector_with(&file, "v", &opts)?;
    /// assert_eq!(back, [vec![1i64, -2], vec![i32::MIN as i64]]);
    /// assert!(h5vec::load_vector_with::<Vec<u64>>(&file, "v", &opts).is_err());
    /// # Ok(()) }
    /// ```
    pub fn widen_numbers(mut self, on: bool) -> Self {
        self.flags.widen_numbers = on;
        self
    }

    /// Whether numbers may be widened.
    ///
    /// ```
    /// let opts = h5vec::LoadOptions::default();
    /// assert!(!opts.get_widen_numbers());
    /// assert!(opts.widen_numbers(true).get_widen_numbers());
    /// ```
    pub fn get_widen_numbers(&self) -> bool {
        self.flags.widen_numbers
    }

    /// The flags a load passes to every codec's `open_with`.
    pub(crate) fn flags(&self) -> LoadFlags {
        self.flags
    }
}

/// A number type as the schema spells it (`encoded_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Number {
    float: bool,
    signed: bool,
    bits: u32,
    /// The schema's spelling, `Int32`.
    pub(crate) name: &'static str,
}

/// Every number type of the schema (SPEC.md section 2).
const NUMBERS: [Number; 10] = [
    num(false, true, 8, "Int8"),
    num(false, true, 16, "Int16"),
    num(false, true, 32, "Int32"),
    num(false, true, 64, "Int64"),
    num(false, false, 8, "UInt8"),
    num(false, false, 16, "UInt16"),
    num(false, false, 32, "UInt32"),
    num(false, false, 64, "UInt64"),
    num(true, true, 32, "Float32"),
    num(true, true, 64, "Float64"),
];

const fn num(float: bool, signed: bool, bits: u32, name: &'static str) -> Number {
    Number {
        float,
        signed,
        bits,
        name,
    }
}

impl Number {
    /// The number type spelled `encoded`, if it is one.
    pub(crate) fn parse(encoded: &str) -> Option<Number> {
        NUMBERS.iter().copied().find(|n| n.name == encoded)
    }

    /// Whether every value of `self` is a value of `to`, exactly: the
    /// widening table of SPEC.md section 12.
    pub(crate) fn widens_to(self, to: Number) -> bool {
        match (self.float, to.float) {
            // f32 -> f64.
            (true, true) => self.bits < to.bits,
            // An f64 has a 53-bit significand: integers of up to 32 bits.
            (false, true) => to.bits == 64 && self.bits <= 32,
            (true, false) => false,
            // Never signed -> unsigned; unsigned -> signed needs a bit more.
            (false, false) => match (self.signed, to.signed) {
                (true, false) => false,
                (false, true) => self.bits < to.bits,
                _ => self.bits < to.bits,
            },
        }
    }

    /// Whether a dataset of type `t` stores this number type.
    pub(crate) fn accepts(self, t: &TypeInfo) -> bool {
        use hdf5_sys::h5t::H5T_class_t::{H5T_FLOAT, H5T_INTEGER};
        let bytes = (self.bits / 8) as usize;
        if self.float {
            t.class == H5T_FLOAT && t.size == bytes
        } else {
            t.class == H5T_INTEGER && t.size == bytes && t.signed == self.signed
        }
    }
}

/// How the dataset of a number node is stored: as the reader's own type
/// `R`, or as a narrower number that HDF5 converts to `R` in the read.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Source {
    /// `R` itself.
    Same,
    /// A narrower number (widening load).
    Narrower(Number),
}

/// The datatype check of a number dataset: what [`crate::codec::open_column`] takes.
pub(crate) struct NumberCheck<R> {
    stored: Source,
    _r: std::marker::PhantomData<R>,
}

impl<R: Pod> NumberCheck<R> {
    /// Whether the dataset's type `t` is what the node says.
    pub(crate) fn accepts(&self, t: &TypeInfo) -> bool {
        match self.stored {
            Source::Same => R::accepts(t),
            Source::Narrower(n) => n.accepts(t),
        }
    }

    /// The expected type, for errors.
    pub(crate) fn describe(&self) -> &'static str {
        match self.stored {
            Source::Same => R::ENCODED,
            Source::Narrower(n) => n.name,
        }
    }
}

/// Checks the node of a scalar or dense column against `want` (as
/// [`Stored::expect`] does), allowing a stored number narrower than
/// `want`'s when the load widens numbers (SPEC.md section 12). Returns the
/// check for the dataset's type. Where the types differ, the error names
/// both, and whether `widen_numbers` would read the column.
pub(crate) fn expect_number<R: Pod>(
    node: &Stored,
    want: &Schema,
    path: &str,
    load: LoadFlags,
) -> Result<NumberCheck<R>> {
    let same = NumberCheck {
        stored: Source::Same,
        _r: std::marker::PhantomData,
    };
    // Plain numbers, and numbers whose fill value marks a missing element
    // (HDF5 converts the fill value with the values).
    let plain =
        node.codec == want.codec && (want.codec == ids::IDENTITY || want.codec == ids::FILL_CODEC);
    let types = (
        node.encoded_type.as_deref().and_then(Number::parse),
        want.encoded_type.as_deref().and_then(Number::parse),
    );
    let (Some(from), Some(to), true) = (types.0, types.1, plain) else {
        node.expect(want, path)?;
        return Ok(same);
    };
    if from == to {
        node.expect(want, path)?;
        return Ok(same);
    }
    let lossless = from.widens_to(to);
    if !load.widen_numbers || !lossless {
        let why = match (lossless, load.widen_numbers) {
            (true, _) => format!(
                "`{}` (LoadOptions::widen_numbers(true) reads it as `{}` without loss)",
                from.name, to.name
            ),
            (false, true) => format!(
                "`{}`, which `{}` cannot hold exactly (widen_numbers allows only lossless promotions)",
                from.name, to.name
            ),
            (false, false) => format!("`{}`", from.name),
        };
        return Err(Error::mismatch(
            path,
            format!("encoded type `{}`", to.name),
            why,
        ));
    }
    let mut as_stored = want.clone();
    as_stored.encoded_type = Some(from.name.to_owned());
    node.expect(&as_stored, path)?;
    Ok(NumberCheck {
        stored: Source::Narrower(from),
        _r: std::marker::PhantomData,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Number {
        Number::parse(s).unwrap()
    }

    /// The SPEC 12 table, pair by pair: every allowed promotion, and
    /// nothing else.
    #[test]
    fn widening_table() {
        let allowed: &[(&str, &[&str])] = &[
            ("Int8", &["Int16", "Int32", "Int64", "Float64"]),
            ("Int16", &["Int32", "Int64", "Float64"]),
            ("Int32", &["Int64", "Float64"]),
            ("Int64", &[]),
            (
                "UInt8",
                &[
                    "UInt16", "UInt32", "UInt64", "Int16", "Int32", "Int64", "Float64",
                ],
            ),
            ("UInt16", &["UInt32", "UInt64", "Int32", "Int64", "Float64"]),
            ("UInt32", &["UInt64", "Int64", "Float64"]),
            ("UInt64", &[]),
            ("Float32", &["Float64"]),
            ("Float64", &[]),
        ];
        for (from, tos) in allowed {
            for to in NUMBERS {
                assert_eq!(
                    n(from).widens_to(to),
                    tos.contains(&to.name),
                    "{from} -> {}",
                    to.name
                );
            }
        }
    }
}
