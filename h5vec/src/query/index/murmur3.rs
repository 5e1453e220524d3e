//! MurmurHash3_x64_128 (Austin Appleby's reference `MurmurHash3_x64_128`,
//! public domain), the hash of `CHUNK_BLOOM` indexes (SPEC.md 14.6).
//!
//! ```text
//! murmur3_x64_128(bytes, seed) -> (h_a, h_b)   h_a = low 64 bits (the reference's h1),
//!                                              h_b = high 64 bits (h2)
//! mmh3.hash128(b, seed, x64arch=True, signed=False) == h_b << 64 | h_a
//! ```

const C1: u64 = 0x87c3_7b91_1142_53d5;
const C2: u64 = 0x4cf5_ad43_2745_937f;

#[inline]
fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^= k >> 33;
    k
}

/// The reference MurmurHash3_x64_128 of `data` with `seed`: `(h1, h2)`,
/// the low and the high 64 bits of the 128-bit hash.
pub(crate) fn murmur3_x64_128(data: &[u8], seed: u32) -> (u64, u64) {
    let len = data.len();
    let mut h1 = u64::from(seed);
    let mut h2 = u64::from(seed);
    let blocks = len / 16;
    for i in 0..blocks {
        let b = &data[i * 16..i * 16 + 16];
        let mut k1 = u64::from_le_bytes(b[..8].try_into().expect("8 bytes"));
        let mut k2 = u64::from_le_bytes(b[8..].try_into().expect("8 bytes"));
        k1 = k1.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2);
        h1 ^= k1;
        h1 = h1
            .rotate_left(27)
            .wrapping_add(h2)
            .wrapping_mul(5)
            .wrapping_add(0x52dc_e729);
        k2 = k2.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1);
        h2 ^= k2;
        h2 = h2
            .rotate_left(31)
            .wrapping_add(h1)
            .wrapping_mul(5)
            .wrapping_add(0x3849_5ab5);
    }
    let tail = &data[blocks * 16..];
    let mut k1 = 0u64;
    let mut k2 = 0u64;
    for (i, &b) in tail.iter().enumerate().rev() {
        if i >= 8 {
            k2 ^= u64::from(b) << ((i - 8) * 8);
        } else {
            k1 ^= u64::from(b) << (i * 8);
        }
    }
    if tail.len() > 8 {
        k2 = k2.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1);
        h2 ^= k2;
    }
    if !tail.is_empty() {
        k1 = k1.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2);
        h1 ^= k1;
    }
    h1 ^= len as u64;
    h2 ^= len as u64;
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    h1 = fmix64(h1);
    h2 = fmix64(h2);
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    (h1, h2)
}

#[cfg(test)]
mod tests {
    use super::murmur3_x64_128;

    /// The known answers of SPEC.md 14.6 (mmh3 5.3.1).
    #[test]
    fn known_answers() {
        let table: &[(&[u8], u32, u64, u64)] = &[
            (b"", 0, 0, 0),
            (b"a", 0, 9607679276477937801, 16624257681780017498),
            (b"hello", 0, 14688674573012802306, 6565844092913065241),
            (
                b"0123456789abcdef",
                0,
                5467490433528156583,
                9782763267945859290,
            ),
            (
                b"0123456789abcdefX",
                0,
                14838185036522510071,
                10336343437188549415,
            ),
            (
                b"The quick brown fox jumps over the lazy dog",
                0,
                16378391709484522348,
                8809951995912426311,
            ),
            (&[0; 8], 0, 2945182322382062539, 17462001654787800658),
            (&[0xff; 8], 0, 11593587578262711667, 7575356704511641263),
            (
                b"*\x00\x00\x00\x00\x00\x00\x00",
                0,
                13163110875106803192,
                2646172625393561472,
            ),
            (
                b"\x07\x00\x00\x00",
                0,
                9162408199432052219,
                15138043501802445733,
            ),
            (
                b"\x00\x00\x00\x00\x00\x00\xf8?",
                0,
                17465743298960357555,
                11123518563217951924,
            ),
            (
                b"\x00\x00\xc0?",
                0,
                12810856049361028438,
                15317216918228101780,
            ),
            (b"\x01", 0, 8849112093580131862, 8613248517421295493),
            (
                "héllo".as_bytes(),
                0,
                5634419923683204234,
                4727992206285323525,
            ),
            (b"", 42, 17305828677633410339, 15060430851467758521),
            (b"a", 42, 2892890568104748720, 2732500323686427413),
            (b"hello", 42, 14175277504640544520, 2536855305735617658),
            (
                b"0123456789abcdef",
                42,
                9335577662010995364,
                17727525231211749342,
            ),
        ];
        for &(input, seed, a, b) in table {
            assert_eq!(
                murmur3_x64_128(input, seed),
                (a, b),
                "{input:?} seed {seed}"
            );
        }
    }
}
