//! `uuid::Uuid` as a vector element or field: its 16 bytes on the dense
//! layout, checked both ways by `mapped` (layout in `mod.rs`).

use uuid::Uuid;

use crate::kinds::adapters::mapped::{mapped_vector, Mapped};
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
