//! Workload types and a deterministic data generator.
//!
//! Every value comes from a counter-based hash: value `k` of stream `s` is
//! `mix(s, k)`, a SplitMix64 finaliser applied to a per-stream offset plus
//! `k`. The data therefore depend only on the row count, never on the order
//! in which rows are generated, and two runs produce the same bits.

use h5vec::H5Vector;

/// SplitMix64 output function (Steele, Lea, Flood 2014).
#[inline]
fn finalize(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Value `k` of random stream `stream`.
#[inline]
pub fn mix(stream: u64, k: u64) -> u64 {
    // Streams start 2^40 golden-ratio steps apart, far beyond any row count.
    let base = stream.wrapping_mul(0x9E37_79B9_7F4A_7C15) << 40;
    finalize(base.wrapping_add(k).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// Uniform in `[lo, hi)` from the top 53 bits.
#[inline]
fn uniform(x: u64, lo: f64, hi: f64) -> f64 {
    let u = (x >> 11) as f64 / (1u64 << 53) as f64;
    lo + u * (hi - lo)
}

// ---------------------------------------------------------------------------
// W1: measurements
// ---------------------------------------------------------------------------

/// GPS time: weeks and microseconds into the week.
#[derive(
    H5Vector, hdf5::H5Type, serde::Serialize, serde::Deserialize, Clone, Copy, Debug, PartialEq,
)]
#[repr(C)]
pub struct Timestamp {
    /// GPS week.
    pub weeks: i32,
    /// Microseconds into the week.
    pub microseconds: i64,
}

/// One W1 record (the seed's `Measurement`).
///
/// `#[repr(C)]` + `H5Type` only serve the compound reference row; h5vec
/// uses the derived `H5Vector`.
#[derive(
    H5Vector, hdf5::H5Type, serde::Serialize, serde::Deserialize, Clone, Copy, Debug, PartialEq,
)]
#[repr(C)]
pub struct Measurement {
    /// When.
    pub timestamp: Timestamp,
    /// Degrees Celsius.
    pub temperature: f64,
    /// x, y, z.
    pub position: [f64; 3],
}

/// Logical payload of one W1 record: 4 + 8 + 8 + 3 * 8 bytes.
pub const W1_PAYLOAD: u64 = 44;

/// `n` W1 records: weeks in 0..5000, microseconds in one week, temperature
/// in [-50, 50), position components in [-1000, 1000).
pub fn gen_w1(n: usize) -> Vec<Measurement> {
    (0..n as u64).map(w1_row).collect()
}

/// Row `i` of W1 (what [`gen_w1`] returns at index `i`), for generating rows
/// on the fly without holding them.
#[inline]
pub fn w1_row(i: u64) -> Measurement {
    Measurement {
        timestamp: Timestamp {
            weeks: (mix(1, i) % 5000) as i32,
            microseconds: (mix(2, i) % 604_800_000_000) as i64,
        },
        temperature: uniform(mix(3, i), -50.0, 50.0),
        position: std::array::from_fn(|j| uniform(mix(4 + j as u64, i), -1000.0, 1000.0)),
    }
}

// ---------------------------------------------------------------------------
// W2: events
// ---------------------------------------------------------------------------

/// One W2 record: an id, a name, a few tags from a small vocabulary and a
/// short list of numbers.
#[cfg_attr(feature = "w2", derive(H5Vector))]
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq)]
pub struct Event {
    /// Identifier.
    pub id: u64,
    /// 5..=40 ASCII letters and digits (a compressed VLS string column).
    #[cfg_attr(feature = "w2", h5vec(vls))]
    pub name: String,
    /// 0..=4 words of [`TAG_WORDS`].
    pub tags: Vec<String>,
    /// 0..=16 values in [0, 1).
    pub values: Vec<f32>,
}

/// Characters of W2 names.
const NAME_CHARS: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// The 50-word tag vocabulary of W2.
pub const TAG_WORDS: [&str; 50] = [
    "amber", "basalt", "cedar", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "jasper",
    "kelp", "lagoon", "maple", "nectar", "onyx", "pebble", "quartz", "raven", "saffron", "tundra",
    "umber", "violet", "willow", "xenon", "yarrow", "zephyr", "red", "green", "blue", "cyan",
    "black", "white", "north", "south", "east", "west", "up", "down", "left", "right", "hot",
    "cold", "wet", "dry", "fast", "slow", "new", "old", "alpha", "omega",
];

/// `n` W2 records. Variable-length parts draw from running counters, so the
/// data depend only on `n`.
pub fn gen_w2(n: usize) -> Vec<Event> {
    let (mut c, mut t, mut v) = (0u64, 0u64, 0u64);
    (0..n as u64)
        .map(|i| {
            let name_len = 5 + (mix(20, i) % 36) as usize;
            let name: String = (0..name_len)
                .map(|_| {
                    c += 1;
                    NAME_CHARS[(mix(21, c) % NAME_CHARS.len() as u64) as usize] as char
                })
                .collect();
            let tags = (0..mix(22, i) % 5)
                .map(|_| {
                    t += 1;
                    TAG_WORDS[(mix(23, t) % 50) as usize].to_owned()
                })
                .collect();
            let values = (0..mix(24, i) % 17)
                .map(|_| {
                    v += 1;
                    // 24 random bits: exactly representable as f32.
                    (mix(25, v) >> 40) as f32 / (1u32 << 24) as f32
                })
                .collect();
            Event {
                id: mix(26, i),
                name,
                tags,
                values,
            }
        })
        .collect()
}

/// Logical payload of W2: id + name bytes + tag bytes + 4 * values.
pub fn w2_payload(events: &[Event]) -> u64 {
    events
        .iter()
        .map(|e| {
            8 + e.name.len() + e.tags.iter().map(String::len).sum::<usize>() + 4 * e.values.len()
        })
        .sum::<usize>() as u64
}

/// Bytes the input `Vec<Event>` occupies in memory: the records themselves
/// plus every heap buffer they own (capacities, not lengths).
pub fn w2_heap_bytes(events: &[Event]) -> u64 {
    let inline = std::mem::size_of_val(events);
    let heap: usize = events
        .iter()
        .map(|e| {
            e.name.capacity()
                + e.tags.capacity() * std::mem::size_of::<String>()
                + e.tags.iter().map(String::capacity).sum::<usize>()
                + e.values.capacity() * std::mem::size_of::<f32>()
        })
        .sum();
    (inline + heap) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generators_are_deterministic_and_in_range() {
        let a = gen_w1(1000);
        assert_eq!(a, gen_w1(1000));
        assert_eq!(a[..10], gen_w1(10)[..]);
        for m in &a {
            assert!((0..5000).contains(&m.timestamp.weeks));
            assert!((0..604_800_000_000).contains(&m.timestamp.microseconds));
            assert!((-50.0..50.0).contains(&m.temperature));
            assert!(m.position.iter().all(|p| (-1000.0..1000.0).contains(p)));
        }
        let e = gen_w2(1000);
        assert_eq!(e, gen_w2(1000));
        for ev in &e {
            assert!((5..=40).contains(&ev.name.len()));
            assert!(ev.name.bytes().all(|b| b.is_ascii_alphanumeric()));
            assert!(ev.tags.len() <= 4 && ev.tags.iter().all(|t| TAG_WORDS.contains(&t.as_str())));
            assert!(ev.values.len() <= 16 && ev.values.iter().all(|v| (0.0..1.0).contains(v)));
        }
    }
}
