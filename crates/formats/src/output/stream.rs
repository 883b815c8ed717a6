//! Reading a JSON text without building it in memory: one pass finds its shape (for tables:
//! where the rows are, how many, which columns of which types), another hands the rows over one
//! at a time. A 10 MB answer then costs a row, not a `Value` five times its size.

use std::fmt;

use indexmap::IndexMap;
use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::skip::Skip;
use super::{flat, table};

/// The shape of a JSON text.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// A list of objects, or the one list of objects inside a top-level object (`path`).
    Table {
        path: Option<String>,
        rows: usize,
        columns: Vec<(String, &'static str)>,
    },
    /// An object holding several lists of objects: several tables, by field (see
    /// `table::find_tables` for the rule).
    Tables {
        tables: Vec<TableShape>,
    },
    Object {
        keys: Vec<String>,
        count: usize,
    },
    Array {
        items: usize,
    },
    Text {
        lines: usize,
        chars: usize,
    },
    Scalar {
        kind: &'static str,
    },
}

/// One table of a `Shape::Tables`.
#[derive(Debug, Clone, PartialEq)]
pub struct TableShape {
    pub path: String,
    pub rows: usize,
    pub columns: Vec<(String, &'static str)>,
}

/// Columns and their types, merged over rows as in `table::column_types`.
#[derive(Default)]
struct Columns(IndexMap<String, Option<&'static str>>);

impl Columns {
    fn add_leaves(&mut self, leaves: &[flat::Leaf]) {
        for leaf in leaves {
            let slot = match self.0.get_mut(leaf.name.as_str()) {
                Some(slot) => slot,
                None => self.0.entry(leaf.name.clone()).or_insert(None),
            };
            *slot = table::merge_type(*slot, leaf.kind);
        }
    }

    fn into_vec(self) -> Vec<(String, &'static str)> {
        self.0
            .into_iter()
            .map(|(k, t)| (k, t.unwrap_or("null")))
            .collect()
    }
}

/// What a list turned out to be.
struct ListScan {
    items: usize,
    all_objects: bool,
    columns: Columns,
}

struct ListSeed;

impl<'de> DeserializeSeed<'de> for ListSeed {
    type Value = Option<ListScan>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(ListVisitor)
    }
}

struct ListVisitor;

impl<'de> Visitor<'de> for ListVisitor {
    type Value = Option<ListScan>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut scan = ListScan {
            items: 0,
            all_objects: true,
            columns: Columns::default(),
        };
        let mut leaves = Vec::new();
        while let Some(is_object) = seq.next_element_seed(flat::RowSeed {
            leaves: &mut leaves,
        })? {
            scan.items += 1;
            if is_object {
                if scan.all_objects {
                    scan.columns.add_leaves(&leaves);
                }
            } else {
                scan.all_objects = false;
            }
            leaves.clear();
        }
        Ok(Some(scan))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<Skip, Skip>()?.is_some() {}
        Ok(None)
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}

/// The root: a list, an object (looking for its one list of objects), or a scalar.
struct RootVisitor;

impl<'de> Visitor<'de> for RootVisitor {
    type Value = Shape;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Shape, A::Error> {
        let scan = ListVisitor
            .visit_seq(seq)?
            .ok_or_else(|| A::Error::custom("unreachable"))?;
        Ok(if scan.all_objects {
            Shape::Table {
                path: None,
                rows: scan.items,
                columns: scan.columns.into_vec(),
            }
        } else {
            Shape::Array { items: scan.items }
        })
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Shape, A::Error> {
        let mut keys = Vec::new();
        let mut count = 0;
        let mut tables: Vec<(String, ListScan)> = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            count += 1;
            let scan = map.next_value_seed(ListSeed)?;
            if let Some(scan) = scan
                && scan.all_objects
            {
                tables.push((key.clone(), scan));
            }
            if keys.len() < 20 {
                keys.push(key);
            }
        }
        let filled = tables.iter().filter(|(_, t)| t.items > 0).count();
        if super::table::several_tables(tables.len(), filled, count) {
            return Ok(Shape::Tables {
                tables: tables
                    .into_iter()
                    .map(|(path, scan)| TableShape {
                        path,
                        rows: scan.items,
                        columns: scan.columns.into_vec(),
                    })
                    .collect(),
            });
        }
        tables.retain(|(_, t)| t.items > 0);
        if tables.len() == 1 {
            let (path, scan) = tables.pop().unwrap_or_else(|| unreachable!());
            return Ok(Shape::Table {
                path: Some(path),
                rows: scan.items,
                columns: scan.columns.into_vec(),
            });
        }
        Ok(Shape::Object { keys, count })
    }
    fn visit_str<E>(self, s: &str) -> Result<Shape, E> {
        Ok(Shape::Text {
            lines: s.lines().count(),
            chars: s.chars().count(),
        })
    }
    fn visit_bool<E>(self, _: bool) -> Result<Shape, E> {
        Ok(Shape::Scalar { kind: "boolean" })
    }
    fn visit_i64<E>(self, _: i64) -> Result<Shape, E> {
        Ok(Shape::Scalar { kind: "integer" })
    }
    fn visit_u64<E>(self, _: u64) -> Result<Shape, E> {
        Ok(Shape::Scalar { kind: "integer" })
    }
    fn visit_f64<E>(self, _: f64) -> Result<Shape, E> {
        Ok(Shape::Scalar { kind: "number" })
    }
    fn visit_unit<E>(self) -> Result<Shape, E> {
        Ok(Shape::Scalar { kind: "null" })
    }
}

/// The shape of `text`, which must be valid JSON.
pub fn scan(text: &str) -> serde_json::Result<Shape> {
    let mut de = serde_json::Deserializer::from_str(text);
    let shape = de.deserialize_any(RootVisitor)?;
    de.end()?;
    Ok(shape)
}

/// Calls `f` with each row of the table at `path` (the root list when `None`), in order.
pub fn for_each_row(
    text: &str,
    path: Option<&str>,
    f: &mut dyn FnMut(Value) -> std::io::Result<()>,
) -> std::io::Result<usize> {
    struct Rows<'f>(&'f mut dyn FnMut(Value) -> std::io::Result<()>);
    impl<'de> DeserializeSeed<'de> for Rows<'_> {
        type Value = usize;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
            d.deserialize_seq(self)
        }
    }
    impl<'de> Visitor<'de> for Rows<'_> {
        type Value = usize;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a list of rows")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
            let mut n = 0;
            while let Some(row) = seq.next_element::<Value>()? {
                (self.0)(row).map_err(A::Error::custom)?;
                n += 1;
            }
            Ok(n)
        }
    }
    struct Field<'p, 'f>(&'p str, Rows<'f>);
    impl<'de> Visitor<'de> for Field<'_, '_> {
        type Value = usize;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<usize, A::Error> {
            let Field(path, rows) = self;
            let mut rows = Some(rows);
            let mut n = 0;
            while let Some(key) = map.next_key::<String>()? {
                match (key == path, rows.take()) {
                    (true, Some(r)) => n = map.next_value_seed(r)?,
                    (_, r) => {
                        rows = r;
                        map.next_value::<Skip>()?;
                    }
                }
            }
            Ok(n)
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let n = match path {
        None => Rows(f).deserialize(&mut de),
        Some(p) => de.deserialize_map(Field(p, Rows(f))),
    }
    .map_err(std::io::Error::other)?;
    Ok(n)
}

/// Calls `f` with the flattened leaves of each row of the table at `path` (the root list when
/// `None`), in order, one row in memory at a time.
pub fn for_each_flat_row(
    text: &str,
    path: Option<&str>,
    f: &mut dyn FnMut(&[flat::Leaf]) -> std::io::Result<()>,
) -> std::io::Result<usize> {
    let mut de = serde_json::Deserializer::from_str(text);
    let n = match path {
        None => FlatRows(f).deserialize(&mut de),
        Some(p) => de.deserialize_map(FlatField(p, Some(FlatRows(f)))),
    }
    .map_err(std::io::Error::other)?;
    Ok(n)
}

struct FlatRows<'f>(&'f mut dyn FnMut(&[flat::Leaf]) -> std::io::Result<()>);

impl<'de> DeserializeSeed<'de> for FlatRows<'_> {
    type Value = usize;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for FlatRows<'_> {
    type Value = usize;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of rows")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
        let mut leaves = Vec::new();
        let mut n = 0;
        while seq
            .next_element_seed(flat::RowSeed {
                leaves: &mut leaves,
            })?
            .is_some()
        {
            (self.0)(&leaves).map_err(A::Error::custom)?;
            leaves.clear();
            n += 1;
        }
        Ok(n)
    }
}

struct FlatField<'p, 'f>(&'p str, Option<FlatRows<'f>>);

impl<'de> Visitor<'de> for FlatField<'_, '_> {
    type Value = usize;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<usize, A::Error> {
        let mut n = 0;
        while let Some(key) = map.next_key::<String>()? {
            match (key == self.0, self.1.take()) {
                (true, Some(rows)) => n = map.next_value_seed(rows)?,
                (_, rows) => {
                    self.1 = rows;
                    map.next_value::<Skip>()?;
                }
            }
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        let t = scan(r#"[{"a": 1, "b": {"c": "x"}}, {"a": 2.5, "d": null}]"#).unwrap();
        assert_eq!(
            t,
            Shape::Table {
                path: None,
                rows: 2,
                columns: vec![
                    ("a".into(), "number"),
                    ("b.c".into(), "string"),
                    ("d".into(), "null")
                ]
            }
        );
        let t = scan(r#"{"total": 1, "results": [{"id": 1}], "tags": ["x"]}"#).unwrap();
        assert!(matches!(t, Shape::Table { path: Some(ref p), rows: 1, .. } if p == "results"));
        assert!(matches!(
            scan(r#"{"a": [{"x": 1}], "b": [], "n": 1}"#).unwrap(),
            Shape::Tables { tables } if tables.len() == 2 && tables[1].rows == 0
        ));
        assert_eq!(
            scan(r#"{"a": [], "b": [], "n": 1}"#).unwrap(),
            Shape::Object {
                keys: vec!["a".into(), "b".into(), "n".into()],
                count: 3
            }
        );
        assert_eq!(scan("[1, {\"a\": 1}]").unwrap(), Shape::Array { items: 2 });
        assert_eq!(
            scan("\"a\\nb\"").unwrap(),
            Shape::Text { lines: 2, chars: 3 }
        );
        assert_eq!(scan("null").unwrap(), Shape::Scalar { kind: "null" });
        assert!(scan("[1, 2").is_err());
        assert!(scan("[1] x").is_err());
    }

    #[test]
    fn rows_one_at_a_time() {
        let mut seen = Vec::new();
        let n = for_each_row(
            r#"{"meta": {"x": [1]}, "results": [{"id": 1}, {"id": 2}], "z": 0}"#,
            Some("results"),
            &mut |r| {
                seen.push(r["id"].as_i64().unwrap());
                Ok(())
            },
        )
        .unwrap();
        assert_eq!((n, seen), (2, vec![1, 2]));
    }
}
