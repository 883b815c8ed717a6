//! The Schema tab: `get_file_schema` arranged as a table of columns, its scalar facts in words.

use serde::Serialize;
use serde_json::Value;

use super::{file_error, open};
use crate::control::ControlError;
use crate::{Engine, ErrorCode};
use offload_formats::files::Quiet;

/// One row of the schema table.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ColumnView {
    pub name: String,
    /// `integer`, `string`, ... (`a|b` when values differ); empty when unknown.
    pub kind: String,
    pub nullable: bool,
    pub samples: Vec<String>,
}

/// The schema as the Schema tab shows it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SchemaView {
    pub format: String,
    /// Scalar facts (rows, delimiter, encoding, ...), as label and value.
    pub facts: Vec<(String, String)>,
    /// Columns of a table, keys of JSON/YAML records, elements of XML, first sheet's columns.
    pub columns: Vec<ColumnView>,
    /// The compact shape of structured data (`[{id: integer, ...}]`).
    pub outline: Option<String>,
    pub note: Option<String>,
}

/// `get_file_schema` of `path`, arranged for a table.
pub fn schema(engine: &Engine, path: &str) -> Result<SchemaView, ControlError> {
    let (file, canonical) = open(engine, path)?;
    let schema = engine
        .files
        .schema(file, &canonical, 5, &Quiet)
        .map_err(file_error)?;
    let value = serde_json::to_value(&schema)
        .map_err(|e| ControlError::new(ErrorCode::Internal, e.to_string()))?;
    Ok(schema_view(&value))
}

/// One scalar of a schema as people read it: `row_count: 1234` → ("rows", "1,234"),
/// `typed_from: "all_rows"` → ("types read from", "all rows"), `has_header: true` → ("header
/// row", "yes"); keys it does not know are said with spaces for underscores.
fn fact(key: &str, value: &Value, exact: Option<bool>) -> Option<(String, String)> {
    let label = match key {
        "row_count" => "rows",
        "line_count" => "lines",
        "column_count" => "columns",
        "sampled_rows" => "rows sampled",
        "has_header" => "header row",
        "typed_from" => "types read from",
        other => return plain(other, value, exact).map(|v| (other.replace('_', " "), v)),
    };
    let shown = match (key, value) {
        ("typed_from", Value::String(s)) if s == "sample" => "a sample from across the file".into(),
        _ => plain(key, value, exact)?,
    };
    Some((label.to_owned(), shown))
}

/// A scalar in words: counts with thousands separators ("about" when not exact), yes/no,
/// identifiers with spaces; a delimiter by its name.
fn plain(key: &str, value: &Value, exact: Option<bool>) -> Option<String> {
    Some(match value {
        Value::Bool(b) => if *b { "yes" } else { "no" }.into(),
        Value::Number(n) => {
            let shown = n.as_u64().map_or_else(|| n.to_string(), thousands);
            if exact == Some(false) {
                format!("about {shown}")
            } else {
                shown
            }
        }
        Value::String(s) if key == "delimiter" => match s.as_str() {
            "," => "comma (,)".into(),
            "\t" => "tab".into(),
            ";" => "semicolon (;)".into(),
            "|" => "pipe (|)".into(),
            other => other.into(),
        },
        Value::String(s)
            if s.contains('_') && s.chars().all(|c| c.is_ascii_lowercase() || c == '_') =>
        {
            s.replace('_', " ")
        }
        Value::String(s) => s.clone(),
        _ => return None,
    })
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn schema_view(v: &Value) -> SchemaView {
    let text = |v: &Value| v.as_str().map(str::to_owned);
    let mut facts = Vec::new();
    if let Some(map) = v.as_object() {
        for (k, x) in map {
            if matches!(k.as_str(), "path" | "format" | "note" | "outline") || k.ends_with("_exact")
            {
                continue;
            }
            // A count said to be exact by its `<key>_exact` neighbour; "about" when it is not.
            let exact = map.get(&format!("{k}_exact")).and_then(Value::as_bool);
            if let Some(fact) = fact(k, x, exact) {
                facts.push(fact);
            }
        }
    }
    let columns = if let Some(cols) = v["columns"].as_array() {
        table_columns(cols)
    } else if let Some(sheets) = v["sheets"].as_array() {
        let names: Vec<&str> = sheets.iter().filter_map(|s| s["name"].as_str()).collect();
        facts.push(("sheets".into(), names.join(", ")));
        sheets
            .first()
            .and_then(|s| s["columns"].as_array())
            .map(|c| table_columns(c))
            .unwrap_or_default()
    } else if v["shape"].is_object() {
        let shape = &v["shape"];
        let record = if shape["items"].is_object() {
            &shape["items"]
        } else {
            shape
        };
        record["keys"]
            .as_object()
            .map(|keys| {
                keys.iter()
                    .map(|(name, k)| ColumnView {
                        name: name.clone(),
                        kind: text(&k["type"]).unwrap_or_default(),
                        nullable: k["optional"].as_bool().unwrap_or(false)
                            || text(&k["type"]).is_some_and(|t| t.contains("null")),
                        samples: Vec::new(),
                    })
                    .collect()
            })
            .unwrap_or_default()
    } else if let Some(children) = v["children"].as_array() {
        children
            .iter()
            .map(|c| ColumnView {
                name: text(&c["name"]).unwrap_or_default(),
                kind: format!("element ×{}", c["count"]),
                nullable: false,
                samples: c["attributes"]
                    .as_array()
                    .map(|a| a.iter().filter_map(text).map(|s| format!("@{s}")).collect())
                    .unwrap_or_default(),
            })
            .collect()
    } else {
        Vec::new()
    };
    SchemaView {
        format: text(&v["format"]).unwrap_or_default(),
        facts,
        columns,
        outline: text(&v["outline"]),
        note: text(&v["note"]),
    }
}

fn table_columns(cols: &[Value]) -> Vec<ColumnView> {
    cols.iter()
        .map(|c| ColumnView {
            name: c["name"].as_str().unwrap_or_default().to_owned(),
            kind: c["type"].as_str().unwrap_or_default().to_owned(),
            nullable: c["nullable"].as_bool().unwrap_or(false),
            samples: c["samples"]
                .as_array()
                .map(|s| {
                    s.iter()
                        .filter_map(|x| x.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn schemas_of_every_kind_become_a_column_table() {
        let csv = schema_view(&json!({
            "path": "/x.csv", "format": "csv", "delimiter": ",", "row_count": 3,
            "columns": [{"name": "id", "type": "integer", "nullable": false, "samples": ["1"]}]
        }));
        assert_eq!(csv.columns[0].name, "id");
        assert_eq!(csv.columns[0].kind, "integer");
        assert!(csv.facts.contains(&("rows".into(), "3".into())));

        // Facts in words, not raw keys and values.
        let big = schema_view(&json!({
            "format": "csv", "delimiter": "\t", "has_header": true, "row_count": 1234567,
            "row_count_exact": false, "typed_from": "sample", "sampled_rows": 6400,
            "encoding": "utf-8", "root_type": "array_of_objects", "columns": []
        }));
        let facts: std::collections::HashMap<_, _> = big.facts.iter().cloned().collect();
        assert_eq!(facts["rows"], "about 1,234,567");
        assert_eq!(facts["delimiter"], "tab");
        assert_eq!(facts["header row"], "yes");
        assert_eq!(facts["types read from"], "a sample from across the file");
        assert_eq!(facts["rows sampled"], "6,400");
        assert_eq!(facts["root type"], "array of objects");
        assert_eq!(facts["encoding"], "utf-8");
        assert!(!facts.contains_key("row count exact"));
        let small = schema_view(
            &json!({"typed_from": "all_rows", "row_count": 999, "row_count_exact": true}),
        );
        assert!(
            small
                .facts
                .contains(&("types read from".into(), "all rows".into()))
        );
        assert!(small.facts.contains(&("rows".into(), "999".into())));

        let json = schema_view(&json!({
            "format": "json", "root_type": "array", "outline": "[{id: integer}]",
            "shape": {"type": "array", "items": {"type": "object", "keys": {
                "id": {"type": "integer"}, "email": {"type": "string|null", "optional": true}
            }}}
        }));
        let names: Vec<_> = json.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["id", "email"]);
        assert!(json.columns[1].nullable && !json.columns[0].nullable);
        assert_eq!(json.outline.as_deref(), Some("[{id: integer}]"));

        let xml = schema_view(&json!({
            "format": "xml", "root": "feed",
            "children": [{"name": "entry", "count": 2, "attributes": ["id"], "children": []}]
        }));
        assert_eq!(xml.columns[0].kind, "element ×2");
        assert_eq!(xml.columns[0].samples, ["@id"]);

        let text = schema_view(&json!({"format": "text", "encoding": "utf-8"}));
        assert!(text.columns.is_empty());
    }
}
