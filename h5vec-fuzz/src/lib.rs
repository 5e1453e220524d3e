//! A deterministic mutation fuzzer for h5vec's loaders, runnable on stable Rust.
//!
//! Each seed (see [`targets`]) is a small valid file. Mutant `i` of run
//! seed `s` is one seed file with a few bytes flipped or overwritten, chosen
//! by a generator seeded from `(s, i)`: the pair identifies the input, and
//! `h5vec-fuzz replay` rebuilds it. Every mutant is loaded in-process
//! through each of its seed's entry points, and each load is classified:
//!
//! - `ok-equal`: the original values;
//! - `ok-different-data`, `-gheap`, `-meta`: different values without an
//!   error. Bytes inside raw data chunks or global heap collections carry
//!   no checksum in HDF5, so a changed value there is undetectable by
//!   design; a change anywhere else (`-meta`) is a silent corruption to
//!   look at;
//! - `ok-different-forged` (checksum mode only): different values from a
//!   mutant that recomputed HDF5's metadata checksums over the bytes it
//!   changed (half the mutants do, so HDF5 parses the changed structure):
//!   a forgery no checksum detects, counted apart from damage;
//! - `error`: an `Err`;
//! - `panic`: caught with `catch_unwind`;
//! - `hang`: a watchdog thread saw one load run past the timeout; it saves
//!   the input and a `gdb` backtrace, then ends the process;
//! - `abort`: the process died by a signal (the driver, `scripts/fuzz.sh`,
//!   records it from `current` and restarts at the next index).

pub mod targets;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

pub use targets::{seeds, Seed};

/// Exit code of a process ended by the hang watchdog.
pub const HANG_EXIT: i32 = 86;
/// Exit code of a process that ended after a mutant left HDF5 objects open
/// (so the next mutants start from a clean library).
pub const LEAK_EXIT: i32 = 87;

/// Open HDF5 objects of every file, by kind: files, datasets, groups,
/// datatypes, attributes.
pub fn open_kinds() -> String {
    use hdf5_sys::h5f::{
        H5Fget_obj_count, H5F_OBJ_ALL, H5F_OBJ_ATTR, H5F_OBJ_DATASET, H5F_OBJ_DATATYPE,
        H5F_OBJ_FILE, H5F_OBJ_GROUP,
    };
    let kinds = [
        ("files", H5F_OBJ_FILE),
        ("datasets", H5F_OBJ_DATASET),
        ("groups", H5F_OBJ_GROUP),
        ("datatypes", H5F_OBJ_DATATYPE),
        ("attributes", H5F_OBJ_ATTR),
    ];
    kinds
        .iter()
        .map(|(name, k)| {
            let n = h5vec::hdf5::sync::sync(|| {
                // SAFETY: H5F_OBJ_ALL as the file id counts in every file.
                unsafe { H5Fget_obj_count(H5F_OBJ_ALL as hdf5_sys::h5i::hid_t, *k) }
            });
            format!("{n} {name}")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// How many objects (files, groups, datasets, types, attributes) HDF5 has
/// open, in every file.
pub fn open_objects() -> isize {
    use hdf5_sys::h5f::{H5Fget_obj_count, H5F_OBJ_ALL};
    h5vec::hdf5::sync::sync(|| {
        // SAFETY: H5F_OBJ_ALL as the file id counts the objects of every file.
        unsafe { H5Fget_obj_count(H5F_OBJ_ALL as hdf5_sys::h5i::hid_t, H5F_OBJ_ALL) }
    })
}

// ---------------------------------------------------------------------------
// Random numbers: SplitMix64, seeded per mutant.

/// A small deterministic generator (SplitMix64).
pub struct Rng(u64);

impl Rng {
    /// The generator of mutant `index` of run seed `seed`.
    pub fn for_mutant(seed: u64, index: u64) -> Rng {
        let mut r = Rng(seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        r.next_u64();
        r
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

// ---------------------------------------------------------------------------
// Where the bytes of a seed file are.

/// Byte ranges of a seed file: raw data (chunks and contiguous storage) and
/// global heap collections; everything else is file metadata.
#[derive(Clone, Debug, Default)]
pub struct Regions {
    /// Raw data storage, `[start, end)`.
    pub data: Vec<(u64, u64)>,
    /// Global heap collections (`GCOL`), `[start, end)`.
    pub gheap: Vec<(u64, u64)>,
    /// Offsets of bytes outside both (where mutations are most useful).
    pub meta_offsets: Vec<u64>,
    /// Metadata structures with a checksum, `[start, end)` (the last 4
    /// bytes are the checksum): object headers and their continuation
    /// chunks, the superblock, B-tree, heap and chunk index blocks.
    pub checked: Vec<(usize, usize)>,
}

/// Where a mutated byte lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Region {
    /// Raw data storage.
    Data,
    /// A global heap collection.
    Gheap,
    /// File metadata.
    Meta,
}

impl Regions {
    /// Maps the file `path` (whose bytes are `bytes`).
    pub fn of(path: &Path, bytes: &[u8]) -> Regions {
        let mut r = Regions::default();
        if let Ok(f) = h5vec::hdf5::File::open(path) {
            walk(&f, &mut r.data);
        }
        // GCOL signature, version 1, 3 reserved bytes, 8-byte collection size.
        let mut i = 0;
        while let Some(p) = find(&bytes[i..], b"GCOL") {
            let at = i + p;
            if let Some(sz) = bytes.get(at + 8..at + 16) {
                let size = u64::from_le_bytes(sz.try_into().unwrap_or([0; 8]));
                if bytes[at + 4] == 1 && size >= 16 && size <= bytes.len() as u64 {
                    r.gheap.push((at as u64, at as u64 + size));
                }
            }
            i = at + 4;
        }
        r.checked = checksummed(bytes);
        r.meta_offsets = (0..bytes.len() as u64)
            .filter(|&o| r.region(o) == Region::Meta)
            .collect();
        r
    }

    /// The region of byte `offset`.
    pub fn region(&self, offset: u64) -> Region {
        let inside = |v: &[(u64, u64)]| v.iter().any(|&(a, b)| (a..b).contains(&offset));
        if inside(&self.data) {
            Region::Data
        } else if inside(&self.gheap) {
            Region::Gheap
        } else {
            Region::Meta
        }
    }
}

/// HDF5's metadata checksum: Bob Jenkins' lookup3 `hashlittle`, initval 0
/// (`H5_checksum_lookup3`).
pub fn lookup3(key: &[u8]) -> u32 {
    fn mix(a: &mut u32, b: &mut u32, c: &mut u32) {
        *a = a.wrapping_sub(*c);
        *a ^= c.rotate_left(4);
        *c = c.wrapping_add(*b);
        *b = b.wrapping_sub(*a);
        *b ^= a.rotate_left(6);
        *a = a.wrapping_add(*c);
        *c = c.wrapping_sub(*b);
        *c ^= b.rotate_left(8);
        *b = b.wrapping_add(*a);
        *a = a.wrapping_sub(*c);
        *a ^= c.rotate_left(16);
        *c = c.wrapping_add(*b);
        *b = b.wrapping_sub(*a);
        *b ^= a.rotate_left(19);
        *a = a.wrapping_add(*c);
        *c = c.wrapping_sub(*b);
        *c ^= b.rotate_left(4);
        *b = b.wrapping_add(*a);
    }
    fn word(k: &[u8]) -> u32 {
        let mut w = [0u8; 4];
        w[..k.len()].copy_from_slice(k);
        u32::from_le_bytes(w)
    }
    let init = 0xdead_beefu32.wrapping_add(key.len() as u32);
    let (mut a, mut b, mut c) = (init, init, init);
    let mut k = key;
    while k.len() > 12 {
        a = a.wrapping_add(word(&k[0..4]));
        b = b.wrapping_add(word(&k[4..8]));
        c = c.wrapping_add(word(&k[8..12]));
        mix(&mut a, &mut b, &mut c);
        k = &k[12..];
    }
    if k.is_empty() {
        return c;
    }
    let mut tail = [0u8; 12];
    tail[..k.len()].copy_from_slice(k);
    a = a.wrapping_add(word(&tail[0..4]));
    b = b.wrapping_add(word(&tail[4..8]));
    c = c.wrapping_add(word(&tail[8..12]));
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(14));
    a ^= c;
    a = a.wrapping_sub(c.rotate_left(11));
    b ^= a;
    b = b.wrapping_sub(a.rotate_left(25));
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(16));
    a ^= c;
    a = a.wrapping_sub(c.rotate_left(4));
    b ^= a;
    b = b.wrapping_sub(a.rotate_left(14));
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(24));
    c
}

fn le(bytes: &[u8], at: usize, width: usize) -> Option<u64> {
    let s = bytes.get(at..at.checked_add(width)?)?;
    let mut w = [0u8; 8];
    w[..width].copy_from_slice(s);
    Some(u64::from_le_bytes(w))
}

/// Whether `[start, end)` ends with the checksum of the bytes before it.
fn checksum_ok(bytes: &[u8], start: usize, end: usize) -> bool {
    end >= start + 8
        && end <= bytes.len()
        && le(bytes, end - 4, 4) == Some(u64::from(lookup3(&bytes[start..end - 4])))
}

/// Rewrites the checksum of `[start, end)` after its bytes changed.
pub fn fix_checksum(bytes: &mut [u8], start: usize, end: usize) {
    let sum = lookup3(&bytes[start..end - 4]);
    bytes[end - 4..end].copy_from_slice(&sum.to_le_bytes());
}

/// The checksummed structures of a file (only spans whose checksum matches).
fn checksummed(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    // Superblock version 2 or 3: 12 bytes, 4 addresses, checksum.
    if bytes.starts_with(b"\x89HDF\r\n\x1a\n") && matches!(bytes.get(8), Some(2 | 3)) {
        let end = 12 + 4 * usize::from(bytes[9]) + 4;
        if checksum_ok(bytes, 0, end) {
            out.push((0, end));
        }
    }
    let mut i = 0;
    while i + 8 <= bytes.len() {
        let sig = &bytes[i..i + 4];
        if sig == b"OHDR" && bytes[i + 4] == 2 {
            let flags = bytes[i + 5];
            let mut q = i + 6;
            if flags & 0x20 != 0 {
                q += 16;
            }
            if flags & 0x10 != 0 {
                q += 4;
            }
            let width = 1usize << (flags & 3);
            if let Some(size) = le(bytes, q, width) {
                let msgs = q + width;
                let end = msgs.saturating_add(size as usize).saturating_add(4);
                if checksum_ok(bytes, i, end) {
                    out.push((i, end));
                    // Continuation messages (type 0x10) point at OCHK chunks.
                    let mut m = msgs;
                    let head = if flags & 4 != 0 { 6 } else { 4 };
                    while m + head <= end - 4 {
                        let ty = bytes[m];
                        let len = le(bytes, m + 1, 2).unwrap_or(0) as usize;
                        let body = m + head;
                        if ty == 0x10 {
                            if let (Some(at), Some(l)) =
                                (le(bytes, body, 8), le(bytes, body + 8, 8))
                            {
                                let (at, l) = (at as usize, l as usize);
                                if bytes.get(at..at + 4) == Some(b"OCHK")
                                    && checksum_ok(bytes, at, at.saturating_add(l))
                                {
                                    out.push((at, at + l));
                                }
                            }
                        }
                        m = body + len;
                    }
                }
            }
        } else if [
            &b"BTHD"[..],
            b"BTIN",
            b"BTLF",
            b"FRHP",
            b"FHDB",
            b"FHIB",
            b"FSHD",
            b"FSSE",
            b"EAHD",
            b"EAIB",
            b"EASB",
            b"EADB",
            b"FAHD",
            b"FADB",
            b"SMTB",
            b"SMLI",
        ]
        .contains(&sig)
        {
            // Lengths depend on each structure's parameters: find the span
            // whose last 4 bytes are the checksum of the rest.
            let max = (bytes.len() - i).min(4096);
            if let Some(l) = (8..=max).find(|&l| checksum_ok(bytes, i, i + l)) {
                out.push((i, i + l));
            }
        }
        i += 1;
    }
    out
}

/// Sets the access, modification, change and birth times of every version 2
/// object header to 2026-01-01 (checksums recomputed), so a seed file has
/// the same bytes in every run and `(seed, index)` names one input.
fn fix_times(bytes: &mut [u8]) {
    const T: u32 = 1_767_225_600;
    for (a, b) in checksummed(bytes) {
        if bytes[a..a + 4] == *b"OHDR" && bytes[a + 5] & 0x20 != 0 {
            for k in 0..4 {
                let at = a + 6 + 4 * k;
                bytes[at..at + 4].copy_from_slice(&T.to_le_bytes());
            }
            fix_checksum(bytes, a, b);
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn walk(g: &h5vec::hdf5::Group, out: &mut Vec<(u64, u64)>) {
    let Ok(names) = g.member_names() else { return };
    for n in names {
        if let Ok(ds) = g.dataset(&n) {
            if let Some(k) = ds.num_chunks() {
                for i in 0..k {
                    if let Some(c) = ds.chunk_info(i) {
                        out.push((c.addr, c.addr + c.size));
                    }
                }
            } else if let Some(off) = ds.offset() {
                out.push((off, off + ds.storage_size()));
            }
        } else if let Ok(sub) = g.group(&n) {
            walk(&sub, out);
        }
    }
}

// ---------------------------------------------------------------------------
// Mutations.

/// A mutated seed file.
pub struct Mutant {
    /// Index of the seed in [`seeds`].
    pub seed: usize,
    /// The file's bytes.
    pub bytes: Vec<u8>,
    /// `Meta` when every changed byte is file metadata, else `Gheap` when
    /// a global heap collection changed, else `Data`: a changed value is
    /// blamed on metadata only when no value bytes changed.
    pub region: Region,
    /// What was done, e.g. `flip@1234.3 u32@200=0xffffffff`.
    pub ops: String,
    /// Whether HDF5 metadata checksums were recomputed over changed bytes
    /// (`ck@` in `ops`): a forgery, not damage any checksum can detect.
    pub forged: bool,
}

const INTERESTING: [u64; 16] = [
    0,
    1,
    2,
    0x7f,
    0x80,
    0xff,
    0x7fff,
    0xffff,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_ffff,
    1 << 32,
    1 << 40,
    1 << 62,
    i64::MAX as u64,
    u64::MAX,
];

/// Builds mutant `index` of run seed `seed` from the seed files.
pub fn mutant(seed: u64, index: u64, files: &[(Vec<u8>, Regions)]) -> Mutant {
    let mut rng = Rng::for_mutant(seed, index);
    let k = (index % files.len() as u64) as usize;
    let (orig, regions) = &files[k];
    let mut bytes = orig.clone();
    let len = bytes.len() as u64;
    let n_ops = if rng.below(10) < 7 {
        1
    } else {
        2 + rng.below(2)
    };
    let mut ops = Vec::new();
    let mut touched = Vec::new();
    // Mostly metadata bytes only: flips in raw data only change values.
    let meta_only = rng.below(10) < 8 && !regions.meta_offsets.is_empty();
    for _ in 0..n_ops {
        let at = if meta_only {
            regions.meta_offsets[rng.below(regions.meta_offsets.len() as u64) as usize]
        } else {
            rng.below(len)
        };
        let i = at as usize;
        let desc = match rng.below(6) {
            0 => {
                let bit = rng.below(8);
                bytes[i] ^= 1 << bit;
                touched.push((i, 1));
                format!("flip@{at}.{bit}")
            }
            1 => {
                let v = match rng.below(3) {
                    0 => INTERESTING[rng.below(6) as usize] as u8,
                    _ => rng.next_u64() as u8,
                };
                bytes[i] = v;
                touched.push((i, 1));
                format!("u8@{at}={v:#x}")
            }
            2 | 3 => {
                let width = [2usize, 4, 8][rng.below(3) as usize];
                let end = (i + width).min(bytes.len());
                let mut cur = [0u8; 8];
                cur[..end - i].copy_from_slice(&bytes[i..end]);
                let cur = u64::from_le_bytes(cur);
                let v = match rng.below(4) {
                    0 => cur.wrapping_add(1 + rng.below(16)),
                    1 => cur.wrapping_sub(1 + rng.below(16)),
                    2 => cur.wrapping_mul(2 + rng.below(1000)),
                    _ => INTERESTING[rng.below(INTERESTING.len() as u64) as usize],
                };
                bytes[i..end].copy_from_slice(&v.to_le_bytes()[..end - i]);
                touched.push((i, end - i));
                format!("u{}@{at}={v:#x}", width * 8)
            }
            4 => {
                let n = 4 + rng.below(13) as usize;
                let src = rng.below(len) as usize;
                let n = n.min(bytes.len() - i).min(bytes.len() - src);
                let chunk = bytes[src..src + n].to_vec();
                bytes[i..i + n].copy_from_slice(&chunk);
                touched.push((i, n));
                format!("copy@{at}<{src}+{n}")
            }
            _ => {
                let n = (1 + rng.below(16) as usize).min(bytes.len() - i);
                bytes[i..i + n].fill(0);
                touched.push((i, n));
                format!("zero@{at}+{n}")
            }
        };
        ops.push(desc);
    }
    let mut region = Region::Meta;
    for &(i, n) in &touched {
        for o in i..i + n {
            match (regions.region(o as u64), region) {
                (Region::Gheap, _) => region = Region::Gheap,
                (Region::Data, Region::Meta) => region = Region::Data,
                _ => {}
            }
        }
    }
    // Half the mutants get valid checksums again, so HDF5 parses the
    // changed structure instead of rejecting its checksum.
    let mut forged = false;
    if rng.below(2) == 0 {
        for &(a, b) in &regions.checked {
            if touched.iter().any(|&(t, _)| (a..b - 4).contains(&t)) {
                fix_checksum(&mut bytes, a, b);
                ops.push(format!("ck@{a}+{}", b - a));
                forged = true;
            }
        }
    }
    Mutant {
        seed: k,
        bytes,
        region,
        ops: ops.join(" "),
        forged,
    }
}

/// Builds every seed file in `dir`; returns each one's bytes and regions.
pub fn build_seeds(dir: &Path) -> Result<Vec<(Vec<u8>, Regions)>, String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for s in seeds() {
        let p = dir.join(format!("seed-{}.h5", s.name));
        let _ = std::fs::remove_file(&p);
        (s.build)(&p).map_err(|e| format!("seed {}: {e}", s.name))?;
        // Every entry point must load the valid file exactly.
        let scratch = dir.join("seed-scratch.h5");
        for e in s.entries {
            match (s.run)(e, &p, &scratch) {
                Ok(true) => {}
                other => return Err(format!("seed {} entry {e}: {other:?}", s.name)),
            }
        }
        let mut bytes = std::fs::read(&p).map_err(|e| e.to_string())?;
        fix_times(&mut bytes);
        std::fs::write(&p, &bytes).map_err(|e| e.to_string())?;
        let regions = Regions::of(&p, &bytes);
        out.push((bytes, regions));
    }
    Ok(out)
}

/// One libFuzzer input (`fuzz/`, `cargo fuzz`): the first byte picks the
/// seed, the rest is the file, loaded through every entry point of that
/// seed. Panics, hangs and aborts are libFuzzer's to catch.
pub fn fuzz_one(data: &[u8]) {
    let Some((&k, file)) = data.split_first() else {
        return;
    };
    let seeds = seeds();
    let seed = &seeds[usize::from(k) % seeds.len()];
    let dir = std::env::temp_dir();
    let id = std::process::id();
    let path = dir.join(format!("h5vec-cargo-fuzz-{id}.h5"));
    let scratch = dir.join(format!("h5vec-cargo-fuzz-{id}-scratch.h5"));
    if std::fs::write(&path, file).is_err() {
        return;
    }
    for e in seed.entries {
        let _ = (seed.run)(e, &path, &scratch);
    }
}

/// Writes the libFuzzer seed corpus: each seed file behind its index byte.
pub fn write_corpus(dir: &Path) -> Result<(), String> {
    let work = dir.join(".seeds");
    let files = build_seeds(&work)?;
    for (k, (s, (bytes, _))) in seeds().iter().zip(&files).enumerate() {
        let mut v = vec![k as u8];
        v.extend_from_slice(bytes);
        std::fs::write(dir.join(s.name), v).map_err(|e| e.to_string())?;
    }
    std::fs::remove_dir_all(&work).map_err(|e| e.to_string())
}

// ---------------------------------------------------------------------------
// Outcomes.

/// The class of one load.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Class {
    /// The original values.
    OkEqual,
    /// An error.
    Error,
    /// Different values, only raw data bytes changed.
    OkDifferentData,
    /// Different values, a global heap collection changed.
    OkDifferentGheap,
    /// Checksum mode: different values from a mutant that recomputed
    /// HDF5's metadata checksums over the bytes it changed (a forgery: a
    /// checksum detects damage, not a writer that recomputes it).
    OkDifferentForged,
    /// Different values, file metadata changed: a silent corruption.
    OkDifferentMeta,
    /// The loads returned, but HDF5 objects stayed open afterwards.
    Leak,
    /// A panic (caught).
    Panic,
    /// A load past the timeout.
    Hang,
    /// The process died by a signal.
    Abort,
}

impl Class {
    /// Its name in counts and reports.
    pub fn name(self) -> &'static str {
        match self {
            Class::OkEqual => "ok-equal",
            Class::Error => "error",
            Class::OkDifferentData => "ok-different-data",
            Class::OkDifferentGheap => "ok-different-gheap",
            Class::OkDifferentForged => "ok-different-forged",
            Class::OkDifferentMeta => "ok-different-meta",
            Class::Leak => "leak",
            Class::Panic => "panic",
            Class::Hang => "hang",
            Class::Abort => "abort",
        }
    }
}

/// Counts of one process run (merged by `h5vec-fuzz summary`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Counts {
    /// Run seed.
    pub seed: u64,
    /// First mutant index of this process.
    pub start: u64,
    /// Next index to run.
    pub next: u64,
    /// Mutants completed.
    pub mutants: u64,
    /// Wall seconds.
    pub secs: f64,
    /// CPU seconds of this process (user + system).
    pub cpu_secs: f64,
    /// Mutants by their worst load.
    pub by_mutant: BTreeMap<String, u64>,
    /// Loads by entry point and class.
    pub by_entry: BTreeMap<String, BTreeMap<String, u64>>,
    /// Loads slower than the slow threshold (still counted by class).
    pub slow: u64,
    /// The most frequent error messages (digits replaced by `#`), capped.
    pub errors: BTreeMap<String, u64>,
    /// Seeds written with checksums (`--checksum`): every `ok-different-*`
    /// is a failure.
    #[serde(default)]
    pub checksum: bool,
}

fn error_key(msg: &str) -> String {
    let s: String = msg
        .chars()
        .map(|c| if c.is_ascii_digit() { '#' } else { c })
        .take(110)
        .collect();
    s
}

/// One notable load, appended to `events.jsonl`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Event {
    /// Class name.
    pub class: String,
    /// Run seed.
    pub seed: u64,
    /// Mutant index.
    pub index: u64,
    /// Seed name.
    pub seed_name: String,
    /// Entry point.
    pub entry: String,
    /// Mutations applied.
    pub ops: String,
    /// Seconds the load took.
    pub secs: f64,
    /// Message (panic message, error, signal).
    pub detail: String,
    /// Where the input was saved.
    pub input: String,
}

/// Appends `ev` to `dir/events.jsonl`.
pub fn log_event(dir: &Path, ev: &Event) {
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("events.jsonl"))
    {
        let _ = writeln!(f, "{}", serde_json::to_string(ev).unwrap_or_default());
    }
}

/// The file name an input is saved under.
pub fn input_name(prefix: &str, seed_name: &str, seed: u64, index: u64) -> String {
    format!("{prefix}-{seed_name}-s{seed}-i{index}.h5")
}

// ---------------------------------------------------------------------------
// The run loop.

/// Options of `h5vec-fuzz run`.
pub struct RunOpts {
    /// Output directory (`crashes/`, `counts/`, `events.jsonl`, `current`).
    pub dir: PathBuf,
    /// Run seed.
    pub seed: u64,
    /// First mutant index.
    pub start: u64,
    /// Stop before this index.
    pub end: u64,
    /// Stop at this instant (wall clock), if set.
    pub until: Option<std::time::SystemTime>,
    /// One load longer than this is a hang.
    pub timeout: Duration,
    /// One load longer than this is counted as slow.
    pub slow: Duration,
    /// Where mutants are written (a tmpfs such as `/dev/shm` keeps the
    /// flushes of appends cheap).
    pub work: PathBuf,
    /// Run exactly these indices, in this order (to replay a failure that
    /// needs the mutants before it in the same process).
    pub only: Option<Vec<u64>>,
    /// Checksum mode (`--checksum`, [`targets::set_checksum`], set before
    /// the seeds are built): every value byte is checksummed, so any
    /// different load (data and heap regions too) is a failure, recorded
    /// with its input like `ok-different-meta`.
    pub checksum: bool,
}

struct Watch {
    started: Option<Instant>,
    entry: &'static str,
    label: (u64, String, String),
    bytes: Arc<Vec<u8>>,
}

static WATCH: Mutex<Option<Watch>> = Mutex::new(None);
static COUNTS: Mutex<Option<(PathBuf, Counts, Instant)>> = Mutex::new(None);
/// The last panic message (set by the panic hook, from any thread).
static PANIC_MSG: Mutex<String> = Mutex::new(String::new());

fn cpu_secs() -> f64 {
    // /proc/self/stat fields 14 and 15: utime, stime in clock ticks (100 Hz on Linux).
    let Ok(s) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    let after = s.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let t = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (t(11) + t(12)) / 100.0
}

fn flush_counts() {
    if let Ok(g) = COUNTS.lock() {
        if let Some((path, c, t0)) = g.as_ref() {
            let mut c = c.clone();
            c.secs = t0.elapsed().as_secs_f64();
            c.cpu_secs = cpu_secs();
            let tmp = path.with_extension("tmp");
            if std::fs::write(&tmp, serde_json::to_vec_pretty(&c).unwrap_or_default()).is_ok() {
                let _ = std::fs::rename(&tmp, path);
            }
        }
    }
}

extern "C" {
    /// `_exit(2)`: ends the process without running exit handlers (HDF5's
    /// would wait for the library lock the hung load holds).
    fn _exit(code: i32) -> !;
}

fn gdb_backtrace(out: &Path) {
    let pid = std::process::id().to_string();
    if let Ok(o) = std::process::Command::new("gdb")
        .args(["-p", &pid, "-batch", "-ex", "thread apply all bt"])
        .output()
    {
        let _ = std::fs::write(out, o.stdout);
    }
}

fn watchdog(dir: PathBuf, timeout: Duration) {
    loop {
        std::thread::sleep(Duration::from_millis(100));
        let hung = {
            let g = WATCH.lock().unwrap_or_else(|e| e.into_inner());
            match g.as_ref() {
                Some(w) if w.started.is_some_and(|t| t.elapsed() > timeout) => Some((
                    w.entry,
                    w.label.clone(),
                    w.bytes.clone(),
                    w.started.map(|t| t.elapsed()),
                )),
                _ => None,
            }
        };
        let Some((entry, (index, seed_name, ops), bytes, took)) = hung else {
            continue;
        };
        let seed = COUNTS
            .lock()
            .ok()
            .and_then(|g| g.as_ref().map(|c| c.1.seed))
            .unwrap_or(0);
        let name = input_name(Class::Hang.name(), &seed_name, seed, index);
        let crashes = dir.join("crashes");
        let _ = std::fs::create_dir_all(&crashes);
        let _ = std::fs::write(crashes.join(&name), &*bytes);
        let bt = crashes.join(format!("{name}.{entry}.bt.txt"));
        gdb_backtrace(&bt);
        log_event(
            &dir,
            &Event {
                class: Class::Hang.name().into(),
                seed,
                index,
                seed_name,
                entry: entry.into(),
                ops,
                secs: took.map_or(0.0, |d| d.as_secs_f64()),
                detail: format!("backtrace: {}", bt.display()),
                input: name,
            },
        );
        if let Ok(mut g) = COUNTS.lock() {
            if let Some((_, c, _)) = g.as_mut() {
                c.next = index + 1;
            }
        }
        flush_counts();
        // SAFETY: `_exit` takes an int and never returns; no Rust state needs
        // to outlive the process.
        unsafe { _exit(HANG_EXIT) }
    }
}

/// Runs mutants `opts.start..opts.end` (or until `opts.until`).
pub fn run(opts: &RunOpts) -> Result<Counts, String> {
    let dir = &opts.dir;
    std::fs::create_dir_all(dir.join("crashes")).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(dir.join("counts")).map_err(|e| e.to_string())?;
    let work = opts
        .work
        .join(format!("h5vec-fuzz-work-{}", std::process::id()));
    let files = build_seeds(&work)?;
    let seeds = seeds();
    let scratch = work.join("scratch.h5");
    let baseline = open_objects();

    std::panic::set_hook(Box::new(|info| {
        let msg = format!("{info}");
        *PANIC_MSG.lock().unwrap_or_else(|e| e.into_inner()) = msg;
    }));
    *COUNTS.lock().map_err(|e| e.to_string())? = Some((
        dir.join("counts")
            .join(format!("s{}-i{}.json", opts.seed, opts.start)),
        Counts {
            seed: opts.seed,
            start: opts.start,
            next: opts.start,
            checksum: opts.checksum,
            ..Counts::default()
        },
        Instant::now(),
    ));
    {
        let (d, t) = (dir.clone(), opts.timeout);
        std::thread::spawn(move || watchdog(d, t));
    }
    let mut last_flush = Instant::now();
    let order: Vec<u64> = match &opts.only {
        Some(v) => v.clone(),
        None => Vec::new(),
    };
    let mut pos = 0;
    let mut index = order.first().copied().unwrap_or(opts.start);
    while (opts.only.is_some() && pos < order.len()) || (opts.only.is_none() && index < opts.end) {
        if opts.only.is_some() {
            index = order[pos];
            pos += 1;
        }
        if opts
            .until
            .is_some_and(|u| std::time::SystemTime::now() >= u)
        {
            break;
        }
        let m = mutant(opts.seed, index, &files);
        let seed = &seeds[m.seed];
        // A new name per mutant: a file HDF5 failed to close must not be
        // found again (HDF5 shares an open file) with other bytes in it.
        let cur = work.join(format!("cur-{index}.h5"));
        std::fs::write(&cur, &m.bytes).map_err(|e| e.to_string())?;
        let bytes = Arc::new(m.bytes);
        let mut worst = Class::OkEqual;
        let mut results = Vec::new();
        for &entry in seed.entries {
            let _ = std::fs::write(
                dir.join("current"),
                format!(
                    "{} {} {} {} {}\n",
                    opts.seed,
                    index,
                    seed.name,
                    entry,
                    cur.display()
                ),
            );
            *WATCH.lock().unwrap_or_else(|e| e.into_inner()) = Some(Watch {
                started: Some(Instant::now()),
                entry,
                label: (index, seed.name.to_string(), m.ops.clone()),
                bytes: bytes.clone(),
            });
            let t = Instant::now();
            let r = std::panic::catch_unwind(|| (seed.run)(entry, &cur, &scratch));
            let took = t.elapsed();
            if let Some(w) = WATCH.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
                w.started = None;
            }
            let (class, detail) = match r {
                Ok(Ok(true)) => (Class::OkEqual, String::new()),
                Ok(Ok(false)) if opts.checksum && m.forged => {
                    (Class::OkDifferentForged, String::new())
                }
                Ok(Ok(false)) => (
                    match m.region {
                        Region::Data => Class::OkDifferentData,
                        Region::Gheap => Class::OkDifferentGheap,
                        Region::Meta => Class::OkDifferentMeta,
                    },
                    String::new(),
                ),
                Ok(Err(e)) => (Class::Error, e),
                Err(_) => (
                    Class::Panic,
                    PANIC_MSG.lock().unwrap_or_else(|e| e.into_inner()).clone(),
                ),
            };
            worst = worst.max(class);
            results.push((entry, class, detail, took));
        }
        // Record.
        let mut saved = None;
        for (entry, class, detail, took) in &results {
            let slow = *took > opts.slow;
            let silent = match class {
                Class::OkDifferentMeta => true,
                Class::OkDifferentData | Class::OkDifferentGheap => opts.checksum,
                _ => false,
            };
            let notable = matches!(class, Class::Panic) || silent || slow;
            if notable {
                let prefix = if slow && *class < Class::OkDifferentMeta {
                    "slow"
                } else {
                    class.name()
                };
                let name = input_name(prefix, seed.name, opts.seed, index);
                if saved.is_none() {
                    let _ = std::fs::write(dir.join("crashes").join(&name), &*bytes);
                    saved = Some(name.clone());
                }
                log_event(
                    dir,
                    &Event {
                        class: if slow {
                            format!("slow/{}", class.name())
                        } else {
                            class.name().into()
                        },
                        seed: opts.seed,
                        index,
                        seed_name: seed.name.into(),
                        entry: entry.to_string(),
                        ops: m.ops.clone(),
                        secs: took.as_secs_f64(),
                        detail: detail.clone(),
                        input: saved.clone().unwrap_or_default(),
                    },
                );
            }
        }
        {
            let mut g = COUNTS.lock().map_err(|e| e.to_string())?;
            let c = &mut g.as_mut().ok_or("no counts")?.1;
            c.mutants += 1;
            c.next = index + 1;
            *c.by_mutant.entry(worst.name().into()).or_default() += 1;
            for (entry, class, detail, took) in &results {
                *c.by_entry
                    .entry(entry.to_string())
                    .or_default()
                    .entry(class.name().into())
                    .or_default() += 1;
                if *took > opts.slow {
                    c.slow += 1;
                }
                if *class == Class::Error {
                    let k = error_key(detail);
                    if c.errors.len() < 400 || c.errors.contains_key(&k) {
                        *c.errors.entry(k).or_default() += 1;
                    }
                }
            }
        }
        let _ = std::fs::remove_file(&cur);
        let open = open_objects();
        if open > baseline {
            let name = input_name(Class::Leak.name(), seed.name, opts.seed, index);
            let _ = std::fs::write(dir.join("crashes").join(&name), &*bytes);
            log_event(
                dir,
                &Event {
                    class: Class::Leak.name().into(),
                    seed: opts.seed,
                    index,
                    seed_name: seed.name.into(),
                    entry: "(after all)".into(),
                    ops: m.ops.clone(),
                    secs: 0.0,
                    detail: format!("HDF5 objects still open: {}", open_kinds()),
                    input: name,
                },
            );
            if let Ok(mut g) = COUNTS.lock() {
                if let Some((_, c, _)) = g.as_mut() {
                    // Counted by its worst load above: count it as a leak instead.
                    if let Some(v) = c.by_mutant.get_mut(worst.name()) {
                        *v -= 1;
                    }
                    *c.by_mutant.entry(Class::Leak.name().into()).or_default() += 1;
                }
            }
            flush_counts();
            let _ = std::fs::remove_dir_all(&work);
            std::process::exit(LEAK_EXIT);
        }
        if last_flush.elapsed() > Duration::from_secs(2) {
            flush_counts();
            last_flush = Instant::now();
        }
        index += 1;
    }
    flush_counts();
    let _ = std::fs::remove_dir_all(&work);
    let mut c = COUNTS
        .lock()
        .map_err(|e| e.to_string())?
        .as_ref()
        .map(|c| {
            let mut k = c.1.clone();
            k.secs = c.2.elapsed().as_secs_f64();
            k
        })
        .ok_or("no counts")?;
    c.cpu_secs = cpu_secs();
    Ok(c)
}

/// Sums every `counts/*.json` of `dir` and the hang/abort events.
pub fn summary(dir: &Path) -> Result<String, String> {
    let mut total = Counts::default();
    let mut runs = 0;
    for e in std::fs::read_dir(dir.join("counts")).map_err(|e| e.to_string())? {
        let p = e.map_err(|e| e.to_string())?.path();
        if p.extension().is_some_and(|x| x == "json") {
            let c: Counts = serde_json::from_slice(&std::fs::read(&p).map_err(|e| e.to_string())?)
                .map_err(|e| format!("{}: {e}", p.display()))?;
            runs += 1;
            total.checksum |= c.checksum;
            total.mutants += c.mutants;
            total.secs += c.secs;
            total.cpu_secs += c.cpu_secs;
            total.slow += c.slow;
            for (k, v) in c.by_mutant {
                *total.by_mutant.entry(k).or_default() += v;
            }
            for (e, m) in c.by_entry {
                for (k, v) in m {
                    *total
                        .by_entry
                        .entry(e.clone())
                        .or_default()
                        .entry(k)
                        .or_default() += v;
                }
            }
            for (k, v) in c.errors {
                *total.errors.entry(k).or_default() += v;
            }
        }
    }
    let mut events: Vec<Event> = Vec::new();
    if let Ok(s) = std::fs::read_to_string(dir.join("events.jsonl")) {
        events = s
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
    }
    // Hangs and aborts end a process before its mutant is counted.
    for ev in &events {
        if ev.class == "hang" || ev.class == "abort" {
            total.mutants += 1;
            *total.by_mutant.entry(ev.class.clone()).or_default() += 1;
            *total
                .by_entry
                .entry(ev.entry.clone())
                .or_default()
                .entry(ev.class.clone())
                .or_default() += 1;
        }
    }
    let mut out = String::new();
    use std::fmt::Write as _;
    let _ = writeln!(
        out,
        "runs {runs}, mutants {}, wall {:.0} s, cpu {:.0} s ({:.2} h), {:.1} mutants/s of wall time, slow loads {}",
        total.mutants,
        total.secs,
        total.cpu_secs,
        total.cpu_secs / 3600.0,
        total.mutants as f64 / total.secs.max(1e-9),
        total.slow
    );
    let _ = writeln!(out, "mutants by worst load: {:?}", total.by_mutant);
    if total.checksum {
        let silent: u64 = [
            "ok-different-data",
            "ok-different-gheap",
            "ok-different-meta",
        ]
        .iter()
        .filter_map(|k| total.by_mutant.get(*k))
        .sum();
        let forged = total.by_mutant.get("ok-different-forged").unwrap_or(&0);
        let _ = writeln!(
            out,
            "checksum mode: {silent} silently different loads (every one is a failure: its input is in crashes/); \
             {forged} mutants with recomputed HDF5 metadata checksums loaded different values (forgeries, not damage)"
        );
    }
    for (e, m) in &total.by_entry {
        let _ = writeln!(out, "  {e:<14} {m:?}");
    }
    let mut errs: Vec<_> = total.errors.iter().collect();
    errs.sort_by(|a, b| b.1.cmp(a.1));
    let _ = writeln!(out, "most frequent errors:");
    for (k, v) in errs.iter().take(25) {
        let _ = writeln!(out, "  {v:>7}  {k}");
    }
    let _ = writeln!(out, "notable events ({}):", events.len());
    let mut seen = BTreeMap::new();
    for ev in &events {
        let key = (ev.class.clone(), ev.seed_name.clone(), ev.entry.clone());
        *seen.entry(key).or_insert(0u64) += 1;
    }
    for ((class, s, e), n) in seen {
        let _ = writeln!(out, "  {n:>5}  {class:<22} {s:<26} {e}");
    }
    Ok(out)
}
