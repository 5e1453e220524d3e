//! Which HDF5 h5vec is built against, as cfgs for the code that needs a
//! newer library than Debian 12's parallel HDF5 1.10.8 (the `mpi` feature,
//! issue 32): `hdf5_1_12` (object tokens, `H5Fget_fileno`, `H5VLobject`,
//! the new references, `H5Treclaim`), `hdf5_1_14_4` (`H5T_IEEE_F16LE`)
//! and `hdf5_2_0` (`H5Dread_chunk2`); `hdf5_parallel` for a library built
//! with MPI (what `h5vec::mpi` needs).
//! hdf5-metno-sys says which version it found (`version_X_Y_Z` metadata,
//! read here as `DEP_HDF5_VERSION_X_Y_Z`); the bundled HDF5 2.x sets both.
fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    for (var, cfg) in [
        ("DEP_HDF5_VERSION_1_12_0", "hdf5_1_12"),
        ("DEP_HDF5_VERSION_1_14_4", "hdf5_1_14_4"),
        ("DEP_HDF5_VERSION_2_0_0", "hdf5_2_0"),
        ("DEP_HDF5_HAVE_PARALLEL", "hdf5_parallel"),
    ] {
        println!("cargo::rerun-if-env-changed={var}");
        println!("cargo::rustc-check-cfg=cfg({cfg})");
        if std::env::var_os(var).is_some() {
            println!("cargo::rustc-cfg={cfg}");
        }
    }
}
