//! The ten number types (`Int8` .. `Float64`) as one table, for the enums
//! that hold one variant per number type (the Arrow writer's leaf and fill
//! writers, the serde fast path's columns): [`numbers!`] declares such an
//! enum, matches on it and picks its variant by encoded type name or Arrow
//! type; [`Number`] is what the table knows of each type. Adding a number
//! type is one line of the table.

use arrow_array::ArrowPrimitiveType;

/// The enums with a variant per number type, from the one table of them
/// (variant, Rust type, Arrow type, Arrow `DataType` variant and encoded
/// type name, its article, integer or float).
///
/// - `numbers! { $(#[meta])* vis enum Name { numbers(Wrap<native>), other
///   variants } }`: the variants `I8(Wrap<i8>)` .. `F64(Wrap<f64>)`, then
///   the others; `Wrap<arrow>` for `Wrap<Int8Type>` .. `Wrap<Float64Type>`.
/// - `numbers!(match (value) { Name::number(x) as A => body, other arms })`:
///   `body` in the arm of every number variant, with pattern `x` matching
///   its value and `A` its Arrow type (`_A` when unused); the other arms
///   (any match arms) after.
/// - `numbers!(by_name (name) { Name::number(value), other arms })`: the
///   number variant whose encoded type name (`"Int8"` ..) is `name`,
///   holding `value`; the other arms for other names.
/// - `numbers!(by_type (data_type) { Name::number(value), other arms })`:
///   the same by Arrow `DataType`.
/// - `numbers!(with_type (data_type) A => body, _ => other)`: `body` with
///   `A` the Arrow type of a number `data_type`, else `other` (the Arrow
///   readers' `with_prim!`).
macro_rules! numbers {
    (@with [$(($V:ident $t:ident $A:ident $D:ident $art:ident $kind:ident))*]
        $(#[$m:meta])* $vis:vis enum $name:ident { numbers($w:ident<native>), $($rest:tt)* }
    ) => {
        $(#[$m])* $vis enum $name { $($V($w<$t>),)* $($rest)* }
    };
    (@with [$(($V:ident $t:ident $A:ident $D:ident $art:ident $kind:ident))*]
        $(#[$m:meta])* $vis:vis enum $name:ident { numbers($w:ident<arrow>), $($rest:tt)* }
    ) => {
        $(#[$m])* $vis enum $name { $($V($w<::arrow_array::types::$A>),)* $($rest)* }
    };
    (@with [$(($V:ident $t:ident $A:ident $D:ident $art:ident $kind:ident))*]
        match ($e:expr) {
            $name:ident::number($x:pat) as $alias:ident => $body:expr, $($arms:tt)*
        }
    ) => {
        match $e {
            $($name::$V($x) => {
                type $alias = ::arrow_array::types::$A;
                $body
            })*
            $($arms)*
        }
    };
    (@with [$(($V:ident $t:ident $A:ident $D:ident $art:ident $kind:ident))*]
        by_name ($e:expr) { $name:ident::number($x:expr), $($arms:tt)* }
    ) => {
        match $e {
            $(stringify!($D) => $name::$V($x),)*
            $($arms)*
        }
    };
    (@with [$(($V:ident $t:ident $A:ident $D:ident $art:ident $kind:ident))*]
        by_type ($e:expr) { $name:ident::number($x:expr), $($arms:tt)* }
    ) => {
        match $e {
            $(::arrow_schema::DataType::$D => $name::$V($x),)*
            $($arms)*
        }
    };
    (@with [$(($V:ident $t:ident $A:ident $D:ident $art:ident $kind:ident))*]
        with_type ($e:expr) $alias:ident => $body:expr, _ => $other:expr
    ) => {
        match $e {
            $(::arrow_schema::DataType::$D => {
                type $alias = ::arrow_array::types::$A;
                $body
            })*
            _ => $other,
        }
    };
    (@with [$(($V:ident $t:ident $A:ident $D:ident $art:ident $kind:ident))*] impl Number) => {$(
        impl $crate::arrow::numbers::Number for ::arrow_array::types::$A {
            const COLUMN: &'static str = concat!(
                stringify!($art), " ", stringify!($D), " column"
            );
            #[inline]
            fn from_i64(v: i64) -> Option<$t> {
                $crate::arrow::numbers::numbers!(@from $kind $t v)
            }
            #[inline]
            fn from_u64(v: u64) -> Option<$t> {
                $crate::arrow::numbers::numbers!(@from $kind $t v)
            }
        }
    )*};
    (@from int $t:ident $v:ident) => {
        <$t>::try_from($v).ok()
    };
    (@from float $t:ident $v:ident) => {
        Some($v as $t)
    };
    (@with $($args:tt)*) => {
        compile_error!("numbers!: not an enum, match, by_name, by_type, with_type or impl Number")
    };
    ($($args:tt)*) => {
        $crate::arrow::numbers::numbers! { @with [
            (I8 i8 Int8Type Int8 an int)
            (I16 i16 Int16Type Int16 an int)
            (I32 i32 Int32Type Int32 an int)
            (I64 i64 Int64Type Int64 an int)
            (U8 u8 UInt8Type UInt8 a int)
            (U16 u16 UInt16Type UInt16 a int)
            (U32 u32 UInt32Type UInt32 a int)
            (U64 u64 UInt64Type UInt64 a int)
            (F32 f32 Float32Type Float32 a float)
            (F64 f64 Float64Type Float64 a float)
        ] $($args)* }
    };
}
pub(crate) use numbers;

/// What the table of [`numbers!`] knows of a number type, by its Arrow type.
pub(crate) trait Number: ArrowPrimitiveType {
    /// How messages name a column of the type: `an Int8 column`.
    const COLUMN: &'static str;
    /// `v` as the type: the same number, `None` out of range; a float
    /// takes the nearest. (What the serde fast path converts with.)
    #[cfg_attr(not(feature = "serde-columns"), allow(dead_code))]
    fn from_i64(v: i64) -> Option<Self::Native>;
    /// `v` as the type, as [`from_i64`](Self::from_i64).
    #[cfg_attr(not(feature = "serde-columns"), allow(dead_code))]
    fn from_u64(v: u64) -> Option<Self::Native>;
}

numbers!(impl Number);
