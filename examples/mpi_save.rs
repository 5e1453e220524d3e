//! Issue 32 prototype: every MPI rank saves its own rows of one vector of
//! `f64` into one shared file (`h5vec::mpi`), in rank order; rank 0 then
//! loads it serially and checks every row. Rank `r` has `2 * r + 3` rows
//! (none for rank `H5VEC_MPI_EMPTY_RANK`), row `i` of the vector being
//! `i as f64 * 0.5`; `H5VEC_MPI_DEFLATE=1` compresses with deflate.
//!
//! HDF5_DIR=/usr/lib/x86_64-linux-gnu/hdf5/openmpi cargo build -p h5vec \
//!     --no-default-features --features mpi --example mpi_save
//! mpirun -n 2 target/debug/examples/mpi_save /tmp/mpi_save.h5
use mpi::collective::CommunicatorCollectives;
use mpi::topology::Communicator;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "mpi_save.h5".into());
    let universe = mpi::initialize().ok_or("MPI is already initialized")?;
    let world = universe.world();
    let (rank, size) = (world.rank() as u64, world.size() as u64);
    // H5VEC_MPI_EMPTY_RANK=k: rank k has no rows.
    let empty: Option<u64> = std::env::var("H5VEC_MPI_EMPTY_RANK")
        .ok()
        .and_then(|v| v.parse().ok());
    let rows_of = |r: u64| if Some(r) == empty { 0 } else { 2 * r + 3 };
    let first: u64 = (0..rank).map(rows_of).sum();
    let local: Vec<f64> = (first..first + rows_of(rank))
        .map(|i| i as f64 * 0.5)
        .collect();
    {
        let file = h5vec::mpi::create_file(&path, &world)?;
        // H5VEC_MPI_DEFLATE=1: deflate (HDF5's parallel filtered writes).
        let mut opts = h5vec::SaveOptions::default();
        if std::env::var_os("H5VEC_MPI_DEFLATE").is_some() {
            opts = opts.deflate(4);
        }
        h5vec::mpi::save_vector_with(&file, "values", &local, &opts, &world)?;
    }
    world.barrier();
    if rank == 0 {
        let file = hdf5::File::open(&path)?;
        let all: Vec<f64> = h5vec::load_vector(&file, "values")?;
        let total: u64 = (0..size).map(rows_of).sum();
        let expected: Vec<f64> = (0..total).map(|i| i as f64 * 0.5).collect();
        assert_eq!(all, expected);
        println!("{size} ranks saved {total} rows into {path}; loaded back serially, all equal");
    }
    Ok(())
}
