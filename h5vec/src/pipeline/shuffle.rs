//! HDF5's shuffle filter and its inverse, byte for byte: each chunk's
//! bytes regrouped by byte plane before deflate, and back after it.

/// HDF5's shuffle filter: byte `j` of element `i` goes to `j * n + i`.
pub(crate) fn shuffle(raw: &[u8], elem: usize, out: &mut Vec<u8>) {
    let n = raw.len() / elem;
    out.clear();
    out.resize(raw.len(), 0);
    match elem {
        2 => shuffle_n::<2>(raw, n, out),
        4 => shuffle_n::<4>(raw, n, out),
        8 => shuffle_n::<8>(raw, n, out),
        16 => shuffle_n::<16>(raw, n, out),
        _ => {
            for j in 0..elem {
                let dst = &mut out[j * n..(j + 1) * n];
                for (i, d) in dst.iter_mut().enumerate() {
                    *d = raw[i * elem + j];
                }
            }
        }
    }
    // Trailing bytes that do not fill an element stay in place.
    let rest = n * elem;
    out[rest..].copy_from_slice(&raw[rest..]);
}

/// [`shuffle`] for a fixed element size: blocks of 8 elements, each byte
/// plane of a block gathered into 8 bytes and stored at once.
fn shuffle_n<const N: usize>(raw: &[u8], n: usize, out: &mut [u8]) {
    let blocks = n / 8;
    for (b, src) in raw[..blocks * 8 * N].chunks_exact(8 * N).enumerate() {
        for j in 0..N {
            let mut w = [0u8; 8];
            for (k, x) in w.iter_mut().enumerate() {
                *x = src[k * N + j];
            }
            let at = j * n + b * 8;
            out[at..at + 8].copy_from_slice(&w);
        }
    }
    for i in blocks * 8..n {
        for j in 0..N {
            out[j * n + i] = raw[i * N + j];
        }
    }
}

/// Inverse of [`shuffle`].
pub(crate) fn unshuffle(sh: &[u8], elem: usize, out: &mut [u8]) {
    let n = sh.len() / elem;
    match elem {
        2 => unshuffle_n::<2>(sh, n, out),
        4 => unshuffle_n::<4>(sh, n, out),
        8 => unshuffle_n::<8>(sh, n, out),
        16 => unshuffle_n::<16>(sh, n, out),
        _ => {
            for j in 0..elem {
                let src = &sh[j * n..(j + 1) * n];
                for (i, &s) in src.iter().enumerate() {
                    out[i * elem + j] = s;
                }
            }
        }
    }
    let rest = n * elem;
    out[rest..].copy_from_slice(&sh[rest..]);
}

/// [`unshuffle`] for a fixed element size: blocks of 8 elements, 8 bytes
/// of each byte plane loaded at once and scattered.
fn unshuffle_n<const N: usize>(sh: &[u8], n: usize, out: &mut [u8]) {
    let blocks = n / 8;
    for (b, dst) in out[..blocks * 8 * N].chunks_exact_mut(8 * N).enumerate() {
        for j in 0..N {
            let at = j * n + b * 8;
            let mut w = [0u8; 8];
            w.copy_from_slice(&sh[at..at + 8]);
            for (k, x) in w.iter().enumerate() {
                dst[k * N + j] = *x;
            }
        }
    }
    for i in blocks * 8..n {
        for j in 0..N {
            out[i * N + j] = sh[j * n + i];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shuffle_roundtrip_matches_hdf5_order() {
        let raw: Vec<u8> = (0u8..22).collect();
        let mut sh = Vec::new();
        shuffle(&raw, 4, &mut sh);
        // 5 elements of 4 bytes: first bytes of each, then second bytes, ...; 2 leftover bytes.
        assert_eq!(&sh[..5], &[0, 4, 8, 12, 16]);
        assert_eq!(&sh[5..10], &[1, 5, 9, 13, 17]);
        assert_eq!(&sh[20..], &[20, 21]);
        let mut back = vec![0u8; raw.len()];
        unshuffle(&sh, 4, &mut back);
        assert_eq!(back, raw);
    }

    #[test]
    fn shuffle_matches_definition_for_every_size() {
        for elem in [1usize, 2, 3, 4, 8, 16] {
            for len in [
                0usize,
                1,
                7,
                8 * elem,
                8 * elem + 3,
                77 * elem + 5,
                1000 * elem,
            ] {
                let raw: Vec<u8> = (0..len).map(|i| (i * 7 + i / 3) as u8).collect();
                let n = len / elem;
                let mut want = raw.clone();
                for i in 0..n {
                    for j in 0..elem {
                        want[j * n + i] = raw[i * elem + j];
                    }
                }
                let mut sh = Vec::new();
                shuffle(&raw, elem, &mut sh);
                assert_eq!(sh, want, "elem {elem} len {len}");
                let mut back = vec![0u8; len];
                unshuffle(&sh, elem, &mut back);
                assert_eq!(back, raw, "elem {elem} len {len}");
            }
        }
    }
}
