//! The direct `Serializer`: a row's values into the columns of the plan's
//! nodes ([`Ser`] for a value, [`Seq`] for a sequence, tuple or fixed-size
//! array, [`Rec`] for a struct; a variant into its union's record).

use ::serde::ser::{self, Impossible, Serialize};
use arrow_buffer::NullBufferBuilder;
use arrow_schema::Fields;

use super::columns::{Leaf, Offsets};
use super::node::{valid, Kind, Node};
use crate::serde::fast::{PathError, Shape, R};

/// `Serializer` methods for the numbers: `v` pushed to a column of its own
/// type, else converted to the column's by `Leaf::$conv` (`i64`, `u64`,
/// `f64`).
macro_rules! exact {
    ($($method:ident $t:ident $kind:ident $conv:ident;)*) => {$(
        #[inline(always)]
        fn $method(self, v: $t) -> R {
            match self.0.leaf()? {
                Leaf::$kind(b) => {
                    b.push(v);
                    Ok(())
                }
                l => l.$conv(v.into()),
            }
        }
    )*};
}

pub(super) struct Ser<'a>(pub(super) &'a mut Node);

impl<'a> ser::Serializer for Ser<'a> {
    type Ok = ();
    type Error = PathError;
    type SerializeSeq = Seq<'a>;
    type SerializeTuple = Seq<'a>;
    type SerializeTupleStruct = Seq<'a>;
    type SerializeTupleVariant = Seq<'a>;
    type SerializeMap = Impossible<(), PathError>;
    type SerializeStruct = Rec<'a>;
    type SerializeStructVariant = Rec<'a>;

    fn is_human_readable(&self) -> bool {
        false
    }
    #[inline]
    fn serialize_bool(self, v: bool) -> R {
        match self.0.leaf()? {
            Leaf::Bool(b) => b.append(v),
            _ => return Err(PathError::msg("found a bool for a column of another type")),
        }
        Ok(())
    }
    exact! {
        serialize_i8 i8 I8 i64;
        serialize_i16 i16 I16 i64;
        serialize_i32 i32 I32 i64;
        serialize_i64 i64 I64 i64;
        serialize_u8 u8 U8 u64;
        serialize_u16 u16 U16 u64;
        serialize_u32 u32 U32 u64;
        serialize_u64 u64 U64 u64;
        serialize_f32 f32 F32 f64;
        serialize_f64 f64 F64 f64;
    }
    #[inline]
    fn serialize_char(self, v: char) -> R {
        // A char is its code point (serde_arrow traces it as UInt32).
        self.0.leaf()?.u64(u64::from(u32::from(v)))
    }
    #[inline]
    fn serialize_str(self, v: &str) -> R {
        match self.0.leaf()? {
            Leaf::Str { ends, bytes } => {
                bytes.vec.extend_from_slice(v.as_bytes());
                ends.add(v.len())?;
            }
            _ => {
                return Err(PathError::msg(
                    "found a string for a column of another type",
                ))
            }
        }
        Ok(())
    }
    fn serialize_bytes(self, _: &[u8]) -> R {
        Err(PathError::msg("found bytes for a column of another type"))
    }
    fn serialize_none(self) -> R {
        self.0.null()
    }
    #[inline]
    fn serialize_some<T: ?Sized + Serialize>(self, v: &T) -> R {
        v.serialize(self)
    }
    fn serialize_unit(self) -> R {
        Err(PathError::msg("found a unit for a column of another type"))
    }
    fn serialize_unit_struct(self, _: &'static str) -> R {
        self.serialize_unit()
    }
    fn serialize_unit_variant(self, _: &'static str, i: u32, v: &'static str) -> R {
        self.0
            .union(v)?
            .start(i, v, Shape::Unit)
            .map(drop)
            .map_err(|e| e.at(v))
    }
    #[inline]
    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _: &'static str, v: &T) -> R {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        i: u32,
        v: &'static str,
        value: &T,
    ) -> R {
        let rec = self
            .0
            .union(v)?
            .start(i, v, Shape::Newtype)
            .map_err(|e| e.at(v))?;
        let Kind::Record { children, .. } = &mut rec.kind else {
            unreachable!("a variant is a record (UnionPlan::new)")
        };
        value
            .serialize(Ser(&mut children[0]))
            .map_err(|e| e.at("1").at(v))
    }
    #[inline]
    fn serialize_seq(self, _: Option<usize>) -> R<Seq<'a>> {
        let Node { kind, nulls } = self.0;
        let to = match kind {
            Kind::Leaf(_) => {
                return Err(PathError::msg(
                    "found a sequence for a number, bool or string",
                ))
            }
            Kind::List { offsets, item, .. } => SeqTo::List {
                offsets,
                nulls: nulls.as_mut(),
                item,
            },
            Kind::Fixed { n, item, .. } => SeqTo::Fixed { n: *n, item },
            Kind::Record {
                fields, children, ..
            } => SeqTo::Tuple { fields, children },
            Kind::Union(_) => return Err(PathError::msg("found a sequence for an enum with data")),
        };
        Ok(Seq { to, count: 0 })
    }
    #[inline]
    fn serialize_tuple(self, len: usize) -> R<Seq<'a>> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> R<Seq<'a>> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        i: u32,
        v: &'static str,
        _: usize,
    ) -> R<Self::SerializeTupleVariant> {
        let rec = self
            .0
            .union(v)?
            .start(i, v, Shape::Tuple)
            .map_err(|e| e.at(v))?;
        let Kind::Record {
            fields, children, ..
        } = &mut rec.kind
        else {
            unreachable!("a variant is a record (UnionPlan::new)")
        };
        Ok(Seq {
            to: SeqTo::Tuple { fields, children },
            count: 0,
        })
    }
    fn serialize_map(self, _: Option<usize>) -> R<Self::SerializeMap> {
        Err(PathError::msg("found a map for a column of another type"))
    }
    #[inline]
    fn serialize_struct(self, _: &'static str, _: usize) -> R<Rec<'a>> {
        match &mut self.0.kind {
            Kind::Record {
                fields,
                children,
                keys,
            } => Ok(Rec {
                fields,
                children,
                keys,
                next: 0,
            }),
            _ => Err(PathError::msg(
                "found a struct for a column of another type",
            )),
        }
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        i: u32,
        v: &'static str,
        _: usize,
    ) -> R<Self::SerializeStructVariant> {
        let rec = self
            .0
            .union(v)?
            .start(i, v, Shape::Struct)
            .map_err(|e| e.at(v))?;
        let Kind::Record {
            fields,
            children,
            keys,
        } = &mut rec.kind
        else {
            unreachable!("a variant is a record (UnionPlan::new)")
        };
        Ok(Rec {
            fields,
            children,
            keys,
            next: 0,
        })
    }
}

/// A sequence, tuple or array being serialized into a list, a dense array
/// or a tuple's record.
pub(super) struct Seq<'a> {
    to: SeqTo<'a>,
    count: usize,
}

/// Where the elements of a sequence go.
enum SeqTo<'a> {
    List {
        offsets: &'a mut Offsets,
        nulls: Option<&'a mut NullBufferBuilder>,
        item: &'a mut Node,
    },
    Fixed {
        n: usize,
        item: &'a mut Node,
    },
    Tuple {
        fields: &'a Fields,
        children: &'a mut [Node],
    },
}

impl Seq<'_> {
    #[inline]
    fn element<T: ?Sized + Serialize>(&mut self, v: &T) -> R {
        let i = self.count;
        self.count += 1;
        match &mut self.to {
            SeqTo::List { item, .. } => v.serialize(Ser(item)).map_err(|e| e.at("[]")),
            SeqTo::Fixed { item, n } if i < *n => v.serialize(Ser(item)).map_err(|e| e.at("[]")),
            SeqTo::Tuple { children, fields } if i < children.len() => v
                .serialize(Ser(&mut children[i]))
                .map_err(|e| e.at(fields[i].name())),
            _ => Err(PathError::msg(format!(
                "found more than {i} elements for a fixed-size array or tuple"
            ))),
        }
    }
    #[inline]
    fn end(self) -> R {
        match self.to {
            SeqTo::List { offsets, nulls, .. } => {
                offsets.add(self.count)?;
                if let Some(n) = nulls {
                    valid(n);
                }
            }
            SeqTo::Fixed { n, .. } if self.count == n => {}
            SeqTo::Tuple { children, .. } if self.count == children.len() => {}
            SeqTo::Fixed { n, .. } => {
                return Err(PathError::msg(format!(
                    "found {} elements for an array of {n}",
                    self.count
                )))
            }
            SeqTo::Tuple { children, .. } => {
                return Err(PathError::msg(format!(
                    "found {} elements for a tuple of {}",
                    self.count,
                    children.len()
                )))
            }
        }
        Ok(())
    }
}

impl ser::SerializeSeq for Seq<'_> {
    type Ok = ();
    type Error = PathError;
    #[inline]
    fn serialize_element<T: ?Sized + Serialize>(&mut self, v: &T) -> R {
        self.element(v)
    }
    #[inline]
    fn end(self) -> R {
        Seq::end(self)
    }
}
impl ser::SerializeTuple for Seq<'_> {
    type Ok = ();
    type Error = PathError;
    #[inline]
    fn serialize_element<T: ?Sized + Serialize>(&mut self, v: &T) -> R {
        self.element(v)
    }
    #[inline]
    fn end(self) -> R {
        Seq::end(self)
    }
}
impl ser::SerializeTupleVariant for Seq<'_> {
    type Ok = ();
    type Error = PathError;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, v: &T) -> R {
        self.element(v)
    }
    fn end(self) -> R {
        Seq::end(self)
    }
}
impl ser::SerializeTupleStruct for Seq<'_> {
    type Ok = ();
    type Error = PathError;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, v: &T) -> R {
        self.element(v)
    }
    #[inline]
    fn end(self) -> R {
        Seq::end(self)
    }
}

/// A struct being serialized into a record: fields in the traced order;
/// a skipped optional field is null.
pub(super) struct Rec<'a> {
    fields: &'a Fields,
    children: &'a mut [Node],
    keys: &'a mut [Option<&'static str>],
    next: usize,
}

impl Rec<'_> {
    /// The index of field `key`, at or after the next one (the fields
    /// come in the traced order; skipped ones are null).
    #[cold]
    fn find(&mut self, key: &'static str) -> R<usize> {
        let at = self
            .fields
            .iter()
            .skip(self.next)
            .position(|f| f.name() == key)
            .map(|k| k + self.next)
            .ok_or_else(|| {
                PathError::msg(format!(
                    "field `{key}` is not a traced field here (or comes out of order)"
                ))
            })?;
        self.keys[at] = Some(key);
        for j in self.next..at {
            self.children[j]
                .null()
                .map_err(|e| e.at(self.fields[j].name()))?;
        }
        Ok(at)
    }
}

impl ser::SerializeStructVariant for Rec<'_> {
    type Ok = ();
    type Error = PathError;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, v: &T) -> R {
        ser::SerializeStruct::serialize_field(self, key, v)
    }
    fn skip_field(&mut self, _: &'static str) -> R {
        Ok(())
    }
    fn end(self) -> R {
        ser::SerializeStruct::end(self)
    }
}

impl ser::SerializeStruct for Rec<'_> {
    type Ok = ();
    type Error = PathError;
    #[inline]
    fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, v: &T) -> R {
        let at = match self.keys.get(self.next) {
            Some(Some(k)) if std::ptr::eq(*k, key) => self.next,
            _ => self.find(key)?,
        };
        self.next = at + 1;
        v.serialize(Ser(&mut self.children[at]))
            .map_err(|e| e.at(key))
    }
    fn skip_field(&mut self, _: &'static str) -> R {
        Ok(())
    }
    #[inline]
    fn end(self) -> R {
        if self.next == self.children.len() {
            return Ok(());
        }
        for j in self.next..self.children.len() {
            self.children[j]
                .null()
                .map_err(|e| e.at(self.fields[j].name()))?;
        }
        Ok(())
    }
}
