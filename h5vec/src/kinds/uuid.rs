//! UUIDs: `uuid::Uuid` (feature `uuid`; SPEC.md section 4.7).
//!
//! Layout on disk (the dense layout, 3.2, under codec `h5vec.UuidCodec`):
//! ```text
//! <field>/values    UInt8 (Z, 16): the UUID's 16 bytes in RFC 9562 order
//!                   (`Uuid::as_bytes`, Python's `uuid.UUID(bytes=...)`);
//!                   dimensions = [16], encoded type `UInt8`
//! ```
//! As a list element the bytes are the list's `VALUES` dataset, (n, 16).

use uuid::Uuid;

use crate::kinds::mapped::{mapped_vector, Mapped};
use crate::schema::ids;

impl Mapped for Uuid {
    type Raw = u8;
    const SHAPE: &'static [usize] = &[16];
    const CODEC: &'static str = ids::UUID_CODEC;
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) -> std::result::Result<(), String> {
        out.extend_from_slice(self.as_bytes());
        Ok(())
    }
    #[inline]
    fn decode(src: &[u8]) -> std::result::Result<Self, String> {
        let bytes: [u8; 16] = src
            .try_into()
            .map_err(|_| format!("{} bytes, not 16", src.len()))?;
        Ok(Uuid::from_bytes(bytes))
    }
}

mapped_vector!(Uuid);
