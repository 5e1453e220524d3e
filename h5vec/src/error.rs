//! The one error type of h5vec.
//!
//! Every error names the logical field path where it happened (`$` is the
//! whole vector, `$.timestamp.weeks` a nested field, `$.name[17]` one
//! element) and, where known, the HDF5 object involved (`location`), and
//! says what was expected against what was found. Both are fields set where
//! the error is made ([`Place`]), never parsed back out of a message.

use std::fmt;

/// Result alias used throughout h5vec: `h5vec::Result<T>` is
/// `Result<T, h5vec::Error>`. `?` turns an `hdf5::Error` into an
/// [`Error`] too.
///
/// ```
/// fn total(file: &h5vec::hdf5::File) -> h5vec::Result<f64> {
///     let xs: Vec<f64> = h5vec::load_vector(file, "xs")?;
///     Ok(xs.iter().sum())
/// }
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("f.h5"))?;
/// h5vec::save_vector(&file, "xs", &[1.0f64, 2.0])?;
/// assert_eq!(total(&file)?, 3.0);
/// # Ok(()) }
/// ```
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong, without the path ([`Error::kind`]). Match it to react
/// to one kind of failure; the enum is `#[non_exhaustive]`, so keep a `_` arm.
///
/// ```
/// use h5vec::ErrorKind;
///
/// /// The vector `name`, or an empty one if the file has none yet.
/// fn load_or_empty(file: &h5vec::hdf5::File, name: &str) -> h5vec::Result<Vec<u32>> {
///     match h5vec::load_vector(file, name) {
///         Err(e) if matches!(e.kind(), ErrorKind::NotFound(_)) => Ok(Vec::new()),
///         other => other,
///     }
/// }
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("f.h5"))?;
/// assert!(load_or_empty(&file, "xs")?.is_empty());
/// h5vec::save_vector(&file, "xs", &[7u32])?;
/// assert_eq!(load_or_empty(&file, "xs")?, [7]);
///
/// let err = h5vec::load_vector::<f32>(&file, "xs").unwrap_err();
/// match err.kind() {
///     ErrorKind::Mismatch { expected, found } => {
///         println!("{}: expected {expected}, found {found}", err.path())
///     }
///     ErrorKind::Invalid(msg) => println!("damaged file at {}: {msg}", err.path()),
///     ErrorKind::NotFound(msg) => println!("{msg}"),
///     ErrorKind::Hdf5(e) => println!("HDF5 at {:?}: {e}", err.location()),
///     other => println!("{other:?}"),
/// }
/// assert!(matches!(err.kind(), ErrorKind::Mismatch { .. }));
/// # Ok(()) }
/// ```
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
    /// There is no vector (or h5col table) of that name: the message says
    /// which name in which group, the error's location is where it would be.
    NotFound(String),
    /// The HDF5 library reported an error.
    Hdf5(hdf5::Error),
}

/// Where an error happened: the logical field path (`$`, `$.a.b`, `$[3]`,
/// `$.tags[]` for the items of a list) and, if known, the HDF5 object or
/// attribute involved (`/m/data/a/b/values`, `metadata/count`, `attribute
/// NROWS`). Checks and codecs build one where they know both, and errors
/// carry it as it is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Place {
    path: String,
    location: Option<String>,
}

impl Place {
    /// Logical path `path` at HDF5 object (or attribute) `location`.
    pub(crate) fn new(path: impl Into<String>, location: impl Into<String>) -> Place {
        Place {
            path: path.into(),
            location: Some(location.into()),
        }
    }

    /// The logical path.
    pub(crate) fn path(&self) -> &str {
        &self.path
    }

    /// Attribute `name` of the object at this place: the location becomes
    /// `<object> attribute <name>` (`attribute <name>` if the object is not
    /// known).
    pub(crate) fn attribute(&self, name: &str) -> Place {
        let location = match &self.location {
            Some(loc) => format!("{loc} attribute {name}"),
            None => format!("attribute {name}"),
        };
        Place {
            path: self.path.clone(),
            location: Some(location),
        }
    }

    /// Element `row` of this place: `$.a[3]`, at the same HDF5 object.
    pub(crate) fn element(&self, row: u64) -> Place {
        Place {
            path: format!("{}[{row}]", self.path),
            location: self.location.clone(),
        }
    }
}

/// A logical path alone, without an HDF5 location.
impl From<&str> for Place {
    fn from(path: &str) -> Place {
        Place {
            path: path.to_owned(),
            location: None,
        }
    }
}

impl From<String> for Place {
    fn from(path: String) -> Place {
        Place {
            path,
            location: None,
        }
    }
}

impl From<&String> for Place {
    fn from(path: &String) -> Place {
        Place::from(path.as_str())
    }
}

impl From<&Place> for Place {
    fn from(place: &Place) -> Place {
        place.clone()
    }
}

/// `path (location)`, or `path` alone.
impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path)?;
        if let Some(loc) = &self.location {
            write!(f, " ({loc})")?;
        }
        Ok(())
    }
}

/// What functions that make errors take for where: a logical path (`&str`,
/// `&String`) or a `&Place`.
pub(crate) trait At: Into<Place> + Copy {
    /// The place itself.
    fn place(self) -> Place {
        self.into()
    }
}

impl<T: Into<Place> + Copy> At for T {}

/// An h5vec error: where (`path`, `location`) and what (`kind`). It
/// displays as `path (location): what`.
///
/// ```
/// use h5vec::{ErrorKind, H5Vector};
///
/// #[derive(H5Vector)]
/// struct Written { id: u32, temperature: f64 }
///
/// #[derive(H5Vector, Debug)]
/// struct Wanted { id: u32, temperature: String }
///
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("e.h5"))?;
/// h5vec::save_vector(&file, "t", &[Written { id: 1, temperature: 20.5 }])?;
/// let err = h5vec::load_vector::<Wanted>(&file, "t").unwrap_err();
/// assert_eq!(err.path(), "$.temperature");
/// assert!(matches!(err.kind(), ErrorKind::Mismatch { .. }));
/// eprintln!("{err}"); // `$.temperature (...): expected ..., found ...`
/// assert!(err.to_string().starts_with("$.temperature"));
/// # Ok(()) }
/// ```
///
/// An error about the file itself (not an HDF5 file, truncated, held by
/// another process) names the file in its message and displays as that
/// message alone, like `not an HDF5 file: notes.txt`; its path is `$` and
/// its location the file's path.
#[derive(Debug)]
pub struct Error {
    place: Place,
    kind: ErrorKind,
    /// Displayed as the message alone (an error about the file itself).
    bare: bool,
}

impl Error {
    /// The logical path where the error happened, like `$.timestamp.weeks`
    /// (`$` is the whole vector, table or VLS array, `[i]` an element,
    /// `[]` the items of a list).
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let file = h5vec::create_file(dir.path().join("e.h5"))?;
    /// h5vec::save_vector(&file, "pairs", &[(1u8, 2u8)])?;
    /// let err = h5vec::load_vector::<(u8, String)>(&file, "pairs").unwrap_err();
    /// assert!(err.path().starts_with("$"), "{err}");
    /// # Ok(()) }
    /// ```
    pub fn path(&self) -> &str {
        &self.place.path
    }

    /// The HDF5 object involved, like `/m/data/timestamp/weeks/values`, if any.
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let file = h5vec::create_file(dir.path().join("e.h5"))?;
    /// let err = h5vec::load_vector::<u8>(&file, "missing").unwrap_err();
    /// assert_eq!(err.location(), Some("/missing"));
    /// # Ok(()) }
    /// ```
    pub fn location(&self) -> Option<&str> {
        self.place.location.as_deref()
    }

    fn at_place(place: impl Into<Place>, kind: ErrorKind) -> Self {
        Error {
            place: place.into(),
            kind,
            bare: false,
        }
    }

    /// An error about the file at `path` itself whose message `msg` names
    /// the file ([`ErrorKind::Invalid`], displayed as `msg` alone).
    pub(crate) fn file(path: &str, msg: impl fmt::Display) -> Self {
        Error {
            bare: true,
            ..Error::invalid(Place::new("$", path), msg)
        }
    }

    /// [`Error::file`] for an HDF5 error ([`ErrorKind::Hdf5`]), whose text
    /// names the file.
    pub(crate) fn file_hdf5(path: &str, err: hdf5::Error) -> Self {
        Error {
            bare: true,
            ..Error::hdf5(Place::new("$", path), err)
        }
    }

    /// This error, said of the file `file` (one of a
    /// [`Dataset`](crate::Dataset)'s): its location becomes
    /// `FILE:location` (`FILE` without one). An error about the file
    /// itself already names it and is returned as it is.
    pub(crate) fn in_file(mut self, file: &std::path::Path) -> Self {
        if self.bare {
            return self;
        }
        let file = file.display();
        self.place.location = Some(match self.place.location.take() {
            Some(loc) => format!("{file}:{loc}"),
            None => file.to_string(),
        });
        self
    }

    /// What went wrong (see [`ErrorKind`] for a full `match`).
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let file = h5vec::create_file(dir.path().join("e.h5"))?;
    /// let err = h5vec::save_vector(&file, "a/b", &[1u8]).unwrap_err();
    /// assert!(matches!(err.kind(), h5vec::ErrorKind::BadName(_)));
    /// # Ok(()) }
    /// ```
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// A mismatch between what was expected and what was found.
    pub(crate) fn mismatch(
        at: impl Into<Place>,
        expected: impl fmt::Display,
        found: impl fmt::Display,
    ) -> Self {
        Error::at_place(
            at,
            ErrorKind::Mismatch {
                expected: expected.to_string(),
                found: found.to_string(),
            },
        )
    }

    /// A value in the file that breaks a layout rule.
    pub(crate) fn invalid(at: impl Into<Place>, msg: impl fmt::Display) -> Self {
        Error::at_place(at, ErrorKind::Invalid(msg.to_string()))
    }

    /// A value that could not be encoded.
    pub(crate) fn encode(at: impl Into<Place>, msg: impl fmt::Display) -> Self {
        Error::at_place(at, ErrorKind::Encode(msg.to_string()))
    }

    /// A bad vector, table or VLS array name.
    pub(crate) fn bad_name(at: impl Into<Place>, msg: impl fmt::Display) -> Self {
        Error::at_place(at, ErrorKind::BadName(msg.to_string()))
    }

    /// A vector or table that does not exist.
    pub(crate) fn not_found(at: impl Into<Place>, msg: impl fmt::Display) -> Self {
        Error::at_place(at, ErrorKind::NotFound(msg.to_string()))
    }

    /// An HDF5 library error.
    pub(crate) fn hdf5(at: impl Into<Place>, err: hdf5::Error) -> Self {
        Error::at_place(at, ErrorKind::Hdf5(err))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.bare {
            return match &self.kind {
                ErrorKind::Mismatch { expected, found } => {
                    write!(f, "expected {}, found {}", expected, found)
                }
                ErrorKind::Invalid(m)
                | ErrorKind::Encode(m)
                | ErrorKind::BadName(m)
                | ErrorKind::NotFound(m) => write!(f, "{}", m),
                ErrorKind::Hdf5(e) => write!(f, "{}", e),
            };
        }
        write!(f, "{}", self.place)?;
        match &self.kind {
            ErrorKind::Mismatch { expected, found } => {
                write!(f, ": expected {}, found {}", expected, found)
            }
            ErrorKind::Invalid(m) => write!(f, ": invalid data: {}", m),
            ErrorKind::Encode(m) => write!(f, ": cannot encode: {}", m),
            ErrorKind::BadName(m) => write!(f, ": bad name: {}", m),
            ErrorKind::NotFound(m) => write!(f, ": not found: {}", m),
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

/// An HDF5 error from a call made outside h5vec, at path `$` with no
/// location, so that `?` on an `hdf5::Result` works in a function that
/// returns [`Result`].
///
/// ```
/// fn first_group_len(file: &h5vec::hdf5::File) -> h5vec::Result<u64> {
///     let group = file.group("run1")?; // an hdf5::Error becomes an h5vec::Error
///     h5vec::vector_len(&group, "xs")
/// }
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("f.h5"))?;
/// let err = first_group_len(&file).unwrap_err();
/// assert!(matches!(err.kind(), h5vec::ErrorKind::Hdf5(_)));
/// assert_eq!((err.path(), err.location()), ("$", None));
/// # Ok(()) }
/// ```
impl From<hdf5::Error> for Error {
    fn from(err: hdf5::Error) -> Self {
        Error::hdf5("$", err)
    }
}

/// Attach a place to an HDF5 result.
pub(crate) trait Context<T> {
    fn at(self, at: impl Into<Place>) -> Result<T>;
}

impl<T> Context<T> for hdf5::Result<T> {
    fn at(self, at: impl Into<Place>) -> Result<T> {
        self.map_err(|e| Error::hdf5(at, e))
    }
}

/// The HDF5 path of member `name` of `group` (`/x` below the root, not `//x`).
pub(crate) fn member_path(group: &hdf5::Group, name: &str) -> String {
    let g = group.name();
    if g.ends_with('/') {
        format!("{g}{name}")
    } else {
        format!("{g}/{name}")
    }
}

/// Where container `name` of `parent` is, for errors: `$` at its HDF5
/// path (the name escaped, so a NUL byte shows as `\0`).
pub(crate) fn container_place(parent: &hdf5::Group, name: &str) -> Place {
    Place::new("$", member_path(parent, &name.escape_debug().to_string()))
}
