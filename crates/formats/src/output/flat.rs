//! Flattening one row of a JSON text straight into cells, without building a `serde_json::Map`
//! (an IndexMap per row was most of the cost of storing large tables). Produces exactly the
//! cells `table::row_cells` produces from a `Value` (checked by the formats tests).

use std::fmt;

use indexmap::IndexSet;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use super::skip::Skip;
use serde_json::Value;

/// A flattened leaf: its dotted column name and its text (None = null, an empty cell).
pub struct Leaf {
    pub name: String,
    pub text: Option<String>,
    pub kind: &'static str,
}

/// Deserializes one row (an object) into its leaves; `Err` when the element is not an object.
pub struct RowSeed<'a> {
    pub leaves: &'a mut Vec<Leaf>,
}

impl<'de> DeserializeSeed<'de> for RowSeed<'_> {
    type Value = bool;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_any(RowVisitor {
            leaves: self.leaves,
            prefix: String::new(),
        })
    }
}

struct RowVisitor<'a> {
    leaves: &'a mut Vec<Leaf>,
    prefix: String,
}

impl<'de> Visitor<'de> for RowVisitor<'_> {
    /// true when the value was an object.
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a row")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            let name = if self.prefix.is_empty() {
                key
            } else {
                format!("{}.{key}", self.prefix)
            };
            map.next_value_seed(CellSeed {
                leaves: self.leaves,
                name,
            })?;
        }
        Ok(true)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        while seq.next_element::<Skip>()?.is_some() {}
        Ok(false)
    }
    fn visit_bool<E>(self, _: bool) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_i64<E>(self, _: i64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_u64<E>(self, _: u64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_f64<E>(self, _: f64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_str<E>(self, _: &str) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_unit<E>(self) -> Result<bool, E> {
        Ok(false)
    }
}

/// One field's value: a leaf, or a nested object flattened under `name`.
struct CellSeed<'a> {
    leaves: &'a mut Vec<Leaf>,
    name: String,
}

impl<'de> DeserializeSeed<'de> for CellSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl CellSeed<'_> {
    fn leaf(self, text: Option<String>, kind: &'static str) {
        self.leaves.push(Leaf {
            name: self.name,
            text,
            kind,
        });
    }
}

impl<'de> Visitor<'de> for CellSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut any = false;
        while let Some(key) = map.next_key::<String>()? {
            any = true;
            let name = format!("{}.{key}", self.name);
            map.next_value_seed(CellSeed {
                leaves: self.leaves,
                name,
            })?;
        }
        if !any {
            // An empty object is a leaf, written as {} (as table::flatten does).
            self.leaf(Some("{}".into()), "object");
        }
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut items = Vec::new();
        while let Some(v) = seq.next_element::<Value>()? {
            items.push(v);
        }
        self.leaf(Some(Value::Array(items).to_string()), "array");
        Ok(())
    }
    fn visit_bool<E>(self, v: bool) -> Result<(), E> {
        self.leaf(Some(v.to_string()), "boolean");
        Ok(())
    }
    fn visit_i64<E>(self, v: i64) -> Result<(), E> {
        self.leaf(Some(v.to_string()), "integer");
        Ok(())
    }
    fn visit_u64<E>(self, v: u64) -> Result<(), E> {
        self.leaf(Some(v.to_string()), "integer");
        Ok(())
    }
    fn visit_f64<E>(self, v: f64) -> Result<(), E> {
        self.leaf(Some(Value::from(v).to_string()), "number");
        Ok(())
    }
    fn visit_str<E>(self, v: &str) -> Result<(), E> {
        self.leaf(Some(v.to_owned()), "string");
        Ok(())
    }
    fn visit_string<E>(self, v: String) -> Result<(), E> {
        self.leaf(Some(v), "string");
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        self.leaf(None, "null");
        Ok(())
    }
}

/// Places leaves in column order. Rows usually list their keys in the same order, so each
/// leaf is first tried at the position after the previous one before a hash lookup.
pub fn place<'a>(leaves: &'a [Leaf], columns: &IndexSet<String>, cells: &mut Vec<&'a str>) {
    cells.clear();
    cells.resize(columns.len(), "");
    let mut next = 0;
    for leaf in leaves {
        let at = match columns.get_index(next) {
            Some(c) if *c == leaf.name => Some(next),
            _ => columns.get_index_of(leaf.name.as_str()),
        };
        if let Some(i) = at {
            cells[i] = leaf.text.as_deref().unwrap_or("");
            next = i + 1;
        }
    }
}
