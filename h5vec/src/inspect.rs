//! What a container holds, without its Rust type: [`inspect`] describes
//! one vector, h5col table (SPEC.md section 9) or VLS string array (section
//! 10): its rows, its schema tree and every dataset's type, shape,
//! chunking, filters and sizes; [`find_containers`] lists every container
//! below a group.
//!
//! Containers are opened through the checks a load makes first (the walk
//! of SPEC.md section 7, the metadata, `count` or `NROWS`, the schema
//! tree), so a damaged or hostile file gives an error naming the path. No
//! value is read: sizes come from HDF5's storage size, types and shapes
//! from the object headers.

use std::collections::HashSet;

use hdf5::{Dataset, Group, LocationType};
use serde::Serialize;

use crate::codec::member_path;
pub use crate::containers::ContainerKind;
use crate::containers::{check_name, classify, container_place};
use crate::error::{Context, Error, Place, Result};
use crate::guard::{Access, MAX_DEPTH, MAX_OBJECTS};
use crate::raw;
use crate::schema::{Kind, Stored};

/// One node of a vector's schema tree (SPEC.md section 2), as stored, with
/// the logical field path its values have (`$`, `$.a.b`, `$.tags[]` for
/// the items of a list). Serialized (for `--json`), a node has the members
/// of SPEC.md section 2 (absent ones omitted) plus `field_path`.
///
/// ```
/// use h5vec::H5Vector;
///
/// #[derive(H5Vector)]
/// struct Sample { id: u32, tags: Vec<String> }
///
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("s.h5"))?;
/// h5vec::save_vector(&file, "samples", &[Sample { id: 1, tags: vec!["a".into()] }])?;
/// let root = h5vec::inspect(&file, "samples")?.schema.unwrap();
/// assert_eq!((root.kind.as_str(), root.field_path.as_str()), ("record", "$"));
/// assert_eq!(root.field_names, Some(vec!["id".to_string(), "tags".to_string()]));
/// let paths: Vec<&str> = root.children.iter().map(|c| c.field_path.as_str()).collect();
/// assert_eq!(paths, ["$.id", "$.tags"]);
/// assert_eq!(root.children[0].encoded_type.as_deref(), Some("UInt32"));
/// assert_eq!(root.children[1].kind, "list");
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SchemaNode {
    /// The logical path of the node's values: `$.a.b`; a list's items add
    /// `[]`; a `nullable` node and its child share their path.
    pub field_path: String,
    /// `kind`: `scalar`, `dense`, `record`, `list`, `nullable`, ...
    pub kind: String,
    /// `schema`, e.g. `HDF5Vectors.ScalarSchema`.
    pub schema: String,
    /// `codec`, e.g. `HDF5Vectors.IdentityCodec`.
    pub codec: String,
    /// `logical_type`: the writer's type name (empty when absent).
    pub logical_type: String,
    /// `encoded_type` (`Int32`, `String`, ...), if stored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoded_type: Option<String>,
    /// `dimensions` (dense; Julia order), if stored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dimensions: Option<Vec<i64>>,
    /// `field_names` (record), if stored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field_names: Option<Vec<String>>,
    /// `children/1..N`, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<SchemaNode>,
}

/// One dataset of a container.
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("d.h5"))?;
/// h5vec::save_vector(&file, "xs", &[1i32, 2, 3])?;
/// let ds = &h5vec::inspect(&file, "xs")?.datasets[0];
/// assert_eq!((ds.path.as_str(), ds.dtype.as_str(), &ds.shape[..]), ("/xs/data/values", "int32", &[3][..]));
/// assert_eq!(ds.max_shape, [None]); // unlimited: appends grow it
/// assert_eq!(ds.logical_bytes, 12);
/// assert!(ds.filters.is_empty());
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DatasetInfo {
    /// Its HDF5 path, e.g. `/m/data/position/values`.
    pub path: String,
    /// The logical path of the schema node (or table column) it belongs
    /// to: `$.position`, `$.tags[]` for a list's items, `$` for a VLS array.
    pub field_path: String,
    /// Its stored type in numpy-like words: `int32`, `float64`, `bool` (the
    /// 1-byte bitfield `H5T_STD_B8LE`), `enum(int8){FALSE=0,TRUE=1}` (the
    /// h5col bool), `vlen str`, `|S12` (fixed-length string of 12 bytes),
    /// `compound{offset:uint64,length:uint64}`; big-endian types say so.
    pub dtype: String,
    /// The current extent, h5py's order.
    pub shape: Vec<u64>,
    /// The maximum extent per axis (`None`: unlimited).
    pub max_shape: Vec<Option<u64>>,
    /// The chunk shape, for chunked datasets.
    pub chunks: Option<Vec<u64>>,
    /// The filter pipeline, in order: `shuffle`, `deflate(4)`, `lzf`,
    /// `blosc(zstd,5,shuffle)`, `fletcher32`, ...
    pub filters: Vec<String>,
    /// Bytes the values take in the file (`H5Dget_storage_size`: the
    /// allocated chunks after compression, or the contiguous block).
    pub stored_bytes: u64,
    /// Bytes the extent takes uncompressed: every element of `shape` times
    /// the element size (saturating). This covers the whole extent, as
    /// `stored_bytes` does, so rows past `count` left by an interrupted
    /// append count in both. A variable-length string counts 16 bytes,
    /// the descriptor the dataset itself stores; its characters live in
    /// global heap collections, outside both sizes (reading them would
    /// mean reading every value).
    pub logical_bytes: u64,
}

/// What [`inspect`] reports of a container.
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("i.h5"))?;
/// let rows: Vec<(u64, f32)> = (0..100).map(|i| (i, 0.5)).collect();
/// h5vec::save_vector(&file, "pairs", &rows)?;
/// let info = h5vec::inspect(&file, "pairs")?;
/// assert_eq!((info.path.as_str(), info.container, info.rows), ("/pairs", h5vec::ContainerKind::Vector, 100));
/// assert_eq!(info.datasets.len(), 2);
/// assert_eq!(info.logical_bytes(), 100 * (8 + 4));
/// assert!(info.stored_bytes() > 0);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct VectorInfo {
    /// The container's HDF5 path.
    pub path: String,
    /// What kind of container it is.
    pub container: ContainerKind,
    /// Its rows: `metadata/count`, `NROWS`, or the VLS array's pointers.
    pub rows: u64,
    /// The schema tree of a vector (`None` for tables and VLS arrays,
    /// which store none).
    pub schema: Option<SchemaNode>,
    /// Every dataset holding values (a vector's `data/`, not its
    /// `metadata/`), parent before children, a record's fields in order.
    pub datasets: Vec<DatasetInfo>,
}

impl VectorInfo {
    /// The stored bytes of all datasets (saturating).
    pub fn stored_bytes(&self) -> u64 {
        self.datasets
            .iter()
            .fold(0u64, |a, d| a.saturating_add(d.stored_bytes))
    }

    /// The logical bytes of all datasets (saturating).
    pub fn logical_bytes(&self) -> u64 {
        self.datasets
            .iter()
            .fold(0u64, |a, d| a.saturating_add(d.logical_bytes))
    }

    /// Top-level columns: a vector's root record fields (1 for any other
    /// root), a table's members, 1 for a VLS array.
    fn columns(&self, group: &Group) -> usize {
        match (&self.schema, self.container) {
            (Some(s), _) if Kind::parse(&s.kind) == Kind::Record => s.children.len(),
            (_, ContainerKind::Table) => {
                crate::h5col::column_members(group, &crate::h5col::table_place(group))
                    .map_or(0, |m| m.len())
            }
            _ => 1,
        }
    }
}

/// A container found by [`find_containers`].
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("c.h5"))?;
/// h5vec::save_vector(&file, "xs", &[1u8, 2])?;
/// let found = h5vec::find_containers(&file)?;
/// let c = &found[0];
/// assert_eq!((c.path.as_str(), c.kind, c.rows, c.columns), ("/xs", h5vec::ContainerKind::Vector, 2, 1));
/// assert!(c.problem.is_none());
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ContainerInfo {
    /// Its HDF5 path.
    pub path: String,
    /// What kind of container it looks like.
    pub kind: ContainerKind,
    /// Its rows (0 when `problem` is set).
    pub rows: u64,
    /// Top-level columns: a vector's root record fields (1 for another
    /// root), a table's columns, 1 for a VLS array (0 when `problem` is set).
    pub columns: usize,
    /// Bytes its datasets take in the file (0 when `problem` is set).
    pub stored_bytes: u64,
    /// Why it cannot be read: the error [`inspect`] gives for it.
    pub problem: Option<String>,
}

/// Describes the container `name` of `group`: a vector, an h5col table
/// (`CLASS = "COLUMN_TABLE"`) or a VLS string array (`type = "vls"`).
///
/// It is opened through the checks a load makes before reading values
/// (SPEC.md section 7; for a vector its metadata, `count` and schema tree),
/// so a file a load would refuse there is an error here too, naming the
/// path. No value is read.
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("f.h5"))?;
/// let opts = h5vec::SaveOptions::default().deflate(4).chunk_length(1000);
/// h5vec::save_vector_with(&file, "xs", &vec![[0.5f64; 3]; 2000], &opts)?;
/// let info = h5vec::inspect(&file, "xs")?;
/// assert_eq!((info.container, info.rows), (h5vec::ContainerKind::Vector, 2000));
/// assert_eq!(info.schema.as_ref().unwrap().kind, "dense");
/// let ds = &info.datasets[0];
/// assert_eq!((ds.path.as_str(), ds.field_path.as_str()), ("/xs/data/values", "$"));
/// assert_eq!((ds.dtype.as_str(), &ds.shape[..]), ("float64", &[2000, 3][..]));
/// assert_eq!(ds.chunks, Some(vec![1000, 3]));
/// assert_eq!(ds.filters, ["shuffle", "deflate(4)"]);
/// assert_eq!(ds.logical_bytes, 2000 * 3 * 8);
/// assert!(info.stored_bytes() < info.logical_bytes());
/// # Ok(()) }
/// ```
pub fn inspect(group: &Group, name: &str) -> Result<VectorInfo> {
    check_name(group, name, "container")?;
    let at = container_place(group, name);
    if !group.link_exists(name) {
        return Err(Error::not_found(
            &at,
            format!(
                "no vector, table or VLS array `{name}` in `{}`",
                group.name()
            ),
        ));
    }
    match classify(group, name) {
        Some(ContainerKind::Table) => inspect_table(group, name),
        Some(ContainerKind::VlsArray) => inspect_vls(group, name),
        // Anything else is opened as a vector: its checks say what is wrong.
        _ => inspect_vector(group, name),
    }
}

fn inspect_vector(parent: &Group, name: &str) -> Result<VectorInfo> {
    let v = crate::vector::open_vector(parent, name, Access::Read)?;
    let root = schema_node(&v.schema, "$".into());
    let mut datasets = Vec::new();
    describe_group(Some(&v.schema), &v.data, "$", false, &mut datasets)?;
    Ok(VectorInfo {
        path: member_path(parent, name),
        container: ContainerKind::Vector,
        rows: v.count,
        schema: Some(root),
        datasets,
    })
}

fn inspect_table(parent: &Group, name: &str) -> Result<VectorInfo> {
    let (table, _walked, nrows) = crate::h5col::open_checked(parent, name, Access::Read)?;
    let mut datasets = Vec::new();
    // A table's members are its columns: fields of the row.
    describe_group(None, &table, "$", true, &mut datasets)?;
    Ok(VectorInfo {
        path: table.name(),
        container: ContainerKind::Table,
        rows: nrows,
        schema: None,
        datasets,
    })
}

fn inspect_vls(parent: &Group, name: &str) -> Result<VectorInfo> {
    let group = crate::codec::open_group(parent, name, "$")?;
    let (_walked, dec) = crate::vls::open_strings(&group)?;
    let mut datasets = Vec::new();
    describe_group(None, &group, "$", false, &mut datasets)?;
    Ok(VectorInfo {
        path: group.name(),
        container: ContainerKind::VlsArray,
        rows: dec.len(),
        schema: None,
        datasets,
    })
}

/// The public form of stored node `s`, whose values have field path `path`.
fn schema_node(s: &Stored, path: String) -> SchemaNode {
    let children = s
        .children
        .iter()
        .enumerate()
        .map(|(i, c)| schema_node(c, child_path(s, i, &path)))
        .collect();
    SchemaNode {
        field_path: path,
        kind: s.kind.to_string(),
        schema: s.schema.clone(),
        codec: s.codec.clone(),
        logical_type: s.logical_type.clone(),
        encoded_type: s.encoded_type.clone(),
        dimensions: s.dimensions.clone(),
        field_names: s.field_names.clone(),
        children,
    }
}

/// The field path of child `i` of node `s` at `path`: a record's field
/// `$.a`, a list's items `$[]`, a union's variant `$.V`, and the same path for the child of a
/// `nullable` (the values beside the MASK) or a `vls_string` (its element
/// type). A record child without a field name is `<i>` (1-based), as in
/// the schema reader's errors.
fn child_path(s: &Stored, i: usize, path: &str) -> String {
    match s.kind {
        Kind::Record => match s.field_names.as_ref().and_then(|f| f.get(i)) {
            Some(f) => format!("{path}.{f}"),
            None => format!("{path}.<{}>", i + 1),
        },
        Kind::List => format!("{path}[]"),
        // A union's variants (SPEC.md section 4.4): `$.f.Variant`.
        Kind::Union => match s.variant_names.as_ref().and_then(|f| f.get(i)) {
            Some(v) => format!("{path}.{v}"),
            None => format!("{path}.<{}>", i + 1),
        },
        // One child, at the node's own path (or none).
        Kind::Scalar
        | Kind::Dense
        | Kind::Blob
        | Kind::Constant
        | Kind::VlsString
        | Kind::StringValues
        | Kind::Nullable
        | Kind::FillNullable
        | Kind::Other(_) => path.to_owned(),
    }
}

/// The name of the member of a node's data group holding child `i`'s
/// data: a record field's group, a list's `VALUES`. `None` when the child
/// shares the node's group (`nullable`) or has no data (`vls_string`).
fn child_member(s: &Stored, i: usize) -> Option<&str> {
    match s.kind {
        Kind::Record => s.field_names.as_ref()?.get(i).map(String::as_str),
        Kind::List if i == 0 => Some("VALUES"),
        Kind::Union => s.variant_names.as_ref()?.get(i).map(String::as_str),
        Kind::List
        | Kind::Scalar
        | Kind::Dense
        | Kind::Blob
        | Kind::Constant
        | Kind::VlsString
        | Kind::StringValues
        | Kind::Nullable
        | Kind::FillNullable
        | Kind::Other(_) => None,
    }
}

/// Describes every dataset of `group`, the data group of `node` (or of a
/// table column, or a VLS array, when `node` is `None`) at field path
/// `path`, and of the groups below it. With `columns` (a table's own
/// group), each member is a field: dataset `x` is at `$.x`.
///
/// With a node, the members the node's children use are theirs (a record
/// field's group, a list's `VALUES`); the child of a `nullable` describes
/// the shared group. Without one (tables, and members no node claims), a
/// member `VALUES` holds a list's items (`[]`) and any
/// other group a field (`.name`), the naming of the walk's errors.
fn describe_group(
    node: Option<&Stored>,
    group: &Group,
    path: &str,
    columns: bool,
    out: &mut Vec<DatasetInfo>,
) -> Result<()> {
    if let Some(n) = node {
        if n.kind == Kind::Nullable && n.children.len() == 1 {
            return describe_group(n.children.first(), group, path, false, out);
        }
    }
    let at = Place::new(path, group.name());
    let mut names = group.member_names().at(&at)?;
    names.sort();
    let claimed: Vec<(&str, &Stored, String)> = match node {
        Some(n) => n
            .children
            .iter()
            .enumerate()
            .filter_map(|(i, c)| Some((child_member(n, i)?, c, child_path(n, i, path))))
            .filter(|(m, _, _)| names.iter().any(|x| x == m))
            .collect(),
        None => Vec::new(),
    };
    let mut groups = Vec::new();
    for name in &names {
        let p = Place::new(path, member_path(group, name));
        let claim = claimed.iter().find(|(m, _, _)| m == name);
        match group.loc_type_by_name(name).at(&p)? {
            LocationType::Dataset => {
                let field = match claim {
                    Some((_, _, cp)) => cp.clone(),
                    None if node.is_none() && name == "VALUES" => format!("{path}[]"),
                    None if columns => format!("{path}.{name}"),
                    None => path.to_owned(),
                };
                let ds = group.dataset(name).at(&p)?;
                out.push(describe_dataset(&ds, field, &p)?);
            }
            LocationType::Group => groups.push(name),
            // The walk of SPEC.md section 7 refused anything else.
            other => {
                return Err(Error::mismatch(
                    p,
                    "a group or a dataset",
                    format!("{other:?}"),
                ))
            }
        }
    }
    // A node's children in schema order, then the groups no node claims.
    for (m, c, cp) in &claimed {
        if groups.iter().any(|g| g == m) {
            describe_group(Some(c), &group.group(m).at(&at)?, cp, false, out)?;
        }
    }
    for g in groups {
        if claimed.iter().any(|(m, _, _)| m == g) {
            continue;
        }
        let sub = if g == "VALUES" {
            format!("{path}[]")
        } else {
            format!("{path}.{g}")
        };
        describe_group(None, &group.group(g).at(&at)?, &sub, false, out)?;
    }
    Ok(())
}

/// One dataset's type, extent, storage and sizes (no value read).
fn describe_dataset(ds: &Dataset, field_path: String, at: &Place) -> Result<DatasetInfo> {
    let shape = raw::shape(ds, at)?;
    let (dtype, element) = raw::describe_dtype(ds, at)?;
    let storage = raw::storage(ds, at)?;
    let logical_bytes = shape.iter().fold(element, |a, &d| a.saturating_mul(d));
    Ok(DatasetInfo {
        path: ds.name(),
        field_path,
        dtype,
        shape,
        max_shape: storage.max_shape,
        chunks: storage.chunks,
        filters: raw::filter_names(ds, at)?,
        stored_bytes: storage.stored_bytes,
        logical_bytes,
    })
}

/// Every vector, h5col table and VLS string array at or below `group`,
/// sorted by HDF5 path.
///
/// Groups are recognised by what they hold (`CLASS = "COLUMN_TABLE"`,
/// `type = "vls"`, or members `data` and `metadata`) and each is then
/// described by [`inspect`]; one that fails its checks is listed with the
/// error as its `problem`, and the walk goes on. Nothing below a container
/// is searched for more containers. The walk follows hard links only (soft
/// and external links are neither followed nor listed), visits each object
/// once however many links reach it, and stops with an error past 160
/// levels of groups or 2^20 links (SPEC.md section 7's caps), or at a group
/// HDF5 cannot list.
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("f.h5"))?;
/// h5vec::save_vector(&file, "xs", &[1u8, 2, 3])?;
/// let run = h5vec::create_group(&file, "run1")?;
/// h5vec::save_vector(&run, "ys", &[(1i32, 2.5f64)])?;
/// h5vec::vls::save_strings(&run, "names", &[Some("a".to_string()), None])?;
/// let found = h5vec::find_containers(&file)?;
/// let listed: Vec<_> = found.iter().map(|c| (c.path.as_str(), c.kind, c.rows, c.columns)).collect();
/// use h5vec::ContainerKind::*;
/// assert_eq!(listed, [("/run1/names", VlsArray, 2, 1), ("/run1/ys", Vector, 1, 2), ("/xs", Vector, 3, 1)]);
/// assert!(found.iter().all(|c| c.problem.is_none() && c.stored_bytes > 0));
/// # Ok(()) }
/// ```
pub fn find_containers(group: &Group) -> Result<Vec<ContainerInfo>> {
    let mut walk = Finder {
        seen: HashSet::new(),
        links: 0,
        found: Vec::new(),
    };
    let path = group.name();
    // The group itself may be a container: it is then described through
    // its parent, as `inspect` takes it.
    let own = (path != "/")
        .then(|| path.rsplit_once('/'))
        .flatten()
        .and_then(|(parent, name)| {
            let parent = group
                .file()
                .ok()?
                .group(if parent.is_empty() { "/" } else { parent })
                .ok()?;
            Some((classify(&parent, name)?, parent, name.to_owned()))
        });
    match own {
        Some((kind, parent, name)) => walk.container(&parent, &name, kind),
        None => {
            if let Ok(info) = group.loc_info() {
                walk.seen.insert(format!("{:?}", info.token));
            }
            walk.group(group, 0)?;
        }
    }
    walk.found.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(walk.found)
}

/// The state of [`find_containers`]' walk.
struct Finder {
    /// Objects reached (their tokens, as `Debug` text: hdf5-metno's
    /// `LocationToken` has `Eq` but no `Hash`).
    seen: HashSet<String>,
    /// Links looked at so far (capped at `MAX_OBJECTS`).
    links: usize,
    found: Vec<ContainerInfo>,
}

impl Finder {
    /// Walks the members of `group`, `depth` levels below the start.
    fn group(&mut self, group: &Group, depth: usize) -> Result<()> {
        let at = Place::new("$", group.name());
        if depth > MAX_DEPTH {
            return Err(Error::invalid(
                &at,
                format!("groups nested more than {MAX_DEPTH} deep"),
            ));
        }
        let mut names = group.member_names().at(&at)?;
        names.sort();
        self.links = self.links.saturating_add(names.len());
        if self.links > MAX_OBJECTS {
            return Err(Error::invalid(
                &at,
                format!("more than {MAX_OBJECTS} links below the group searched"),
            ));
        }
        for name in names {
            if !crate::guard::is_hard_link(group, &name) {
                continue;
            }
            let p = Place::new("$", member_path(group, &name));
            let info = group.loc_info_by_name(&name).at(&p)?;
            if info.loc_type != LocationType::Group
                || !self.seen.insert(format!("{:?}", info.token))
            {
                continue;
            }
            match classify(group, &name) {
                Some(kind) => self.container(group, &name, kind),
                None => self.group(&group.group(&name).at(&p)?, depth + 1)?,
            }
        }
        Ok(())
    }

    /// Lists the container `name` of `parent`, which looks like `kind`.
    fn container(&mut self, parent: &Group, name: &str, kind: ContainerKind) {
        let path = member_path(parent, name);
        let entry = match inspect(parent, name) {
            Ok(info) => ContainerInfo {
                path,
                kind: info.container,
                rows: info.rows,
                columns: parent.group(name).map_or(0, |g| info.columns(&g)),
                stored_bytes: info.stored_bytes(),
                problem: None,
            },
            Err(e) => ContainerInfo {
                path,
                kind,
                rows: 0,
                columns: 0,
                stored_bytes: 0,
                problem: Some(e.to_string()),
            },
        };
        self.found.push(entry);
    }
}
