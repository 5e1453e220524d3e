//! The only file that calls bincode (2.0.1, `config::standard()`), so
//! another serde codec can replace it by changing this file alone.
//! bincode is unmaintained (RUSTSEC-2025-0141).

use serde::de::DeserializeOwned;
use serde::Serialize;

/// Appends the encoding of `value` to `out`.
pub fn encode_into<T: Serialize>(value: &T, out: &mut Vec<u8>) -> Result<(), String> {
    bincode::serde::encode_into_std_write(value, out, bincode::config::standard())
        .map(drop)
        .map_err(|e| e.to_string())
}

/// Decodes one value that must use all of `bytes`.
pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
    let (v, used) = bincode::serde::decode_from_slice(bytes, bincode::config::standard())
        .map_err(|e| e.to_string())?;
    if used != bytes.len() {
        return Err(format!(
            "{} trailing bytes after the value",
            bytes.len() - used
        ));
    }
    Ok(v)
}
