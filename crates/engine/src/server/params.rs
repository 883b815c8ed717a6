//! The parameters of each tool, as the model sends them. Their JSON Schemas are generated from
//! these types, so the schema a model reads and the parser that checks its call cannot drift.
//! Unknown fields are refused (-32602) rather than silently ignored.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListAllowedDirectories {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListAvailableTools {
    /// Include input schemas (bigger answer).
    #[serde(default)]
    pub detailed: bool,
    /// Only list the tools of this upstream server.
    #[serde(default)]
    pub filter_by_server: Option<String>,
    /// Words describing what you need; best matches first.
    #[serde(default)]
    pub query: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListToolDetails {
    /// The upstream server's name, as listed by list_available_tools.
    pub server: String,
    /// The tool's name on that server.
    pub tool_name: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CallTool {
    /// The upstream server's name, as listed by list_available_tools.
    pub server: String,
    /// The tool's name on that server.
    pub tool_name: String,
    /// The tool's arguments. {"$file": "<path>"} anywhere is replaced by the file's text
    /// ("as": "data" for parsed data, "base64" for bytes).
    #[serde(default, deserialize_with = "object_or_json_text")]
    #[schemars(with = "Option<Map<String, Value>>")]
    pub tool_args: Option<Map<String, Value>>,
}

/// Accepts an object, or a string holding a JSON object (models often send that), or null.
fn object_or_json_text<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<Map<String, Value>>, D::Error> {
    use serde::de::Error;
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m)),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(&s) {
            Ok(Value::Object(m)) => Ok(Some(m)),
            _ => Err(D::Error::custom(
                "tool_args must be a JSON object (got a string that is not a JSON object)",
            )),
        },
        Some(other) => Err(D::Error::custom(format!(
            "tool_args must be a JSON object, not {}",
            kind(&other)
        ))),
    }
}

pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CallToolAndStore {
    /// The upstream server's name, as listed by list_available_tools.
    pub server: String,
    /// The tool's name on that server.
    pub tool_name: String,
    /// The tool's arguments ($file references allowed).
    #[serde(default, deserialize_with = "object_or_json_text")]
    #[schemars(with = "Option<Map<String, Value>>")]
    pub tool_args: Option<Map<String, Value>>,
    /// What this is, in a few words (shown to the user).
    #[serde(default)]
    pub description: Option<String>,
    /// Directory (or s3://... prefix) inside a writable allowed directory (default: the default directory).
    #[serde(default)]
    pub storage_path: Option<String>,
    /// A file name, not a path; never overwrites.
    #[serde(default)]
    pub filename: Option<String>,
    /// json (default), jsonl, csv, tsv, yaml, xml, md, html, txt.
    #[serde(default)]
    pub file_format: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CallToolWithFileContent {
    /// The upstream server.
    pub server: String,
    /// Its tool.
    pub tool_name: String,
    /// A file, glob ("data/*.csv") or allowed URL.
    #[serde(default)]
    pub file_path: String,
    /// Or several files/globs: rows joined in order.
    #[serde(default)]
    pub file_paths: Option<Vec<String>>,
    /// Add each row's file as source_file.
    #[serde(default)]
    pub source_file: Option<bool>,
    /// Argument that takes the data, dotted ("rows"); without it a JSON object file becomes
    /// the arguments.
    #[serde(default)]
    pub data_key: Option<String>,
    /// Other arguments.
    #[serde(default, deserialize_with = "object_or_json_text")]
    #[schemars(with = "Option<Map<String, Value>>")]
    pub tool_args: Option<Map<String, Value>>,
    /// json (default), string (text only), markdown, structured or raw.
    #[serde(default)]
    pub output_format: Option<String>,
    /// Input format if not the extension's (csv, jsonl, xlsx, ...).
    #[serde(default)]
    pub file_format: Option<String>,
    /// Sheet name or 0-based index.
    #[serde(default)]
    pub sheet: Option<String>,
    /// CSV/TSV: type all-number/boolean columns (default true); 00123 stays text.
    #[serde(default)]
    pub infer_types: Option<bool>,
    /// Column types: string, integer, number, boolean, json, list.
    #[serde(default)]
    pub column_types: Option<std::collections::BTreeMap<String, String>>,
    /// Splits list columns (default ";").
    #[serde(default)]
    pub list_separator: Option<String>,
    /// Call per this many items, streamed (no size limit). Needs data_key.
    #[serde(default)]
    pub batch_size: Option<u64>,
    /// Batches: go on after failures.
    #[serde(default)]
    pub continue_on_error: bool,
    /// Store the answer, described so.
    #[serde(default)]
    pub description: Option<String>,
    /// Store the answer in this directory.
    #[serde(default)]
    pub storage_path: Option<String>,
    /// Store the answer under this name.
    #[serde(default)]
    pub filename: Option<String>,
    /// Store the answer in this format.
    #[serde(default)]
    pub response_format: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetFileSchema {
    /// Absolute, ~/..., relative to the default dir, s3://... or an allowed URL
    pub path: String,
    /// Sample values per column.
    #[serde(default = "five")]
    pub sample_rows: usize,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SummarizeFile {
    /// Absolute, ~/..., relative to the default dir, s3://... or an allowed URL
    pub path: String,
    /// Lines from the start.
    #[serde(default = "twenty")]
    pub max_lines: u64,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFile {
    /// Absolute, ~/..., relative to the default dir, s3://... or an allowed URL
    pub path: String,
    /// desktop-commander's flag for a URL in `path`: accepted, not listed (a URL is known by
    /// its scheme anyway).
    #[serde(default, rename = "isUrl")]
    #[schemars(skip)]
    pub is_url: Option<bool>,
    /// First line, row or page (0-based); negative: the last lines.
    #[serde(default)]
    pub offset: i64,
    /// Lines, rows or pages to read.
    #[serde(default = "thousand")]
    pub length: u64,
    /// Sheet name or 0-based index.
    #[serde(default, deserialize_with = "text_or_number")]
    #[schemars(with = "Option<String>")]
    pub sheet: Option<String>,
    /// Cells, A1:D100.
    #[serde(default)]
    pub range: Option<String>,
    /// Go on inside a long line (the answer's next_byte_offset).
    #[serde(default)]
    pub byte_offset: Option<u64>,
}

fn five() -> usize {
    5
}
fn twenty() -> u64 {
    20
}
fn thousand() -> u64 {
    1000
}

/// A sheet named by text or by a number.
fn text_or_number<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    use serde::de::Error;
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(Value::Number(n)) => Ok(Some(n.to_string())),
        Some(other) => Err(D::Error::custom(format!(
            "sheet must be a name or an index, not {other}"
        ))),
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueryFile {
    /// The file; it is the table `data` (a sheet: book.xlsx#Sheet1).
    pub path: String,
    /// One SELECT over data and tables.
    #[serde(default)]
    pub sql: Option<String>,
    /// A jq program, for JSON/JSONL/YAML (instead of sql).
    #[serde(default)]
    pub jq: Option<String>,
    /// More tables: {"name": "path"}.
    #[serde(default)]
    pub tables: Option<std::collections::BTreeMap<String, String>>,
    /// Rows to return (default 100).
    #[serde(default)]
    pub limit: Option<u64>,
    /// Store the whole result as a file, described so.
    #[serde(default)]
    pub description: Option<String>,
    /// Store it in this directory.
    #[serde(default)]
    pub storage_path: Option<String>,
    /// Store it under this name.
    #[serde(default)]
    pub filename: Option<String>,
    /// Store it as csv (default), parquet, json, jsonl, tsv, md, ...
    #[serde(default)]
    pub file_format: Option<String>,
}
