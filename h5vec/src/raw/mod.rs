//! Bulk HDF5 I/O straight from Rust slices, and the datatypes the high-level
//! hdf5-metno API does not model (bitfields, fixed-length UTF-8 strings).
//!
//! Every column is written and read with one `H5Dwrite`/`H5Dread` per batch
//! over a hyperslab of whole rows: never one call per element.
//!
//! The module is split by responsibility:
//!
//! | file            | what it holds                                                    |
//! |-----------------|------------------------------------------------------------------|
//! | `ffi.rs`        | the one checked, locked way to call HDF5's C API; owned ids      |
//! | `types.rs`      | [`Pod`], [`Bits8`], [`TypeInfo`], string and h5col bool types    |
//! | `rows.rs`       | creating columns, row (hyperslab) I/O, variable-length strings   |
//! | `chunks.rs`     | direct chunk I/O (stored chunks, no filter pipeline)             |
//! | `links.rs`      | links, renames, anonymous groups, [`Unlinked`], [`HeldObject`]   |
//! | `attrs.rs`      | attributes, scalar string datasets, fill values                  |
//! | `durability.rs` | crash safety: flushes, metadata cache, heap collections          |
//! | `filters.rs`    | which filters this build runs; Blosc threads                     |
//! | `copy.rs`       | copies (`crate::compact`): `H5Ocopy`, rows and attributes as is  |
//! | `stored.rs`     | what a dataset stores, for `crate::limits`: rows, filtered chunk |
//! | `walk.rs`       | the guard's queries: links, object headers, storage of datasets  |
//! | `gheap.rs`      | global heap collections and object headers read from the bytes   |
//! | `swmr.rs`       | live readers and writers: SWMR opens and switch, intent, the     |
//! |                 | variable-length type walk, the writer's `fcntl` byte lock        |
//! | `files.rs`      | file and group creation with [`LinkStorage`], checked intent,    |
//! |                 | what identifies one open file handle                             |
//! | `podrows.rs`    | [`MemType`] (a memory type known to describe a [`Pod`]) and safe |
//! |                 | row I/O through it; Pod values as bytes                          |
//! | `pipeline.rs`   | a chunked dataset's filters, type and chunk shape ([`Layout`]);  |
//! |                 | c-blosc's compress and decompress calls                          |
//! | `h5col.rs`      | h5col table attributes: type queries, own-type reads and writes, |
//! |                 | null-padded string types                                         |
//! | `compound.rs`   | process-wide compound types (complex numbers' `{r, i}`)          |
//! | `spaces.rs`     | dataspaces of row I/O: whole rows selected, memory spaces        |
//! | `capture.rs`    | rows written to a capturing memory file kept as bytes (`mpi`)    |

mod attrs;
pub(crate) mod bounds;
pub(crate) mod capture;
#[cfg(unix)]
pub(crate) mod child;
pub(crate) mod chunks;
mod compat;
pub(crate) mod compound;
mod copy;
mod durability;
mod enums;
pub(crate) mod ffi;
mod files;
mod filters;
pub(crate) mod gheap;
mod h5col;
mod links;
pub(crate) mod minmax;
#[cfg(feature = "mpi")]
pub(crate) mod mpifiles;
#[cfg(feature = "mpi")]
pub(crate) mod mpio;
mod pipeline;
mod podrows;
mod rows;
mod spaces;
mod stored;
mod swmr;
mod types;
pub(crate) mod walk;

pub(crate) use attrs::has_attr;
pub(crate) use attrs::{
    attr_string, create_column_with_fill, create_group_small, create_small, has_user_fill,
    read_attr_string, read_scalar_string, user_fill, write_attr_ascii, write_checksummed_bytes,
    write_scalar_string, write_small,
};
// Copies (`crate::compact`).
pub(crate) use copy::{copy_attr, copy_object, elements, Elements};
pub(crate) use durability::{
    clear_chunk_tail, cover_whole_file, flush_file, forget_heap_collections,
    has_free_space_managers, HoldMetadata,
};
pub(crate) use enums::{dataset_type_is, tag_type};
pub(crate) use ffi::{sync, Owned};
pub(crate) use files::close_on_exec;
#[cfg(test)]
pub(crate) use files::group_storage;
pub(crate) use files::{
    checked_intent, create_file, create_group, handle_identity, still_open_and_refs, LinkStorage,
};
pub(crate) use filters::unavailable_filter;
pub(crate) use filters::FILTERS_EXPECTED;
// What `crate::inspect` reports of a dataset.
pub(crate) use filters::filter_names;
pub(crate) use h5col::{
    attr_storage_size, int_type, is_spacepad, member_obj_ref, nullpad_string_type, read_attr_bytes,
    read_obj_ref_list, ref_attr_target, ref_list_targets, string_facts, unsigned_int_size,
    write_attr_bytes, write_obj_ref_attr, write_obj_ref_list, IntType, RefTarget,
};
pub(crate) use links::{create_anon_group, file_number, link_object, HeldObject, Unlinked};
pub(crate) use pipeline::{
    blosc_compress, blosc_decompress, blosc_decompress_part, layout as dataset_layout, Layout,
};
pub(crate) use podrows::{
    plain_size, pod_bytes, pod_bytes_mut, read_plain_rows_bytes, read_pod_rows_bytes, row_elems,
    write_plain_rows_bytes, write_pod_rows_bytes, MemType,
};
pub(crate) use rows::storage;
// Strings straight into one buffer, for the schema-driven reader and copies.
pub(crate) use rows::read_vlen_each;
// Rows in a dataset's own type (no conversion).
pub(crate) use rows::read_rows_raw;
pub(crate) use rows::{
    create_column, read_rows_own_type, read_vlen_strings, set_rows, shape, write_scalar_pod,
    write_vlen_buffer, write_vlen_strings, ColumnSpec,
};
#[cfg(unix)]
pub(crate) use swmr::{byte_locked, lock_byte};
pub(crate) use swmr::{
    dataset_has_varlen, intent, is_swmr_reader, is_swmr_writer, open_rw_clearing_flags,
    open_swmr_read, start_swmr_write, superblock_version,
};
// What a dataset stores, for `crate::limits`'s bounds.
pub(crate) use stored::{filtered_chunk, is_standard_number, is_uint8, stored_rows};
pub(crate) use types::describe_dtype;
pub(crate) use types::ieee_f16le;
pub(crate) use types::{
    copy_type, dataset_type, h5col_bool, is_h5col_bool, type_info, vlen_utf8, Bits8, Pod, TypeInfo,
};
