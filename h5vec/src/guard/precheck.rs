//! Pre-checks on damaged HDF5 structures that HDF5 2.2 itself crashes on
//! while opening an object or listing a group (SPEC.md section 7): the
//! guard's walk runs them on each object's header, read from the file's
//! bytes, before HDF5 parses it.
//!
//! Each check refuses only values that no HDF5 writer produces and on which
//! HDF5's own parser divides by zero or reads past its tables
//! (`tests/fuzz/KNOWN.md`); anything that does not parse here is left to
//! HDF5, which reports it as an error. The cost is one read of each
//! object's header (its first chunk; continuation chunks when there are
//! any), plus, for a group with dense link storage, its fractal heap
//! header and v2 B-tree headers: bytes HDF5 reads next anyway.

use crate::raw::gheap::{header_messages, le, read_at, FileView};

/// Object header message types.
const LINK_INFO_MSG: u64 = 0x0002;
const LAYOUT_MSG: u64 = 0x0008;
const ATTR_INFO_MSG: u64 = 0x0015;
/// Message flag: the message is shared (the body refers to it).
const SHARED: u8 = 0x02;

/// What a pre-check found: the object it concerns and why it is refused.
pub(super) struct Damage {
    /// The header holds dense link storage (a group), not a layout.
    pub(super) is_group: bool,
    /// The refusal, a sentence about the object.
    pub(super) why: String,
}

/// The file's bytes, for the pre-checks of one walk.
pub(super) struct Headers {
    view: FileView,
}

impl Headers {
    /// `None` when the file's bytes cannot be read directly (another
    /// driver): the walk then leaves everything to HDF5.
    pub(super) fn of(group: &hdf5::Group) -> Option<Headers> {
        let file = group.file().ok()?;
        Some(Headers {
            view: FileView::of(&file)?,
        })
    }

    /// The address a native object token holds (relative to the base).
    pub(super) fn token_addr(&self, token: &[u8; 16]) -> u64 {
        le(token, 0, self.view.sa)
    }

    /// Checks the object header at `addr` (relative to the base address,
    /// as tokens hold it): a chunked layout HDF5 would divide by, the
    /// fractal heap and v2 B-tree headers of dense link or attribute
    /// storage that HDF5 would divide by or overrun.
    pub(super) fn check(&self, addr: u64) -> Result<(), Damage> {
        let Some(abs) = addr.checked_add(self.view.base) else {
            return Ok(());
        };
        let found = header_messages(&self.view, abs, |mtype, flags, body| {
            if flags & SHARED != 0 {
                return None;
            }
            match mtype {
                LAYOUT_MSG => layout(body).map(|why| Damage {
                    is_group: false,
                    why,
                }),
                LINK_INFO_MSG => self.dense(body, "group's dense link").map(|why| Damage {
                    is_group: true,
                    why,
                }),
                ATTR_INFO_MSG => self
                    .dense(body, "object's dense attribute")
                    .map(|why| Damage {
                        is_group: false,
                        why,
                    }),
                _ => None,
            }
        });
        match found {
            Some(d) => Err(d),
            None => Ok(()),
        }
    }

    /// Checks the dense storage a Link Info or Attribute Info message
    /// points to (`what`: "group's dense link", ...): version 0, flags, the maximum creation index if flag 1
    /// (8 bytes for links, 2 for attributes), the fractal heap address, the
    /// name index v2 B-tree address and, if flag 2, the creation order
    /// index v2 B-tree address.
    fn dense(&self, m: &[u8], what: &str) -> Option<String> {
        let sa = self.view.sa;
        if m.len() < 2 || m[0] != 0 {
            return None;
        }
        let flags = m[1];
        let corder = match (flags & 1 != 0, what.ends_with("link")) {
            (false, _) => 0,
            (true, true) => 8,
            (true, false) => 2,
        };
        let mut p = 2 + corder;
        let mut addr = || {
            let a = (m.len() >= p + sa).then(|| le(m, p, sa));
            p += sa;
            // All bits set: undefined (compact storage, no index).
            a.filter(|&a| a != u64::MAX >> (64 - 8 * sa as u32))
        };
        let heap = addr();
        let name = addr();
        let order = if flags & 2 != 0 { addr() } else { None };
        if let Some(why) = heap.and_then(|a| self.fractal_heap(a)) {
            return Some(format!("the {what} storage has a fractal heap that {why}"));
        }
        for (index, a) in [("name", name), ("creation order", order)] {
            if let Some(why) = a.and_then(|a| self.btree2(a)) {
                return Some(format!(
                    "the {what} storage has a {index} index (v2 B-tree) that {why}"
                ));
            }
        }
        None
    }

    /// Checks the v2 B-tree header ("BTHD") at `addr` (relative) for what
    /// `H5B2__hdr_init` divides by or subtracts from: signature (4),
    /// version (1), type (1), node size (4), record size (2), depth (2),
    /// split and merge percentages, the root node pointer, checksum.
    fn btree2(&self, addr: u64) -> Option<String> {
        let v = &self.view;
        let at = addr.checked_add(v.base)?;
        let b = read_at(&v.f, at, 16)?;
        if &b[..4] != b"BTHD" || b[4] != 0 {
            return None;
        }
        let node = le(&b, 6, 4);
        let rec = le(&b, 10, 2);
        let depth = le(&b, 12, 2);
        if rec == 0 {
            return Some(
                "declares records of 0 bytes (HDF5 would divide by the record size)".into(),
            );
        }
        // Signature, version, type, checksum.
        const PREFIX: u64 = 10;
        let leaf = node.checked_sub(PREFIX).map(|n| n / rec).unwrap_or(0);
        if leaf == 0 {
            return Some(format!(
                "declares nodes of {node} bytes, too small for one record of {rec} bytes \
                 (HDF5's record count would wrap around)"
            ));
        }
        // Internal nodes: each record also takes a child pointer (address,
        // record count, and below the first level the total count below).
        let enc = |n: u64| u64::from((63 - n.max(1).leading_zeros()) / 8 + 1);
        let nrec_size = enc(leaf);
        let (mut cum, mut cum_size) = (leaf, 0u64);
        for d in 1..=depth {
            let ptr = v.sa as u64 + nrec_size + cum_size;
            let Some(room) = node.checked_sub(PREFIX + ptr) else {
                return Some(format!(
                    "declares nodes of {node} bytes, too small for a level-{d} node's \
                     pointer (HDF5's record count would wrap around)"
                ));
            };
            let max = room / (rec + ptr);
            // Past what 64 bits count, HDF5 wraps too; no tree that deep
            // fits in a file: leave it to HDF5's own checks.
            let Some(next) = max
                .checked_add(1)
                .and_then(|m| m.checked_mul(cum))
                .and_then(|c| c.checked_add(max))
            else {
                break;
            };
            cum = next;
            cum_size = enc(cum);
        }
        None
    }

    /// Checks the fractal heap header ("FRHP") at `addr` (relative) for
    /// the doubling table parameters `H5HF__dtable_init` and
    /// `H5HF__hdr_compute_free_space` rely on: a table width, starting
    /// block size and maximum direct block size that are powers of two, a
    /// maximum direct block size no smaller than the starting one, and a
    /// maximum heap size (in bits) that holds the first row and fits 64
    /// bits. HDF5 creates every heap so (`H5HF__hdr_create`);
    /// a zero width, for one, sends its free-space loop past its tables.
    fn fractal_heap(&self, addr: u64) -> Option<String> {
        let v = &self.view;
        let (sa, ss) = (v.sa, v.ss);
        let at = addr.checked_add(v.base)?;
        // Prefix (5), ID and filter lengths (4), flags (1), maximum
        // managed object size (4), one length and one address (huge
        // objects), one length and one address (free space), 8 lengths
        // of statistics, then the doubling table.
        let table = 14 + 10 * ss + 2 * sa;
        let len = table + 2 + 2 * ss + 4;
        let b = read_at(&v.f, at, len as u64)?;
        if &b[..4] != b"FRHP" || b[4] != 0 {
            return None;
        }
        let width = le(&b, table, 2);
        let start = le(&b, table + 2, ss);
        let direct = le(&b, table + 2 + ss, ss);
        let max_index = le(&b, table + 2 + 2 * ss, 2);
        let bad = |what: String| Some(format!("{what} (HDF5 would read past its tables)"));
        if !width.is_power_of_two() {
            return bad(format!(
                "declares a table width of {width}, not a power of two"
            ));
        }
        if !start.is_power_of_two() || start > 1 << 31 {
            return bad(format!(
                "declares a starting block size of {start}, not a power of two up to 2^31"
            ));
        }
        if !direct.is_power_of_two() || direct > 1 << 31 || direct < start {
            return bad(format!(
                "declares a maximum direct block size of {direct}, not a power of two \
                 from the starting block size {start} up to 2^31"
            ));
        }
        let first_row_bits = u64::from(start.trailing_zeros() + width.trailing_zeros());
        // (Attribute heaps declare 2^40 even in files with 4-byte lengths.)
        if max_index < first_row_bits || max_index > 64 {
            return bad(format!(
                "declares a maximum heap size of 2^{max_index} bytes, outside \
                 2^{first_row_bits} (its first row) to 2^64"
            ));
        }
        None
    }
}

/// Checks a Data Layout message body: a chunked layout (class 2) must
/// declare at least 2 dimensions (the chunk's and the element size) and
/// no dimension of 0. HDF5 2.2 refuses both in layout versions 1 to 3,
/// but reads a version 4 or 5 message with 0 dimensions and then divides
/// by the missing chunk dimension (`H5D__chunk_set_info_real`).
fn layout(m: &[u8]) -> Option<String> {
    let version = *m.first()?;
    // (class, dimensionality, offset of the first dimension, bytes per dimension)
    let (class, ndims, first, width) = match version {
        1 | 2 => (*m.get(2)?, *m.get(1)?, None, 4),
        3 => (*m.get(1)?, *m.get(2)?, None, 4),
        4 | 5 => (*m.get(1)?, *m.get(3)?, Some(5), usize::from(*m.get(4)?)),
        _ => return None,
    };
    if class != 2 {
        return None;
    }
    if ndims < 2 {
        return Some(format!(
            "the dataset's chunked layout declares {ndims} dimension{}, so HDF5 would \
             take a chunk dimension of 0 (and divide by it)",
            if ndims == 1 { "" } else { "s" }
        ));
    }
    // Versions 1 to 3 put an address before the dimensions: HDF5 refuses
    // a zero there itself. Versions 4 and 5 do too; this costs nothing.
    let (Some(first), 1..=8) = (first, width) else {
        return None;
    };
    let dims = m.get(first..first + usize::from(ndims) * width)?;
    if dims.chunks_exact(width).any(|d| le(d, 0, width) == 0) {
        return Some(
            "the dataset's layout declares a chunk dimension of 0 (HDF5 would divide by it)".into(),
        );
    }
    None
}
