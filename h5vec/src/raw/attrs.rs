//! Attributes, scalar string datasets and fill values: the small metadata
//! around columns (SPEC.md 3 for the attributes h5vec writes; fill values
//! are how h5col marks missing scalars).

use std::ffi::{c_char, CString};

use hdf5::{Dataset, Datatype, Group};
use hdf5_sys::h5::hsize_t;
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5p::H5P_DEFAULT;
use hdf5_sys::h5s::H5S_ALL;
use hdf5_sys::h5t::{self, H5T_class_t, H5T_cset_t, H5T_str_t};
use hdf5_sys::{h5a, h5d, h5p, h5s};

use super::ffi::{call, check, sync, Owned};
use super::filters::blosc_threads;
use super::rows::{read_vlen_strings, write_whole, ColumnSpec};
use super::types::{copy_type, dataset_type, fixed_utf8, type_info, type_info_of};
use crate::error::{At, Context, Error, Result};

/// Writes a scalar fixed-length UTF-8 string dataset `name` in `group`,
/// sized to the string's bytes (what HDF5.jl writes for a `String`).
pub(crate) fn write_scalar_string(
    group: &Group,
    name: &str,
    value: &str,
    path: impl At,
) -> Result<()> {
    let dt = fixed_utf8(value.len(), path)?;
    let mut buf = value.as_bytes().to_vec();
    if buf.is_empty() {
        buf.push(0);
    }
    let ds = create_small(group, name, &dt, None, path)?;
    // SAFETY: `buf` holds `max(len, 1)` bytes, the size of `dt`, for the one
    // element of a scalar dataset.
    unsafe { write_whole(&ds, dt.id(), buf.as_ptr().cast(), path) }
}

/// Creates the dataset `name` of type `dt` in `group`: scalar for `len`
/// `None`, else 1-D of exactly `len` elements; contiguous and without
/// modification times, as hdf5-metno's builder makes it, but with one
/// creation property list shared by every call: the schema tree of a vector
/// is dozens of small datasets, and building, copying and closing property
/// lists for each was most of the time a small save took.
pub(crate) fn create_small(
    group: &Group,
    name: &str,
    dt: &Datatype,
    len: Option<usize>,
    path: impl At,
) -> Result<Dataset> {
    let cname = CString::new(name).map_err(|_| Error::invalid(path, "name contains NUL"))?;
    sync(|| {
        let dcpl = small_dcpl(path)?;
        let sp = match len {
            // SAFETY: a new dataspace, owned at once.
            None => unsafe { Owned::new(path, h5s::H5Screate(h5s::H5S_class_t::H5S_SCALAR))? },
            Some(n) => {
                let d = [n as hsize_t];
                // SAFETY: `d` holds the one extent of a rank-1 space (no
                // maximum: fixed at `n`); the new space is owned at once.
                unsafe { Owned::new(path, h5s::H5Screate_simple(1, d.as_ptr(), std::ptr::null()))? }
            }
        };
        // SAFETY: valid group, type, space and property list ids and a
        // NUL-terminated name; the new dataset is owned by the `Dataset`.
        unsafe {
            let ds = check(
                path,
                h5d::H5Dcreate2(
                    group.id(),
                    cname.as_ptr(),
                    dt.id(),
                    sp.id(),
                    H5P_DEFAULT,
                    dcpl,
                    H5P_DEFAULT,
                ),
            )?;
            hdf5::from_id::<Dataset>(ds).at(path)
        }
    })
}

/// Writes `data` as the new dataset `name` in `group` ([`create_small`]):
/// scalar when `scalar` (then `data` holds exactly one value), else 1-D.
pub(crate) fn write_small<T: hdf5::H5Type>(
    group: &Group,
    name: &str,
    data: &[T],
    scalar: bool,
    path: impl At,
) -> Result<()> {
    if scalar && data.len() != 1 {
        return Err(Error::invalid(path, "a scalar dataset holds one value"));
    }
    let dt = Datatype::from_type::<T>().at(path)?;
    let ds = create_small(group, name, &dt, (!scalar).then_some(data.len()), path)?;
    if data.is_empty() {
        return Ok(());
    }
    // SAFETY: `data` holds exactly the dataset's elements, of the type `dt`
    // describes (`H5Type`'s contract).
    unsafe { write_whole(&ds, dt.id(), data.as_ptr().cast(), path) }
}

/// Writes `data` as the new 1-D UInt8 dataset `name` in `group`, in one
/// chunk with HDF5's Fletcher32 filter (SPEC.md 6.4, "Metadata"): every
/// reader that reads it through HDF5 (h5py, HDF5.jl, C, h5vec) verifies its
/// bytes. `data` is not empty (a chunk has at least one element).
pub(crate) fn write_checksummed_bytes(
    group: &Group,
    name: &str,
    data: &[u8],
    path: impl At,
) -> Result<()> {
    let cname = CString::new(name).map_err(|_| Error::invalid(path, "name contains NUL"))?;
    if data.is_empty() {
        return Err(Error::invalid(
            path,
            "a checksummed dataset holds at least one byte",
        ));
    }
    let n = [data.len() as hsize_t];
    let ds = sync(|| {
        // SAFETY: new property lists and a new dataspace, each owned at once
        // by an `Owned`; `n` holds the one extent of a rank-1 space and of
        // its chunk; the name is NUL-terminated; the new dataset is owned by
        // the `Dataset` at once.
        unsafe {
            let dcpl = Owned::new(path, h5p::H5Pcreate(*h5p::H5P_CLS_DATASET_CREATE))?;
            check(path, h5p::H5Pset_obj_track_times(dcpl.id(), 0))?;
            check(path, h5p::H5Pset_chunk(dcpl.id(), 1, n.as_ptr()))?;
            check(path, h5p::H5Pset_fletcher32(dcpl.id()))?;
            let sp = Owned::new(path, h5s::H5Screate_simple(1, n.as_ptr(), std::ptr::null()))?;
            let ds = check(
                path,
                h5d::H5Dcreate2(
                    group.id(),
                    cname.as_ptr(),
                    *h5t::H5T_NATIVE_UINT8,
                    sp.id(),
                    H5P_DEFAULT,
                    dcpl.id(),
                    H5P_DEFAULT,
                ),
            )?;
            hdf5::from_id::<Dataset>(ds).at(path)
        }
    })?;
    // SAFETY: `data` holds exactly the dataset's elements, native UInt8.
    unsafe { write_whole(&ds, *h5t::H5T_NATIVE_UINT8, data.as_ptr().cast(), path) }
}

/// Creates the group `name` in `parent` with HDF5's default property lists
/// (what hdf5-metno's `create_group` makes for a name without `/`, without
/// building two property lists per group).
pub(crate) fn create_group_small(parent: &Group, name: &str, path: impl At) -> Result<Group> {
    let cname = CString::new(name).map_err(|_| Error::invalid(path, "name contains NUL"))?;
    // SAFETY: a valid group id and a NUL-terminated name; the new group is
    // owned by the `Group` at once.
    sync(|| unsafe {
        let g = check(
            path,
            hdf5_sys::h5g::H5Gcreate2(
                parent.id(),
                cname.as_ptr(),
                H5P_DEFAULT,
                H5P_DEFAULT,
                H5P_DEFAULT,
            ),
        )?;
        hdf5::from_id::<Group>(g).at(path)
    })
}

/// The creation property list of [`create_small`]: made once per process
/// (HDF5 property lists are process-wide and not objects of any file).
fn small_dcpl(path: impl At) -> Result<hid_t> {
    static DCPL: std::sync::OnceLock<hid_t> = std::sync::OnceLock::new();
    if let Some(&id) = DCPL.get() {
        return Ok(id);
    }
    sync(|| {
        if let Some(&id) = DCPL.get() {
            return Ok(id);
        }
        // SAFETY: a new property list; kept for the life of the process.
        let id = check(path, unsafe {
            h5p::H5Pcreate(*h5p::H5P_CLS_DATASET_CREATE)
        })?;
        // SAFETY: a valid dataset creation property list.
        if let Err(e) = check(path, unsafe { h5p::H5Pset_obj_track_times(id, 0) }) {
            // SAFETY: the list made above, closed once.
            unsafe { h5p::H5Pclose(id) };
            return Err(e);
        }
        let _ = DCPL.set(id);
        Ok(id)
    })
}

/// Reads a scalar string dataset (fixed-length or variable-length).
pub(crate) fn read_scalar_string(ds: &Dataset, path: impl At) -> Result<String> {
    let info = type_info(ds, path)?;
    if info.class != H5T_class_t::H5T_STRING {
        return Err(Error::mismatch(path, "a scalar string", info.describe()));
    }
    if !ds.is_scalar() && ds.size() != 1 {
        return Err(Error::mismatch(
            path,
            "a scalar string",
            format!("shape {:?}", ds.shape()),
        ));
    }
    if info.vlen_str {
        let mut v = read_vlen_strings(ds, 0, 1, path)?;
        return v
            .pop()
            .ok_or_else(|| Error::invalid(path, "empty string dataset"));
    }
    let mut buf = vec![0u8; info.size];
    let t = dataset_type(ds, path)?;
    // SAFETY: one element (checked above) of the file's own fixed-length
    // string type, whose size `buf` has.
    call(path, || unsafe {
        h5d::H5Dread(
            ds.id(),
            t.id(),
            H5S_ALL,
            H5S_ALL,
            H5P_DEFAULT,
            buf.as_mut_ptr().cast(),
        )
    })?;
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    buf.truncate(end);
    // Space-padded strings: trailing spaces are padding.
    String::from_utf8(buf).map_err(|_| Error::invalid(path, "string is not valid UTF-8"))
}

/// Reads a scalar string attribute (fixed-length or variable-length).
pub(crate) fn read_attr_string(attr: &hdf5::Attribute, path: impl At) -> Result<String> {
    sync(|| {
        // SAFETY: a valid attribute id; the type is owned by the `Datatype`.
        let dt = unsafe {
            hdf5::from_id::<Datatype>(check(path, h5a::H5Aget_type(attr.id()))?).at(path)?
        };
        // SAFETY: a valid datatype id, under the lock.
        let info = unsafe { type_info_of(dt.id()) };
        if info.class != H5T_class_t::H5T_STRING {
            return Err(Error::mismatch(path, "a string attribute", info.describe()));
        }
        if attr.size() != 1 {
            return Err(Error::mismatch(
                path,
                "a scalar string attribute",
                format!("{} values", attr.size()),
            ));
        }
        let bytes = if info.vlen_str {
            let mut p: *mut c_char = std::ptr::null_mut();
            // SAFETY: one variable-length string: HDF5 writes one pointer.
            check(path, unsafe {
                h5a::H5Aread(attr.id(), dt.id(), (&mut p as *mut *mut c_char).cast())
            })?;
            if p.is_null() {
                Vec::new()
            } else {
                // SAFETY: a NUL-terminated string HDF5 allocated, freed once
                // here after the copy.
                unsafe {
                    let b = std::ffi::CStr::from_ptr(p).to_bytes().to_vec();
                    hdf5_sys::h5::H5free_memory(p.cast());
                    b
                }
            }
        } else {
            let mut b = vec![0u8; info.size];
            // SAFETY: one fixed-length string of `info.size` bytes, `b`'s size.
            check(path, unsafe {
                h5a::H5Aread(attr.id(), dt.id(), b.as_mut_ptr().cast())
            })?;
            if let Some(z) = b.iter().position(|&c| c == 0) {
                b.truncate(z);
            }
            b
        };
        String::from_utf8(bytes)
            .map_err(|_| Error::invalid(path, "string attribute is not valid UTF-8"))
    })
}

/// Writes a fixed-length ASCII string attribute, NUL included in its size
/// and null-padded (how h5col writes `CLASS`, `KIND`, `VERSION`).
pub(crate) fn write_attr_ascii(
    obj: &hdf5::Location,
    name: &str,
    value: &str,
    path: impl At,
) -> Result<()> {
    let cname =
        CString::new(name).map_err(|_| Error::bad_name(path, "attribute name contains NUL"))?;
    let mut buf = value.as_bytes().to_vec();
    buf.push(0);
    let dt = copy_type(*h5t::H5T_C_S1, path)?;
    sync(|| {
        let t = dt.id();
        // SAFETY: `t` is a fresh, modifiable string type owned by `dt`.
        unsafe {
            check(path, h5t::H5Tset_size(t, buf.len()))?;
            check(path, h5t::H5Tset_strpad(t, H5T_str_t::H5T_STR_NULLPAD))?;
            check(path, h5t::H5Tset_cset(t, H5T_cset_t::H5T_CSET_ASCII))?;
        }
        // SAFETY: the new scalar space is owned by the `Dataspace`.
        let sp = unsafe {
            let sp = check(path, h5s::H5Screate(h5s::H5S_class_t::H5S_SCALAR))?;
            hdf5::from_id::<hdf5::Dataspace>(sp).at(path)?
        };
        // SAFETY: a valid object id and a NUL-terminated name.
        if unsafe { h5a::H5Aexists(obj.id(), cname.as_ptr()) } > 0 {
            // SAFETY: a valid object id and a NUL-terminated name.
            check(path, unsafe { h5a::H5Adelete(obj.id(), cname.as_ptr()) })?;
        }
        // SAFETY: valid object, type and space ids and a NUL-terminated
        // name; the new attribute is owned by the `Attribute`.
        let a = unsafe {
            let a = check(
                path,
                h5a::H5Acreate2(
                    obj.id(),
                    cname.as_ptr(),
                    t,
                    sp.id(),
                    H5P_DEFAULT,
                    H5P_DEFAULT,
                ),
            )?;
            hdf5::from_id::<hdf5::Attribute>(a).at(path)?
        };
        // SAFETY: `buf` holds exactly the type's size, for one value.
        check(path, unsafe {
            h5a::H5Awrite(a.id(), t, buf.as_ptr().cast())
        })?;
        Ok(())
    })
}

/// Whether `obj` has an attribute `name`. Asks HDF5 for that one name
/// (`H5Aexists`) rather than listing every attribute: a damaged object
/// header can claim names whose listing would allocate without bound.
pub(crate) fn has_attr(obj: &hdf5::Location, name: &str, path: impl At) -> Result<bool> {
    let c = CString::new(name)
        .map_err(|_| Error::invalid(path, format!("attribute name {name:?} holds a NUL byte")))?;
    // SAFETY: `obj` is an open object id and `c` a NUL-terminated name that
    // outlives the call; `call` holds the lock.
    let r = call(path, || unsafe { h5a::H5Aexists(obj.id(), c.as_ptr()) })?;
    Ok(r > 0)
}

/// Reads string attribute `name` of `obj`, or `None` if it does not exist.
pub(crate) fn attr_string(
    obj: &hdf5::Location,
    name: &str,
    path: impl At,
) -> Result<Option<String>> {
    if !has_attr(obj, name, path)? {
        return Ok(None);
    }
    let p = path.place().attribute(name);
    super::gheap::check_attr(obj, name, &p)?;
    let a = obj.attr(name).at(path)?;
    read_attr_string(&a, &p).map(Some)
}

/// Creates an empty, extendible, chunked column dataset like
/// [`create_column`](super::create_column), with a user-defined fill value:
/// `fill` holds one value of type `fill_type` (HDF5 converts it to the file
/// type). h5col marks missing scalar values with the dataset's fill value.
pub(crate) fn create_column_with_fill(
    group: &Group,
    name: &str,
    spec: &ColumnSpec<'_>,
    fill_type: hid_t,
    fill: &[u8],
    path: impl At,
) -> Result<Dataset> {
    let cname =
        CString::new(name).map_err(|_| Error::bad_name(path, "dataset name contains NUL"))?;
    let mut dims = vec![0 as hsize_t];
    dims.extend(spec.inner.iter().map(|&d| d as hsize_t));
    let mut maxdims = vec![h5s::H5S_UNLIMITED];
    maxdims.extend(spec.inner.iter().map(|&d| d as hsize_t));
    if spec.compression.is_blosc() {
        blosc_threads();
    }
    sync(|| {
        // SAFETY: `H5Tget_size` only reads the type (0 for an invalid id).
        if unsafe { h5t::H5Tget_size(fill_type) } != fill.len() {
            return Err(Error::invalid(path, "fill value does not match its type"));
        }
        let checksum = spec.checksum && !super::filters::holds_variable_length(spec.dtype);
        let dcpl = hdf5::plist::DatasetCreate::build()
            .chunk(spec.chunk())
            .set_filters(&spec.compression.filters_with(checksum))
            .finish()
            .at(path)?;
        // SAFETY: `fill` holds one value of `fill_type` (its size, checked).
        check(path, unsafe {
            h5p::H5Pset_fill_value(dcpl.id(), fill_type, fill.as_ptr().cast())
        })?;
        // SAFETY: `dims` and `maxdims` hold `rank` extents; the new space is
        // owned by the `Dataspace`.
        let sp = unsafe {
            let sp = check(
                path,
                h5s::H5Screate_simple(dims.len() as i32, dims.as_ptr(), maxdims.as_ptr()),
            )?;
            hdf5::from_id::<hdf5::Dataspace>(sp).at(path)?
        };
        // SAFETY: valid group, type, space and property list ids and a
        // NUL-terminated name; the new dataset is owned by the `Dataset`.
        unsafe {
            let ds = check(
                path,
                h5d::H5Dcreate2(
                    group.id(),
                    cname.as_ptr(),
                    spec.dtype.id(),
                    sp.id(),
                    H5P_DEFAULT,
                    dcpl.id(),
                    H5P_DEFAULT,
                ),
            )?;
            hdf5::from_id::<Dataset>(ds).at(path)
        }
    })
}

/// Whether dataset `ds` has a user-defined fill value (HDF5's
/// `H5D_FILL_VALUE_USER_DEFINED`), without reading it.
pub(crate) fn has_user_fill(ds: &Dataset, path: impl At) -> Result<bool> {
    use hdf5_sys::h5d::H5D_fill_value_t;
    sync(|| {
        // SAFETY: a valid dataset id; the list is owned by the `PropertyList`.
        let dcpl = unsafe {
            let dcpl = check(path, h5d::H5Dget_create_plist(ds.id()))?;
            hdf5::from_id::<hdf5::plist::PropertyList>(dcpl).at(path)?
        };
        let mut st = H5D_fill_value_t::H5D_FILL_VALUE_UNDEFINED;
        // SAFETY: a valid property list and an output value.
        check(path, unsafe {
            h5p::H5Pfill_value_defined(dcpl.id(), &mut st)
        })?;
        Ok(st == H5D_fill_value_t::H5D_FILL_VALUE_USER_DEFINED)
    })
}

/// The dataset's user-defined fill value as one value of `mem_type` (of
/// `size` bytes), or `None` when the fill value is not user-defined (the
/// library default, which h5col does not treat as "missing").
pub(crate) fn user_fill(
    ds: &Dataset,
    mem_type: hid_t,
    size: usize,
    path: impl At,
) -> Result<Option<Vec<u8>>> {
    use hdf5_sys::h5d::H5D_fill_value_t;
    sync(|| {
        // SAFETY: `H5Tget_size` only reads the type (0 for an invalid id).
        if unsafe { h5t::H5Tget_size(mem_type) } != size {
            return Err(Error::invalid(
                path,
                "fill value buffer does not match its type",
            ));
        }
        // SAFETY: a valid dataset id; the list is owned by the `PropertyList`.
        let dcpl = unsafe {
            let dcpl = check(path, h5d::H5Dget_create_plist(ds.id()))?;
            hdf5::from_id::<hdf5::plist::PropertyList>(dcpl).at(path)?
        };
        let mut st = H5D_fill_value_t::H5D_FILL_VALUE_UNDEFINED;
        // SAFETY: a valid property list and an output value.
        check(path, unsafe {
            h5p::H5Pfill_value_defined(dcpl.id(), &mut st)
        })?;
        if st != H5D_fill_value_t::H5D_FILL_VALUE_USER_DEFINED {
            return Ok(None);
        }
        let mut buf = vec![0u8; size];
        // SAFETY: `buf` holds one value of `mem_type` (its size, checked).
        check(path, unsafe {
            h5p::H5Pget_fill_value(dcpl.id(), mem_type, buf.as_mut_ptr().cast())
        })?;
        Ok(Some(buf))
    })
}
