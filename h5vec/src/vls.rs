//! Standalone compressed VLS string arrays, as written by dolomite-base
//! (`save_object(StringList, string_list_vls=True)`) and validated by takane
//! (`atomic_vector` with `type = "vls"`, version 1.1).
//!
//! Layout on disk:
//! ```text
//! <name>/                  group, string attribute `type = "vls"` (h5vec writes it as a
//!                          scalar variable-length UTF-8 string, like dolomite)
//! <name>/pointers          1-D compound {offset, length}: unsigned integers of up to
//!                          64 bits each (h5vec writes uint64), one entry per element;
//!                          optional scalar string attribute `missing-value-placeholder`
//! <name>/heap              1-D uint8 (int8 is refused), the string bytes (chunked, deflate by default)
//! <name>/names             (optional, takane) ignored by this reader
//! ```
//! Element `i` is `heap[offset_i .. offset_i + length_i]` cut at its first
//! NUL byte, then decoded as UTF-8; it is missing (`None`) when it equals the
//! placeholder. Entries may come in any order and share or overlap slices.
//! Bounds are checked without overflow (`offset > heap length` or
//! `offset + length > heap length` is an error naming the element).
//!
//! Writers choose the placeholder over all values: "NA", else "NA_",
//! "NA__", ... (dolomite's rule), and write no attribute when nothing is
//! missing. The columns themselves are those of the `vls_string` kind (SPEC.md section 4.1).

use hdf5::Group;

use crate::containers::create_container;
use crate::containers::TYPE_VLS;
use crate::error::{Context, Error, Place, Result};
use crate::kinds::vls::{VlsDecoder, VlsEncoder};
use crate::options::{Compression, SaveOptions, WriteCtx};
use crate::raw;

/// Members a takane `atomic_vector` group may hold besides `heap` and `pointers`.
const OPTIONAL_MEMBERS: &[&str] = &["names"];

/// Loads the VLS array stored in `group` (e.g. `file.group("atomic_vector")`).
///
/// Checks the `type` attribute, the members, the pointer compound type
/// (members `offset` then `length`, unsigned, at most 64 bits), the heap
/// type (1-D, UInt8: int8 is refused) and every slice against the heap, before any
/// value is returned. Errors name the group and the element.
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("v.h5"))?;
/// h5vec::vls::save_strings(&file, "names", &[Some("a".to_string()), None])?;
/// let group = file.group("names")?;
/// assert_eq!(h5vec::vls::load_strings(&group)?, [Some("a".to_string()), None]);
/// # Ok(()) }
/// ```
pub fn load_strings(group: &Group) -> Result<Vec<Option<String>>> {
    let (_walked, dec) = open_strings(group)?;
    dec.read(0..dec.len())
}

/// Opens the VLS array stored in `group` with every check of
/// [`load_strings`] that comes before the values: the walk, the `type`
/// attribute, the members, the pointer and heap datasets. Keep the walk
/// while the decoder is used.
pub(crate) fn open_strings(group: &Group) -> Result<(crate::guard::Walked, VlsDecoder)> {
    let walked = crate::guard::check(
        group,
        crate::guard::Container::VlsArray,
        crate::guard::Access::Read,
    )?;
    let at = Place::new("$", group.name());
    match raw::attr_string(group, "type", &at)? {
        Some(t) if t == TYPE_VLS => {}
        Some(t) => {
            return Err(Error::mismatch(
                at.attribute("type"),
                format!("\"{TYPE_VLS}\""),
                format!("{t:?}"),
            ))
        }
        None => {
            return Err(Error::mismatch(
                &at,
                format!("a string attribute `type = \"{TYPE_VLS}\"`"),
                "no `type` attribute",
            ))
        }
    }
    let mut names = group.member_names().at(&at)?;
    names.retain(|n| !OPTIONAL_MEMBERS.contains(&n.as_str()));
    names.sort();
    if names != ["heap", "pointers"] {
        return Err(Error::mismatch(
            &at,
            "members heap and pointers (and optionally names)",
            format!("{names:?}"),
        ));
    }
    // Every pointer is an element: all of them must be stored.
    let all = VlsDecoder::open_datasets(group, "$", 0)?.len();
    let dec = VlsDecoder::open_datasets(group, "$", all)?;
    Ok((walked, dec))
}

/// Saves `values` as a new VLS array group `name` in `parent`, with
/// deflate level 6 on both datasets (what dolomite writes).
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("contents.h5"))?;
/// let values = vec![Some("alpha".to_string()), None, Some("NA".to_string())];
/// h5vec::vls::save_strings(&file, "atomic_vector", &values)?;
/// // placeholder "NA_", because "NA" is a real value
/// assert_eq!(h5vec::vls::load_strings(&file.group("atomic_vector").unwrap())?, values);
/// # Ok(()) }
/// ```
pub fn save_strings(parent: &Group, name: &str, values: &[Option<String>]) -> Result<()> {
    let opts = SaveOptions::default().compression(Compression::Deflate {
        level: 6,
        shuffle: false,
    });
    save_strings_with(parent, name, values, &opts)
}

/// Saves `values` as a new VLS array group `name` in `parent` with explicit
/// options (chunk length and compression of `heap` and `pointers`;
/// `dedup_strings` lets repeated values share one heap slice).
///
/// The name must not exist yet; a failed save removes the partly written group.
/// A value containing a NUL byte cannot be stored (readers cut at the first NUL).
///
/// ```
/// use h5vec::SaveOptions;
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("v.h5"))?;
/// let values: Vec<Option<String>> = (0..1000).map(|i| Some(format!("gene{}", i % 10))).collect();
/// let opts = SaveOptions::default().zstd(5).chunk_length(4096).dedup_strings(true);
/// h5vec::vls::save_strings_with(&file, "genes", &values, &opts)?;
/// assert_eq!(h5vec::vls::load_strings(&file.group("genes")?)?, values);
/// let bad = [Some("a\0b".to_string())];
/// assert!(h5vec::vls::save_strings_with(&file, "bad", &bad, &opts).is_err());
/// # Ok(()) }
/// ```
pub fn save_strings_with(
    parent: &Group,
    name: &str,
    values: &[Option<String>],
    opts: &SaveOptions,
) -> Result<()> {
    create_container(parent, name, "VLS array", |group| {
        write_strings(group, values, opts)
    })
}

fn write_strings(group: &Group, values: &[Option<String>], opts: &SaveOptions) -> Result<()> {
    let at = Place::new("$", group.name());
    let t: hdf5::types::VarLenUnicode = TYPE_VLS
        .parse()
        .map_err(|_| Error::encode(at.attribute("type"), "bad type attribute"))?;
    group
        .new_attr::<hdf5::types::VarLenUnicode>()
        .shape(())
        .create("type")
        .at(at.attribute("type"))?
        .write_scalar(&t)
        .at(at.attribute("type"))?;
    let ctx = WriteCtx {
        opts,
        len_hint: values.len() as u64,
    };
    let mut enc = VlsEncoder::create(group, "$", &ctx)?;
    // One batch: the placeholder is chosen over all values.
    for v in values {
        match v {
            Some(s) => enc.push(s)?,
            None => enc.push_missing()?,
        }
    }
    enc.flush()?;
    crate::pipeline::deferred::start_writes();
    crate::column::complete_file(group)?;
    group.file().at(&at)?.flush().at(&at)
}
