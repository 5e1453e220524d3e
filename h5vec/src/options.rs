//! Options for saving vectors.

/// Compression applied to every value dataset of a vector.
///
/// Every choice here is readable by h5py: deflate is built into HDF5, LZF
/// into h5py, and Blosc (HDF5 filter 32001) after `import hdf5plugin`.
///
/// ```
/// use h5vec::{BloscCompressor, BloscShuffle, Compression, SaveOptions};
///
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("c.h5"))?;
/// let xs: Vec<u32> = (0..10_000).collect();
/// for (name, c) in [
///     ("lzf", Compression::Lzf),
///     ("deflate", Compression::deflate(6)),
///     ("blosc", Compression::blosc(BloscCompressor::Lz4, 5, BloscShuffle::Bit)),
/// ] {
///     h5vec::save_vector_with(&file, name, &xs, &SaveOptions::default().compression(c))?;
///     assert_eq!(h5vec::load_vector::<u32>(&file, name)?, xs);
/// }
/// let filters = |name: &str| h5vec::inspect(&file, name).map(|i| i.datasets[0].filters.clone());
/// assert_eq!(filters("lzf")?, ["lzf"]);
/// assert_eq!(filters("deflate")?, ["shuffle", "deflate(6)"]);
/// assert_eq!(filters("blosc")?, ["blosc(lz4,5,bitshuffle)"]);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Compression {
    /// The LZF filter (fast, light; built into h5py, registered by h5vec).
    Lzf,
    /// No filter (the default): fastest to write and read.
    #[default]
    None,
    /// The HDF5 deflate (zlib) filter at `level` 0..=9, optionally after the
    /// shuffle filter (which helps numeric data).
    Deflate {
        /// zlib level, 0..=9.
        level: u8,
        /// Apply the byte shuffle filter first.
        shuffle: bool,
    },
    /// The Blosc filter (HDF5 filter 32001, the one of PyTables and Python's
    /// `hdf5plugin.Blosc`): Blosc's own shuffle, then `compressor` at
    /// `level`, in blocks that Blosc spreads over threads. h5py reads it
    /// after `import hdf5plugin`.
    Blosc {
        /// The codec inside Blosc.
        compressor: BloscCompressor,
        /// Blosc level, 0..=9 (0 stores the chunk uncompressed; larger
        /// values are clamped to 9). Blosc maps it to the codec's own scale.
        level: u8,
        /// Blosc's shuffle before compressing.
        shuffle: BloscShuffle,
    },
}

/// The codec inside the Blosc filter: each is stored as Blosc's code in the
/// filter's parameters, and every one is decoded by `hdf5plugin`'s Blosc.
///
/// ```
/// use h5vec::{BloscCompressor, BloscShuffle, Compression};
///
/// assert_eq!(BloscCompressor::Zstd.name(), "zstd");
/// assert_eq!(BloscCompressor::from_name("lz4hc"), Some(BloscCompressor::Lz4hc));
/// assert_eq!(BloscCompressor::Zlib.code(), 4);
/// assert_eq!(BloscCompressor::from_code(3), None);
/// let opts = h5vec::SaveOptions::default()
///     .compression(Compression::blosc(BloscCompressor::Lz4hc, 9, BloscShuffle::Byte));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BloscCompressor {
    /// BloscLZ (Blosc's own, code 0): fastest, lightest.
    BloscLz,
    /// LZ4 (code 1): fast.
    Lz4,
    /// LZ4 high compression (code 2): slower to write, as fast to read.
    Lz4hc,
    /// zlib (code 4).
    Zlib,
    /// Zstandard (code 5): the best ratio.
    Zstd,
}

impl BloscCompressor {
    /// Every compressor of this build.
    pub const ALL: [BloscCompressor; 5] = [
        BloscCompressor::BloscLz,
        BloscCompressor::Lz4,
        BloscCompressor::Lz4hc,
        BloscCompressor::Zlib,
        BloscCompressor::Zstd,
    ];

    /// Blosc's name of the compressor, as `hdf5plugin.Blosc(cname=...)`
    /// takes it: `"blosclz"`, `"lz4"`, `"lz4hc"`, `"zlib"`, `"zstd"`.
    pub const fn name(self) -> &'static str {
        match self {
            BloscCompressor::BloscLz => "blosclz",
            BloscCompressor::Lz4 => "lz4",
            BloscCompressor::Lz4hc => "lz4hc",
            BloscCompressor::Zlib => "zlib",
            BloscCompressor::Zstd => "zstd",
        }
    }

    /// The compressor named `name` (see [`name`](Self::name)).
    pub fn from_name(name: &str) -> Option<BloscCompressor> {
        Self::ALL.into_iter().find(|c| c.name() == name)
    }

    /// Blosc's code of the compressor, the 7th filter parameter.
    pub const fn code(self) -> u32 {
        match self {
            BloscCompressor::BloscLz => 0,
            BloscCompressor::Lz4 => 1,
            BloscCompressor::Lz4hc => 2,
            BloscCompressor::Zlib => 4,
            BloscCompressor::Zstd => 5,
        }
    }

    /// The compressor of Blosc code `code`, if this build has it.
    pub fn from_code(code: u32) -> Option<BloscCompressor> {
        Self::ALL.into_iter().find(|c| c.code() == code)
    }

    fn hdf5(self) -> hdf5::filters::Blosc {
        use hdf5::filters::Blosc;
        match self {
            BloscCompressor::BloscLz => Blosc::BloscLZ,
            BloscCompressor::Lz4 => Blosc::LZ4,
            BloscCompressor::Lz4hc => Blosc::LZ4HC,
            BloscCompressor::Zlib => Blosc::ZLib,
            BloscCompressor::Zstd => Blosc::ZStd,
        }
    }
}

/// Blosc's shuffle, run inside the Blosc filter before the compressor.
///
/// ```
/// use h5vec::{BloscCompressor, BloscShuffle, Compression};
///
/// // Bit shuffle suits small integers and booleans.
/// let c = Compression::blosc(BloscCompressor::Zstd, 5, BloscShuffle::Bit);
/// assert_eq!(BloscShuffle::Bit.code(), 2);
/// # let _ = c;
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BloscShuffle {
    /// No shuffle (code 0).
    None,
    /// Byte shuffle (code 1): byte `k` of every element together; helps
    /// numbers whose high bytes repeat.
    Byte,
    /// Bit shuffle (code 2): bit `k` of every element together; helps
    /// small integers and booleans most.
    Bit,
}

impl BloscShuffle {
    /// Blosc's code of the shuffle, the 6th filter parameter.
    pub const fn code(self) -> u32 {
        match self {
            BloscShuffle::None => 0,
            BloscShuffle::Byte => 1,
            BloscShuffle::Bit => 2,
        }
    }

    fn hdf5(self) -> hdf5::filters::BloscShuffle {
        use hdf5::filters::BloscShuffle as S;
        match self {
            BloscShuffle::None => S::None,
            BloscShuffle::Byte => S::Byte,
            BloscShuffle::Bit => S::Bit,
        }
    }
}

impl Compression {
    /// Shuffle + deflate at `level` (clamped to 9), as
    /// [`SaveOptions::deflate`] sets it.
    ///
    /// ```
    /// use h5vec::Compression;
    /// assert_eq!(Compression::deflate(12), Compression::Deflate { level: 9, shuffle: true });
    /// ```
    pub const fn deflate(level: u8) -> Compression {
        Compression::Deflate {
            level: if level > 9 { 9 } else { level },
            shuffle: true,
        }
    }

    /// Blosc with `compressor` at `level` (clamped to 9) after `shuffle`.
    ///
    /// ```
    /// use h5vec::{BloscCompressor::Zlib, BloscShuffle::Byte, Compression};
    /// let c = Compression::blosc(Zlib, 20, Byte);
    /// assert_eq!(c, Compression::Blosc { compressor: Zlib, level: 9, shuffle: Byte });
    /// ```
    pub const fn blosc(
        compressor: BloscCompressor,
        level: u8,
        shuffle: BloscShuffle,
    ) -> Compression {
        Compression::Blosc {
            compressor,
            level: if level > 9 { 9 } else { level },
            shuffle,
        }
    }

    /// Blosc's Zstandard at Blosc `level` 0..=9 (clamped), after Blosc's byte
    /// shuffle: HDF5 filter 32001 (Blosc), not the standalone Zstandard
    /// filter 32015. h5py reads it after `import hdf5plugin`.
    ///
    /// ```
    /// use h5vec::{BloscCompressor, BloscShuffle, Compression};
    /// let c = Compression::zstd(5);
    /// assert_eq!(c, Compression::blosc(BloscCompressor::Zstd, 5, BloscShuffle::Byte));
    /// ```
    pub const fn zstd(level: u8) -> Compression {
        Compression::blosc(BloscCompressor::Zstd, level, BloscShuffle::Byte)
    }

    /// Blosc's LZ4 at Blosc `level` 0..=9 (clamped), after Blosc's byte
    /// shuffle: HDF5 filter 32001 (Blosc), not the standalone LZ4 filter
    /// 32004. h5py reads it after `import hdf5plugin`.
    ///
    /// ```
    /// use h5vec::{BloscCompressor, BloscShuffle, Compression};
    /// let c = Compression::lz4(1);
    /// assert_eq!(c, Compression::blosc(BloscCompressor::Lz4, 1, BloscShuffle::Byte));
    /// ```
    pub const fn lz4(level: u8) -> Compression {
        Compression::blosc(BloscCompressor::Lz4, level, BloscShuffle::Byte)
    }

    /// The HDF5 filter pipeline of this setting, in order.
    pub(crate) fn filters(&self) -> Vec<hdf5::filters::Filter> {
        use hdf5::filters::Filter;
        match *self {
            Compression::None => vec![],
            Compression::Lzf => vec![Filter::lzf()],
            Compression::Deflate { level, shuffle } => {
                let d = Filter::deflate(level.min(9));
                if shuffle {
                    vec![Filter::shuffle(), d]
                } else {
                    vec![d]
                }
            }
            Compression::Blosc {
                compressor,
                level,
                shuffle,
            } => vec![Filter::blosc(
                compressor.hdf5(),
                level.min(9),
                shuffle.hdf5(),
            )],
        }
    }

    /// [`filters`](Self::filters), then HDF5's Fletcher32 checksum if
    /// `checksum` (last: it covers the bytes as stored).
    pub(crate) fn filters_with(&self, checksum: bool) -> Vec<hdf5::filters::Filter> {
        let mut f = self.filters();
        if checksum {
            f.push(hdf5::filters::Filter::fletcher32());
        }
        f
    }

    /// Whether this uses the Blosc filter.
    pub(crate) fn is_blosc(&self) -> bool {
        matches!(self, Compression::Blosc { .. })
    }
}

/// What a dataset holds, for per-dataset compression settings
/// ([`SaveOptions::compression_for`]).
///
/// ```
/// use h5vec::{Compression, DatasetRole, SaveOptions};
///
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("s.h5"))?;
/// // Compress the string bytes only; their pointers stay uncompressed.
/// let opts = SaveOptions::default()
///     .compression_for(DatasetRole::Bytes, Compression::Deflate { level: 6, shuffle: false });
/// let words: Vec<String> = (0..1000).map(|i| format!("word {}", i % 7)).collect();
/// h5vec::save_vector_with(&file, "words", &words, &opts)?;
/// let info = h5vec::inspect(&file, "words")?;
/// for ds in &info.datasets {
///     let want: &[&str] = if ds.path.ends_with("heap") { &["deflate(6)"] } else { &[] };
///     assert_eq!(ds.filters, want, "{}", ds.path);
/// }
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DatasetRole {
    /// Element values: `values`, list `VALUES` leaves.
    Values,
    /// Positions: list and string `OFFSETS`, blob `stops`, VLS `pointers`.
    Offsets,
    /// Byte heaps: VLS `heap`, string `CHARS`, blob `bytes`.
    Bytes,
    /// Null masks: `MASK`.
    Mask,
}

impl DatasetRole {
    /// The role of a dataset by its name in the layout.
    pub(crate) fn of(dataset: &str) -> DatasetRole {
        match dataset {
            "OFFSETS" | "stops" | "pointers" => DatasetRole::Offsets,
            "heap" | "CHARS" | "bytes" => DatasetRole::Bytes,
            "MASK" => DatasetRole::Mask,
            _ => DatasetRole::Values,
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Storage settings one field of a derived struct asks for with
/// `#[h5vec(chunk_length = N)]` and one of `#[h5vec(deflate = L)]`,
/// `#[h5vec(lzf)]`, `#[h5vec(zstd = L)]`, `#[h5vec(blosc(...))]` or
/// `#[h5vec(no_compression)]`. They apply to every dataset of the field
/// (and of its nested fields).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldStorage {
    /// Chunk length of the field's datasets.
    pub chunk_length: Option<usize>,
    /// Compression of the field's datasets (every role); `None` keeps the
    /// vector's settings.
    pub compression: Option<Compression>,
    /// `Some(false)` with `#[h5vec(vlen_strings)]`: the field's strings (and
    /// JSON text) are HDF5 variable-length strings whatever the compression
    /// ([`SaveOptions::vls_strings`]); `None` keeps the vector's setting.
    pub vls_strings: Option<bool>,
}

impl FieldStorage {
    /// No override.
    pub(crate) const DEFAULT: FieldStorage = FieldStorage {
        chunk_length: None,
        compression: None,
        vls_strings: None,
    };

    /// Whether this changes nothing.
    pub(crate) fn is_default(&self) -> bool {
        *self == Self::DEFAULT
    }
}

/// How [`save_vector_with`](crate::save_vector_with) writes a vector.
///
/// ```
/// let opts = h5vec::SaveOptions::default().chunk_length(4096).deflate(4);
/// assert_eq!(opts.get_chunk_length(), Some(4096));
/// ```
#[derive(Clone, Debug, Default)]
pub struct SaveOptions {
    chunk_length: Option<usize>,
    compression: Compression,
    vls_strings: Option<bool>,
    dedup_strings: bool,
    replace: bool,
    by_role: [Option<Compression>; 4],
    checksum: bool,
}

/// Rows per read batch of whole-vector loads.
pub(crate) const READ_BATCH_ROWS: u64 = AUTO_ROWS as u64;
/// Chunks per write batch when compressing. The worker threads compress a
/// batch while the next one is encoded, so batches need not be large to
/// keep every core busy; small ones start the workers sooner and keep two
/// batches of buffers small.
const COMPRESSED_BATCH_CHUNKS: usize = 2;
/// Most rows in an automatic chunk (and in one write batch).
pub(crate) const AUTO_ROWS: usize = 1 << 16;
/// Largest automatic chunk of a row dataset, in bytes.
const MAX_CHUNK_BYTES: usize = 4 << 20;
/// Smallest automatic chunk of a row dataset, in bytes (a row larger than
/// this is one row per chunk). A vector keeps the chunk length it was
/// created with, so one saved with a row or two and then appended to would
/// otherwise hold a chunk per row or two; chunk lookups are cheap, but each
/// chunk still costs an index entry and a read.
const MIN_CHUNK_BYTES: usize = 4 << 10;
/// Largest automatic chunk of a byte heap (string heaps, CHARS, blob bytes).
const HEAP_CHUNK_BYTES: usize = 1 << 19;
/// Smallest automatic chunk of a byte heap: one string (or blob) can hold
/// any number of bytes whatever the row count, so heap chunks never shrink
/// with the row count below this (a 300 MB string is 18,311 chunks, not
/// the 18.75 million of 16-byte chunks), while a vector of a few rows
/// still makes a file of tens of KiB.
const MIN_HEAP_CHUNK_BYTES: usize = 16 << 10;

impl SaveOptions {
    /// Rows per chunk along axis 0 of every value dataset (bytes for byte
    /// heaps: VLS `heap`, `CHARS`, blob `bytes`), and rows per write batch.
    /// Without it, h5vec picks 65,536 rows (at most 4 MiB per chunk; 512 KiB
    /// chunks for byte heaps), but no more rows than the vector has (rounded
    /// up to a power of two), so small vectors make small files, and no
    /// fewer than fit in 4 KiB (16 KiB of bytes for byte heaps), so no chunk
    /// is tiny (SPEC.md section 6). Set it when a small vector will grow by
    /// appends: chunks keep the size they were created with. A length set
    /// here applies to byte heaps as given, in bytes: a small one makes long
    /// strings span many chunks.
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// let file = h5vec::create_file(dir.path().join("c.h5"))?;
    /// // A vector that starts small and grows by appends: chunks of 1,000 rows.
    /// let opts = h5vec::SaveOptions::default().chunk_length(1000);
    /// h5vec::save_vector_with(&file, "xs", &[1u64, 2, 3], &opts)?;
    /// let info = h5vec::inspect(&file, "xs")?;
    /// assert_eq!(info.datasets[0].chunks, Some(vec![1000]));
    /// # Ok(()) }
    /// ```
    pub fn chunk_length(mut self, rows: usize) -> Self {
        self.chunk_length = Some(rows.max(1));
        self
    }

    /// The chunk length set with [`chunk_length`](Self::chunk_length).
    pub fn get_chunk_length(&self) -> Option<usize> {
        self.chunk_length
    }

    /// Compress every value dataset with shuffle + deflate at `level`
    /// (clamped to 9). Strings follow: see [`vls_strings`](Self::vls_strings).
    ///
    /// ```
    /// use h5vec::{Compression, SaveOptions};
    /// let opts = SaveOptions::default().deflate(4);
    /// assert_eq!(opts.get_compression(), &Compression::Deflate { level: 4, shuffle: true });
    /// ```
    pub fn deflate(mut self, level: u8) -> Self {
        self.compression = Compression::Deflate {
            level: level.min(9),
            shuffle: true,
        };
        self
    }

    /// Compress every value dataset with Blosc's Zstandard at Blosc `level`
    /// 0..=9 after Blosc's byte shuffle ([`Compression::zstd`]): HDF5 filter
    /// 32001, which h5py reads after `import hdf5plugin`.
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// let file = h5vec::create_file(dir.path().join("z.h5"))?;
    /// let opts = h5vec::SaveOptions::default().zstd(5);
    /// h5vec::save_vector_with(&file, "xs", &vec![0.25f32; 5000], &opts)?;
    /// assert_eq!(h5vec::inspect(&file, "xs")?.datasets[0].filters, ["blosc(zstd,5,shuffle)"]);
    /// # Ok(()) }
    /// ```
    pub fn zstd(mut self, level: u8) -> Self {
        self.compression = Compression::zstd(level);
        self
    }

    /// Set the compression of every value dataset.
    ///
    /// ```
    /// use h5vec::{Compression, SaveOptions};
    /// let opts = SaveOptions::default().compression(Compression::Lzf);
    /// assert_eq!(opts.get_compression(), &Compression::Lzf);
    /// ```
    pub fn compression(mut self, c: Compression) -> Self {
        self.compression = c;
        self
    }

    /// The compression in force (for datasets without a per-role setting).
    pub fn get_compression(&self) -> &Compression {
        &self.compression
    }

    /// Set the compression of one kind of dataset only, e.g. compress the
    /// string heaps but not the offsets:
    /// `SaveOptions::default().compression_for(DatasetRole::Bytes, Compression::Deflate { level: 6, shuffle: false })`
    /// (a whole save is shown at [`DatasetRole`]).
    ///
    /// ```
    /// use h5vec::{Compression, DatasetRole, SaveOptions};
    /// let opts = SaveOptions::default()
    ///     .deflate(4)
    ///     .compression_for(DatasetRole::Offsets, Compression::None);
    /// assert_eq!(opts.get_compression_for(DatasetRole::Offsets), &Compression::None);
    /// assert_eq!(opts.get_compression_for(DatasetRole::Values), &Compression::deflate(4));
    /// ```
    pub fn compression_for(mut self, role: DatasetRole, c: Compression) -> Self {
        self.by_role[role.index()] = Some(c);
        self
    }

    /// The compression of datasets of `role`.
    pub fn get_compression_for(&self, role: DatasetRole) -> &Compression {
        self.by_role[role.index()]
            .as_ref()
            .unwrap_or(&self.compression)
    }

    /// These options with a field's own storage settings applied.
    pub(crate) fn with_field(&self, f: &FieldStorage) -> SaveOptions {
        let mut o = self.clone();
        if let Some(c) = f.chunk_length {
            o.chunk_length = Some(c.max(1));
        }
        if let Some(c) = &f.compression {
            o.compression = c.clone();
            o.by_role = Default::default();
        }
        if let Some(v) = f.vls_strings {
            o.vls_strings = Some(v);
        }
        o
    }

    /// How `String` values and `#[h5vec(json)]` text are stored: `true`,
    /// in the compressed VLS layout (a byte heap + pointers, SPEC.md
    /// section 4.1), whose bytes the vector's compression covers; `false`,
    /// as HDF5 variable-length strings (what HDF5Vectors.jl writes and
    /// h5py's `string_dtype()` reads), whose characters live in HDF5's
    /// global heap, which no filter compresses.
    ///
    /// Without this call, strings follow the compression: variable-length
    /// strings when the byte heaps (`DatasetRole::Bytes`) are not
    /// compressed (the default), the VLS layout when they are, so that
    /// `deflate(4)` compresses every byte. A field's own compression
    /// attribute decides for that field, and `#[h5vec(vls)]` and
    /// `#[h5vec(vlen_strings)]` fix a field's layout either way. Loads read
    /// both layouts (SPEC.md section 6).
    ///
    /// ```
    /// use h5vec::SaveOptions;
    /// assert!(!SaveOptions::default().get_vls_strings());
    /// assert!(SaveOptions::default().deflate(4).get_vls_strings());
    /// // HDF5Vectors.jl's strings, compressed values:
    /// assert!(!SaveOptions::default().deflate(4).vls_strings(false).get_vls_strings());
    /// assert!(SaveOptions::default().vls_strings(true).get_vls_strings());
    /// ```
    pub fn vls_strings(mut self, on: bool) -> Self {
        self.vls_strings = Some(on);
        self
    }

    /// Whether strings are stored in the compressed VLS layout: the
    /// [`vls_strings`](Self::vls_strings) setting, or else whether byte
    /// heaps are compressed.
    pub fn get_vls_strings(&self) -> bool {
        self.vls_strings
            .unwrap_or_else(|| *self.get_compression_for(DatasetRole::Bytes) != Compression::None)
    }

    /// The [`vls_strings`](Self::vls_strings) setting itself (of the vector
    /// or a field): `None` when the layout follows the compression.
    pub(crate) fn vls_strings_setting(&self) -> Option<bool> {
        self.vls_strings
    }

    /// In compressed VLS arrays, store each distinct string once and let
    /// repeated values share its heap slice.
    ///
    /// ```
    /// use h5vec::SaveOptions;
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// let file = h5vec::create_file(dir.path().join("d.h5"))?;
    /// let levels = vec!["warning".to_string(); 10_000];
    /// let heap_len = |name: &str| -> h5vec::Result<u64> {
    ///     let info = h5vec::inspect(&file, name)?;
    ///     Ok(info.datasets.iter().find(|d| d.path.ends_with("heap")).unwrap().shape[0])
    /// };
    /// let opts = SaveOptions::default().vls_strings(true);
    /// h5vec::save_vector_with(&file, "plain", &levels, &opts)?;
    /// h5vec::save_vector_with(&file, "dedup", &levels, &opts.dedup_strings(true))?;
    /// assert!(heap_len("dedup")? < heap_len("plain")?);
    /// assert_eq!(h5vec::load_vector::<String>(&file, "dedup")?, levels);
    /// # Ok(()) }
    /// ```
    pub fn dedup_strings(mut self, on: bool) -> Self {
        self.dedup_strings = on;
        self
    }

    /// Let [`save_vector_with`](crate::save_vector_with) replace an existing
    /// vector of the same name (the old one stays until the new one is complete).
    ///
    /// ```
    /// use h5vec::SaveOptions;
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// let file = h5vec::create_file(dir.path().join("r.h5"))?;
    /// h5vec::save_vector(&file, "xs", &[1u8, 2, 3])?;
    /// assert!(h5vec::save_vector(&file, "xs", &[4u8]).is_err());
    /// h5vec::save_vector_with(&file, "xs", &[4u8], &SaveOptions::default().replace(true))?;
    /// assert_eq!(h5vec::load_vector::<u8>(&file, "xs")?, [4]);
    /// # Ok(()) }
    /// ```
    pub fn replace(mut self, on: bool) -> Self {
        self.replace = on;
        self
    }

    /// Whether saving may replace an existing vector.
    pub fn get_replace(&self) -> bool {
        self.replace
    }

    /// Store HDF5's Fletcher32 checksum with every chunk of every dataset
    /// the save creates (HDF5 filter 3, last in the pipeline, after
    /// shuffle, deflate or Blosc): every h5vec read verifies it, and so do
    /// h5py, HDF5.jl and C readers, so bytes changed on disk (bit rot, a
    /// bad copy) are an error naming the dataset and the chunk's rows,
    /// never different values. h5vec computes and verifies the checksums
    /// itself, in parallel, with its chunks (SPEC.md section 6.4). Off by
    /// default. Appends keep whatever the existing datasets have.
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// let file = h5vec::create_file(dir.path().join("c.h5"))?;
    /// let opts = h5vec::SaveOptions::default().checksum(true);
    /// assert!(opts.get_checksum());
    /// let xs: Vec<u32> = (0..10_000).collect();
    /// h5vec::save_vector_with(&file, "xs", &xs, &opts)?;
    /// assert_eq!(h5vec::inspect(&file, "xs")?.datasets[0].filters, ["fletcher32"]);
    /// h5vec::save_vector_with(&file, "zs", &xs, &opts.clone().deflate(4))?;
    /// let filters = &h5vec::inspect(&file, "zs")?.datasets[0].filters;
    /// assert_eq!(filters, &["shuffle", "deflate(4)", "fletcher32"]);
    /// assert_eq!(h5vec::load_vector::<u32>(&file, "zs")?, xs);
    /// # Ok(()) }
    /// ```
    pub fn checksum(mut self, on: bool) -> Self {
        self.checksum = on;
        self
    }

    /// Whether chunks get HDF5's Fletcher32 checksum
    /// ([`checksum`](Self::checksum)).
    pub fn get_checksum(&self) -> bool {
        self.checksum
    }

    /// Whether repeated strings share heap slices.
    pub fn get_dedup_strings(&self) -> bool {
        self.dedup_strings
    }

    /// Chunk length for a dataset whose rows are `row_bytes` bytes, in a
    /// vector expected to hold `len_hint` rows.
    pub(crate) fn chunk_rows(&self, len_hint: u64, row_bytes: usize) -> usize {
        RowChunks {
            chunk_length: self.chunk_length,
            len_hint,
        }
        .rows(row_bytes)
    }

    /// Chunk length, in bytes, of a byte heap expected to hold `bytes_hint`
    /// bytes: a power of two from 16 KiB to 512 KiB (or the chunk length
    /// set).
    pub(crate) fn chunk_heap(&self, bytes_hint: u64) -> usize {
        if let Some(c) = self.chunk_length {
            return c;
        }
        pow2_hint(bytes_hint).clamp(MIN_HEAP_CHUNK_BYTES, HEAP_CHUNK_BYTES)
    }

    /// Rows per write batch: the row chunk length, so every flush writes
    /// whole chunks.
    pub(crate) fn batch_rows(&self, len_hint: u64) -> usize {
        let chunk = match self.chunk_length {
            Some(c) => c,
            None => pow2_hint(len_hint).min(AUTO_ROWS),
        };
        // Compressed chunks are compressed in parallel: give every core some.
        match self.compression {
            Compression::None => chunk,
            _ => chunk.saturating_mul(COMPRESSED_BATCH_CHUNKS),
        }
    }
}

/// The chunk length choice of a row dataset whose row size is known only
/// when it is created (h5col fixed-length strings, sized by their longest
/// value).
#[derive(Clone, Copy, Debug)]
pub(crate) struct RowChunks {
    chunk_length: Option<usize>,
    len_hint: u64,
}

impl RowChunks {
    /// Exactly `rows` rows per chunk.
    pub(crate) const fn exactly(rows: usize) -> RowChunks {
        RowChunks {
            chunk_length: Some(rows),
            len_hint: 0,
        }
    }

    /// Rows per chunk for rows of `row_bytes` bytes: the chunk length set,
    /// or as many rows as the vector is expected to hold (a power of two),
    /// but at least as many as fit in 4 KiB and at most as many as fit in
    /// 4 MiB (powers of two, at least one), and at most 65,536.
    pub(crate) fn rows(&self, row_bytes: usize) -> usize {
        if let Some(c) = self.chunk_length {
            return c;
        }
        let row_bytes = row_bytes.max(1);
        let by_bytes = prev_power_of_two((MAX_CHUNK_BYTES / row_bytes).max(1));
        let floor = prev_power_of_two((MIN_CHUNK_BYTES / row_bytes).max(1));
        pow2_hint(self.len_hint)
            .max(floor)
            .min(AUTO_ROWS)
            .min(by_bytes)
    }
}

fn pow2_hint(hint: u64) -> usize {
    usize::try_from(hint.max(1))
        .ok()
        .and_then(usize::checked_next_power_of_two)
        .unwrap_or(usize::MAX)
}

fn prev_power_of_two(n: usize) -> usize {
    if n == 0 {
        1
    } else {
        1 << (usize::BITS - 1 - n.leading_zeros())
    }
}

/// What an encoder needs to know to create its datasets.
#[derive(Clone, Copy, Debug)]
pub struct WriteCtx<'a> {
    /// The save options.
    pub opts: &'a SaveOptions,
    /// How many rows the vector is expected to hold (for chunk sizing).
    pub len_hint: u64,
}

impl WriteCtx<'_> {
    /// Chunk rows for a dataset of rows of `row_bytes` bytes.
    pub fn chunk_rows(&self, row_bytes: usize) -> usize {
        self.opts.chunk_rows(self.len_hint, row_bytes)
    }

    /// Chunk length for a byte heap whose expected size is `bytes_hint`.
    pub fn chunk_bytes(&self, bytes_hint: u64) -> usize {
        self.opts.chunk_heap(bytes_hint)
    }

    /// The chunk length choice of a row dataset created later, once its
    /// row size is known.
    pub(crate) fn row_chunks(&self) -> RowChunks {
        RowChunks {
            chunk_length: self.opts.chunk_length,
            len_hint: self.len_hint,
        }
    }

    /// The compression of the dataset named `dataset` (by its role).
    pub fn compression_for(&self, dataset: &str) -> &Compression {
        self.opts.get_compression_for(DatasetRole::of(dataset))
    }

    /// Whether new datasets get HDF5's Fletcher32 checksum
    /// ([`SaveOptions::checksum`]).
    pub(crate) fn checksum(&self) -> bool {
        self.opts.get_checksum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_chunks_follow_length_and_cap() {
        let o = SaveOptions::default();
        // At least 4 KiB per chunk, whatever the row count.
        assert_eq!(o.chunk_rows(3, 8), 512);
        assert_eq!(o.chunk_rows(0, 8), 512);
        assert_eq!(o.chunk_rows(1, 24), 128);
        assert_eq!(o.chunk_rows(1, 1), 4096);
        assert_eq!(o.chunk_rows(1, 4096), 1);
        assert_eq!(o.chunk_rows(1, 5000), 1);
        assert_eq!(o.chunk_rows(3000, 1), 4096);
        assert_eq!(o.chunk_rows(5000, 1), 8192);
        assert_eq!(o.chunk_rows(5000, 8), 8192);
        // Large vectors: as many rows as fit in 4 MiB, at most 65,536.
        assert_eq!(o.chunk_rows(1_000_000, 8), 65_536);
        assert_eq!(o.chunk_rows(1_000_000, 24), 65_536);
        assert_eq!(o.chunk_rows(1_000_000, 8000), 512);
        assert_eq!(o.chunk_rows(u64::MAX, 1), 65_536);
        assert_eq!(o.chunk_rows(1, 10 << 20), 1);
        // Byte heaps: 16 KiB to 512 KiB, whatever the row count.
        assert_eq!(o.chunk_heap(u64::MAX), 1 << 19);
        assert_eq!(o.chunk_heap(10), 16 << 10);
        assert_eq!(o.chunk_heap(0), 16 << 10);
        assert_eq!(o.chunk_heap(100_000), 128 << 10);
        assert_eq!(o.batch_rows(1_000_000), 65_536);
        assert_eq!(o.batch_rows(5), 8);
        let o = SaveOptions::default().chunk_length(1000);
        assert_eq!(o.chunk_rows(3, 8), 1000);
        assert_eq!(o.batch_rows(3), 1000);
    }
}
