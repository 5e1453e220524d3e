//! HDF5's Fletcher32 checksum (SPEC 6.4), computed here for the chunks
//! h5vec writes and verified for those it reads, and the error naming the
//! rows of a chunk whose checksum does not match.

use crate::error::At;

/// The error for a chunk `k` (of `c` rows) whose checksum does not match.
pub(super) fn corrupt_chunk(k: u64, c: u64, detail: &str, path: impl At) -> crate::error::Error {
    crate::error::Error::invalid(
        path,
        format!(
            "checksum mismatch, rows {}..{}: {detail} (Fletcher32: the chunk's bytes changed \
             after they were written)",
            k.saturating_mul(c),
            k.saturating_add(1).saturating_mul(c)
        ),
    )
}

/// HDF5's Fletcher32 checksum (`H5_checksum_fletcher32`, the Fletcher32
/// filter's) of `data`: 16-bit big-endian words (a last odd byte is the
/// high byte of a word), two running sums kept in 1..=65535 by HDF5's
/// end-around-carry folds (0 only while every word so far is 0),
/// `sum2 << 16 | sum1`.
///
/// Computed here in blocks of 360 words: within a block, `Σw` and
/// `Σ j·w` (j the word's place in the block) fit in u32 lanes the compiler
/// vectorises, and fold into the sums as `sum1 += Σw`, `sum2 += n·sum1 +
/// n·Σw − Σ j·w` (n the block's words), reduced mod 65535. HDF5's folds
/// give the same residues, and its sums are 0 only when all words are, so
/// the result is the same bits (tests compare with a line-by-line port of
/// HDF5's loop and with HDF5's own filter output).
pub(crate) fn fletcher32(data: &[u8]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: this CPU has AVX2 (checked just above).
        return unsafe { fletcher32_avx2(data) };
    }
    fletcher32_blocks(data)
}

/// [`fletcher32`] compiled for AVX2 (8 u32 lanes: about 1.6 times as fast
/// as the SSE2 baseline's code). A safe function with a target feature:
/// calling it (the one `unsafe` here, in [`fletcher32`]) needs a CPU with
/// AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn fletcher32_avx2(data: &[u8]) -> u32 {
    fletcher32_blocks(data)
}

/// [`fletcher32`]'s computation, inlined into each instruction set's copy.
#[inline(always)]
fn fletcher32_blocks(data: &[u8]) -> u32 {
    const BLOCK: usize = 360;
    const M: u64 = 65535;
    let (mut s1, mut s2) = (0u64, 0u64);
    let mut any = 0u64;
    let words = data.len() / 2;
    let (body, odd) = data.split_at(words * 2);
    for block in body.chunks(BLOCK * 2) {
        let (mut sum, mut weighted) = (0u32, 0u32);
        for (j, w) in block.chunks_exact(2).enumerate() {
            let w = u32::from(u16::from_be_bytes([w[0], w[1]]));
            sum += w;
            weighted += j as u32 * w;
        }
        let n = (block.len() / 2) as u64;
        let sum = u64::from(sum);
        any |= sum;
        // n·(s1 + Σw) ≥ Σ j·w: no underflow.
        s2 = (s2 + n * (s1 + sum) - u64::from(weighted)) % M;
        s1 = (s1 + sum) % M;
    }
    if let [b] = odd {
        let w = u64::from(*b) << 8;
        any |= w;
        s1 = (s1 + w) % M;
        s2 = (s2 + s1) % M;
    }
    if any == 0 {
        return 0;
    }
    // Nonzero sums: HDF5 represents the residue 0 as 65535.
    let fold = |x: u64| if x == 0 { M } else { x } as u32;
    (fold(s2) << 16) | fold(s1)
}

/// A checksum HDF5 also accepts for `sum`: its bytes swapped within each
/// 16-bit half (what HDF5 before 1.6.3 stored on little-endian machines).
pub(super) fn fletcher32_reversed(sum: u32) -> u32 {
    ((sum & 0x00ff_00ff) << 8) | ((sum >> 8) & 0x00ff_00ff)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// HDF5's `H5_checksum_fletcher32`, line by line.
    fn hdf5_fletcher32(data: &[u8]) -> u32 {
        let (mut sum1, mut sum2) = (0u32, 0u32);
        let mut len = data.len() / 2;
        let mut at = 0;
        while len > 0 {
            let mut tlen = len.min(360);
            len -= tlen;
            while tlen > 0 {
                sum1 += (u32::from(data[at]) << 8) | u32::from(data[at + 1]);
                at += 2;
                sum2 += sum1;
                tlen -= 1;
            }
            sum1 = (sum1 & 0xffff) + (sum1 >> 16);
            sum2 = (sum2 & 0xffff) + (sum2 >> 16);
        }
        if data.len() % 2 == 1 {
            sum1 += u32::from(data[at]) << 8;
            sum2 += sum1;
            sum1 = (sum1 & 0xffff) + (sum1 >> 16);
            sum2 = (sum2 & 0xffff) + (sum2 >> 16);
        }
        sum1 = (sum1 & 0xffff) + (sum1 >> 16);
        sum2 = (sum2 & 0xffff) + (sum2 >> 16);
        (sum2 << 16) | sum1
    }

    #[test]
    fn fletcher32_matches_hdf5s_loop() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let lens = [
            0usize,
            1,
            2,
            3,
            359 * 2,
            720,
            721,
            722,
            1440,
            4097,
            65_536,
            100_001,
        ];
        for &len in &lens {
            let random: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            let patterns: [Vec<u8>; 5] = [
                random,
                vec![0xff; len],
                vec![0; len],
                // Residue 0 mod 65535 in the first sum: one word 0xffff.
                (0..len).map(|i| if i < 2 { 0xff } else { 0 }).collect(),
                (0..len).map(|i| (i % 251) as u8).collect(),
            ];
            for data in patterns {
                assert_eq!(
                    fletcher32(&data),
                    hdf5_fletcher32(&data),
                    "len {len} {:?}",
                    &data[..len.min(4)]
                );
                assert_eq!(
                    fletcher32_blocks(&data),
                    hdf5_fletcher32(&data),
                    "len {len}"
                );
            }
        }
        // Sparse words: mostly zero, a few of every value.
        for _ in 0..2000 {
            let len = (next() % 3000) as usize;
            let mut data = vec![0u8; len];
            for _ in 0..(next() % 5) {
                if len > 0 {
                    let i = (next() as usize) % len;
                    data[i] = next() as u8;
                }
            }
            assert_eq!(fletcher32(&data), hdf5_fletcher32(&data), "len {len}");
            assert_eq!(
                fletcher32_blocks(&data),
                hdf5_fletcher32(&data),
                "len {len}"
            );
        }
        assert_eq!(fletcher32_reversed(0x1234_5678), 0x3412_7856);
    }
}
