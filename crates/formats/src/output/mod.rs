//! Renderers: a JSON value (or a text) written as a valid file of each format, with real
//! libraries (serde_json, csv, serde_yaml, quick-xml, html-escape). Every output parses back with
//! a standard parser of its kind and gives the same values (see the round-trip tests).
//!
//! Renderers write to any `io::Write` and flatten rows one at a time, so rendering costs little
//! beyond the value itself. They never fail on content: every JSON value has an output in every
//! format (tables for table-shaped values, documented fallbacks otherwise).

pub mod delimited;
mod flat;
pub use offload_query::grid;
mod html;
pub mod markdown;
pub mod pyrepr;
#[cfg(any(test, feature = "readback"))]
pub mod readback;
mod skip;
pub mod stream;
pub mod table;
mod xml;
mod yaml;

use std::io::Write;

use serde_json::Value;

use crate::Format;

/// The fields servers wrap a text answer in (`{"content": "<text>"}`, the Python SDK's
/// `{"result": ...}`, markitdown's, fetch's): the answer is the text.
const TEXT_WRAPPERS: &[&str] = &[
    "content", "result", "text", "output", "markdown", "stdout", "body", "snapshot",
];

/// Whether a text reads as Markdown: an ATX heading, a code fence or a table rule at the
/// start of a line among its first 400 lines.
pub fn looks_like_markdown(text: &str) -> bool {
    text.lines().take(400).any(|line| {
        is_heading(line)
            || line.starts_with("```")
            || line.starts_with("|---")
            || line.starts_with("| ---")
    })
}

/// Whether `line` is a Markdown ATX heading (`#` to `######`, then a space).
pub fn is_heading(line: &str) -> bool {
    let hashes = line.bytes().take_while(|b| *b == b'#').count();
    (1..=6).contains(&hashes) && line.as_bytes().get(hashes) == Some(&b' ')
}

/// What is being stored: a JSON value, a JSON text (kept as text and streamed, with its shape
/// found in one pass), or a text that is not JSON.
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    Json(Value),
    JsonText { text: String, shape: stream::Shape },
    Text(String),
}

impl Payload {
    /// A text block: JSON text when it parses as JSON, rows when it is a Python literal list
    /// of dicts (servers that answer `str(rows)`), plain text otherwise.
    pub fn from_text(text: String) -> Self {
        match stream::scan(&text) {
            Ok(shape) => Payload::JsonText { text, shape },
            Err(_) => match pyrepr::parse_rows(&text) {
                Some(rows) => Payload::Json(rows),
                None => Payload::Text(text),
            },
        }
    }

    /// Structured content. An object whose only field is a string holding a JSON object or
    /// list — the Python SDK's `{"result": "<json>"}` for tools that return `str`,
    /// server-filesystem's `{"content": "<json>"}` — is that JSON; one holding a Python
    /// literal list of dicts (`{"result": "[{'id': 1}]"}`) is those rows; one of the usual
    /// wrappers (`content`, `result`, `text`, …) holding any other string is that text.
    pub fn from_structured(value: Value) -> Self {
        let Value::Object(map) = value else {
            return Payload::Json(value);
        };
        let Some((key, Value::String(text))) = map.iter().next().filter(|_| map.len() == 1) else {
            return Payload::Json(Value::Object(map));
        };
        let json = matches!(
            text.trim_start().as_bytes().first(),
            Some(b'{' | b'[' | b'(')
        );
        if !json && !TEXT_WRAPPERS.contains(&key.as_str()) {
            return Payload::Json(Value::Object(map));
        }
        let Some((_, Value::String(text))) = map.into_iter().next() else {
            unreachable!("checked above: one string field");
        };
        Payload::from_text(text).into_text()
    }

    /// A payload whose table comes as rows of values (`{columns, rows}`, `{values}`: see
    /// `grid`) with that table as objects; a JSON text is parsed only when its keys say so.
    pub fn tabulated(self) -> Self {
        match self {
            Payload::Json(v) => Payload::Json(grid::as_objects(v)),
            Payload::JsonText {
                text,
                shape: stream::Shape::Object { keys, count },
            } if grid::may_hold(&keys) => match serde_json::from_str::<Value>(&text) {
                Ok(v) => Payload::Json(grid::as_objects(v)),
                Err(_) => Payload::JsonText {
                    text,
                    shape: stream::Shape::Object { keys, count },
                },
            },
            other => other,
        }
    }

    /// A payload that is one string (a JSON string text, a string value) as that text.
    pub fn into_text(self) -> Self {
        match self {
            Payload::Json(Value::String(text)) => Payload::Text(text),
            Payload::JsonText {
                text,
                shape: stream::Shape::Text { .. },
            } => match serde_json::from_str::<String>(&text) {
                Ok(s) => Payload::Text(s),
                Err(_) => Payload::Text(text),
            },
            other => other,
        }
    }

    /// The payload as a value (parses a JSON text: only for renderers that need the whole
    /// document at once).
    pub fn to_value(&self) -> std::io::Result<std::borrow::Cow<'_, Value>> {
        use std::borrow::Cow;
        match self {
            Payload::Json(v) => Ok(Cow::Borrowed(v)),
            Payload::JsonText { text, .. } => Ok(Cow::Owned(
                serde_json::from_str(text).map_err(std::io::Error::other)?,
            )),
            Payload::Text(t) => Ok(Cow::Owned(Value::String(t.clone()))),
        }
    }
}

/// A table-shaped payload: its columns and its rows, visited in order.
pub struct TableSource<'a> {
    pub info: TableInfo,
    pub columns: indexmap::IndexSet<String>,
    rows: Rows<'a>,
}

enum Rows<'a> {
    Values(&'a [Value]),
    Text {
        text: &'a str,
        path: Option<&'a str>,
    },
}

impl TableSource<'_> {
    /// Calls `f` with each row's cells in column order (streamed from a JSON text: one row in
    /// memory at a time).
    pub fn for_each_row(
        &self,
        f: &mut dyn FnMut(&[&str]) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        match &self.rows {
            Rows::Values(rows) => rows.iter().try_for_each(|row| {
                let cells = table::row_cells(row, &self.columns);
                let texts: Vec<std::borrow::Cow<'_, str>> =
                    cells.iter().map(|c| c.as_text()).collect();
                let refs: Vec<&str> = texts.iter().map(|t| t.as_ref()).collect();
                f(&refs)
            }),
            Rows::Text { text, path } => stream::for_each_flat_row(text, *path, &mut |leaves| {
                let mut placed = Vec::with_capacity(self.columns.len());
                flat::place(leaves, &self.columns, &mut placed);
                f(&placed)
            })
            .map(|_| ()),
        }
    }
}

/// The table view of a payload, if it is table-shaped.
pub fn table_source(payload: &Payload) -> Option<TableSource<'_>> {
    match payload {
        Payload::Json(v) => {
            let view = table::find(v)?;
            let columns = table::columns(view.rows);
            let types = table::column_types(view.rows, &columns);
            Some(TableSource {
                info: TableInfo {
                    path: view.path.map(str::to_owned),
                    rows: view.rows.len(),
                    columns: columns.iter().cloned().zip(types).collect(),
                },
                columns,
                rows: Rows::Values(view.rows),
            })
        }
        Payload::JsonText {
            text,
            shape:
                stream::Shape::Table {
                    path,
                    rows,
                    columns,
                },
        } => Some(TableSource {
            info: TableInfo {
                path: path.clone(),
                rows: *rows,
                columns: columns.clone(),
            },
            columns: columns.iter().map(|(c, _)| c.clone()).collect(),
            rows: Rows::Text {
                text,
                path: path.as_deref(),
            },
        }),
        _ => None,
    }
}

/// The tables of a payload that holds several (an object with several lists of objects), by
/// field, in order.
pub fn table_sources(payload: &Payload) -> Option<Vec<TableSource<'_>>> {
    match payload {
        Payload::Json(v) => Some(
            table::find_tables(v)?
                .into_iter()
                .map(|(path, rows)| {
                    let columns = table::columns(rows);
                    let types = table::column_types(rows, &columns);
                    TableSource {
                        info: TableInfo {
                            path: Some(path.to_owned()),
                            rows: rows.len(),
                            columns: columns.iter().cloned().zip(types).collect(),
                        },
                        columns,
                        rows: Rows::Values(rows),
                    }
                })
                .collect(),
        ),
        Payload::JsonText {
            text,
            shape: stream::Shape::Tables { tables },
        } => Some(
            tables
                .iter()
                .map(|t| TableSource {
                    info: TableInfo {
                        path: Some(t.path.clone()),
                        rows: t.rows,
                        columns: t.columns.clone(),
                    },
                    columns: t.columns.iter().map(|(c, _)| c.clone()).collect(),
                    rows: Rows::Text {
                        text,
                        path: Some(t.path.as_str()),
                    },
                })
                .collect(),
        ),
        _ => None,
    }
}

/// What a renderer did, for the summary.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rendered {
    /// Set when the output is a table: the list used (`None` = the value itself), rows and
    /// typed columns.
    pub table: Option<TableInfo>,
    /// True when a non-table value was written with the documented fallback layout.
    pub fallback: bool,
    /// The tables written, when the payload holds several (Markdown and HTML sections).
    pub tables: Vec<TableInfo>,
    /// Characters XML 1.0 cannot hold (control characters) that were replaced by U+FFFD.
    pub replaced_chars: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TableInfo {
    pub path: Option<String>,
    pub rows: usize,
    pub columns: Vec<(String, &'static str)>,
}

/// Writes `payload` as `format` to `out` (any of [`Format::OUTPUTS`]; a workbook is an error).
pub fn render(
    payload: &Payload,
    format: Format,
    out: &mut (dyn Write + Send),
) -> std::io::Result<Rendered> {
    match (format, payload) {
        (Format::Sheet, _) => Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "workbooks are read, not written: store as csv or parquet",
        )),
        (Format::Parquet, payload) => parquet(payload, out),
        (Format::Json, Payload::Json(v)) => {
            serde_json::to_writer_pretty(&mut *out, v)?;
            out.write_all(b"\n")?;
            Ok(Rendered::default())
        }
        (Format::Json, Payload::Text(t)) => {
            serde_json::to_writer(&mut *out, t)?;
            out.write_all(b"\n")?;
            Ok(Rendered::default())
        }
        (Format::Jsonl, Payload::Json(Value::Array(items))) => {
            for item in items {
                serde_json::to_writer(&mut *out, item)?;
                out.write_all(b"\n")?;
            }
            Ok(Rendered::default())
        }
        (Format::Jsonl, Payload::Json(v)) => {
            serde_json::to_writer(&mut *out, v)?;
            out.write_all(b"\n")?;
            Ok(Rendered::default())
        }
        (Format::Json, Payload::JsonText { text, .. }) => {
            // Re-indented as it streams: nothing is held but the current nesting.
            let mut de = serde_json::Deserializer::from_str(text);
            let mut ser = serde_json::Serializer::pretty(&mut *out);
            serde_transcode::transcode(&mut de, &mut ser).map_err(std::io::Error::other)?;
            out.write_all(b"\n")?;
            Ok(Rendered::default())
        }
        (Format::Jsonl, Payload::JsonText { text, shape }) => {
            if matches!(
                shape,
                stream::Shape::Table { path: None, .. } | stream::Shape::Array { .. }
            ) {
                stream::for_each_row(text, None, &mut |item| {
                    serde_json::to_writer(&mut *out, &item)?;
                    out.write_all(b"\n")
                })?;
            } else {
                let mut de = serde_json::Deserializer::from_str(text);
                let mut ser = serde_json::Serializer::new(&mut *out);
                serde_transcode::transcode(&mut de, &mut ser).map_err(std::io::Error::other)?;
                out.write_all(b"\n")?;
            }
            Ok(Rendered::default())
        }
        (Format::Txt, Payload::JsonText { text, shape }) => {
            // The text the tool returned; a JSON string is written as its content.
            if matches!(shape, stream::Shape::Text { .. }) {
                let s: String = serde_json::from_str(text).map_err(std::io::Error::other)?;
                out.write_all(s.as_bytes())?;
            } else {
                out.write_all(text.as_bytes())?;
            }
            Ok(Rendered::default())
        }
        (Format::Jsonl, Payload::Text(t)) => {
            serde_json::to_writer(&mut *out, t)?;
            out.write_all(b"\n")?;
            Ok(Rendered::default())
        }
        (Format::Csv, p) => delimited::write(p, b',', out),
        (Format::Tsv, p) => delimited::write(p, b'\t', out),
        (Format::Yaml, p) => yaml::write(p, out),
        (Format::Xml, p) => xml::write(p, out),
        (Format::Md, p) => markdown::write(p, out),
        (Format::Html, p) => html::write(p, out),
        (Format::Txt, Payload::Text(t)) => {
            out.write_all(t.as_bytes())?;
            Ok(Rendered::default())
        }
        (Format::Txt, Payload::Json(Value::String(s))) => {
            out.write_all(s.as_bytes())?;
            Ok(Rendered::default())
        }
        (Format::Txt, Payload::Json(v)) => {
            serde_json::to_writer_pretty(&mut *out, v)?;
            out.write_all(b"\n")?;
            Ok(Rendered::default())
        }
    }
}

/// The table view of a payload, with column types, or `None` for non-tables.
pub fn table_info(payload: &Payload) -> Option<TableInfo> {
    table_source(payload).map(|t| t.info)
}

#[cfg(test)]
mod tests;

/// Parquet from the payload's table (every row, typed over all of them); a payload that is not
/// a table is written as its rows (a list) or one row (anything else), in a `value` column.
fn parquet(payload: &Payload, out: &mut (dyn Write + Send)) -> std::io::Result<Rendered> {
    let value = payload.to_value()?;
    let (rows, path): (std::borrow::Cow<'_, [Value]>, Option<&str>) = match table::find(&value) {
        Some(view) => (std::borrow::Cow::Borrowed(view.rows), view.path),
        None => match value.as_ref() {
            Value::Array(items) => (std::borrow::Cow::Borrowed(items.as_slice()), None),
            other => (std::borrow::Cow::Owned(vec![other.clone()]), None),
        },
    };
    let written = offload_query::parquet::write_rows(&rows, out).map_err(std::io::Error::other)?;
    let is_table = rows.iter().all(Value::is_object);
    Ok(Rendered {
        table: is_table.then(|| TableInfo {
            path: path.map(str::to_owned),
            rows: written.row_count as usize,
            columns: written
                .columns
                .into_iter()
                .map(|c| (c.name, parquet_type(&c.kind)))
                .collect(),
        }),
        fallback: !is_table,
        ..Rendered::default()
    })
}

/// The summary's column type of a Parquet column.
fn parquet_type(kind: &str) -> &'static str {
    match kind {
        "integer" => "integer",
        "number" => "number",
        "boolean" => "boolean",
        "null" => "null",
        "object" => "object",
        "array" => "array",
        _ => "string",
    }
}
