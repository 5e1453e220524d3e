//! The command's cell formatters for arrow's pretty printer (the table):
//! UUIDs, dates, `f16`s and flat unions as the module says.

use anyhow::Result;
use arrow::array::{Array, AsArray, Date32Array, FixedSizeBinaryArray, Float16Array};
use arrow::buffer::NullBuffer;
use arrow::datatypes::{DataType, Field};
use arrow::error::ArrowError;
use arrow::util::display::{
    ArrayFormatter, ArrayFormatterFactory, DisplayIndex, FormatOptions, FormatResult,
};

use super::float16::write_f16;
use super::{is_flat_union, is_uuid, write_date, write_uuid};

/// The command's cell formatters for arrow's pretty printer: UUIDs, dates
/// and flat unions as the module says.
#[derive(Debug)]
pub(crate) struct TableKinds;

impl TableKinds {
    /// The formatter of `array`: ours, else arrow's (which comes back here
    /// for nested values, through the options).
    fn formatter<'f>(
        &self,
        array: &'f dyn Array,
        options: &FormatOptions<'f>,
        field: &'f Field,
    ) -> Result<ArrayFormatter<'f>, ArrowError> {
        match self.create_array_formatter(array, options, Some(field))? {
            Some(f) => Ok(f),
            None => ArrayFormatter::try_new(array, options),
        }
    }
}

impl ArrayFormatterFactory for TableKinds {
    fn create_array_formatter<'f>(
        &self,
        array: &'f dyn Array,
        options: &FormatOptions<'f>,
        field: Option<&'f Field>,
    ) -> Result<Option<ArrayFormatter<'f>>, ArrowError> {
        let null = options.null();
        let display: Box<dyn DisplayIndex + 'f> = match array.data_type() {
            DataType::FixedSizeBinary(16) if field.is_some_and(is_uuid) => Box::new(UuidCell {
                array: array.as_fixed_size_binary(),
                null,
            }),
            DataType::Date32 => Box::new(DateCell {
                array: array.as_primitive(),
                null,
            }),
            DataType::Float16 => Box::new(F16Cell {
                array: array.as_primitive(),
                null,
            }),
            DataType::Struct(fields)
                if field
                    .is_some_and(|f| is_flat_union(f) && f.data_type() == array.data_type()) =>
            {
                let strukt = array.as_struct();
                let variant = self.formatter(strukt.column(0).as_ref(), options, &fields[0])?;
                let mut variants = Vec::new();
                for (f, column) in fields.iter().zip(strukt.columns()).skip(1) {
                    let (DataType::Struct(vf), Some(child)) =
                        (f.data_type(), column.as_struct_opt())
                    else {
                        return Err(ArrowError::InvalidArgumentError(format!(
                            "variant {} of a flat union is not a struct",
                            f.name()
                        )));
                    };
                    let cells = vf
                        .iter()
                        .zip(child.columns())
                        .map(|(f, c)| {
                            Ok((f.name().as_str(), self.formatter(c.as_ref(), options, f)?))
                        })
                        .collect::<Result<_, ArrowError>>()?;
                    variants.push((child.nulls(), cells));
                }
                Box::new(FlatUnionCell {
                    nulls: strukt.nulls(),
                    variant,
                    variants,
                    null,
                })
            }
            _ => return Ok(None),
        };
        Ok(Some(ArrayFormatter::new(display, options.safe())))
    }
}

struct UuidCell<'a> {
    array: &'a FixedSizeBinaryArray,
    null: &'a str,
}

impl DisplayIndex for UuidCell<'_> {
    fn write(&self, idx: usize, f: &mut dyn std::fmt::Write) -> FormatResult {
        if self.array.is_null(idx) {
            f.write_str(self.null)?;
        } else {
            let mut s = String::with_capacity(36);
            write_uuid(self.array.value(idx), &mut s)?;
            f.write_str(&s)?;
        }
        Ok(())
    }
}

struct DateCell<'a> {
    array: &'a Date32Array,
    null: &'a str,
}

impl DisplayIndex for DateCell<'_> {
    fn write(&self, idx: usize, f: &mut dyn std::fmt::Write) -> FormatResult {
        if self.array.is_null(idx) {
            f.write_str(self.null)?;
        } else {
            let mut s = String::with_capacity(11);
            write_date(self.array.value(idx), &mut s)?;
            f.write_str(&s)?;
        }
        Ok(())
    }
}

struct F16Cell<'a> {
    array: &'a Float16Array,
    null: &'a str,
}

impl DisplayIndex for F16Cell<'_> {
    fn write(&self, idx: usize, f: &mut dyn std::fmt::Write) -> FormatResult {
        if self.array.is_null(idx) {
            f.write_str(self.null)?;
        } else {
            let mut s = String::with_capacity(12);
            write_f16(self.array.value(idx).to_bits(), &mut s)?;
            f.write_str(&s)?;
        }
        Ok(())
    }
}

/// `{variant: Circle, r: 1.0}`; the null text for a missing union.
struct FlatUnionCell<'a> {
    nulls: Option<&'a NullBuffer>,
    variant: ArrayFormatter<'a>,
    #[allow(clippy::type_complexity)]
    variants: Vec<(Option<&'a NullBuffer>, Vec<(&'a str, ArrayFormatter<'a>)>)>,
    null: &'a str,
}

impl DisplayIndex for FlatUnionCell<'_> {
    fn write(&self, idx: usize, f: &mut dyn std::fmt::Write) -> FormatResult {
        if self.nulls.is_some_and(|n| n.is_null(idx)) {
            f.write_str(self.null)?;
            return Ok(());
        }
        write!(f, "{{variant: {}", self.variant.value(idx))?;
        for (present, cells) in &self.variants {
            if present.is_some_and(|n| n.is_null(idx)) {
                continue;
            }
            for (name, cell) in cells {
                write!(f, ", {name}: {}", cell.value(idx))?;
            }
        }
        f.write_char('}')?;
        Ok(())
    }
}
