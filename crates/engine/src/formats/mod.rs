//! Renderers: a JSON value (or a text) written as a valid file of each format, with real
//! libraries (serde_json, csv, serde_yaml, quick-xml, html-escape). Every output parses back with
//! a standard parser of its kind and gives the same values (see the round-trip tests).
//!
//! Renderers write to any `io::Write` and flatten rows one at a time, so rendering costs little
//! beyond the value itself. They never fail on content: every JSON value has an output in every
//! format (tables for table-shaped values, documented fallbacks otherwise).

mod delimited;
mod html;
mod markdown;
pub mod table;
mod xml;
mod yaml;

use std::io::Write;

use serde_json::Value;

/// What is being stored: a JSON value, or a text that is not JSON.
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    Json(Value),
    Text(String),
}

/// The output formats of `call_tool_and_store`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Json,
    Jsonl,
    Csv,
    Tsv,
    Yaml,
    Xml,
    Md,
    Html,
    Txt,
}

impl Format {
    pub const ALL: [Format; 9] = [
        Format::Json,
        Format::Jsonl,
        Format::Csv,
        Format::Tsv,
        Format::Yaml,
        Format::Xml,
        Format::Md,
        Format::Html,
        Format::Txt,
    ];

    /// Parses a format name; accepts the usual aliases (`yml`, `markdown`, `ndjson`, `text`).
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name.trim().to_ascii_lowercase().as_str() {
            "json" => Self::Json,
            "jsonl" | "ndjson" => Self::Jsonl,
            "csv" => Self::Csv,
            "tsv" => Self::Tsv,
            "yaml" | "yml" => Self::Yaml,
            "xml" => Self::Xml,
            "md" | "markdown" => Self::Md,
            "html" | "htm" => Self::Html,
            "txt" | "text" => Self::Txt,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Json => "json",
            Self::Jsonl => "jsonl",
            Self::Csv => "csv",
            Self::Tsv => "tsv",
            Self::Yaml => "yaml",
            Self::Xml => "xml",
            Self::Md => "md",
            Self::Html => "html",
            Self::Txt => "txt",
        }
    }

    /// The file extension (without the dot).
    pub fn extension(self) -> &'static str {
        self.name()
    }

    pub fn mime_type(self) -> &'static str {
        match self {
            Self::Json => "application/json",
            Self::Jsonl => "application/jsonl",
            Self::Csv => "text/csv",
            Self::Tsv => "text/tab-separated-values",
            Self::Yaml => "application/yaml",
            Self::Xml => "application/xml",
            Self::Md => "text/markdown",
            Self::Html => "text/html",
            Self::Txt => "text/plain",
        }
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
    /// Characters XML 1.0 cannot hold (control characters) that were replaced by U+FFFD.
    pub replaced_chars: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TableInfo {
    pub path: Option<String>,
    pub rows: usize,
    pub columns: Vec<(String, &'static str)>,
}

/// Writes `payload` as `format` to `out`.
pub fn render(payload: &Payload, format: Format, out: &mut dyn Write) -> std::io::Result<Rendered> {
    match (format, payload) {
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
    let Payload::Json(v) = payload else {
        return None;
    };
    let view = table::find(v)?;
    let cols = table::columns(view.rows);
    let types = table::column_types(view.rows, &cols);
    Some(TableInfo {
        path: view.path.map(str::to_owned),
        rows: view.rows.len(),
        columns: cols.into_iter().zip(types).collect(),
    })
}

#[cfg(test)]
mod tests;
