//! The one error type of h5vec.
//!
//! Every error names the logical field path where it happened (`$` is the
//! whole vector, `$.timestamp.weeks` a nested field, `$.name[17]` one
//! element) and says what was expected against what was found.

use std::fmt;

/// Result alias used throughout h5vec.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong, without the path.
#[derive(Debug)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The file holds something other than what the Rust type needs.
    Mismatch {
        /// What the Rust type or the format requires.
        expected: String,
        /// What the file holds.
        found: String,
    },
    /// A value in the file breaks a rule of the layout (bad offset, bad UTF-8, ...).
    Invalid(String),
    /// A value could not be encoded (interior NUL in a string, serializer error, ...).
    Encode(String),
    /// A vector or group name is not usable.
    BadName(String),
    /// The HDF5 library reported an error.
    Hdf5(hdf5::Error),
}

/// An h5vec error: where (`path`) and what (`kind`).
#[derive(Debug)]
pub struct Error {
    path: String,
    /// The HDF5 object involved (`/m/data/weeks/values`, `metadata/count`), if any.
    location: Option<String>,
    kind: ErrorKind,
}

/// Splits `"$.a.b (/m/data/a/b/values)"` into the logical path and the HDF5
/// location the codecs append in parentheses.
fn split_location(full: String) -> (String, Option<String>) {
    if full.starts_with('$') && full.ends_with(')') {
        if let Some(i) = full.find(" (") {
            let loc = full[i + 2..full.len() - 1].to_owned();
            let mut path = full;
            path.truncate(i);
            return (path, Some(loc));
        }
    }
    (full, None)
}

impl Error {
    /// The logical path where the error happened, like `$.timestamp.weeks`
    /// (`$` is the whole vector, `[i]` an element).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The HDF5 object involved, like `/m/data/timestamp/weeks/values`, if any.
    pub fn location(&self) -> Option<&str> {
        self.location.as_deref()
    }

    fn at_path(path: impl Into<String>, kind: ErrorKind) -> Self {
        let (path, location) = split_location(path.into());
        Error {
            path,
            location,
            kind,
        }
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// A mismatch between what was expected and what was found.
    pub fn mismatch(
        path: impl Into<String>,
        expected: impl fmt::Display,
        found: impl fmt::Display,
    ) -> Self {
        Error::at_path(
            path,
            ErrorKind::Mismatch {
                expected: expected.to_string(),
                found: found.to_string(),
            },
        )
    }

    /// A value in the file that breaks a layout rule.
    pub fn invalid(path: impl Into<String>, msg: impl fmt::Display) -> Self {
        Error::at_path(path, ErrorKind::Invalid(msg.to_string()))
    }

    /// A value that could not be encoded.
    pub fn encode(path: impl Into<String>, msg: impl fmt::Display) -> Self {
        Error::at_path(path, ErrorKind::Encode(msg.to_string()))
    }

    /// A bad vector or group name.
    pub fn bad_name(path: impl Into<String>, msg: impl fmt::Display) -> Self {
        Error::at_path(path, ErrorKind::BadName(msg.to_string()))
    }

    /// An HDF5 library error at `path`.
    pub fn hdf5(path: impl Into<String>, err: hdf5::Error) -> Self {
        Error::at_path(path, ErrorKind::Hdf5(err))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path)?;
        if let Some(loc) = &self.location {
            write!(f, " ({loc})")?;
        }
        match &self.kind {
            ErrorKind::Mismatch { expected, found } => {
                write!(f, ": expected {}, found {}", expected, found)
            }
            ErrorKind::Invalid(m) => write!(f, ": invalid data: {}", m),
            ErrorKind::Encode(m) => write!(f, ": cannot encode: {}", m),
            ErrorKind::BadName(m) => write!(f, ": bad name: {}", m),
            ErrorKind::Hdf5(e) => write!(f, ": HDF5 error: {}", e),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ErrorKind::Hdf5(e) => Some(e),
            _ => None,
        }
    }
}

/// Attach a path to an HDF5 result.
pub(crate) trait Context<T> {
    fn at(self, path: &str) -> Result<T>;
}

impl<T> Context<T> for hdf5::Result<T> {
    fn at(self, path: &str) -> Result<T> {
        self.map_err(|e| Error::hdf5(path, e))
    }
}
