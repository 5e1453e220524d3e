//! README's "Parallel writes with MPI": every rank saves its own particles
//! into one vector of one file, then reads its own part back.
//!
//! ```text
//! sudo apt-get install -y libhdf5-openmpi-dev openmpi-bin libclang-dev
//! HDF5_DIR=/usr/lib/x86_64-linux-gnu/hdf5/openmpi \
//!   cargo build --release -p h5vec --no-default-features --features mpi --example mpi_save
//! mpirun -n 4 target/release/examples/mpi_save particles.h5
//! ```
//!
//! The file is a normal h5vec file: `h5vec head particles.h5 particles`,
//! `h5vec.open_vector("particles.h5", "particles").to_pandas()` and plain h5py
//! read it as if one process had saved the rows of rank 0, then rank 1, ...

use h5vec::{H5Vector, SaveOptions};
use mpi::traits::*;

#[derive(H5Vector, Clone, Debug, PartialEq)]
struct Particle {
    id: u64,
    position: [f64; 3],
    species: String,
    hits: Vec<u32>,
    charge: Option<i8>,
}

fn main() -> h5vec::Result<()> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "particles.h5".into());
    let universe = mpi::initialize().expect("MPI initialized once");
    let world = universe.world();
    let (rank, size) = (world.rank() as u64, world.size() as u64);

    // Each rank has its own rows, as many as it likes (here rank r has
    // 1000 * (r + 1)).
    let n = 1000 * (rank + 1);
    let first = 1000 * rank * (rank + 1) / 2; // rows of the ranks before
    let mine: Vec<Particle> = (first..first + n)
        .map(|id| Particle {
            id,
            position: [id as f64, 0.5 * id as f64, -(id as f64)],
            species: if id % 3 == 0 {
                "e-".into()
            } else {
                "p+".into()
            },
            hits: (0..(id % 4) as u32).collect(),
            charge: (id % 5 != 0).then_some(if id % 2 == 0 { -1 } else { 1 }),
        })
        .collect();

    // Every call below is collective: all ranks make it, in this order.
    let file = h5vec::mpi::create_file(&path, &world)?;
    let opts = SaveOptions::default().deflate(4);
    h5vec::mpi::save_vector_with(&file, "particles", &mine, &opts, &world)?;

    // Not collective: each rank reads its own rows back.
    let back: Vec<Particle> = h5vec::mpi::load_range(&file, "particles", first..first + n)?;
    assert_eq!(back, mine);
    let total = h5vec::vector_len(&file, "particles")?;
    assert_eq!(total, 1000 * size * (size + 1) / 2);
    if rank == 0 {
        println!("{size} ranks saved {total} particles into {path}");
    }
    Ok(())
}
