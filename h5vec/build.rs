//! Which HDF5 h5vec is built against, as cfgs for the code that needs a
//! newer library than Debian 12's parallel HDF5 1.10.8 (the `mpi` feature,
//! SPEC.md section 16): `hdf5_1_12` (object tokens, `H5Fget_fileno`,
//! `H5VLobject`, the new references, `H5Treclaim`), `hdf5_1_14_4`
//! (`H5T_IEEE_F16LE`) and `hdf5_2_0` (`H5Dread_chunk2`).
//! hdf5-metno-sys says which version it found (`version_X_Y_Z` metadata,
//! read here as `DEP_HDF5_VERSION_X_Y_Z`); the bundled HDF5 2.x sets all.
//!
//! The `mpi` feature needs a parallel HDF5 (`DEP_HDF5_HAVE_PARALLEL`) and
//! excludes `bundled` (a serial HDF5 linked statically): either mistake
//! stops the build here, with what to do, rather than deep in a dependency.
fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    for (var, cfg) in [
        ("DEP_HDF5_VERSION_1_12_0", "hdf5_1_12"),
        ("DEP_HDF5_VERSION_1_14_4", "hdf5_1_14_4"),
        ("DEP_HDF5_VERSION_2_0_0", "hdf5_2_0"),
    ] {
        println!("cargo::rerun-if-env-changed={var}");
        println!("cargo::rustc-check-cfg=cfg({cfg})");
        if std::env::var_os(var).is_some() {
            println!("cargo::rustc-cfg={cfg}");
        }
    }
    println!("cargo::rerun-if-env-changed=DEP_HDF5_HAVE_PARALLEL");
    if std::env::var_os("CARGO_FEATURE_MPI").is_some() {
        if std::env::var_os("CARGO_FEATURE_BUNDLED").is_some() {
            panic!(
                "h5vec: the `mpi` feature links the system's parallel HDF5 and cannot be combined \
                 with `bundled` (the default): build with `--no-default-features --features mpi` \
                 (README, \"Parallel writes with MPI\")"
            );
        }
        if std::env::var_os("DEP_HDF5_HAVE_PARALLEL").is_none() {
            panic!(
                "h5vec: the `mpi` feature needs an HDF5 built with MPI; the HDF5 found is serial. \
                 Set HDF5_DIR to a parallel HDF5 (Debian 12: `apt-get install \
                 libhdf5-openmpi-dev openmpi-bin libclang-dev`, then \
                 HDF5_DIR=/usr/lib/x86_64-linux-gnu/hdf5/openmpi)"
            );
        }
    }
}
