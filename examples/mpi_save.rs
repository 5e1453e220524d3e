//! Issue 32 prototype: every MPI rank saves its own rows of one vector of
//! `f64` into one shared file (`h5vec::mpi`), in rank order; rank 0 then
//! loads it serially and checks every row. Rank `r` has `2 * r + 3` rows,
//! row `i` of the vector being `i as f64 * 0.5`.
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
    let rows_of = |r: u64| 2 * r + 3;
    let first: u64 = (0..rank).map(rows_of).sum();
    let local: Vec<f64> = (first..first + rows_of(rank))
        .map(|i| i as f64 * 0.5)
        .collect();
    {
        let file = h5vec::mpi::create_file(&path, &world)?;
        h5vec::mpi::save_vector(&file, "values", &local, &world)?;
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
