//! Tables sent as rows of values instead of objects, rewritten as the list of objects every
//! other part reads as a table:
//!
//! - `{"columns": [...], "rows": [[...], ...]}`, as database servers answer (mcp-server-motherduck;
//!   a column may be a name or an object with a `name`); the other fields (`columnTypes`, a row
//!   count) stay beside the rows. A number sent as text in a column its SQL type says is
//!   numeric (`columnTypes`, or the column's `type`: DuckDB's DECIMAL comes as `"1.5"`) is a
//!   number.
//! - `{"values": [[header...], [...], ...]}`, as spreadsheet servers answer (excel-mcp-server's
//!   `{range, values}`): the first row names the columns; a row shorter than it has empty cells.
//!
//! Anything else is left as it is: rows of another length than the columns, a header that is
//! not all text, a `rows` or `values` that is not a list of lists.

use serde_json::{Map, Value};

/// `value` with a row-array table inside it rewritten as objects (see the module's doc).
pub fn as_objects(value: Value) -> Value {
    let Value::Object(mut map) = value else {
        return value;
    };
    if let Some(grid) = map
        .get("columns")
        .and_then(|c| Grid::of_columns(c, map.get("columnTypes")))
        && let Some(Value::Array(rows)) = map.get("rows")
        && rows.iter().all(|r| grid.fits(r))
    {
        let Some(Value::Array(rows)) = map.remove("rows") else {
            unreachable!("checked above")
        };
        map.remove("columns");
        let rows = rows.into_iter().filter_map(|r| grid.object(r)).collect();
        map.insert("rows".into(), Value::Array(rows));
        return Value::Object(map);
    }
    if let Some(Value::Array(rows)) = map.get("values")
        && let Some(grid) = rows.first().and_then(Grid::of_header)
        && rows[1..].iter().all(|r| grid.fits(r))
    {
        let Some(Value::Array(mut rows)) = map.remove("values") else {
            unreachable!("checked above")
        };
        rows.remove(0);
        let rows = rows.into_iter().filter_map(|r| grid.object(r)).collect();
        map.insert("values".into(), Value::Array(rows));
        return Value::Object(map);
    }
    Value::Object(map)
}

/// Whether `value` may hold a row-array table, from its top-level keys (to decide whether a
/// JSON text is worth parsing).
pub fn may_hold(keys: &[String]) -> bool {
    let has = |k: &str| keys.iter().any(|key| key == k);
    (has("columns") && has("rows")) || has("values")
}

/// A row-array table's columns: their names, which are numeric, and whether a row must have
/// every cell (`columns`) or may be short (a header row's `values`).
#[derive(Debug, Clone)]
pub(crate) struct Grid {
    names: Vec<String>,
    numeric: Vec<bool>,
    short_rows: bool,
}

impl Grid {
    /// From `columns` (names, or objects with a `name` and maybe a `type`) and `columnTypes`.
    pub(crate) fn of_columns(columns: &Value, types: Option<&Value>) -> Option<Grid> {
        let names = column_names(columns)?;
        let numeric = numeric_columns(columns, types, names.len());
        Some(Grid {
            names,
            numeric,
            short_rows: false,
        })
    }

    /// From a header row of text cells (not empty).
    pub(crate) fn of_header(header: &Value) -> Option<Grid> {
        let header = header.as_array().filter(|h| !h.is_empty())?;
        if !header.iter().all(Value::is_string) {
            return None;
        }
        Some(Grid {
            names: unique(header.iter().map(|h| h.as_str().unwrap_or_default())),
            numeric: Vec::new(),
            short_rows: true,
        })
    }

    pub(crate) fn width(&self) -> usize {
        self.names.len()
    }

    /// Whether `row` is a row of this table: a list as long as the columns (or shorter, under
    /// a header row).
    fn fits(&self, row: &Value) -> bool {
        match row {
            Value::Array(cells) if self.short_rows => cells.len() <= self.names.len(),
            Value::Array(cells) => cells.len() == self.names.len(),
            _ => false,
        }
    }

    /// `row` (a list of cells) as an object of the columns' names, a number sent as text in a
    /// numeric column as a number; `None` when it does not [fit](Self::fits).
    pub(crate) fn object(&self, row: Value) -> Option<Value> {
        if !self.fits(&row) {
            return None;
        }
        let Value::Array(cells) = row else {
            return None;
        };
        let mut cells = cells.into_iter();
        let object: Map<String, Value> = self
            .names
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let cell = match cells.next() {
                    Some(Value::String(text)) if self.numeric.get(i) == Some(&true) => {
                        match serde_json::from_str::<Value>(&text) {
                            Ok(number @ Value::Number(_)) => number,
                            _ => Value::String(text),
                        }
                    }
                    Some(cell) => cell,
                    None => Value::Null,
                };
                (name.clone(), cell)
            })
            .collect();
        Some(Value::Object(object))
    }
}

/// Which columns' SQL types are numeric: from `columnTypes`, or each column's `type`.
fn numeric_columns(columns: &Value, types: Option<&Value>, n: usize) -> Vec<bool> {
    let from_columns: Vec<Option<&str>> = columns
        .as_array()
        .map(|c| {
            c.iter()
                .map(|c| c.get("type").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    let types: Vec<Option<&str>> = match types.and_then(Value::as_array) {
        Some(t) if t.len() == n => t.iter().map(Value::as_str).collect(),
        _ => from_columns,
    };
    (0..n)
        .map(|i| types.get(i).copied().flatten().is_some_and(is_numeric))
        .collect()
}

fn is_numeric(sql_type: &str) -> bool {
    let t = sql_type.trim().to_ascii_uppercase();
    let base = t.split(['(', ' ']).next().unwrap_or_default();
    matches!(
        base,
        "TINYINT"
            | "SMALLINT"
            | "INT"
            | "INTEGER"
            | "BIGINT"
            | "HUGEINT"
            | "UTINYINT"
            | "USMALLINT"
            | "UINTEGER"
            | "UBIGINT"
            | "UHUGEINT"
            | "INT2"
            | "INT4"
            | "INT8"
            | "DECIMAL"
            | "NUMERIC"
            | "DOUBLE"
            | "FLOAT"
            | "FLOAT4"
            | "FLOAT8"
            | "REAL"
    )
}

/// The columns' names: strings, or objects with a string `name`; at least one.
fn column_names(columns: &Value) -> Option<Vec<String>> {
    let columns = columns.as_array().filter(|c| !c.is_empty())?;
    let names: Option<Vec<&str>> = columns
        .iter()
        .map(|c| match c {
            Value::String(s) => Some(s.as_str()),
            Value::Object(o) => o.get("name")?.as_str(),
            _ => None,
        })
        .collect();
    Some(unique(names?.into_iter()))
}

/// Names a table can hold: an empty one becomes `column_<n>`, a repeated one `<name>_<n>`.
fn unique<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    names
        .enumerate()
        .map(|(i, name)| {
            let base = if name.is_empty() {
                format!("column_{}", i + 1)
            } else {
                name.to_owned()
            };
            let mut candidate = base.clone();
            let mut n = 2;
            while !seen.insert(candidate.clone()) {
                candidate = format!("{base}_{n}");
                n += 1;
            }
            candidate
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn columns_and_rows_become_objects_beside_the_other_fields() {
        let v = json!({"columns": ["id", "name"], "columnTypes": ["INTEGER", "VARCHAR"],
                       "rows": [[1, "a"], [2, null]]});
        assert_eq!(
            as_objects(v),
            json!({"columnTypes": ["INTEGER", "VARCHAR"],
                   "rows": [{"id": 1, "name": "a"}, {"id": 2, "name": null}]})
        );
        let named = json!({"columns": [{"name": "x", "type": "int"}, {"name": "x"}],
                           "rows": [[1, 2]]});
        assert_eq!(as_objects(named), json!({"rows": [{"x": 1, "x_2": 2}]}));
    }

    #[test]
    fn numbers_sent_as_text_in_numeric_columns_are_numbers() {
        let v = json!({"columns": ["id", "amount", "zip"],
                       "columnTypes": ["BIGINT", "DECIMAL(21,1)", "VARCHAR"],
                       "rows": [["1", "1.5", "01234"], [2, "n/a", "9"]]});
        assert_eq!(
            as_objects(v)["rows"],
            json!([{"id": 1, "amount": 1.5, "zip": "01234"},
                   {"id": 2, "amount": "n/a", "zip": "9"}])
        );
        let typed = json!({"columns": [{"name": "n", "type": "DOUBLE"}], "rows": [["2.5"]]});
        assert_eq!(as_objects(typed)["rows"], json!([{"n": 2.5}]));
    }

    #[test]
    fn a_header_row_names_the_columns_and_short_rows_get_empty_cells() {
        let v = json!({"range": "A1:C3", "values": [["id", "", "city"], [1, 2, "Oslo"], [3]]});
        assert_eq!(
            as_objects(v),
            json!({"range": "A1:C3", "values": [
                {"id": 1, "column_2": 2, "city": "Oslo"},
                {"id": 3, "column_2": null, "city": null}]})
        );
    }

    #[test]
    fn anything_else_is_left_as_it_is() {
        for v in [
            json!({"columns": ["a", "b"], "rows": [[1, 2], [3]]}),
            json!({"columns": [], "rows": []}),
            json!({"columns": ["a"], "rows": [{"a": 1}]}),
            json!({"values": [[1, 2], [3, 4]]}),
            json!({"values": [["a"], [1, 2]]}),
            json!({"values": "text"}),
            json!([["a", "b"], [1, 2]]),
            json!("rows"),
        ] {
            assert_eq!(as_objects(v.clone()), v);
        }
    }
}
