//! The compression pipeline: parallel deflate and Blosc. Chunks are
//! compressed (and decompressed) on every core and handed to HDF5
//! ready-made with direct chunk writes and reads.
//!
//! HDF5 runs its filter pipeline on one thread. For a dataset whose filters
//! are exactly `deflate` or `shuffle` + `deflate` (what `SaveOptions::deflate`
//! creates), or exactly Blosc (filter 32001, what `SaveOptions::zstd` and
//! `Compression::blosc` create), and whose file type has the same bytes as
//! the memory type, whole chunks bypass that pipeline: h5vec shuffles and
//! zlib-compresses them itself (libdeflate), or compresses them with
//! c-blosc's thread-safe context calls (the library HDF5's Blosc filter
//! runs), in parallel, and writes them with `H5Dwrite_chunk`; reading uses
//! `H5Dread_chunk` and parallel decompression. The bytes are those of the
//! standard HDF5 shuffle and deflate (zlib) filters and of the Blosc filter
//! (a Blosc frame per chunk), so the files are the same in meaning as
//! HDF5's own path: stock h5py reads deflate, h5py with `hdf5plugin` reads
//! Blosc. Partial chunks at either end of a batch, and every other dataset,
//! take the normal path.
//!
//! | module | what it owns |
//! |---|---|
//! | `detect` | `Pipeline`: the filter pipeline of a dataset h5vec runs itself, read from its creation property list; filter mask bits |
//! | `codecs` | one chunk through the filters: shuffle + zlib (libdeflate), Blosc frames, the Fletcher32 seal and check |
//! | `shuffle` | HDF5's shuffle filter and its inverse |
//! | `checksum` | HDF5's Fletcher32 checksum; the error for a chunk whose checksum does not match |
//! | `pool` | h5vec's worker threads and `for_each_parallel` |
//! | `buffers` | chunk and batch buffers kept between batches and writers |
//! | `chunks` | direct chunk I/O: `write_rows`, `read_rows` (whole chunks direct, the rest through HDF5) |
//! | `rows` | row I/O: whole chunks direct where `detect` allows, the rest one hyperslab through `raw` |
//! | `prefetch` | `ReadAhead`: the next batch's chunks decompressed while the caller decodes this one |
//! | `deferred` | `WriteJob`: a flushed batch's chunks compressed, summarized for statistics and written on the workers while the caller encodes the next batch; `complete_file` finishes them before a commit |
//! | `committed` | `CommittedChunk`: a write through HDF5's filters that starts inside a committed chunk, between two flushes |
//! | `ahead` | `Ahead`: the next batch's decoded strings built on the workers |

pub(crate) mod ahead;
pub(crate) mod buffers;
pub(crate) mod checksum;
pub(crate) mod chunks;
pub(crate) mod codecs;
pub(crate) mod committed;
pub(crate) mod deferred;
pub(crate) mod detect;
pub(crate) mod pool;
pub(crate) mod prefetch;
pub(crate) mod rows;
pub(crate) mod shuffle;
