//! Compression choices: [`Compression`], Blosc's compressors and shuffles,
//! and the HDF5 filter pipelines they make.
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
    /// [`SaveOptions::deflate`](crate::SaveOptions::deflate) sets it.
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
