//! Compressed VLS strings (SPEC.md section 4.1): a byte heap plus pointers into it.
//!
//! Layout on disk:
//! ```text
//! <field>/heap       1-D uint8 (int8 refused), the string bytes back to back, chunked (compressible)
//! <field>/pointers   1-D compound {offset: uint64, length: uint64}, one per element
//!                    optional string attribute `missing-value-placeholder`
//! ```
//! Element `i` is `heap[offset_i .. offset_i + length_i]`, cut at its first
//! NUL. Writers put consecutive elements on neighbouring heap bytes; with
//! `dedup_strings` repeated values share one slice. Readers accept any
//! unsigned member widths up to 64 bits, entries in any order, and shared or
//! overlapping slices. For `Option<String>`, an element equal to the
//! placeholder attribute is `None`.

#[cfg(feature = "arrow")]
pub(crate) mod arrow;

mod decoder;
mod encoder;
mod pointers;

use std::marker::PhantomData;
use std::ops::Range;

use hdf5::Group;

use crate::codec::{expect_members, Codec, Decoder, Encoder};
use crate::error::Result;
use crate::evolution::LoadFlags;
use crate::kinds::scalar::scalar_schema;
use crate::options::WriteCtx;
use crate::schema::{ids, Kind, Schema, Stored};

pub(crate) use decoder::VlsDecoder;
pub(crate) use encoder::VlsEncoder;
#[cfg(feature = "arrow")]
pub(crate) use pointers::Pointer;
// `h5vec::mpi` moves every rank's pointers by its heap offset.
#[cfg(feature = "mpi")]
pub(crate) use pointers::{pointer_type_ok, read_placeholder, write_placeholder};

/// A field type that `#[h5vec(vls)]` can store as a compressed VLS array.
#[diagnostic::on_unimplemented(
    message = "`#[h5vec(vls)]` stores only `String` and `Option<String>`, not `{Self}`",
    label = "not a string type"
)]
pub trait VlsField: Sized {
    /// The VLS codec for this type.
    type Codec: Codec<Value = Self>;
}

impl VlsField for String {
    type Codec = VlsStringCodec;
}

impl VlsField for Option<String> {
    type Codec = OptVlsStringCodec;
}

/// The compressed VLS layout for `String`.
pub type VlsStringCodec = VlsCodec<String>;

/// The schema node of a VLS string column (`nullable` for `Option<String>`,
/// whose missing values equal the placeholder attribute).
pub(crate) fn vls_schema(nullable: bool) -> Schema {
    if nullable {
        vls_node(
            ids::PLACEHOLDER_CODEC,
            std::any::type_name::<Option<String>>(),
        )
    } else {
        vls_node(ids::H5VEC_CODEC, std::any::type_name::<String>())
    }
}

/// A `vls_string` node with `codec` (what the text means: plain strings,
/// placeholder strings, JSON documents) and `logical_type`; its child is
/// the scalar `String` node (SPEC.md section 4.1).
pub(crate) fn vls_node(codec: &str, logical_type: &str) -> Schema {
    let mut s = Schema::new(Kind::VlsString, ids::VLS, codec, logical_type).encoded("String");
    s.children
        .push(scalar_schema::<String>(ids::IDENTITY, "String"));
    s
}

impl Encoder<String> for VlsEncoder {
    fn push(&mut self, value: &String) -> Result<()> {
        VlsEncoder::push(self, value)
    }
    fn push_null(&mut self) -> Result<()> {
        VlsEncoder::push_null(self)
    }
    fn flush(&mut self) -> Result<()> {
        VlsEncoder::flush(self)
    }
}

impl Decoder<String> for VlsDecoder {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        VlsDecoder::load(self, rows)
    }
    fn next(&mut self) -> Result<String> {
        self.next_value()
    }
    fn skip(&mut self) -> Result<()> {
        VlsDecoder::skip(self)
    }
}

/// A value type a VLS column holds: `String`, or `Option<String>` whose
/// `None` is written as the `missing-value-placeholder` string ("NA", or
/// "NA_", "NA__", ... if a real value of the first batch with a missing
/// value uses it).
pub trait VlsValue: Sized + 'static {
    /// Whether missing values are allowed.
    const NULLABLE: bool;
}

impl VlsValue for String {
    const NULLABLE: bool = false;
}

impl VlsValue for Option<String> {
    const NULLABLE: bool = true;
}

/// The compressed VLS layout for `V` (`String` or `Option<String>`).
pub struct VlsCodec<V>(PhantomData<V>);

/// The compressed VLS layout for `Option<String>`.
pub(crate) type OptVlsStringCodec = VlsCodec<Option<String>>;

impl<V: VlsValue> Codec for VlsCodec<V>
where
    VlsEncoder: Encoder<V>,
    VlsDecoder: Decoder<V>,
{
    type Value = V;
    type Encoder = VlsEncoder;
    type Decoder = VlsDecoder;

    fn schema(_ctx: &WriteCtx<'_>) -> Schema {
        vls_schema(V::NULLABLE)
    }

    fn create(group: &Group, path: &str, ctx: &WriteCtx<'_>) -> Result<Self::Encoder> {
        VlsEncoder::create(group, path, ctx)
    }

    fn append(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self::Encoder> {
        VlsEncoder::resume(Self::open(group, node, path, count)?, count, ctx)
    }

    fn open_with(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        _load: LoadFlags,
    ) -> Result<Self::Decoder> {
        node.expect(&vls_schema(V::NULLABLE), path)?;
        expect_members(group, &["heap", "pointers"], node, path)?;
        VlsDecoder::open_datasets(group, path, count)
    }
}

impl Encoder<Option<String>> for VlsEncoder {
    fn push(&mut self, value: &Option<String>) -> Result<()> {
        match value {
            Some(s) => VlsEncoder::push(self, s),
            None => self.push_missing(),
        }
    }
    fn push_null(&mut self) -> Result<()> {
        self.push_missing()
    }
    fn flush(&mut self) -> Result<()> {
        VlsEncoder::flush(self)
    }
}

impl Decoder<Option<String>> for VlsDecoder {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        VlsDecoder::load(self, rows)
    }
    fn next(&mut self) -> Result<Option<String>> {
        self.next_opt()
    }
    fn skip(&mut self) -> Result<()> {
        VlsDecoder::skip(self)
    }
}
