//! Which Rust type is which element layout: the [`ListItem`] impls.

use crate::codec::H5Vector;
use crate::kinds::dense::DenseElem;

use super::elements::{GroupItem, LeafItem, NullableItem, RecordItem};
use super::fill::FillItem;
use super::group::ListCodec;
use super::item::ListItem;
use super::strings::StringValuesItem;

macro_rules! leaf_items {
    ($($t:ty),*) => {$(
        impl ListItem for $t {
            type Item = LeafItem<$t>;
        }
    )*};
}
leaf_items!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64, bool, char);

impl<T: DenseElem, const N: usize> ListItem for [T; N] {
    type Item = LeafItem<[T; N]>;
}

macro_rules! fill_items {
    ($($t:ty),*) => {$(
        impl ListItem for Option<$t> {
            type Item = FillItem<$t>;
        }
    )*};
}
fill_items!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);

impl ListItem for String {
    type Item = StringValuesItem;
}

impl ListItem for Option<String> {
    type Item = NullableItem<StringValuesItem>;
}

impl<T: ListItem> ListItem for Vec<T> {
    type Item = GroupItem<ListCodec<T>>;
}

impl<T: ListItem> ListItem for Option<Vec<T>> {
    type Item = NullableItem<GroupItem<ListCodec<T>>>;
}

// Tuples are records; derived structs get the same impl from the derive.
macro_rules! tuple_items {
    ($(($($T:ident),+))+) => {$(
        impl<$($T: H5Vector + 'static),+> ListItem for ($($T,)+) {
            type Item = RecordItem<Self>;
        }
    )+};
}
tuple_items! {
    (A)
    (A, B)
    (A, B, C)
    (A, B, C, D)
    (A, B, C, D, E)
    (A, B, C, D, E, F)
    (A, B, C, D, E, F, G)
    (A, B, C, D, E, F, G, H)
    (A, B, C, D, E, F, G, H, I)
    (A, B, C, D, E, F, G, H, I, J)
    (A, B, C, D, E, F, G, H, I, J, K)
    (A, B, C, D, E, F, G, H, I, J, K, L)
}
