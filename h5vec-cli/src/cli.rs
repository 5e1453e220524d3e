//! The command line: every subcommand and option (clap derive).

use std::ops::Range;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Look inside, check, repair and convert h5vec vectors, h5col tables and
/// VLS string arrays, without their Rust types.
#[derive(Debug, Parser)]
#[command(name = "h5vec", version, about, long_about = None)]
#[command(
    after_help = "Exit status: 0 on success, 1 when `validate` found problems, \
                        2 on a usage or I/O error."
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Every vector, h5col table and VLS string array below GROUP (default
    /// the whole file): path, kind, rows, columns, stored size.
    ///
    /// Several files (or a glob pattern, quoted: `'logs/*.h5'`): one table,
    /// with a FILE column. The last argument is the GROUP when it is no
    /// file and no pattern.
    Ls {
        /// The HDF5 files (glob patterns expand to the files they match, in
        /// sorted path order), then optionally GROUP, the group to list
        /// (default `/`): `ls FILE... [GROUP]`.
        #[arg(required = true, num_args = 1.., value_name = "FILE")]
        args: Vec<PathBuf>,
    },
    /// The schema tree of a vector: field path, kind, codec, encoded type,
    /// dimensions.
    Schema {
        /// The HDF5 file.
        file: PathBuf,
        /// The vector, table or VLS array: its path in the file (`/grp/name` or `name`).
        vector: String,
        /// The schema tree as JSON (the `h5vec.schema` node of SPEC.md section 11).
        #[arg(long)]
        json: bool,
    },
    /// Per dataset: type, shape, chunk shape, filters, stored and logical
    /// bytes, ratio.
    ///
    /// Several files or a glob: per file its rows (numbered across the
    /// files) and bytes, after checking that every file holds the vector
    /// with the first file's schema.
    Info {
        /// The HDF5 file, or several (a vector of the same name and schema
        /// in each, read as one in the order given), or a quoted glob
        /// pattern (`'logs/*.h5'`: the files it matches in sorted path order).
        #[arg(required = true, num_args = 1.., value_name = "FILE")]
        files: Vec<PathBuf>,
        /// The vector, table or VLS array: its path in the file.
        vector: String,
    },
    /// The first rows.
    ///
    /// Several files or a glob (`h5vec head a.h5 b.h5 VECTOR`, `h5vec head
    /// 'logs/*.h5' VECTOR`): the files read as one vector, in order.
    Head {
        /// The HDF5 file, or several (a vector of the same name and schema
        /// in each, read as one in the order given), or a quoted glob
        /// pattern (`'logs/*.h5'`: the files it matches in sorted path order).
        #[arg(required = true, num_args = 1.., value_name = "FILE")]
        files: Vec<PathBuf>,
        /// The vector, table or VLS array: its path in the file.
        vector: String,
        /// How many rows.
        #[arg(short = 'n', long = "lines", default_value_t = 10)]
        n: u64,
        #[command(flatten)]
        show: ShowArgs,
    },
    /// Rows, as a table, JSON lines or CSV.
    ///
    /// Several files or a glob (`h5vec cat a.h5 b.h5 VECTOR`, `h5vec cat
    /// 'logs/*.h5' VECTOR`): the files read as one vector, in order, one
    /// file open at a time; every file must hold VECTOR with the first
    /// file's schema (an error names the file and the field). `--rows`
    /// numbers rows across the files.
    Cat {
        /// The HDF5 file, or several (a vector of the same name and schema
        /// in each, read as one in the order given), or a quoted glob
        /// pattern (`'logs/*.h5'`: the files it matches in sorted path order).
        #[arg(required = true, num_args = 1.., value_name = "FILE")]
        files: Vec<PathBuf>,
        /// The vector, table or VLS array: its path in the file.
        vector: String,
        /// Rows `A..B` (from A up to, not including, B; `A..` and `..B`
        /// too); clamped to the rows there are.
        #[arg(long, value_parser = parse_rows)]
        rows: Option<Range<u64>>,
        #[command(flatten)]
        show: ShowArgs,
    },
    /// How many rows: all of them, or those where `--where` is true.
    Count {
        /// The HDF5 file, or several, or a quoted glob pattern (as `cat`):
        /// the rows of the files' vectors together.
        #[arg(required = true, num_args = 1.., value_name = "FILE")]
        files: Vec<PathBuf>,
        /// The vector, table or VLS array: its path in the file.
        vector: String,
        /// Count only the rows where FILTER is true (vectors and h5col
        /// tables; see `head --help`).
        #[arg(long = "where", value_name = "FILTER")]
        filter: Option<String>,
    },
    /// How a `--where` query is answered: per column the statistics used
    /// (or a scan), the windows of rows read and skipped, the rows matched.
    Explain {
        /// The HDF5 file.
        file: PathBuf,
        /// The vector or h5col table: its path in the file.
        vector: String,
        /// The filter (see `head --help`).
        #[arg(long = "where", value_name = "FILTER")]
        filter: String,
    },
    /// The numbers of the rows where `--where` is true, one a line, in
    /// increasing order (from 0).
    Rows {
        /// The HDF5 file, or several, or a quoted glob pattern (as `cat`):
        /// row numbers then run on from one file to the next.
        #[arg(required = true, num_args = 1.., value_name = "FILE")]
        files: Vec<PathBuf>,
        /// The vector or h5col table: its path in the file.
        vector: String,
        /// The filter (see `head --help`).
        #[arg(long = "where", value_name = "FILTER")]
        filter: String,
    },
    /// Search indexes (SPEC.md section 14.6): without COLUMN, list them
    /// (column, kind, valid or stale, dataset); with COLUMN, build one of
    /// `--kind` on it (or rebuild it in place), or `--drop` it. A valid
    /// index answers `--where` queries on its column without a scan.
    Index {
        /// The HDF5 file (opened for writing to build or drop).
        file: PathBuf,
        /// The vector or h5col table: its path in the file.
        vector: String,
        /// The column: a dotted field path of a vector (`pos.x`; `""` for a
        /// vector of numbers) or a table's column name.
        column: Option<String>,
        /// `sorted-rows` (equality, ranges), `bitmap` (equality on few
        /// distinct values), `chunk-bloom` (equality: chunks that cannot
        /// hold the value are skipped) or `chunk-minmax` (statistics).
        #[arg(long, default_value = "sorted-rows", value_parser = parse_kind)]
        kind: h5vec::IndexKind,
        /// Remove the index of `--kind` on COLUMN instead.
        #[arg(long, requires = "column")]
        drop: bool,
    },
    /// Read every row of every container below the root (or of VECTOR) with
    /// every check a typed load makes, in a child process (a file that
    /// crashes or hangs HDF5 is one problem line, naming the signal); one
    /// line per problem. Exit status 1 if there is any.
    Validate {
        /// The HDF5 file.
        file: PathBuf,
        /// Only this vector, table or VLS array.
        vector: Option<String>,
        #[command(flatten)]
        options: crate::validate::ValidateOptions,
    },
    /// Convert `FILE.h5:VECTOR` to `.parquet`, `.arrow` (IPC file), `.csv`
    /// or `.jsonl`, or `.parquet` / `.arrow` to `FILE.h5:VECTOR`.
    ///
    /// `'PATTERN.h5:VECTOR'` (a quoted glob, `'logs/*.h5:telemetry'`)
    /// converts the vector of every file the pattern matches, in sorted
    /// path order, into one output: every file must hold it with the
    /// first file's schema (an error names the file and the field). A
    /// progress bar counts files.
    Convert {
        /// `FILE.h5:VECTOR`, `'PATTERN.h5:VECTOR'`, or a `.parquet` or `.arrow` file.
        src: String,
        /// A `.parquet`, `.arrow`, `.csv` or `.jsonl` file, or `FILE.h5:VECTOR`.
        dst: String,
        /// Compression of the output: for Parquet `zstd[:LEVEL]` (default
        /// zstd, level 1), `snappy` or `none`; for HDF5 `deflate[:LEVEL]`,
        /// `zstd[:LEVEL]` (Blosc Zstandard) or `none` (default: h5vec's
        /// default).
        #[arg(long)]
        compression: Option<String>,
        /// HDF5 output: rows per chunk.
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        chunk_length: Option<u64>,
        /// HDF5 output: replace an existing vector of that name.
        #[arg(long)]
        replace: bool,
        /// HDF5 output: store strings as compressed VLS arrays (heap +
        /// pointers) instead of HDF5 variable-length strings.
        #[arg(long)]
        vls_strings: bool,
        /// HDF5 output: store HDF5's Fletcher32 checksum with every chunk
        /// (every reader then detects bytes changed on disk).
        #[arg(long)]
        checksum: bool,
        /// Only these columns (`a,b.c`: nested record fields by dotted path).
        #[arg(long, value_delimiter = ',', num_args = 1)]
        columns: Vec<String>,
        /// HDF5 input (a vector): only the rows where FILTER is true (see
        /// `head --help`).
        #[arg(long = "where", value_name = "FILTER")]
        filter: Option<String>,
    },
    /// Trim every dataset of a vector to what its `count` covers (after an
    /// interrupted append).
    Repair {
        /// The HDF5 file (opened for writing).
        file: PathBuf,
        /// The vector: its path in the file.
        vector: String,
    },
}

/// What `head` and `cat` print and how.
#[derive(Debug, Args)]
pub(crate) struct ShowArgs {
    /// Only these columns (`a,b.c`: nested record fields by dotted path).
    #[arg(long, value_delimiter = ',', num_args = 1)]
    pub(crate) columns: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub(crate) format: Format,
    /// Only the rows where FILTER is true, e.g. `temperature >= 10 and
    /// status == 'Ok'` (vectors and h5col tables). Predicates: `== != < <= > >=`,
    /// `between A and B`, `in (A, B)`, `is [not] null`, combined with
    /// `and`, `or`, `not` and parentheses; columns by dotted path
    /// (`pos.x`), text in quotes (SPEC.md section 14.2). With `head`, the
    /// first N matching rows; with `cat --rows`, the matching rows among
    /// those.
    #[arg(long = "where", value_name = "FILTER")]
    pub(crate) filter: Option<String>,
}

/// The output formats of `head` and `cat`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// A table (arrow's pretty printer); one table per batch of 65,536 rows
    /// (of several files: batches end where files end).
    Table,
    /// One JSON object per row: records as objects, lists as arrays, null for
    /// missing values.
    Jsonl,
    /// CSV with a header; records flattened to dotted column names, lists as
    /// JSON text cells, missing values as empty cells.
    Csv,
}

/// `A..B`, `A..`, `..B` or `..` (B exclusive).
fn parse_rows(s: &str) -> Result<Range<u64>, String> {
    let (a, b) = s
        .split_once("..")
        .ok_or_else(|| format!("`{s}` is not a row range A..B"))?;
    let num = |t: &str, default: u64| -> Result<u64, String> {
        if t.is_empty() {
            Ok(default)
        } else {
            t.parse::<u64>()
                .map_err(|_| format!("`{t}` in `{s}` is not a row number"))
        }
    };
    let start = num(a, 0)?;
    let end = num(b, u64::MAX)?;
    if end < start {
        return Err(format!("the range `{s}` ends before it starts"));
    }
    Ok(start..end)
}

/// `--kind`: an index kind (`sorted-rows`, `SORTED_ROWS`, ...).
fn parse_kind(s: &str) -> Result<h5vec::IndexKind, String> {
    s.parse::<h5vec::IndexKind>().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn row_ranges() {
        assert_eq!(parse_rows("2..5"), Ok(2..5));
        assert_eq!(parse_rows("2.."), Ok(2..u64::MAX));
        assert_eq!(parse_rows("..5"), Ok(0..5));
        assert_eq!(parse_rows(".."), Ok(0..u64::MAX));
        assert!(parse_rows("5..2").is_err());
        assert!(parse_rows("5").is_err());
        assert!(parse_rows("a..2").is_err());
    }
}
