//! Which filters h5vec runs, and refusing the others before HDF5 reads a
//! dataset (SPEC.md 6.2).

use std::ffi::c_char;

use hdf5::Dataset;
use hdf5_sys::h5d;
use hdf5_sys::h5i::hid_t;

use super::ffi::{sync, Owned};

/// Lets Blosc use every core, once per process, when h5vec first creates
/// or reads a Blosc dataset: Blosc's thread count is global and starts at
/// 1, so it is raised to the available parallelism only while it is still
/// 1 (a count the program set before is kept; the environment variable
/// `BLOSC_NTHREADS`, which Blosc reads at every call, wins over both).
/// Must not be called from inside [`sync`](super::sync) (it takes the HDF5 lock after
/// a `Once`).
pub(crate) fn blosc_threads() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if hdf5::filters::blosc_get_nthreads() == 1 {
            let n = std::thread::available_parallelism().map_or(1, |n| n.get());
            hdf5::filters::blosc_set_nthreads(u8::try_from(n).unwrap_or(u8::MAX));
        }
    });
}

/// What a dataset's filters must be, for error messages.
pub(crate) const FILTERS_EXPECTED: &str = "only filters this build can decode (deflate, shuffle, LZF, Blosc, Fletcher32, n-bit, scale-offset)";

/// The filters this build runs itself: HDF5's built-in deflate (1),
/// shuffle (2), Fletcher32 (3), n-bit (5) and scale-offset (6), and the
/// LZF (32000) and Blosc (32001) filters hdf5-metno registers at start-up.
/// SZIP (4) is not built in. A dataset with any other filter is refused
/// before HDF5 reads it, so HDF5 never looks for a plugin (SPEC.md 6.2).
pub(crate) const KNOWN_FILTERS: [i32; 7] = [1, 2, 3, 5, 6, 32000, 32001];

/// The first filter of `ds`'s pipeline that this build cannot run,
/// described for an error message (``filter `name` (id N)`` and a hint). A
/// Blosc filter (32001) whose compressor, its 7th parameter, this build of
/// Blosc lacks (Snappy) counts as unavailable too. Reading a dataset with
/// a Blosc filter this build can run sets up Blosc's threads
/// ([`blosc_threads`]).
///
/// Filters are compared with a fixed list (deflate, shuffle, Fletcher32,
/// n-bit, scale-offset, LZF, Blosc), never looked up in HDF5's registry
/// (`H5Zfilter_avail` would make HDF5 `dlopen` every library in
/// `HDF5_PLUGIN_PATH` looking for an unknown one).
pub(crate) fn unavailable_filter(ds: &Dataset) -> Option<String> {
    // SAFETY: a valid dataset id; the property list is owned by an `Owned`
    // and valid while `filters_in` reads it, under the lock.
    let (out, blosc) = sync(|| unsafe {
        match Owned::ok(h5d::H5Dget_create_plist(ds.id())) {
            Some(dcpl) => filters_in(dcpl.id()),
            None => (None, false),
        }
    });
    if blosc && out.is_none() {
        blosc_threads();
    }
    out
}

/// [`unavailable_filter`] on a dataset creation property list (without
/// setting up Blosc's threads).
///
/// # Safety
/// Caller holds the HDF5 lock; `dcpl` is a valid dataset creation property list.
pub(crate) unsafe fn unavailable_filter_in(dcpl: hid_t) -> Option<String> {
    // SAFETY: forwarded from the caller.
    unsafe { filters_in(dcpl).0 }
}

/// The first filter of `dcpl` this build cannot run, and whether the
/// pipeline has a Blosc filter.
///
/// # Safety
/// As for [`unavailable_filter_in`].
unsafe fn filters_in(dcpl: hid_t) -> (Option<String>, bool) {
    use hdf5_sys::h5p;
    const BLOSC: i32 = 32001;
    let mut blosc = false;
    // SAFETY: forwarded; the output buffers are as large as passed.
    unsafe {
        for i in 0..h5p::H5Pget_nfilters(dcpl).max(0) as std::ffi::c_uint {
            let mut flags: std::ffi::c_uint = 0;
            let mut cd = [0 as std::ffi::c_uint; 16];
            let mut nelm: usize = cd.len();
            let mut cfg: std::ffi::c_uint = 0;
            let mut name = [0 as c_char; 64];
            let id = h5p::H5Pget_filter2(
                dcpl,
                i,
                &mut flags,
                &mut nelm,
                cd.as_mut_ptr(),
                name.len(),
                name.as_mut_ptr(),
                &mut cfg,
            );
            let last = name.len() - 1;
            name[last] = 0;
            let name = || {
                std::ffi::CStr::from_ptr(name.as_ptr())
                    .to_string_lossy()
                    .into_owned()
            };
            if id < 0 {
                return (
                    Some(format!("filter number {i}, which HDF5 cannot describe")),
                    blosc,
                );
            }
            if !KNOWN_FILTERS.contains(&id) {
                return (
                    Some(format!("filter `{}` (id {id}){}", name(), filter_hint(id))),
                    blosc,
                );
            }
            // Deflate or shuffle parameters HDF5's own filter refuses in
            // both directions: damaged, since `H5Pset_deflate` and
            // shuffle's `set_local` never store them. A read would fail
            // anyway, but an append's rows wait in HDF5's chunk cache for
            // the flush, whose failure leaves the dataset unclosable
            // (`H5Dclose` fails and its id stays open:
            // leak-scalars_appended_deflate-s11-i7753.h5 in tests/fuzz).
            // An optional filter that fails is skipped, not an error: HDF5
            // itself stores shuffle without parameters, optional, on
            // variable-length datasets (h5py's `shuffle=True` on strings).
            let optional = flags & hdf5_sys::h5z::H5Z_FLAG_OPTIONAL != 0;
            if let Some(why) = bad_builtin_parameters(id, &cd, nelm).filter(|_| !optional) {
                return (
                    Some(format!("filter `{}` (id {id}) with {why}", name())),
                    blosc,
                );
            }
            if id == BLOSC {
                // Parameters Blosc's filter would run with but cannot: fewer
                // than 4 (hdf5-metno's filter indexes the 3rd and 4th:
                // none fails every write, 1 to 3 abort), or a type size
                // outside 1..=255 (what the filter's `set_local` stores;
                // others crash c-blosc's compressor with SIGFPE). Files
                // that Blosc's own filter made never hold them: they are
                // damaged (tests/fuzz/KNOWN.md).
                if let Some(why) = bad_blosc_parameters(&cd, nelm) {
                    return (
                        Some(format!("filter `{}` (id {id}) with {why}", name())),
                        blosc,
                    );
                }
                // At most cd.len() values were copied; nelm is the full count.
                let code = (nelm >= 7 && nelm <= cd.len()).then(|| cd[6]);
                match code {
                    Some(c) if crate::options::BloscCompressor::from_code(c).is_none() => {
                        let cname = match c {
                            3 => "snappy".to_owned(),
                            c => format!("code {c}"),
                        };
                        return (
                            Some(format!(
                                "filter `{}` (id {id}) with compressor {cname} (this build of Blosc has {})",
                                name(),
                                crate::options::BloscCompressor::ALL.map(|c| c.name()).join(", ")
                            )),
                            blosc,
                        );
                    }
                    _ => blosc = true,
                }
            }
        }
    }
    (None, blosc)
}

/// Why the parameters `cd` (`nelm` of them; at most `cd.len()` copied)
/// of HDF5's deflate (1) or shuffle (2) filter cannot be run, if they
/// cannot: H5Zdeflate.c wants exactly one, a level of at most 9;
/// H5Zshuffle.c exactly one, a nonzero element size.
fn bad_builtin_parameters(id: i32, cd: &[std::ffi::c_uint], nelm: usize) -> Option<String> {
    let (what, ok): (&str, fn(std::ffi::c_uint) -> bool) = match id {
        1 => ("one, a level of 0 to 9", |v| v <= 9),
        2 => ("one, a nonzero element size", |v| v != 0),
        _ => return None,
    };
    if nelm != 1 {
        return Some(format!("{nelm} parameters (HDF5's filter stores {what})"));
    }
    (!ok(cd[0])).then(|| format!("parameter {} (HDF5's filter stores {what})", cd[0]))
}

/// Why the Blosc parameters `cd` (`nelm` of them; at most `cd.len()`
/// copied) cannot be run, if they cannot.
fn bad_blosc_parameters(cd: &[std::ffi::c_uint], nelm: usize) -> Option<String> {
    if nelm < 4 {
        return Some(format!(
            "{nelm} parameters (Blosc's filter stores at least 4: version, \
             version, type size, chunk bytes)"
        ));
    }
    let typesize = cd[2];
    if !(1..=255).contains(&typesize) {
        return Some(format!(
            "type size {typesize} in its parameters (Blosc's filter stores 1 to 255)"
        ));
    }
    None
}

/// Where a filter h5vec cannot run comes from, for error messages.
fn filter_hint(id: i32) -> &'static str {
    match id {
        32004 => " (LZ4; in Python: `import hdf5plugin`)",
        32008 => " (bitshuffle; in Python: `import hdf5plugin`)",
        32013 => " (ZFP; in Python: `import hdf5plugin`)",
        32015 => " (Zstandard; in Python: `import hdf5plugin`; h5vec writes Zstandard inside Blosc, 32001)",
        32026 => " (Blosc2; in Python: `import hdf5plugin`; h5vec reads and writes Blosc 1, 32001)",
        307 => " (bzip2; in Python: `import hdf5plugin`)",
        _ => "",
    }
}

/// Whether `ds` has no filters (an error reads as filtered).
pub(crate) fn unfiltered(ds: &Dataset) -> bool {
    // SAFETY: a valid dataset id; the creation list is closed by `Owned`;
    // under the lock.
    sync(|| unsafe {
        let Ok(dcpl) = Owned::new("$", h5d::H5Dget_create_plist(ds.id())) else {
            return false;
        };
        hdf5_sys::h5p::H5Pget_nfilters(dcpl.id()) == 0
    })
}

/// The filter pipeline of `ds` in words, in order: `shuffle`,
/// `deflate(4)`, `lzf`, `blosc(zstd,5,shuffle)` (compressor, level and
/// `noshuffle`/`shuffle`/`bitshuffle`, as `hdf5plugin.Blosc` names them),
/// `fletcher32`, `nbit`, `scaleoffset`, `szip`, and `filter NAME (id N)`
/// for any other. Reads the creation property list only.
pub(crate) fn filter_names(
    ds: &Dataset,
    path: impl crate::error::At,
) -> crate::Result<Vec<String>> {
    use hdf5_sys::h5p;
    use std::ffi::c_uint;
    // SAFETY: a valid dataset id; the property list is owned by an `Owned`;
    // the output buffers are as large as passed, the name NUL-terminated
    // before it is read.
    sync(|| unsafe {
        let dcpl = Owned::new(path, h5d::H5Dget_create_plist(ds.id()))?;
        let n = super::ffi::check(path, h5p::H5Pget_nfilters(dcpl.id()))?;
        let mut out = Vec::new();
        for i in 0..n.max(0) as c_uint {
            let mut flags: c_uint = 0;
            let mut cd = [0 as c_uint; 16];
            let mut nelm: usize = cd.len();
            let mut cfg: c_uint = 0;
            let mut name = [0 as c_char; 64];
            let id = h5p::H5Pget_filter2(
                dcpl.id(),
                i,
                &mut flags,
                &mut nelm,
                cd.as_mut_ptr(),
                name.len(),
                name.as_mut_ptr(),
                &mut cfg,
            );
            let last = name.len() - 1;
            name[last] = 0;
            // At most cd.len() values were copied; nelm is the full count.
            let cd = &cd[..nelm.min(cd.len())];
            out.push(match id {
                1 => match cd.first() {
                    Some(level) => format!("deflate({level})"),
                    None => "deflate".into(),
                },
                2 => "shuffle".into(),
                3 => "fletcher32".into(),
                4 => "szip".into(),
                5 => "nbit".into(),
                6 => "scaleoffset".into(),
                32000 => "lzf".into(),
                32001 if cd.len() >= 7 => {
                    let cname = crate::options::BloscCompressor::from_code(cd[6])
                        .map_or_else(|| format!("compressor {}", cd[6]), |c| c.name().to_owned());
                    let shuffle = match cd[5] {
                        0 => "noshuffle".to_owned(),
                        1 => "shuffle".to_owned(),
                        2 => "bitshuffle".to_owned(),
                        s => format!("shuffle {s}"),
                    };
                    format!("blosc({cname},{},{shuffle})", cd[4])
                }
                32001 => "blosc".into(),
                id if id < 0 => format!("filter number {i}, which HDF5 cannot describe"),
                id => format!(
                    "filter `{}` (id {id})",
                    std::ffi::CStr::from_ptr(name.as_ptr()).to_string_lossy()
                ),
            });
        }
        Ok(out)
    })
}

/// Whether values of `dtype` hold variable-length data (HDF5
/// variable-length strings or sequences, at any depth of a compound or an
/// array): the dataset's bytes are then heap references, not the values.
/// Such datasets get no Fletcher32 checksum (`SaveOptions::checksum`): the
/// values live in the global heap, which no filter covers, and HDF5 2.0
/// (h5py's) refuses the filter on them.
pub(crate) fn holds_variable_length(dtype: &hdf5::Datatype) -> bool {
    use hdf5_sys::h5t;
    /// # Safety
    /// Caller holds the HDF5 lock; `t` is a valid datatype id.
    unsafe fn walk(t: hid_t, depth: usize) -> bool {
        use hdf5_sys::h5t::H5T_class_t::*;
        // SAFETY: (whole block) a valid datatype id under the lock; member
        // and base types are closed after use.
        unsafe {
            if depth > 32 || h5t::H5Tis_variable_str(t) > 0 {
                return true;
            }
            match h5t::H5Tget_class(t) {
                H5T_VLEN => true,
                H5T_COMPOUND => (0..h5t::H5Tget_nmembers(t).max(0) as std::ffi::c_uint).any(|i| {
                    let m = h5t::H5Tget_member_type(t, i);
                    let v = m < 0 || walk(m, depth + 1);
                    if m >= 0 {
                        h5t::H5Tclose(m);
                    }
                    v
                }),
                H5T_ARRAY => {
                    let b = h5t::H5Tget_super(t);
                    let v = b < 0 || walk(b, depth + 1);
                    if b >= 0 {
                        h5t::H5Tclose(b);
                    }
                    v
                }
                _ => false,
            }
        }
    }
    // SAFETY: a valid datatype id, under the lock.
    sync(|| unsafe { walk(dtype.id(), 0) })
}
