//! Seeing a JSON value as a table: which list holds the rows, the union of (flattened) columns in
//! first-seen order, and each row's cells. Rows are flattened one at a time, so a table costs
//! little beyond the value itself.
//!
//! Conventions (documented in the user guide, docs/guide/files.md): a list of objects is a table; an object with exactly one
//! field that is a non-empty list of objects is that table (its key is the reported `path`); an
//! object with several fields that are lists of objects is several tables (`find_tables`).
//! Nested objects become dotted columns (`meta.owner.id`); lists inside a cell are JSON-encoded;
//! `null` is an empty cell. Anything else is not a table and gets a key/value fallback.

use indexmap::IndexSet;
use serde_json::{Map, Value};

/// Where the rows are.
pub struct TableView<'a> {
    /// The key of the list inside the top-level object, when the rows are not the value itself.
    pub path: Option<&'a str>,
    pub rows: &'a [Value],
}

/// Whether an object whose `lists` fields are lists of objects (`filled` of them non-empty),
/// out of `fields` fields, is several tables: at least two such lists, and either one holds
/// rows or the object is nothing but lists. An empty list counts, so that the same tool gives
/// the same files whether or not a list is empty today (server-memory's `read_graph` answers
/// `{entities, relations}` with either list empty at times).
pub fn several_tables(lists: usize, filled: usize, fields: usize) -> bool {
    lists >= 2 && (filled >= 1 || lists == fields)
}

/// The tables of an object that holds several lists of objects, by field, in the object's
/// order; `None` when it is not such an object.
pub fn find_tables(value: &Value) -> Option<Vec<(&str, &[Value])>> {
    let Value::Object(map) = value else {
        return None;
    };
    let lists: Vec<(&str, &[Value])> = map
        .iter()
        .filter_map(|(k, v)| match v {
            Value::Array(items) if items.iter().all(Value::is_object) => {
                Some((k.as_str(), items.as_slice()))
            }
            _ => None,
        })
        .collect();
    let filled = lists.iter().filter(|(_, rows)| !rows.is_empty()).count();
    several_tables(lists.len(), filled, map.len()).then_some(lists)
}

/// Finds the rows of a table-shaped value (one table; see `find_tables` for several).
pub fn find(value: &Value) -> Option<TableView<'_>> {
    if find_tables(value).is_some() {
        return None;
    }
    match value {
        Value::Array(items) if items.iter().all(Value::is_object) => Some(TableView {
            path: None,
            rows: items,
        }),
        Value::Object(map) => {
            let mut lists = map.iter().filter(|(_, v)| {
                matches!(v, Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_object))
            });
            let (key, rows) = lists.next()?;
            if lists.next().is_some() {
                return None;
            }
            Some(TableView {
                path: Some(key),
                rows: rows.as_array().map(Vec::as_slice).unwrap_or_default(),
            })
        }
        _ => None,
    }
}

/// A cell's content.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell<'a> {
    Empty,
    Text(&'a str),
    /// Text made here: numbers and booleans as JSON text, lists (and empty objects)
    /// JSON-encoded, generated keys.
    Owned(String),
}

impl Cell<'_> {
    pub fn as_text(&self) -> std::borrow::Cow<'_, str> {
        match self {
            Cell::Empty => "".into(),
            Cell::Text(s) => (*s).into(),
            Cell::Owned(s) => s.as_str().into(),
        }
    }
}

fn leaf(value: &Value) -> Cell<'_> {
    match value {
        Value::Null => Cell::Empty,
        Value::String(s) => Cell::Text(s),
        other => Cell::Owned(other.to_string()),
    }
}

/// Calls `f(column, cell)` for every leaf of `obj`, nested objects flattened with dots.
pub fn flatten<'a>(obj: &'a Map<String, Value>, f: &mut impl FnMut(String, Cell<'a>)) {
    flatten_values(obj, &mut |name, value| f(name, leaf(value)));
}

/// The union of flattened column names over all rows, in first-seen order.
pub fn columns(rows: &[Value]) -> IndexSet<String> {
    let mut cols = IndexSet::new();
    for row in rows {
        if let Value::Object(obj) = row {
            flatten(obj, &mut |name, _| {
                cols.insert(name);
            });
        }
    }
    cols
}

/// One row's cells in column order.
pub fn row_cells<'a>(row: &'a Value, columns: &IndexSet<String>) -> Vec<Cell<'a>> {
    let mut cells = vec![Cell::Empty; columns.len()];
    if let Value::Object(obj) = row {
        flatten(obj, &mut |name, cell| {
            if let Some(i) = columns.get_index_of(&name) {
                cells[i] = cell;
            }
        });
    }
    cells
}

/// The fallback for values that are not tables, as (columns, rows):
/// a list of scalars (or mixed values) → one `value` column; an object → `key`/`value` rows with
/// dotted keys; a scalar → one `value` cell.
pub fn fallback(value: &Value) -> (Vec<&'static str>, Vec<Vec<Cell<'_>>>) {
    match value {
        Value::Array(items) => (vec!["value"], items.iter().map(|v| vec![leaf(v)]).collect()),
        Value::Object(obj) => {
            let mut rows = Vec::new();
            flatten(obj, &mut |name, cell| {
                rows.push(vec![Cell::Owned(name), cell])
            });
            (vec!["key", "value"], rows)
        }
        scalar => (vec!["value"], vec![vec![leaf(scalar)]]),
    }
}

/// The type of a column from its cells: integer, number, boolean, string, null, or mixed.
pub fn column_types(rows: &[Value], columns: &IndexSet<String>) -> Vec<&'static str> {
    let mut types: Vec<Option<&'static str>> = vec![None; columns.len()];
    for row in rows {
        if let Value::Object(obj) = row {
            flatten_values(obj, &mut |name, value| {
                if let Some(i) = columns.get_index_of(&name) {
                    types[i] = merge_type(types[i], json_type(value));
                }
            });
        }
    }
    types.into_iter().map(|t| t.unwrap_or("null")).collect()
}

/// A column's type after seeing one more value of type `t`: nulls do not count, integers and
/// numbers make numbers, anything else that differs makes `mixed`.
pub fn merge_type(prev: Option<&'static str>, t: &'static str) -> Option<&'static str> {
    if t == "null" {
        return prev;
    }
    Some(match prev {
        None => t,
        Some(p) if p == t => t,
        Some("integer" | "number") if matches!(t, "integer" | "number") => "number",
        Some(_) => "mixed",
    })
}

/// Calls `f(column, value)` for every leaf of `obj`, nested objects flattened with dots.
pub fn flatten_values<'a>(obj: &'a Map<String, Value>, f: &mut impl FnMut(String, &'a Value)) {
    flatten_under(obj, None, f);
}

/// `flatten_values` below `prefix`. An empty key is a name too: `{"": {"a": 1}}` is `.a`, as the
/// streamed path names it (found by fuzzing: it was `a`, which a real key `a` also gives).
fn flatten_under<'a>(
    obj: &'a Map<String, Value>,
    prefix: Option<&str>,
    f: &mut impl FnMut(String, &'a Value),
) {
    for (key, value) in obj {
        let name = match prefix {
            None => key.clone(),
            Some(p) => format!("{p}.{key}"),
        };
        match value {
            Value::Object(inner) if !inner.is_empty() => flatten_under(inner, Some(&name), f),
            other => f(name, other),
        }
    }
}

/// A JSON value's type name as summaries show it.
pub fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_tables_in_lists_and_single_list_fields() {
        let v = json!([{"a": 1}, {"b": 2}]);
        assert!(find(&v).unwrap().path.is_none());
        let v = json!({"total": 2, "results": [{"a": 1}]});
        assert_eq!(find(&v).unwrap().path, Some("results"));
        assert!(
            find(&json!({"a": [{"x": 1}], "b": [{"y": 2}]})).is_none(),
            "two candidate lists"
        );
        assert_eq!(
            find_tables(&json!({"a": [{"x": 1}], "b": [], "n": 2}))
                .unwrap()
                .iter()
                .map(|(k, rows)| (*k, rows.len()))
                .collect::<Vec<_>>(),
            [("a", 1), ("b", 0)],
            "an empty list beside a table is a table too"
        );
        assert_eq!(find_tables(&json!({"a": [], "b": []})).unwrap().len(), 2);
        assert!(find_tables(&json!({"a": [], "b": [], "n": 1})).is_none());
        assert!(find_tables(&json!({"a": [{"x": 1}], "b": [1]})).is_none());
        assert!(find(&json!([1, {"a": 1}])).is_none());
        assert!(find(&json!("text")).is_none());
        assert_eq!(
            find(&json!([])).unwrap().rows.len(),
            0,
            "an empty list is an empty table"
        );
    }

    #[test]
    fn columns_are_the_union_in_first_seen_order_with_dotted_nesting() {
        let rows = json!([
            {"id": 1, "meta": {"owner": {"id": 7}, "tags": ["x"]}},
            {"id": 2, "extra": null, "meta": {"owner": {"id": 8, "name": "n"}}}
        ]);
        let rows = rows.as_array().unwrap();
        let cols = columns(rows);
        assert_eq!(
            cols.iter().map(String::as_str).collect::<Vec<_>>(),
            [
                "id",
                "meta.owner.id",
                "meta.tags",
                "extra",
                "meta.owner.name"
            ]
        );
        let cells = row_cells(&rows[0], &cols);
        assert_eq!(cells[2], Cell::Owned("[\"x\"]".into()));
        assert_eq!(cells[3], Cell::Empty);
        assert_eq!(
            column_types(rows, &cols),
            ["integer", "integer", "array", "null", "string"]
        );
    }
}
