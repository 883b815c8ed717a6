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
    /// With input schemas.
    #[serde(default)]
    pub detailed: bool,
    /// One server's tools only.
    #[serde(default)]
    pub filter_by_server: Option<String>,
    /// What you need, in words.
    #[serde(default)]
    pub query: Option<String>,
    /// Results (5, at most 20).
    #[serde(default)]
    pub limit: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListToolDetails {
    pub server: String,
    pub tool_name: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunScript {
    /// Body of an async function; return the answer.
    pub code: String,
    /// Deadline (30000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

/// Accepts an object, or a string holding a JSON object (models often send that), or null.
pub(in crate::server) fn object_or_json_text<'de, D: Deserializer<'de>>(
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
pub struct CallToolWithFileContent {
    pub server: String,
    pub tool_name: String,
    /// A file, glob or allowed URL.
    #[serde(default)]
    pub file_path: String,
    /// Several files or globs, rows joined.
    #[serde(default)]
    pub file_paths: Option<Vec<String>>,
    // Adds each row's file as `source_file`.
    #[serde(default)]
    pub source_file: Option<bool>,
    /// The argument that takes the data (dotted); without it a JSON object file is the
    /// arguments.
    #[serde(default)]
    pub data_key: Option<String>,
    #[serde(default, deserialize_with = "object_or_json_text")]
    #[schemars(with = "Option<Map<String, Value>>")]
    pub tool_args: Option<Map<String, Value>>,
    // json (default), string, markdown, structured, raw: said in an error when wrong.
    #[serde(default)]
    pub output_format: Option<String>,
    /// When the extension does not say.
    #[serde(default)]
    pub file_format: Option<String>,
    /// Name or 0-based index.
    #[serde(default)]
    pub sheet: Option<String>,
    // Types all-number and all-boolean CSV columns (default true); 00123 stays text.
    #[serde(default)]
    pub infer_types: Option<bool>,
    /// {column: string|integer|number|boolean|json|list}
    #[serde(default)]
    pub column_types: Option<std::collections::BTreeMap<String, String>>,
    // Splits `list` columns (default ";").
    #[serde(default)]
    pub list_separator: Option<String>,
    /// Items per call, streamed: any size. Needs data_key.
    #[serde(default)]
    pub batch_size: Option<u64>,
    // Batches: go on after a failed one.
    #[serde(default)]
    pub continue_on_error: bool,
    // Storing the answer, as call_tool_and_store does (said in the tool's description).
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub storage_path: Option<String>,
    #[serde(default)]
    pub filename: Option<String>,
    #[serde(default)]
    pub response_format: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetFileSchema {
    /// Absolute, relative to the default directory, s3:// or an allowed URL.
    pub path: String,
    /// Sample values per column (5).
    #[serde(default = "five")]
    pub sample_rows: usize,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SummarizeFile {
    pub path: String,
    /// Lines from the start (20).
    #[serde(default = "twenty")]
    pub max_lines: u64,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFile {
    pub path: String,
    /// desktop-commander's flag for a URL in `path`: accepted, not listed (a URL is known by
    /// its scheme anyway).
    #[serde(default, rename = "isUrl")]
    #[schemars(skip)]
    pub is_url: Option<bool>,
    /// First line, row or page (0-based); negative: from the end.
    #[serde(default)]
    pub offset: i64,
    /// How many (1000).
    #[serde(default = "thousand")]
    pub length: u64,
    /// Name or 0-based index.
    #[serde(default, deserialize_with = "text_or_number")]
    #[schemars(with = "Option<String>")]
    pub sheet: Option<String>,
    /// Cells, A1:D100.
    #[serde(default)]
    pub range: Option<String>,
    /// From the answer's next_byte_offset.
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
    /// The table `data` (a sheet: book.xlsx#Sheet1).
    pub path: String,
    /// One SELECT.
    #[serde(default)]
    pub sql: Option<String>,
    /// Instead of sql, for JSON, JSONL, YAML.
    #[serde(default)]
    pub jq: Option<String>,
    /// More tables: {"name": "path"}.
    #[serde(default)]
    pub tables: Option<std::collections::BTreeMap<String, String>>,
    /// Rows answered (100).
    #[serde(default)]
    pub limit: Option<u64>,
    /// Stores the whole result, described so.
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub storage_path: Option<String>,
    #[serde(default)]
    pub filename: Option<String>,
    /// csv (default), parquet, json, jsonl, ...
    #[serde(default)]
    pub file_format: Option<String>,
}
