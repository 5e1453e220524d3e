//! The command's JSON encoders for arrow's JSON writer (JSON lines and
//! the JSON text of CSV cells): UUIDs, dates, `f16`s, non-finite floats,
//! maps and flat unions as the module says.

use std::sync::{Arc, OnceLock};

use anyhow::Result;
use arrow::array::{
    Array, AsArray, Date32Array, FixedSizeBinaryArray, FixedSizeListArray, Float16Array, MapArray,
    StructArray,
};
use arrow::buffer::NullBuffer;
use arrow::datatypes::{DataType, FieldRef, Float32Type, Float64Type};
use arrow::error::ArrowError;
use arrow::json::writer::{make_encoder, Encoder, EncoderFactory, EncoderOptions, NullableEncoder};
use arrow::util::display::lexical_to_string;

use super::float16::{f16_shortest, f16_to_f64};
use super::{is_flat_union, is_uuid, write_date, write_uuid};

/// The command's JSON encoders (arrow's JSON writer and the JSON text of
/// CSV cells): UUIDs, dates, maps and flat unions as the module says.
#[derive(Debug)]
pub(crate) struct JsonKinds;

/// Encoder options with [`JsonKinds`] and explicit nulls.
pub(crate) fn json_options() -> EncoderOptions {
    EncoderOptions::default()
        .with_explicit_nulls(true)
        .with_encoder_factory(Arc::new(JsonKinds))
}

impl EncoderFactory for JsonKinds {
    fn make_default_encoder<'a>(
        &self,
        field: &'a FieldRef,
        array: &'a dyn Array,
        options: &'a EncoderOptions,
    ) -> Result<Option<NullableEncoder<'a>>, ArrowError> {
        let nulls = array.nulls().cloned();
        let encoder: Box<dyn Encoder + 'a> = match array.data_type() {
            DataType::FixedSizeBinary(16) if is_uuid(field) => {
                Box::new(UuidJson(array.as_fixed_size_binary()))
            }
            DataType::Date32 => Box::new(DateJson(array.as_primitive())),
            DataType::Map(_, _) => Box::new(MapJson::try_new(array.as_map(), options)?),
            // Arrow's list encoders give the items the list's field, not
            // the item field whose metadata marks UUIDs and unions.
            DataType::List(item) => Box::new(ListJson {
                spans: Spans::Small(array.as_list::<i32>().value_offsets()),
                items: make_encoder(item, array.as_list::<i32>().values().as_ref(), options)?,
            }),
            DataType::LargeList(item) => Box::new(ListJson {
                spans: Spans::Large(array.as_list::<i64>().value_offsets()),
                items: make_encoder(item, array.as_list::<i64>().values().as_ref(), options)?,
            }),
            DataType::FixedSizeList(item, _) => {
                let list = array.as_fixed_size_list();
                Box::new(ListJson {
                    spans: Spans::Fixed(list),
                    items: make_encoder(item, list.values().as_ref(), options)?,
                })
            }
            DataType::Struct(_)
                if is_flat_union(field) && field.data_type() == array.data_type() =>
            {
                Box::new(FlatUnionJson::try_new(array.as_struct(), options)?)
            }
            DataType::Float16 => Box::new(F16Json(array.as_primitive())),
            DataType::Float32 => Box::new(FloatJson {
                values: array.as_primitive::<Float32Type>().values(),
                finite: make_encoder(field, array, plain_json())?,
            }),
            DataType::Float64 => Box::new(FloatJson {
                values: array.as_primitive::<Float64Type>().values(),
                finite: make_encoder(field, array, plain_json())?,
            }),
            _ => return Ok(None),
        };
        Ok(Some(NullableEncoder::new(encoder, nulls)))
    }
}

/// A JSON string of text written by `write` (which writes no character
/// JSON would escape).
fn json_text(out: &mut Vec<u8>, write: impl FnOnce(&mut String) -> std::fmt::Result) {
    let mut s = String::with_capacity(36);
    let _ = write(&mut s);
    out.push(b'"');
    out.extend_from_slice(s.as_bytes());
    out.push(b'"');
}

/// Arrow's own encoders (no [`JsonKinds`]): what finite `f32` and `f64`
/// print as (lexical's shortest text that reads back as the same value at
/// the value's width: `0.1`, `1.0e300`).
fn plain_json() -> &'static EncoderOptions {
    static PLAIN: OnceLock<EncoderOptions> = OnceLock::new();
    PLAIN.get_or_init(EncoderOptions::default)
}

/// The JSON token of a float that is not finite: `NaN`, `Infinity`,
/// `-Infinity` (what Python's `json` module writes and reads, and pyarrow's
/// JSON reader reads); `None` for a finite one. A NaN's sign and payload
/// are not kept.
pub(crate) fn json_non_finite(x: f64) -> Option<&'static [u8]> {
    if x.is_nan() {
        Some(b"NaN")
    } else if x == f64::INFINITY {
        Some(b"Infinity")
    } else if x == f64::NEG_INFINITY {
        Some(b"-Infinity")
    } else {
        None
    }
}

/// `f32` and `f64` values: finite ones as arrow writes them, the others
/// as [`json_non_finite`] (arrow writes `null`, which a missing value is).
struct FloatJson<'a, T> {
    values: &'a [T],
    finite: NullableEncoder<'a>,
}

impl<T: Copy + Into<f64>> Encoder for FloatJson<'_, T> {
    fn encode(&mut self, idx: usize, out: &mut Vec<u8>) {
        match json_non_finite(self.values[idx].into()) {
            Some(token) => out.extend_from_slice(token),
            None => self.finite.encode(idx, out),
        }
    }
}

/// `f16` values: finite ones as the shortest decimal that reads back as
/// the same `f16` ([`f16_shortest`]), in lexical's form as for `f32` and
/// `f64` (arrow writes the shortest `f32` text of the widened value,
/// `0.099975586` for the `f16` nearest 0.1); the others as
/// [`json_non_finite`].
struct F16Json<'a>(&'a Float16Array);

impl Encoder for F16Json<'_> {
    fn encode(&mut self, idx: usize, out: &mut Vec<u8>) {
        let bits = self.0.value(idx).to_bits();
        match f16_shortest(bits) {
            Some(x) => out.extend_from_slice(lexical_to_string(x).as_bytes()),
            None => out.extend_from_slice(json_non_finite(f16_to_f64(bits)).unwrap_or(b"null")),
        }
    }
}

struct UuidJson<'a>(&'a FixedSizeBinaryArray);

impl Encoder for UuidJson<'_> {
    fn encode(&mut self, idx: usize, out: &mut Vec<u8>) {
        json_text(out, |s| write_uuid(self.0.value(idx), s));
    }
}

struct DateJson<'a>(&'a Date32Array);

impl Encoder for DateJson<'_> {
    fn encode(&mut self, idx: usize, out: &mut Vec<u8>) {
        json_text(out, |s| write_date(self.0.value(idx), s));
    }
}

/// Where each list's items are among the values.
enum Spans<'a> {
    Small(&'a [i32]),
    Large(&'a [i64]),
    Fixed(&'a FixedSizeListArray),
}

/// A list (or fixed-size list): `[item, ...]`, items by their own field.
struct ListJson<'a> {
    spans: Spans<'a>,
    items: NullableEncoder<'a>,
}

impl Encoder for ListJson<'_> {
    fn encode(&mut self, idx: usize, out: &mut Vec<u8>) {
        let range = match &self.spans {
            Spans::Small(o) => o[idx] as usize..o[idx + 1] as usize,
            Spans::Large(o) => o[idx] as usize..o[idx + 1] as usize,
            Spans::Fixed(a) => {
                let start = a.value_offset_at(idx);
                start..start + a.value_length() as usize
            }
        };
        out.push(b'[');
        for (n, i) in range.enumerate() {
            if n > 0 {
                out.push(b',');
            }
            encode_or_null(&mut self.items, i, out);
        }
        out.push(b']');
    }
}

/// A map: `{"k": v, ...}` when its keys are strings (JSON object keys),
/// else `[[k, v], ...]`.
struct MapJson<'a> {
    array: &'a MapArray,
    keys: NullableEncoder<'a>,
    values: NullableEncoder<'a>,
    object: bool,
}

impl<'a> MapJson<'a> {
    fn try_new(array: &'a MapArray, options: &'a EncoderOptions) -> Result<Self, ArrowError> {
        let DataType::Map(entries, _) = array.data_type() else {
            unreachable!("a map array");
        };
        let DataType::Struct(kv) = entries.data_type() else {
            return Err(ArrowError::JsonError(format!(
                "map entries of type {} are not a struct",
                entries.data_type()
            )));
        };
        let object = is_string(kv[0].data_type());
        Ok(MapJson {
            array,
            keys: make_encoder(&kv[0], array.keys().as_ref(), options)?,
            values: make_encoder(&kv[1], array.values().as_ref(), options)?,
            object,
        })
    }
}

/// Whether values of type `t` are JSON strings that can be object keys.
fn is_string(t: &DataType) -> bool {
    match t {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => true,
        DataType::Dictionary(_, v) => is_string(v),
        _ => false,
    }
}

impl Encoder for MapJson<'_> {
    fn encode(&mut self, idx: usize, out: &mut Vec<u8>) {
        let offsets = self.array.value_offsets();
        let (start, end) = (offsets[idx] as usize, offsets[idx + 1] as usize);
        out.push(if self.object { b'{' } else { b'[' });
        for (n, i) in (start..end).enumerate() {
            if n > 0 {
                out.push(b',');
            }
            if !self.object {
                out.push(b'[');
            }
            encode_or_null(&mut self.keys, i, out);
            out.push(if self.object { b':' } else { b',' });
            encode_or_null(&mut self.values, i, out);
            if !self.object {
                out.push(b']');
            }
        }
        out.push(if self.object { b'}' } else { b']' });
    }
}

fn encode_or_null(e: &mut NullableEncoder<'_>, idx: usize, out: &mut Vec<u8>) {
    if e.is_null(idx) {
        out.extend_from_slice(b"null");
    } else {
        e.encode(idx, out);
    }
}

/// The fields of one variant of a flat union: whether each row is this
/// variant, and its fields' names (as JSON keys) and encoders.
struct VariantJson<'a> {
    present: Option<NullBuffer>,
    fields: Vec<(Vec<u8>, NullableEncoder<'a>)>,
}

/// An enum with data in flat form: `{"variant": "Circle", "r": 1.0}`.
struct FlatUnionJson<'a> {
    variant: NullableEncoder<'a>,
    variants: Vec<VariantJson<'a>>,
}

impl<'a> FlatUnionJson<'a> {
    fn try_new(array: &'a StructArray, options: &'a EncoderOptions) -> Result<Self, ArrowError> {
        let fields = array.fields();
        let variant = make_encoder(&fields[0], array.column(0).as_ref(), options)?;
        let mut variants = Vec::new();
        for (f, column) in fields.iter().zip(array.columns()).skip(1) {
            let DataType::Struct(vf) = f.data_type() else {
                return Err(ArrowError::JsonError(format!(
                    "variant {} of a flat union is not a struct",
                    f.name()
                )));
            };
            let child = column.as_struct();
            let fields = vf
                .iter()
                .zip(child.columns())
                .map(|(f, c)| {
                    let mut key = serde_json::to_vec(f.name()).expect("a string");
                    key.push(b':');
                    Ok((key, make_encoder(f, c.as_ref(), options)?))
                })
                .collect::<Result<_, ArrowError>>()?;
            variants.push(VariantJson {
                present: child.nulls().cloned(),
                fields,
            });
        }
        Ok(FlatUnionJson { variant, variants })
    }
}

impl Encoder for FlatUnionJson<'_> {
    fn encode(&mut self, idx: usize, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"variant\":");
        encode_or_null(&mut self.variant, idx, out);
        for v in &mut self.variants {
            if v.present.as_ref().is_some_and(|n| n.is_null(idx)) {
                continue;
            }
            for (key, encoder) in &mut v.fields {
                out.push(b',');
                out.extend_from_slice(key);
                encode_or_null(encoder, idx, out);
            }
        }
        out.push(b'}');
    }
}
