//! List columns (h5col's offsets layout, SPEC.md section 4.2): `Vec<T>` fields.
//!
//! Layout on disk:
//! ```text
//! <field>/                 group, attributes CLASS = "LIST_COLUMN", KIND = "OFFSETS"
//! <field>/OFFSETS          1-D uint64, count + 1 entries, OFFSETS[0] = 0, non-decreasing;
//!                          row i is VALUES[OFFSETS[i] .. OFFSETS[i+1]]
//! <field>/MASK             (Option<Vec<T>> only) h5col bool per row, TRUE = present;
//!                          a null row has an empty span
//! <field>/VALUES           the elements of all rows back to back:
//!   numbers, bool, char, enums   1-D dataset (bool as the h5col enum; [T; N] adds axes)
//!   Option<number>               1-D dataset whose fill value marks a missing element
//!   String                       group CLASS = "STRING_VALUES": OFFSETS (uint64, n + 1)
//!                                and CHARS (uint8, int8 refused); Option<String> adds MASK
//!   Vec<U>                       another list group, to any depth; Option<Vec<U>> adds MASK
//!   derived struct / tuple       group CLASS = "RECORD_VALUES" holding one column per
//!                                field in the record layout (h5vec's extension to h5col)
//! ```
//! No variable-length HDF5 type appears anywhere below a list column.
//!
//! One concern a file: `group` (the list group: [`ListEncoder`],
//! [`ListDecoder`], [`ListCodec`]), `offsets` (the `OFFSETS` rules and the
//! group's attributes every offsets-based member shares), `item` (the
//! [`ListItem`], [`ItemCodec`] and [`GroupShaped`] traits), `elements`
//! (leaves, group-shaped layouts as elements, the nullable wrapper),
//! `strings` (`STRING_VALUES`), `fill` (`Option<number>` elements) and
//! `table` (which Rust type is which element layout). Imports go one way: `table` -> layouts -> `group` ->
//! `item`, `offsets`.

#[cfg(feature = "arrow")]
pub(crate) mod arrow;

mod elements;
mod fill;
mod group;
mod item;
mod offsets;
mod strings;
mod table;

pub(crate) use fill::{FillDecoder, FillEncoder, FillNumber};
pub(crate) use group::{ListCodec, ListDecoder, ListEncoder};
pub use item::ListItem;
pub(crate) use item::{GroupShaped, ItemCodec};
#[cfg(feature = "arrow")]
pub(crate) use offsets::check_class;
#[cfg(any(feature = "arrow", feature = "chrono", feature = "time"))]
pub(crate) use offsets::RECORD_VALUES;
pub(crate) use offsets::{create_list_group, items_path, open_list_group_with, RowSpans};
// What the schema-driven reader and writer (`crate::arrow`) check lists with.
#[cfg(feature = "arrow")]
pub(crate) use offsets::{
    load_list_offsets, null_row_not_empty, open_list_group, LIST_COLUMN, STRING_VALUES,
};
// What the schema-driven reader (`crate::arrow`) opens lists with.
#[cfg(feature = "arrow")]
pub(crate) use strings::{StringValuesDecoder, StringValuesItem};
// What the schema-driven writer (`crate::arrow`) creates and appends with.
#[cfg(feature = "arrow")]
pub(crate) use elements::{append_nullable_item, create_item_mask};
#[cfg(feature = "arrow")]
pub(crate) use fill::FillItem;
// What element layouts outside this module (maps, mapped values) build on.
pub(crate) use elements::{
    create_leaf, create_record_values, open_leaf_checked, open_leaf_values, open_record_values,
};
pub(crate) use elements::{GroupItem, NullableItem};
pub use elements::{LeafItem, RecordItem};
#[cfg(feature = "arrow")]
pub(crate) use strings::StringValuesEncoder;
