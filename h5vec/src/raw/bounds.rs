//! Statistics' view of values: [`Bound`]s of a run of values (widened
//! without loss: i64, u64, f64 or a bool byte), their [`Summary`], and
//! which kind of bound a type has ([`BoundKind`]). What [`Pod`](super::Pod)
//! types summarize themselves into and `minmax.rs` stores.

use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5t;

/// A bound of a chunk's values, widened without loss.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Bound {
    /// A signed integer.
    I(i64),
    /// An unsigned integer.
    U(u64),
    /// A float.
    F(f64),
    /// A bool byte (0 or 1).
    B(u8),
}

impl Bound {
    pub(crate) fn slot(self) -> [u8; 8] {
        match self {
            Bound::I(v) => v.to_ne_bytes(),
            Bound::U(v) => v.to_ne_bytes(),
            Bound::F(v) => v.to_ne_bytes(),
            Bound::B(v) => [v, 0, 0, 0, 0, 0, 0, 0],
        }
    }

    /// The smaller of two bounds of the same kind.
    pub(crate) fn min(self, o: Bound) -> Bound {
        match (self, o) {
            (Bound::I(a), Bound::I(b)) => Bound::I(a.min(b)),
            (Bound::U(a), Bound::U(b)) => Bound::U(a.min(b)),
            (Bound::F(a), Bound::F(b)) => Bound::F(a.min(b)),
            (Bound::B(a), Bound::B(b)) => Bound::B(a.min(b)),
            (a, _) => a,
        }
    }

    /// The larger of two bounds of the same kind.
    pub(crate) fn max(self, o: Bound) -> Bound {
        match (self, o) {
            (Bound::I(a), Bound::I(b)) => Bound::I(a.max(b)),
            (Bound::U(a), Bound::U(b)) => Bound::U(a.max(b)),
            (Bound::F(a), Bound::F(b)) => Bound::F(a.max(b)),
            (Bound::B(a), Bound::B(b)) => Bound::B(a.max(b)),
            (a, _) => a,
        }
    }
}

/// What a run of values holds: the bounds of its ordered values (none:
/// every value is NaN, or there is no value) and its NaN count.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    pub(crate) bounds: Option<(Bound, Bound)>,
    pub(crate) nan: u64,
    pub(crate) n: u64,
}

impl Summary {
    /// The summary of two adjacent runs.
    pub(crate) fn merge(self, o: Summary) -> Summary {
        Summary {
            bounds: match (self.bounds, o.bounds) {
                (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
                (x, None) => x,
                (None, y) => y,
            },
            nan: self.nan + o.nan,
            n: self.n + o.n,
        }
    }
}

/// Which kind of bound a value type has (its memory type in [`Entry`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoundKind {
    /// Signed integers, as i64.
    I,
    /// Unsigned integers, as u64.
    U,
    /// Floats, as f64.
    F,
    /// Bool bytes.
    B,
}

impl BoundKind {
    pub(crate) fn native(self) -> hid_t {
        match self {
            BoundKind::I => *h5t::H5T_NATIVE_INT64,
            BoundKind::U => *h5t::H5T_NATIVE_UINT64,
            BoundKind::F => *h5t::H5T_NATIVE_DOUBLE,
            BoundKind::B => *h5t::H5T_NATIVE_B8,
        }
    }

    pub(crate) fn bound(self, s: [u8; 8]) -> Bound {
        match self {
            BoundKind::I => Bound::I(i64::from_ne_bytes(s)),
            BoundKind::U => Bound::U(u64::from_ne_bytes(s)),
            BoundKind::F => Bound::F(f64::from_ne_bytes(s)),
            BoundKind::B => Bound::B(s[0]),
        }
    }
}

/// Eight lanes of running minimum and maximum, and of NaN counts (`x != x`:
/// always false for integers), over `v`: the loop the compiler vectorizes.
/// A NaN fails both comparisons, so it moves no bound.
#[inline(always)]
fn scan<T: Copy + PartialOrd>(v: &[T], lo0: T, hi0: T) -> ([T; 8], [T; 8], u64) {
    let (mut lo, mut hi) = ([lo0; 8], [hi0; 8]);
    let mut nans = [0u64; 8];
    let mut it = v.chunks_exact(8);
    for c in &mut it {
        for j in 0..8 {
            let x = c[j];
            lo[j] = if x < lo[j] { x } else { lo[j] };
            hi[j] = if x > hi[j] { x } else { hi[j] };
            #[allow(clippy::eq_op)] // NaN test that also compiles for integers
            let nan = x != x;
            nans[j] += u64::from(nan);
        }
    }
    for &x in it.remainder() {
        lo[0] = if x < lo[0] { x } else { lo[0] };
        hi[0] = if x > hi[0] { x } else { hi[0] };
        #[allow(clippy::eq_op)] // as above
        let nan = x != x;
        nans[0] += u64::from(nan);
    }
    (lo, hi, nans.iter().sum())
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn scan_avx2<T: Copy + PartialOrd>(v: &[T], lo0: T, hi0: T) -> ([T; 8], [T; 8], u64) {
    scan(v, lo0, hi0)
}

/// The minimum and maximum of the values of `v` that are not NaN (`lo0` /
/// `hi0`: where the bounds start, the first value or the infinities), and
/// the NaN count; with AVX2 where the CPU has it (64-bit integer compares).
pub(crate) fn min_max<T: Copy + PartialOrd>(v: &[T], lo0: T, hi0: T) -> (T, T, u64) {
    #[cfg(target_arch = "x86_64")]
    let (lo, hi, nan) = if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (detected just above), the only thing
        // `scan_avx2` requires beyond what `scan` does.
        unsafe { scan_avx2(v, lo0, hi0) }
    } else {
        scan(v, lo0, hi0)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let (lo, hi, nan) = scan(v, lo0, hi0);
    let lo = lo.iter().fold(lo0, |a, &x| if x < a { x } else { a });
    let hi = hi.iter().fold(hi0, |a, &x| if x > a { x } else { a });
    (lo, hi, nan)
}
