//! The direct `Deserializer`: a row of the reader's nodes into serde's
//! visitors ([`De`] for a value, [`SeqDe`] for a list or fixed-size array,
//! [`TupleDe`] and [`MapDe`] for a record as a sequence or a map,
//! [`EnumDe`] for a row of a union).

use ::serde::de::{self, DeserializeSeed, IntoDeserializer, Visitor};

use super::node::{DKind, DNode};
use crate::arrow::numbers::numbers;
use crate::serde::fast::{PathError, R};

/// `Deserializer` methods for the scalar kinds: the stored array's value
/// when the column is of that kind and has no nulls, else
/// `deserialize_any` (which also handles nulls and other kinds).
macro_rules! exact {
    ($($method:ident $kind:ident $visit:ident;)*) => {$(
        #[inline(always)]
        fn $method<V: Visitor<'de>>(self, v: V) -> R<V::Value> {
            if let (DKind::$kind(a), None) = (&self.node.kind, &self.node.nulls) {
                return v.$visit(a.value(self.row));
            }
            self.deserialize_any(v)
        }
    )*};
}

#[derive(Clone, Copy)]
pub(super) struct De<'a> {
    pub(super) node: &'a DNode,
    pub(super) row: usize,
}

impl<'a> De<'a> {
    #[inline]
    fn is_null(&self) -> bool {
        self.node
            .nulls
            .as_ref()
            .is_some_and(|n| n.is_null(self.row))
    }
}

impl<'de> de::Deserializer<'de> for De<'_> {
    type Error = PathError;

    fn is_human_readable(&self) -> bool {
        false
    }

    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> R<V::Value> {
        if self.is_null() {
            return v.visit_none();
        }
        let r = self.row;
        numbers!(match (&self.node.kind) {
            // `visit_i8` .. `visit_f64`.
            DKind::number(a) as _A => a.value(r).into_deserializer().deserialize_any(v),
            DKind::Bool(a) => v.visit_bool(a.value(r)),
            DKind::Str(a) => v.visit_str(a.value(r)),
            DKind::List(l, item) => {
                let o = l.value_offsets();
                let (s, e) = (o[r], o[r + 1]);
                let (s, e) = (
                    usize::try_from(s).map_err(PathError::msg)?,
                    usize::try_from(e).map_err(PathError::msg)?,
                );
                v.visit_seq(SeqDe {
                    item,
                    next: s,
                    end: e,
                    label: None,
                })
            }
            DKind::Fixed(n, item) => {
                let s = r * n;
                v.visit_seq(SeqDe {
                    item,
                    next: s,
                    end: s + n,
                    label: None,
                })
            }
            DKind::Record {
                names,
                tuple: false,
                children,
                ..
            } => v.visit_map(MapDe {
                names,
                children,
                row: r,
                next: 0,
            }),
            DKind::Record {
                names,
                tuple: true,
                children,
                ..
            } => v.visit_seq(TupleDe {
                names,
                children,
                row: r,
                next: 0,
            }),
            DKind::Union {
                types,
                offsets,
                names,
                variants,
            } => {
                // In range (union_reader).
                let k = types[r] as usize;
                let row = usize::try_from(offsets[r]).map_err(PathError::msg)?;
                let name = names[k].as_str();
                v.visit_enum(EnumDe {
                    name,
                    node: &variants[k],
                    row,
                })
                .map_err(|e| e.at(name))
            }
        })
    }

    #[inline(always)]
    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> R<V::Value> {
        if self.is_null() {
            v.visit_none()
        } else {
            v.visit_some(self)
        }
    }

    fn deserialize_char<V: Visitor<'de>>(self, v: V) -> R<V::Value> {
        match &self.node.kind {
            DKind::U32(a) if !self.is_null() => {
                let c = a.value(self.row);
                v.visit_char(
                    char::from_u32(c)
                        .ok_or_else(|| PathError::msg(format!("{c} is not a char")))?,
                )
            }
            _ => self.deserialize_any(v),
        }
    }

    #[inline(always)]
    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _: &'static str, v: V) -> R<V::Value> {
        v.visit_newtype_struct(self)
    }

    #[inline(always)]
    fn deserialize_tuple<V: Visitor<'de>>(self, _: usize, v: V) -> R<V::Value> {
        match &self.node.kind {
            DKind::Record {
                names, children, ..
            } if !self.is_null() => v.visit_seq(TupleDe {
                names,
                children,
                row: self.row,
                next: 0,
            }),
            DKind::Fixed(n, item) if !self.is_null() => {
                let s = self.row * n;
                v.visit_seq(SeqDe {
                    item,
                    next: s,
                    end: s + n,
                    label: None,
                })
            }
            _ => self.deserialize_any(v),
        }
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        n: usize,
        v: V,
    ) -> R<V::Value> {
        self.deserialize_tuple(n, v)
    }

    #[inline(always)]
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        v: V,
    ) -> R<V::Value> {
        match &self.node.kind {
            DKind::Record {
                names,
                tuple: false,
                children,
                order,
            } if !self.is_null() && order.check(fields, names) => v.visit_seq(TupleDe {
                names,
                children,
                row: self.row,
                next: 0,
            }),
            _ => self.deserialize_any(v),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, v: V) -> R<V::Value> {
        v.visit_unit()
    }

    // A number, `bool` or string asked for as the type it is stored as,
    // in a column without nulls: the visitor is called here, so the
    // per-value path inlines (the rest, as `deserialize_any`).
    exact! {
        deserialize_bool Bool visit_bool;
        deserialize_i8 I8 visit_i8;
        deserialize_i16 I16 visit_i16;
        deserialize_i32 I32 visit_i32;
        deserialize_i64 I64 visit_i64;
        deserialize_u8 U8 visit_u8;
        deserialize_u16 U16 visit_u16;
        deserialize_u32 U32 visit_u32;
        deserialize_u64 U64 visit_u64;
        deserialize_f32 F32 visit_f32;
        deserialize_f64 F64 visit_f64;
        deserialize_str Str visit_str;
        deserialize_string Str visit_str;
    }

    serde::forward_to_deserialize_any! {
        i128 u128 bytes byte_buf unit unit_struct seq map enum identifier
    }
}

/// A row of a union: its variant's name and record row.
struct EnumDe<'a> {
    name: &'a str,
    node: &'a DNode,
    row: usize,
}

impl<'de, 'a> de::EnumAccess<'de> for EnumDe<'a> {
    type Error = PathError;
    type Variant = Self;
    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> R<(S::Value, Self)> {
        let d: de::value::StrDeserializer<'_, PathError> = self.name.into_deserializer();
        Ok((seed.deserialize(d)?, self))
    }
}

impl EnumDe<'_> {
    /// The variant's record's names and columns.
    fn record(&self) -> (&[String], &[DNode]) {
        match &self.node.kind {
            DKind::Record {
                names, children, ..
            } => (names, children),
            _ => (&[], &[]),
        }
    }
    fn wrong(&self, want: &str) -> PathError {
        PathError::msg(format!(
            "stored variant `{}` has {} fields, the type reads {want}",
            self.name,
            self.record().1.len()
        ))
    }
}

impl<'de> de::VariantAccess<'de> for EnumDe<'_> {
    type Error = PathError;
    fn unit_variant(self) -> R {
        if self.record().1.is_empty() {
            Ok(())
        } else {
            Err(self.wrong("a unit variant"))
        }
    }
    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> R<S::Value> {
        match self.record().1 {
            [c] => seed
                .deserialize(De {
                    node: c,
                    row: self.row,
                })
                .map_err(|e| e.at("1")),
            _ => Err(self.wrong("a newtype variant (one field)")),
        }
    }
    fn tuple_variant<V: Visitor<'de>>(self, len: usize, v: V) -> R<V::Value> {
        let (names, children) = self.record();
        if children.len() != len {
            return Err(self.wrong(&format!("a tuple variant of {len} fields")));
        }
        v.visit_seq(TupleDe {
            names,
            children,
            row: self.row,
            next: 0,
        })
    }
    fn struct_variant<V: Visitor<'de>>(self, _: &'static [&'static str], v: V) -> R<V::Value> {
        let (names, children) = self.record();
        v.visit_map(MapDe {
            names,
            children,
            row: self.row,
            next: 0,
        })
    }
}

struct SeqDe<'a> {
    item: &'a DNode,
    next: usize,
    end: usize,
    label: Option<&'a str>,
}

impl<'de> de::SeqAccess<'de> for SeqDe<'_> {
    type Error = PathError;
    #[inline(always)]
    fn next_element_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> R<Option<S::Value>> {
        if self.next >= self.end {
            return Ok(None);
        }
        let row = self.next;
        self.next += 1;
        seed.deserialize(De {
            node: self.item,
            row,
        })
        .map(Some)
        .map_err(|e| e.at(self.label.unwrap_or("[]")))
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.end - self.next)
    }
}

struct TupleDe<'a> {
    names: &'a [String],
    children: &'a [DNode],
    row: usize,
    next: usize,
}

impl<'de> de::SeqAccess<'de> for TupleDe<'_> {
    type Error = PathError;
    #[inline(always)]
    fn next_element_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> R<Option<S::Value>> {
        let Some(c) = self.children.get(self.next) else {
            return Ok(None);
        };
        let i = self.next;
        self.next += 1;
        seed.deserialize(De {
            node: c,
            row: self.row,
        })
        .map(Some)
        .map_err(|e| e.at(&self.names[i]))
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.children.len() - self.next)
    }
}

struct MapDe<'a> {
    names: &'a [String],
    children: &'a [DNode],
    row: usize,
    next: usize,
}

impl<'de> de::MapAccess<'de> for MapDe<'_> {
    type Error = PathError;
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> R<Option<K::Value>> {
        let Some(name) = self.names.get(self.next) else {
            return Ok(None);
        };
        let d: de::value::StrDeserializer<'_, PathError> = name.as_str().into_deserializer();
        seed.deserialize(d).map(Some)
    }
    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> R<S::Value> {
        let i = self.next;
        self.next += 1;
        seed.deserialize(De {
            node: &self.children[i],
            row: self.row,
        })
        .map_err(|e| e.at(&self.names[i]))
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.children.len() - self.next)
    }
}
