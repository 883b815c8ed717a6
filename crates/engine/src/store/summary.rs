//! The short summary a model gets instead of the payload: shape, and for tables rows and typed
//! columns. The text form stays under 600 bytes whatever the payload.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use offload_formats::output::stream::Shape;
use offload_formats::output::{self, Payload, TableInfo};
use offload_formats::units::human_bytes;

pub const MAX_TEXT: usize = 600;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Summary {
    /// table, object, array, text or scalar.
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub columns: Option<Vec<Column>>,
    /// The key of the list holding the rows, when the table is inside an object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_path: Option<String>,
    /// Top-level keys of an object (the first 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keys: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_count: Option<usize>,
    /// Items of a list that is not a table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<usize>,
    /// Lines and characters of a text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lines: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chars: Option<usize>,
    /// integer, number, boolean, string or null, for a scalar.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_type: Option<String>,
    /// The tables of an answer that holds several (kind `tables`), by field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tables: Option<Vec<TableSummary>>,
}

/// One table of several.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TableSummary {
    /// The field that holds it.
    pub name: String,
    pub rows: usize,
    pub columns: Vec<Column>,
    /// The file it was written to, when each table has its own (CSV, TSV).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Column {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: String,
}

impl Summary {
    /// A table's summary: its rows and typed columns.
    pub fn table(rows: usize, columns: Vec<Column>) -> Self {
        Self {
            rows: Some(rows),
            columns: Some(columns),
            ..Self::empty("table")
        }
    }

    /// A list's summary (values that are not rows).
    pub fn list(items: usize) -> Self {
        Self {
            items: Some(items),
            ..Self::empty("array")
        }
    }

    fn empty(kind: &str) -> Self {
        Self {
            kind: kind.to_owned(),
            rows: None,
            columns: None,
            table_path: None,
            keys: None,
            key_count: None,
            items: None,
            lines: None,
            chars: None,
            value_type: None,
            tables: None,
        }
    }

    fn columns_of(columns: Vec<(String, &'static str)>) -> Vec<Column> {
        columns
            .into_iter()
            .map(|(name, t)| Column {
                name,
                kind: t.to_owned(),
            })
            .collect()
    }

    pub fn of(payload: &Payload) -> Self {
        if let Some(TableInfo {
            path,
            rows,
            columns,
        }) = output::table_info(payload)
        {
            let mut s = Self::empty("table");
            s.rows = Some(rows);
            s.table_path = path;
            s.columns = Some(
                columns
                    .into_iter()
                    .map(|(name, t)| Column {
                        name,
                        kind: t.to_owned(),
                    })
                    .collect(),
            );
            return s;
        }
        if let Some(sources) = output::table_sources(payload) {
            let mut s = Self::empty("tables");
            s.tables = Some(
                sources
                    .into_iter()
                    .map(|t| TableSummary {
                        name: t.info.path.unwrap_or_default(),
                        rows: t.info.rows,
                        columns: Self::columns_of(t.info.columns),
                        file: None,
                    })
                    .collect(),
            );
            return s;
        }
        if let Payload::JsonText { shape, .. } = payload {
            return Self::of_shape(shape);
        }
        match payload {
            Payload::JsonText { .. } => unreachable!("handled above"),
            Payload::Text(t) | Payload::Json(Value::String(t)) => {
                let mut s = Self::empty("text");
                s.lines = Some(t.lines().count());
                s.chars = Some(t.chars().count());
                s
            }
            Payload::Json(Value::Object(m)) => {
                let mut s = Self::empty("object");
                s.key_count = Some(m.len());
                s.keys = Some(m.keys().take(20).cloned().collect());
                s
            }
            Payload::Json(Value::Array(items)) => {
                let mut s = Self::empty("array");
                s.items = Some(items.len());
                s
            }
            Payload::Json(v) => {
                let mut s = Self::empty("scalar");
                s.value_type = Some(output::table::json_type(v).to_owned());
                s
            }
        }
    }

    fn of_shape(shape: &Shape) -> Self {
        match shape {
            Shape::Table {
                path,
                rows,
                columns,
            } => {
                let mut s = Self::empty("table");
                s.rows = Some(*rows);
                s.table_path = path.clone();
                s.columns = Some(
                    columns
                        .iter()
                        .map(|(name, t)| Column {
                            name: name.clone(),
                            kind: (*t).to_owned(),
                        })
                        .collect(),
                );
                s
            }
            Shape::Tables { .. } => unreachable!("handled by table_sources"),
            Shape::Object { keys, count } => {
                let mut s = Self::empty("object");
                s.key_count = Some(*count);
                s.keys = Some(keys.clone());
                s
            }
            Shape::Array { items } => {
                let mut s = Self::empty("array");
                s.items = Some(*items);
                s
            }
            Shape::Text { lines, chars } => {
                let mut s = Self::empty("text");
                s.lines = Some(*lines);
                s.chars = Some(*chars);
                s
            }
            Shape::Scalar { kind } => {
                let mut s = Self::empty("scalar");
                s.value_type = Some((*kind).to_owned());
                s
            }
        }
    }

    /// One short paragraph for the model: where, how big, what shape. At most `MAX_TEXT` bytes.
    pub fn text(&self, path: &str, bytes: u64, format: &str, extra: &str) -> String {
        let path = offload_formats::clip::clip(path, 240);
        let mut head = format!(
            "Stored {} as {} at {}",
            human_bytes(bytes),
            format.to_uppercase(),
            path
        );
        if !extra.is_empty() {
            head.push_str(&format!(" ({extra})"));
        }
        head.push('.');
        let shape = match self.kind.as_str() {
            "table" => {
                let cols = self.columns.as_deref().unwrap_or_default();
                let from = self
                    .table_path
                    .as_deref()
                    .map(|p| format!(" from \"{p}\""))
                    .unwrap_or_default();
                let mut line = format!(
                    " Table{from}: {} rows x {} columns: ",
                    self.rows.unwrap_or(0),
                    cols.len()
                );
                let budget = MAX_TEXT.saturating_sub(head.len() + line.len() + 16);
                let mut listed = 0;
                let mut list = String::new();
                for c in cols {
                    let item = format!(
                        "{}{} {}",
                        if listed > 0 { ", " } else { "" },
                        c.name,
                        c.kind
                    );
                    if list.len() + item.len() > budget {
                        break;
                    }
                    list.push_str(&item);
                    listed += 1;
                }
                if listed < cols.len() {
                    list.push_str(&format!(" (+{} more)", cols.len() - listed));
                }
                line.push_str(&list);
                line
            }
            "tables" => {
                let tables = self.tables.as_deref().unwrap_or_default();
                let mut line = format!(" {} tables:", tables.len());
                for (i, t) in tables.iter().enumerate() {
                    let file = t
                        .file
                        .as_deref()
                        .and_then(|f| std::path::Path::new(f).file_name())
                        .map(|f| format!(" in {}", f.to_string_lossy()))
                        .unwrap_or_default();
                    let names: Vec<&str> =
                        t.columns.iter().take(6).map(|c| c.name.as_str()).collect();
                    let more = if t.columns.len() > 6 { ", ..." } else { "" };
                    line.push_str(&format!(
                        "{} \"{}\": {} rows x {} columns ({}{more}){file}",
                        if i > 0 { ";" } else { "" },
                        t.name,
                        t.rows,
                        t.columns.len(),
                        names.join(", ")
                    ));
                }
                line.push('.');
                line
            }
            "object" => {
                let keys = self.keys.clone().unwrap_or_default().join(", ");
                format!(
                    " Object with {} keys: {}",
                    self.key_count.unwrap_or(0),
                    keys
                )
            }
            "array" => format!(" List of {} items (not a table).", self.items.unwrap_or(0)),
            "text" => format!(
                " Text: {} lines, {} characters.",
                self.lines.unwrap_or(0),
                self.chars.unwrap_or(0)
            ),
            _ => format!(
                " A single {} value.",
                self.value_type.as_deref().unwrap_or("JSON")
            ),
        };
        let mut text = head + &shape;
        if text.len() > MAX_TEXT {
            text = offload_formats::clip::clip(&text, MAX_TEXT).into_owned();
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tables_list_typed_columns_within_600_bytes() {
        let row: serde_json::Map<String, Value> = (0..200)
            .map(|i| (format!("column_number_{i}"), json!(i)))
            .collect();
        let p = Payload::Json(json!({"results": [Value::Object(row)]}));
        let s = Summary::of(&p);
        assert_eq!(s.kind, "table");
        assert_eq!(s.table_path.as_deref(), Some("results"));
        let t = s.text(&"/very/long/path/".repeat(40), 123_456_789, "csv", "");
        assert!(t.len() <= MAX_TEXT, "{}", t.len());
        assert!(
            t.contains("1 rows x 200 columns")
                && t.contains("column_number_0 integer")
                && t.contains("more)"),
            "{t}"
        );
    }

    #[test]
    fn other_shapes() {
        assert_eq!(Summary::of(&Payload::Text("a\nb".into())).lines, Some(2));
        assert_eq!(
            Summary::of(&Payload::Json(json!({"a": 1, "b": [1]}))).key_count,
            Some(2)
        );
        assert_eq!(Summary::of(&Payload::Json(json!([1, 2, 3]))).items, Some(3));
        assert_eq!(
            Summary::of(&Payload::Json(json!(true)))
                .value_type
                .as_deref(),
            Some("boolean")
        );
    }
}
