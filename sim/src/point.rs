//! Parameter points as `key=value,key=value` text, through serde.
//!
//! Every block's parameter struct derives `Serialize`/`Deserialize`; this
//! module turns such a struct into the point text that `exanet cosim BLOCK
//! --point` takes, each run prints and `OUT/manifest.json` records, and
//! back. Keys are the field names in field order; a field that is itself a
//! struct contributes its own fields in place (so `RouterParams`'s
//! `topology` gives `dims`, `wrap`, `local_ports`). Values are integers,
//! booleans or text: a field with a special syntax (`dims=8x4x4`,
//! `wrap=ttt`, `dim_order=zyx`) serializes as a string through serde `with`.
//!
//! Parsing starts from a base value (usually the block's defaults): a key
//! missing from the text keeps the base's value, an unknown key is an
//! error naming the known ones, and a bad value names its key and value.

use anyhow::Result;
use serde::de::{self, DeserializeOwned, IntoDeserializer, Visitor};
use serde::ser::{self, Impossible, Serialize};
use std::fmt::{self, Display};

/// The point text of `value`: `key=value` for every field, in field order.
pub fn to_text<T: Serialize>(value: &T) -> String {
    pairs(value)
        .expect("a parameter struct of scalar fields")
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Parse `text` (`key=value,...`, spaces around items allowed, a repeated
/// key's last value wins) over `base`: keys not in `text` keep `base`'s value.
pub fn from_text<T: Serialize + DeserializeOwned>(text: &str, base: &T) -> Result<T> {
    let mut pool = pairs(base)?;
    for (k, v) in items(text)? {
        match pool.iter_mut().find(|(key, _)| *key == k) {
            Some(slot) => slot.1 = v.to_string(),
            None => {
                let known: Vec<&str> = pool.iter().map(|(key, _)| *key).collect();
                anyhow::bail!(
                    "unknown point key `{k}` (value `{v}`); known keys: {}",
                    known.join(", ")
                );
            }
        }
    }
    Ok(T::deserialize(Fields {
        pool: &pool,
        key: "",
    })?)
}

/// The `(key, value)` items of point text, in order, spaces trimmed;
/// an item without `=` is an error.
pub fn items(text: &str) -> Result<Vec<(&str, &str)>> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|item| {
            let (k, v) = item
                .split_once('=')
                .ok_or_else(|| anyhow::anyhow!("point item `{item}` is not key=value"))?;
            Ok((k.trim(), v.trim()))
        })
        .collect()
}

/// Parse `text` over `T`'s defaults (see [`from_text`]).
pub fn parse<T: Serialize + DeserializeOwned + Default>(text: &str) -> Result<T> {
    from_text(text, &T::default())
}

/// The keys and value texts of `value`, flattened, in field order.
fn pairs<T: Serialize>(value: &T) -> Result<Vec<(&'static str, String)>, Error> {
    let mut out = Vec::new();
    value.serialize(Flat {
        key: None,
        out: &mut out,
    })?;
    Ok(out)
}

/// A codec error (wrapped into `anyhow` at the boundary).
#[derive(Debug)]
pub struct Error(String);

impl Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<M: Display>(msg: M) -> Self {
        Error(msg.to_string())
    }
}

impl de::Error for Error {
    fn custom<M: Display>(msg: M) -> Self {
        Error(msg.to_string())
    }
}

/// Serializer of one struct field (`key`) or of the top-level struct.
struct Flat<'a> {
    key: Option<&'static str>,
    out: &'a mut Vec<(&'static str, String)>,
}

impl Flat<'_> {
    fn push(self, text: String) -> Result<(), Error> {
        let key = self
            .key
            .ok_or_else(|| Error("a point is a struct of fields, not a bare value".into()))?;
        self.out.push((key, text));
        Ok(())
    }

    fn unsupported(&self, what: &str) -> Error {
        Error(format!(
            "point key `{}`: {what} have no point syntax (give the field a `with` text form)",
            self.key.unwrap_or("")
        ))
    }
}

macro_rules! scalars {
    ($($f:ident: $t:ty),*) => {$(
        fn $f(self, v: $t) -> Result<(), Error> {
            self.push(v.to_string())
        }
    )*};
}

impl<'a> ser::Serializer for Flat<'a> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Impossible<(), Error>;
    type SerializeTuple = Impossible<(), Error>;
    type SerializeTupleStruct = Impossible<(), Error>;
    type SerializeTupleVariant = Impossible<(), Error>;
    type SerializeMap = Impossible<(), Error>;
    type SerializeStruct = Self;
    type SerializeStructVariant = Impossible<(), Error>;

    scalars!(serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32,
        serialize_i64: i64, serialize_u8: u8, serialize_u16: u16, serialize_u32: u32,
        serialize_u64: u64, serialize_f32: f32, serialize_f64: f64, serialize_char: char,
        serialize_str: &str);

    fn serialize_bytes(self, _: &[u8]) -> Result<(), Error> {
        Err(self.unsupported("bytes"))
    }
    fn serialize_none(self) -> Result<(), Error> {
        Ok(())
    }
    fn serialize_some<T: ?Sized + Serialize>(self, v: &T) -> Result<(), Error> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Error> {
        Err(self.unsupported("units"))
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Error> {
        Err(self.unsupported("units"))
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, v: &'static str) -> Result<(), Error> {
        self.push(v.to_string())
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<(), Error> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), Error> {
        Err(self.unsupported("enum variants with data"))
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(self.unsupported("lists"))
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Error> {
        Err(self.unsupported("lists"))
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, Error> {
        Err(self.unsupported("lists"))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(self.unsupported("enum variants with data"))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(self.unsupported("maps"))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, Error> {
        Ok(self)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(self.unsupported("enum variants with data"))
    }
}

impl ser::SerializeStruct for Flat<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), Error> {
        v.serialize(Flat {
            key: Some(key),
            out: self.out,
        })
    }
    fn end(self) -> Result<(), Error> {
        Ok(())
    }
}

/// Deserializer of a struct (the top level, or the nested field `key`)
/// whose scalar fields are in `pool`.
#[derive(Clone, Copy)]
struct Fields<'a> {
    pool: &'a [(&'static str, String)],
    key: &'static str,
}

impl<'de> de::Deserializer<'de> for Fields<'_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Error> {
        Err(Error(format!("point key `{}` is missing", self.key)))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_map(FieldAccess {
            pool: self.pool,
            fields,
            next: 0,
        })
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct seq tuple
        tuple_struct map enum identifier ignored_any
    }
}

/// The fields of one struct, in declaration order.
struct FieldAccess<'a> {
    pool: &'a [(&'static str, String)],
    fields: &'static [&'static str],
    next: usize,
}

impl<'de> de::MapAccess<'de> for FieldAccess<'_> {
    type Error = Error;

    fn next_key_seed<K: de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        match self.fields.get(self.next) {
            None => Ok(None),
            Some(&f) => seed.deserialize(f.into_deserializer()).map(Some),
        }
    }

    fn next_value_seed<V: de::DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let key = self.fields[self.next];
        self.next += 1;
        match self.pool.iter().find(|(k, _)| *k == key) {
            Some((_, text)) => seed
                .deserialize(Text(text))
                .map_err(|e| Error(format!("point key `{key}`: {e}"))),
            // Not a scalar of the point: a nested struct's fields are in the pool.
            None => seed.deserialize(Fields {
                pool: self.pool,
                key,
            }),
        }
    }
}

/// Deserializer of one value's text; the type asked for decides the parse.
struct Text<'a>(&'a str);

impl Text<'_> {
    fn unsigned(&self) -> Result<u64, Error> {
        self.0
            .parse()
            .map_err(|_| Error(format!("`{}` is not a non-negative integer", self.0)))
    }

    fn signed(&self) -> Result<i64, Error> {
        self.0
            .parse()
            .map_err(|_| Error(format!("`{}` is not an integer", self.0)))
    }

    fn out_of_range(&self) -> Error {
        Error(format!("{} is out of range", self.0))
    }
}

macro_rules! integers {
    ($($f:ident: $t:ty, $visit:ident, $parse:ident;)*) => {$(
        fn $f<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            let v = <$t>::try_from(self.$parse()?).map_err(|_| self.out_of_range())?;
            visitor.$visit(v)
        }
    )*};
}

impl<'de> de::Deserializer<'de> for Text<'_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_str(self.0)
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            "true" => visitor.visit_bool(true),
            "false" => visitor.visit_bool(false),
            v => Err(Error(format!("`{v}` is not true or false"))),
        }
    }

    integers! {
        deserialize_u8: u8, visit_u8, unsigned;
        deserialize_u16: u16, visit_u16, unsigned;
        deserialize_u32: u32, visit_u32, unsigned;
        deserialize_u64: u64, visit_u64, unsigned;
        deserialize_i8: i8, visit_i8, signed;
        deserialize_i16: i16, visit_i16, signed;
        deserialize_i32: i32, visit_i32, signed;
        deserialize_i64: i64, visit_i64, signed;
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let v = self
            .0
            .parse()
            .map_err(|_| Error(format!("`{}` is not a number", self.0)))?;
        visitor.visit_f64(v)
    }

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_f64(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.0
            .into_deserializer()
            .deserialize_enum(name, variants, visitor)
    }

    serde::forward_to_deserialize_any! {
        i128 u128 char str string bytes byte_buf unit unit_struct seq tuple
        tuple_struct map struct identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::{Deserialize, Serialize};

    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Inner {
        size: u32,
        #[serde(with = "crate::topology::dims_text")]
        dims: [usize; 3],
    }

    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Outer {
        inner: Inner,
        on: bool,
        depth: u8,
    }

    fn base() -> Outer {
        Outer {
            inner: Inner {
                size: 7,
                dims: [8, 4, 4],
            },
            on: true,
            depth: 3,
        }
    }

    #[test]
    fn nested_fields_print_in_place_and_parse_back() {
        let b = base();
        assert_eq!(to_text(&b), "size=7,dims=8x4x4,on=true,depth=3");
        assert_eq!(from_text("", &b).unwrap(), b);
        let p = from_text(" depth=9, dims=2x1x1,depth=5 ", &b).unwrap();
        assert_eq!(p.depth, 5);
        assert_eq!(p.inner.dims, [2, 1, 1]);
        assert_eq!(to_text(&p), "size=7,dims=2x1x1,on=true,depth=5");
    }

    #[test]
    fn errors_name_the_key_and_value() {
        let e = |t: &str| from_text(t, &base()).unwrap_err().to_string();
        let m = e("deep=3");
        assert!(
            m.contains("`deep`") && m.contains("size, dims, on, depth"),
            "{m}"
        );
        assert!(e("depth").contains("not key=value"));
        assert_eq!(
            e("depth=x"),
            "point key `depth`: `x` is not a non-negative integer"
        );
        assert_eq!(e("depth=300"), "point key `depth`: 300 is out of range");
        assert_eq!(e("on=yes"), "point key `on`: `yes` is not true or false");
        assert!(e("dims=4x4").contains("point key `dims`: `4x4`"));
    }
}
