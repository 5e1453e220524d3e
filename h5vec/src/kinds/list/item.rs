//! The traits of list elements: [`ListItem`] (which element layout a
//! Rust type uses), [`ItemCodec`] (one element layout: a member of the
//! list group) and [`GroupShaped`] (a layout that is a group of its own,
//! an element as that group). The layouts are in `elements` (leaves,
//! group-shaped layouts, the nullable wrapper), `strings` and `fill`; the
//! table of Rust types in `table`.

use hdf5::Group;

use crate::codec::Codec;
use crate::error::Result;
use crate::evolution::LoadFlags;
use crate::options::WriteCtx;
use crate::schema::{Schema, Stored};

/// How a type is stored as the elements of a list (the `VALUES` member).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an element of an h5vec list column",
    note = "list elements are numbers, bool, char, fieldless enums, fixed-size arrays, String, Option<String>, Vec<_>, Option<Vec<_>> and derived structs; store other data through serde with `#[h5vec(blob)]` or `#[h5vec(json)]` on the field"
)]
pub trait ListItem: Sized + 'static {
    /// The element layout.
    type Item: ItemCodec<Value = Self>;
}

/// One element layout: a member named `name` (usually `VALUES`) of a list group.
pub trait ItemCodec: 'static {
    /// The element type.
    type Value;
    /// Writes elements.
    type Encoder: crate::codec::Encoder<Self::Value>;
    /// Reads elements.
    type Decoder: crate::codec::Decoder<Self::Value>;
    /// The element's schema node (the list node's child).
    fn schema(ctx: &WriteCtx<'_>) -> Schema;
    /// Creates the member.
    fn create(parent: &Group, name: &str, path: &str, ctx: &WriteCtx<'_>) -> Result<Self::Encoder>;
    /// Opens the member, which must hold at least `rows` elements; `load`
    /// as for [`Codec::open_with`](crate::codec::Codec::open_with).
    fn open_with(
        parent: &Group,
        name: &str,
        node: &Stored,
        path: &str,
        rows: u64,
        load: LoadFlags,
    ) -> Result<Self::Decoder>;
    /// [`open_with`](Self::open_with) allowing nothing beyond an exact match.
    fn open(
        parent: &Group,
        name: &str,
        node: &Stored,
        path: &str,
        rows: u64,
    ) -> Result<Self::Decoder> {
        Self::open_with(parent, name, node, path, rows, LoadFlags::default())
    }
    /// Opens the member for appending after its first `rows` elements.
    fn append(
        parent: &Group,
        name: &str,
        node: &Stored,
        path: &str,
        rows: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self::Encoder>;
}

/// A layout that is a group of its own (nested lists, maps, unions,
/// records, instants with an offset): as a list element, the member `name`
/// of the list group is that group, with attribute `CLASS` =
/// [`CLASS`](Self::CLASS) where there is one, and the layout inside it
/// (`GroupItem` in `elements`).
pub trait GroupShaped: Codec {
    /// The element group's `CLASS` (`RECORD_VALUES`, `UNION_VALUES`); none
    /// for list and map groups, whose own attributes say what they are.
    const CLASS: Option<&'static str>;
}
