//! The merged shape of JSON-like data, built while a serde deserializer streams through it (JSON,
//! JSONL, YAML): types seen, object keys with how often each appears (so optional keys show),
//! array items merged, to a bounded depth and key count. Nothing of the document is kept.

use std::fmt;

use indexmap::IndexMap;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value, json};

/// Nesting shown; deeper values count only as their type.
const MAX_DEPTH: usize = 6;
/// Keys kept per object shape; more are counted, not listed.
const MAX_KEYS: usize = 200;

const NULL: u8 = 1;
const BOOLEAN: u8 = 2;
const INTEGER: u8 = 4;
const NUMBER: u8 = 8;
const STRING: u8 = 16;
const ARRAY: u8 = 32;
const OBJECT: u8 = 64;
const NAMES: [(u8, &str); 7] = [
    (OBJECT, "object"),
    (ARRAY, "array"),
    (STRING, "string"),
    (INTEGER, "integer"),
    (NUMBER, "number"),
    (BOOLEAN, "boolean"),
    (NULL, "null"),
];

#[derive(Debug, Default, Clone)]
pub struct Shape {
    /// Values seen here.
    pub seen: u64,
    types: u8,
    /// Objects seen here (the denominator for optional keys).
    objects: u64,
    keys: IndexMap<String, Shape>,
    more_keys: bool,
    /// Items of every array seen here, merged.
    items: Option<Box<Shape>>,
    /// Items of arrays seen here, in all.
    item_count: u64,
}

impl Shape {
    /// Deserializes one value into this shape.
    pub fn seed(&mut self, depth: usize) -> ShapeSeed<'_> {
        ShapeSeed { shape: self, depth }
    }

    /// The items of the top-level array, when the value was one.
    pub fn item_count(&self) -> u64 {
        self.item_count
    }

    fn type_names(&self) -> Vec<&'static str> {
        NAMES
            .iter()
            .filter(|(bit, _)| self.types & bit != 0)
            .map(|(_, name)| *name)
            .collect()
    }

    /// The shape as JSON: `{type, keys?, items?, optional?}`.
    pub fn to_json(&self) -> Value {
        let names = self.type_names();
        let mut out = Map::new();
        out.insert(
            "type".into(),
            match names.as_slice() {
                [] => Value::from("unknown"),
                [one] => Value::from(*one),
                many => json!(many),
            },
        );
        if !self.keys.is_empty() {
            let keys: Map<String, Value> = self
                .keys
                .iter()
                .map(|(k, v)| {
                    let mut field = v.to_json();
                    if v.seen < self.objects {
                        field["optional"] = Value::Bool(true);
                    }
                    (k.clone(), field)
                })
                .collect();
            out.insert("keys".into(), Value::Object(keys));
        }
        if self.more_keys {
            out.insert("more_keys".into(), Value::Bool(true));
        }
        if let Some(items) = &self.items {
            out.insert("items".into(), items.to_json());
        }
        Value::Object(out)
    }

    /// A compact one-line rendering: `{id: integer, email?: string|null, tags: [string]}`.
    pub fn render(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        if self.types & OBJECT != 0 {
            let mut fields: Vec<String> = self
                .keys
                .iter()
                .map(|(k, v)| {
                    let mark = if v.seen < self.objects { "?" } else { "" };
                    format!("{k}{mark}: {}", v.render())
                })
                .collect();
            if self.more_keys {
                fields.push("...".into());
            }
            parts.push(format!("{{{}}}", fields.join(", ")));
        }
        if self.types & ARRAY != 0 {
            parts.push(match &self.items {
                Some(items) => format!("[{}]", items.render()),
                None => "[]".into(),
            });
        }
        for (bit, name) in NAMES.iter().skip(2) {
            if self.types & bit != 0 {
                parts.push((*name).into());
            }
        }
        if parts.is_empty() {
            "unknown".into()
        } else {
            parts.join("|")
        }
    }
}

pub struct ShapeSeed<'a> {
    shape: &'a mut Shape,
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for ShapeSeed<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl ShapeSeed<'_> {
    fn mark(&mut self, bit: u8) {
        self.shape.seen += 1;
        self.shape.types |= bit;
    }
}

impl<'de> Visitor<'de> for ShapeSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any value")
    }
    fn visit_unit<E>(mut self) -> Result<(), E> {
        self.mark(NULL);
        Ok(())
    }
    fn visit_none<E>(mut self) -> Result<(), E> {
        self.mark(NULL);
        Ok(())
    }
    fn visit_bool<E>(mut self, _: bool) -> Result<(), E> {
        self.mark(BOOLEAN);
        Ok(())
    }
    fn visit_i64<E>(mut self, _: i64) -> Result<(), E> {
        self.mark(INTEGER);
        Ok(())
    }
    fn visit_u64<E>(mut self, _: u64) -> Result<(), E> {
        self.mark(INTEGER);
        Ok(())
    }
    fn visit_f64<E>(mut self, _: f64) -> Result<(), E> {
        self.mark(NUMBER);
        Ok(())
    }
    fn visit_str<E>(mut self, _: &str) -> Result<(), E> {
        self.mark(STRING);
        Ok(())
    }
    fn visit_bytes<E>(mut self, _: &[u8]) -> Result<(), E> {
        self.mark(STRING);
        Ok(())
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        self.mark(ARRAY);
        if self.depth >= MAX_DEPTH {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            return Ok(());
        }
        let items = self.shape.items.get_or_insert_with(Box::default);
        let mut n = 0;
        while seq.next_element_seed(items.seed(self.depth + 1))?.is_some() {
            n += 1;
        }
        self.shape.item_count += n;
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        self.mark(OBJECT);
        self.shape.objects += 1;
        if self.depth >= MAX_DEPTH {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            return Ok(());
        }
        while let Some(key) = map.next_key::<KeyText>()? {
            let key = key.0;
            if !self.shape.keys.contains_key(&key) && self.shape.keys.len() >= MAX_KEYS {
                self.shape.more_keys = true;
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            let field = self.shape.keys.entry(key).or_default();
            map.next_value_seed(field.seed(self.depth + 1))?;
        }
        Ok(())
    }
}

/// A map key as text, whatever its type (YAML allows numbers and booleans as keys).
struct KeyText(String);

impl<'de> serde::Deserialize<'de> for KeyText {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = KeyText;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E>(self, v: &str) -> Result<KeyText, E> {
                Ok(KeyText(v.to_owned()))
            }
            fn visit_bool<E>(self, v: bool) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_i64<E>(self, v: i64) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_u64<E>(self, v: u64) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_f64<E>(self, v: f64) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_unit<E>(self) -> Result<KeyText, E> {
                Ok(KeyText("null".into()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<KeyText, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(KeyText("[complex key]".into()))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<KeyText, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(KeyText("{complex key}".into()))
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optional_keys_and_merged_items() {
        let text = r#"[{"id": 1, "tags": ["a"], "email": "x@y"}, {"id": 2.5, "tags": [], "email": null}, {"id": 3}]"#;
        let mut shape = Shape::default();
        let mut de = serde_json::Deserializer::from_str(text);
        shape.seed(0).deserialize(&mut de).unwrap();
        assert_eq!(shape.item_count(), 3);
        assert_eq!(
            shape.render(),
            "[{id: integer|number, tags?: [string], email?: string|null}]"
        );
        let json = shape.to_json();
        assert_eq!(json["items"]["keys"]["email"]["optional"], true);
        assert_eq!(
            json["items"]["keys"]["id"]["type"],
            json!(["integer", "number"])
        );
        assert!(json["items"]["keys"]["id"].get("optional").is_none());
    }

    #[test]
    fn depth_and_key_count_are_bounded() {
        let deep = "[".repeat(20) + &"]".repeat(20);
        let mut shape = Shape::default();
        shape
            .seed(0)
            .deserialize(&mut serde_json::Deserializer::from_str(&deep))
            .unwrap();
        assert!(shape.render().matches('[').count() <= MAX_DEPTH + 1);
        let wide: String = format!(
            "{{{}}}",
            (0..1000)
                .map(|i| format!("\"k{i}\": {i}"))
                .collect::<Vec<_>>()
                .join(",")
        );
        let mut shape = Shape::default();
        shape
            .seed(0)
            .deserialize(&mut serde_json::Deserializer::from_str(&wide))
            .unwrap();
        assert_eq!(shape.keys.len(), MAX_KEYS);
        assert_eq!(shape.to_json()["more_keys"], true);
    }
}
