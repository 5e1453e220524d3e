//! Options for saving vectors.
//!
//! This file holds [`SaveOptions`], [`DatasetRole`], per-field storage and
//! [`WriteCtx`]; `compression` the compression choices and their HDF5
//! filters, `chunks` the automatic chunk and batch sizes.

mod chunks;
mod compression;

pub(crate) use chunks::{RowChunks, READ_BATCH_ROWS};
pub use compression::{BloscCompressor, BloscShuffle, Compression};

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
    no_statistics: bool,
}

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

    /// Whether a save records per-chunk statistics (minimum, maximum, NaN
    /// and missing counts: HEP001 `CHUNK_MINMAX`, SPEC.md section 14) of
    /// its number, bool, enum and time columns, which queries use to skip
    /// chunks. On by default; appends keep the statistics a vector has
    /// (and add none to a vector saved without).
    ///
    /// ```
    /// use h5vec::{col, SaveOptions};
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// let file = h5vec::create_file(dir.path().join("s.h5"))?;
    /// let opts = SaveOptions::default().statistics(false);
    /// h5vec::save_vector_with(&file, "xs", &[3u8, 1, 2], &opts)?;
    /// // Queries still answer (by reading every chunk).
    /// assert_eq!(h5vec::select_rows(&file, "xs", &col("").ge(2u8))?, [0, 2]);
    /// # Ok(()) }
    /// ```
    pub fn statistics(mut self, on: bool) -> Self {
        self.no_statistics = !on;
        self
    }

    /// Whether saves record statistics ([`statistics`](Self::statistics)).
    pub fn get_statistics(&self) -> bool {
        !self.no_statistics
    }

    /// Whether repeated strings share heap slices.
    pub fn get_dedup_strings(&self) -> bool {
        self.dedup_strings
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
