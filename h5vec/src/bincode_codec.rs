//! The only file that calls bincode (2.0.1, `config::standard()`), so
//! another serde codec can replace it by changing this file alone.
//! bincode is unmaintained (RUSTSEC-2025-0141).
//!
//! Decoding is bounded by the encoded bytes themselves (SPEC.md, section
//! 7): strings and byte buffers are taken from the input slice before
//! anything is allocated for them (a length larger than the bytes left is
//! an error, not an allocation), the memory a value decodes to is counted
//! as bincode's own limit counts it (the size of every element, the bytes
//! of every string) against [`limits::blob_budget`] of its length, and
//! containers nest at most [`limits::MAX_BLOB_DEPTH`] deep, so a hostile
//! value neither exhausts memory nor overflows the stack. bincode's own
//! limit is a compile-time constant; these checks wrap its serde
//! deserializer instead.

use std::cell::Cell;
use std::fmt;

use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess,
    VariantAccess, Visitor,
};
use serde::Serialize;

use crate::limits;

/// Appends the encoding of `value` to `out`.
pub(crate) fn encode_into<T: Serialize>(value: &T, out: &mut Vec<u8>) -> Result<(), String> {
    bincode::serde::encode_into_std_write(value, out, bincode::config::standard())
        .map(drop)
        .map_err(|e| e.to_string())
}

/// Decodes one value that must use all of `bytes`, within the bounds of
/// the module documentation.
pub(crate) fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
    let st = State {
        depth: Cell::new(0),
        used: Cell::new(0),
        budget: limits::blob_budget(bytes.len()),
    };
    let seed = Seed::<T> {
        t: std::marker::PhantomData,
        st: &st,
    };
    let (v, used) =
        bincode::serde::seed_decode_from_slice(seed, bytes, bincode::config::standard())
            .map_err(|e| e.to_string())?;
    if used != bytes.len() {
        return Err(format!(
            "{} trailing bytes after the value",
            bytes.len() - used
        ));
    }
    Ok(v)
}

/// What one decode has spent.
struct State {
    depth: Cell<usize>,
    used: Cell<u64>,
    budget: u64,
}

impl State {
    /// Counts `n` bytes of decoded memory against the budget.
    fn claim<E: de::Error>(&self, n: usize) -> Result<(), E> {
        let used = self.used.get().saturating_add(n as u64);
        self.used.set(used);
        if used > self.budget {
            return Err(E::custom(format_args!(
                "the value decodes to more than {} bytes of memory, the limit for a blob of this \
                 length (SPEC.md, section 7)",
                self.budget
            )));
        }
        Ok(())
    }

    /// Enters one level of nesting; the level is left when the guard drops.
    fn enter<E: de::Error>(&self) -> Result<Level<'_>, E> {
        let d = self.depth.get() + 1;
        if d > limits::MAX_BLOB_DEPTH {
            return Err(E::custom(format_args!(
                "the value nests more than {} levels deep (SPEC.md, section 7)",
                limits::MAX_BLOB_DEPTH
            )));
        }
        self.depth.set(d);
        Ok(Level(&self.depth))
    }
}

/// One level of nesting, left on drop.
struct Level<'s>(&'s Cell<usize>);

impl Drop for Level<'_> {
    fn drop(&mut self) {
        self.0.set(self.0.get() - 1);
    }
}

/// Deserializes a whole `T` through a [`Guard`].
struct Seed<'s, T> {
    t: std::marker::PhantomData<T>,
    st: &'s State,
}

impl<'de, T: de::Deserialize<'de>> DeserializeSeed<'de> for Seed<'_, T> {
    type Value = T;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<T, D::Error> {
        T::deserialize(Guard { de: d, st: self.st })
    }
}

/// An inner seed (an element, key, value or variant) through a [`Guard`],
/// its decoded size counted.
struct Inner<'s, S> {
    seed: S,
    st: &'s State,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Inner<'_, S> {
    type Value = S::Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        // At least one unit per value: a sequence of zero-sized elements
        // takes no bytes, but each one takes time.
        self.st
            .claim::<D::Error>(std::mem::size_of::<S::Value>().max(1))?;
        self.seed.deserialize(Guard { de: d, st: self.st })
    }
}

/// A deserializer that counts nesting and hands out only guarded visitors.
struct Guard<'s, D> {
    de: D,
    st: &'s State,
}

/// A visitor whose nested deserializers and accesses are guarded.
/// `owned`: the caller asked for an owned string or byte buffer, which the
/// guard reads borrowed (bounded by the input) and copies.
struct Wrap<'s, V> {
    v: V,
    st: &'s State,
    owned: bool,
}

macro_rules! forward_plain {
    ($($method:ident),* $(,)?) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
            self.de.$method(Wrap { v: visitor, st: self.st, owned: false })
        }
    )*};
}

macro_rules! forward_nested {
    ($($method:ident),* $(,)?) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
            let _level = self.st.enter::<D::Error>()?;
            self.de.$method(Wrap { v: visitor, st: self.st, owned: false })
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Guard<'_, D> {
    type Error = D::Error;

    forward_plain!(
        deserialize_any,
        deserialize_bool,
        deserialize_i8,
        deserialize_i16,
        deserialize_i32,
        deserialize_i64,
        deserialize_i128,
        deserialize_u8,
        deserialize_u16,
        deserialize_u32,
        deserialize_u64,
        deserialize_u128,
        deserialize_f32,
        deserialize_f64,
        deserialize_char,
        deserialize_str,
        deserialize_bytes,
        deserialize_unit,
        deserialize_identifier,
        deserialize_ignored_any,
    );
    forward_nested!(deserialize_option, deserialize_seq, deserialize_map);

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.de.deserialize_str(Wrap {
            v: visitor,
            st: self.st,
            owned: true,
        })
    }
    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.de.deserialize_bytes(Wrap {
            v: visitor,
            st: self.st,
            owned: true,
        })
    }
    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.de
            .deserialize_unit_struct(name, wrap(self.st, visitor))
    }
    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        let _level = self.st.enter::<D::Error>()?;
        self.de
            .deserialize_newtype_struct(name, wrap(self.st, visitor))
    }
    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        let _level = self.st.enter::<D::Error>()?;
        self.de.deserialize_tuple(len, wrap(self.st, visitor))
    }
    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        let _level = self.st.enter::<D::Error>()?;
        self.de
            .deserialize_tuple_struct(name, len, wrap(self.st, visitor))
    }
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        let _level = self.st.enter::<D::Error>()?;
        self.de
            .deserialize_struct(name, fields, wrap(self.st, visitor))
    }
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        let _level = self.st.enter::<D::Error>()?;
        self.de
            .deserialize_enum(name, variants, wrap(self.st, visitor))
    }
    fn is_human_readable(&self) -> bool {
        self.de.is_human_readable()
    }
}

/// `v` guarded, for a value that is not an owned string or byte buffer.
fn wrap<V>(st: &State, v: V) -> Wrap<'_, V> {
    Wrap {
        v,
        st,
        owned: false,
    }
}

macro_rules! visit_plain {
    ($($method:ident: $t:ty),* $(,)?) => {$(
        fn $method<E: de::Error>(self, x: $t) -> Result<V::Value, E> {
            self.v.$method(x)
        }
    )*};
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Wrap<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.v.expecting(f)
    }

    visit_plain!(
        visit_bool: bool,
        visit_i8: i8,
        visit_i16: i16,
        visit_i32: i32,
        visit_i64: i64,
        visit_i128: i128,
        visit_u8: u8,
        visit_u16: u16,
        visit_u32: u32,
        visit_u64: u64,
        visit_u128: u128,
        visit_f32: f32,
        visit_f64: f64,
        visit_char: char,
    );

    fn visit_str<E: de::Error>(self, s: &str) -> Result<V::Value, E> {
        self.st.claim::<E>(s.len())?;
        if self.owned {
            self.v.visit_string(s.to_owned())
        } else {
            self.v.visit_str(s)
        }
    }
    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<V::Value, E> {
        self.st.claim::<E>(s.len())?;
        if self.owned {
            self.v.visit_string(s.to_owned())
        } else {
            self.v.visit_borrowed_str(s)
        }
    }
    fn visit_string<E: de::Error>(self, s: String) -> Result<V::Value, E> {
        self.st.claim::<E>(s.len())?;
        self.v.visit_string(s)
    }
    fn visit_bytes<E: de::Error>(self, b: &[u8]) -> Result<V::Value, E> {
        self.st.claim::<E>(b.len())?;
        if self.owned {
            self.v.visit_byte_buf(b.to_vec())
        } else {
            self.v.visit_bytes(b)
        }
    }
    fn visit_borrowed_bytes<E: de::Error>(self, b: &'de [u8]) -> Result<V::Value, E> {
        self.st.claim::<E>(b.len())?;
        if self.owned {
            self.v.visit_byte_buf(b.to_vec())
        } else {
            self.v.visit_borrowed_bytes(b)
        }
    }
    fn visit_byte_buf<E: de::Error>(self, b: Vec<u8>) -> Result<V::Value, E> {
        self.st.claim::<E>(b.len())?;
        self.v.visit_byte_buf(b)
    }
    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.v.visit_none()
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.v.visit_some(Guard { de: d, st: self.st })
    }
    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.v.visit_unit()
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.v.visit_newtype_struct(Guard { de: d, st: self.st })
    }
    fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<V::Value, A::Error> {
        self.v.visit_seq(Access { a, st: self.st })
    }
    fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<V::Value, A::Error> {
        self.v.visit_map(Access { a, st: self.st })
    }
    fn visit_enum<A: EnumAccess<'de>>(self, a: A) -> Result<V::Value, A::Error> {
        self.v.visit_enum(Access { a, st: self.st })
    }
}

/// A guarded sequence, map, enum or variant access.
struct Access<'s, A> {
    a: A,
    st: &'s State,
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Access<'_, A> {
    type Error = A::Error;
    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, A::Error> {
        self.a.next_element_seed(Inner { seed, st: self.st })
    }
    fn size_hint(&self) -> Option<usize> {
        self.a.size_hint()
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Access<'_, A> {
    type Error = A::Error;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        self.a.next_key_seed(Inner { seed, st: self.st })
    }
    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        self.a.next_value_seed(Inner { seed, st: self.st })
    }
    fn size_hint(&self) -> Option<usize> {
        self.a.size_hint()
    }
}

impl<'de, 's, A: EnumAccess<'de>> EnumAccess<'de> for Access<'s, A> {
    type Error = A::Error;
    type Variant = Access<'s, A::Variant>;
    fn variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<(S::Value, Self::Variant), A::Error> {
        let (v, rest) = self.a.variant_seed(Inner { seed, st: self.st })?;
        Ok((
            v,
            Access {
                a: rest,
                st: self.st,
            },
        ))
    }
}

impl<'de, A: VariantAccess<'de>> VariantAccess<'de> for Access<'_, A> {
    type Error = A::Error;
    fn unit_variant(self) -> Result<(), A::Error> {
        self.a.unit_variant()
    }
    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<S::Value, A::Error> {
        let _level = self.st.enter::<A::Error>()?;
        self.a.newtype_variant_seed(Inner { seed, st: self.st })
    }
    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, A::Error> {
        let _level = self.st.enter::<A::Error>()?;
        self.a.tuple_variant(
            len,
            Wrap {
                v: visitor,
                st: self.st,
                owned: false,
            },
        )
    }
    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        let _level = self.st.enter::<A::Error>()?;
        self.a.struct_variant(
            fields,
            Wrap {
                v: visitor,
                st: self.st,
                owned: false,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
    struct Nest(Option<Box<Nest>>);

    #[test]
    fn round_trips_through_the_guard() {
        #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
        enum E {
            A,
            B(u8),
            C { x: String, y: Vec<u64> },
            D(i8, f64),
        }
        type Row = (
            E,
            Option<String>,
            Vec<u8>,
            std::collections::BTreeMap<String, i128>,
        );
        let v: Vec<Row> = vec![
            (E::A, None, vec![], Default::default()),
            (
                E::B(7),
                Some("é".into()),
                vec![0, 255],
                [("k".into(), -5)].into(),
            ),
            (
                E::C {
                    x: "x".repeat(300),
                    y: vec![u64::MAX, 0],
                },
                Some(String::new()),
                vec![1; 1000],
                Default::default(),
            ),
            (E::D(-1, -0.0), None, vec![], Default::default()),
        ];
        let mut b = Vec::new();
        encode_into(&v, &mut b).unwrap();
        assert_eq!(decode::<Vec<Row>>(&b).unwrap(), v);
    }

    #[test]
    fn a_string_claiming_2_pow_40_bytes_is_an_error() {
        // varint 0xFD then a u64: the length, with 3 bytes after it.
        let mut b = vec![0xFD];
        b.extend_from_slice(&(1u64 << 40).to_le_bytes());
        b.extend_from_slice(b"abc");
        let e = decode::<String>(&b).unwrap_err();
        assert!(e.contains("UnexpectedEnd"), "{e}");
        let e = decode::<Vec<u8>>(&b).unwrap_err();
        assert!(e.contains("UnexpectedEnd") || e.contains("limit"), "{e}");
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let mut b = vec![1u8; 100_000];
        b.push(0);
        let e = decode::<Nest>(&b).unwrap_err();
        assert!(e.contains("nests more than 256 levels"), "{e}");
        // Within the limit it decodes (two levels per `Nest`: the newtype
        // and the option), on a test thread's 2 MiB stack.
        let mut b = vec![1u8; 128];
        b.push(0);
        assert!(decode::<Nest>(&b).unwrap_err().contains("nests more than"));
        let mut b = vec![1u8; 127];
        b.push(0);
        assert!(decode::<Nest>(&b).is_ok());
        let mut b = vec![1u8; 100];
        b.push(0);
        let mut n = decode::<Nest>(&b).unwrap();
        let mut depth = 0;
        while let Some(inner) = n.0 {
            n = *inner;
            depth += 1;
        }
        assert_eq!(depth, 100);
    }

    #[test]
    fn zero_sized_elements_stop_at_the_budget() {
        // Vec<()> claiming 2^62 elements in 9 bytes.
        let mut b = vec![0xFD];
        b.extend_from_slice(&(1u64 << 62).to_le_bytes());
        let t = std::time::Instant::now();
        let e = decode::<Vec<()>>(&b).unwrap_err();
        assert!(e.contains("bytes of memory"), "{e}");
        assert!(t.elapsed().as_secs() < 10);
        // Large elements that encode in one byte each count their size.
        let mut b = vec![0xFD];
        b.extend_from_slice(&(1u64 << 40).to_le_bytes());
        b.extend(std::iter::repeat_n(0u8, 1 << 20));
        let e = decode::<Vec<Option<[u64; 32]>>>(&b).unwrap_err();
        assert!(e.contains("bytes of memory"), "{e}");
    }
}
