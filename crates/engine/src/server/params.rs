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
    /// Include each tool's full input schema (bigger answer). Default false.
    #[serde(default)]
    pub detailed: bool,
    /// Only list the tools of this upstream server.
    #[serde(default)]
    pub filter_by_server: Option<String>,
    /// Keywords matched against server, tool name and description; best matches first.
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
    /// The tool's arguments (an object matching its input schema). Any value of the form
    /// {"$file": "<path>"} is replaced by that file's content before the call.
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
    /// The tool's arguments (an object matching its input schema).
    #[serde(default, deserialize_with = "object_or_json_text")]
    #[schemars(with = "Option<Map<String, Value>>")]
    pub tool_args: Option<Map<String, Value>>,
    /// What this response is, in a few words (shown to the user with the stored file).
    #[serde(default)]
    pub description: Option<String>,
    /// Directory to store in: inside a writable allowed directory (created if missing).
    /// Default: the default directory.
    #[serde(default)]
    pub storage_path: Option<String>,
    /// A file name (not a path). Default: <server>-<tool>-<UTC time>-<random>.<ext>.
    /// An existing file is never overwritten.
    #[serde(default)]
    pub filename: Option<String>,
    /// json (default), jsonl, csv, tsv, yaml, xml, md, html or txt. Tables (lists of objects)
    /// become real tables in csv, tsv, md and html.
    #[serde(default)]
    pub file_format: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CallToolWithFileContent {
    /// The upstream server's name, as listed by list_available_tools.
    pub server: String,
    /// The tool's name on that server.
    pub tool_name: String,
    /// The file to send: absolute, ~/..., or relative to the default directory; it must lie in an
    /// allowed directory.
    pub file_path: String,
    /// Where the file's data goes in the arguments, as a dotted path (e.g. "rows" or
    /// "spec.data.rows"). Without it, a file holding a JSON object becomes the arguments
    /// (merged with tool_args); a list or a text needs a data_key.
    #[serde(default)]
    pub data_key: Option<String>,
    /// Other arguments of the tool.
    #[serde(default, deserialize_with = "object_or_json_text")]
    #[schemars(with = "Option<Map<String, Value>>")]
    pub tool_args: Option<Map<String, Value>>,
    /// json (default: the upstream result as JSON text) or string (only its text).
    #[serde(default)]
    pub output_format: Option<String>,
    /// Force the input format: json, jsonl, ndjson, csv, tsv, yaml, yml, xml, txt, xlsx, xls,
    /// ods. Default: by the file's extension.
    #[serde(default)]
    pub file_format: Option<String>,
    /// Spreadsheets: the sheet to read, by name or 0-based index (default: the first).
    #[serde(default)]
    pub sheet: Option<String>,
    /// CSV/TSV: turn cells that clearly are numbers, booleans or empty into those (default true).
    /// Values like 00123, +1 or ids longer than 15 digits stay strings.
    #[serde(default)]
    pub infer_types: Option<bool>,
    /// For list data: call the tool once per this many items, streaming the file (no size
    /// limit; each call must fit the message budget). Needs data_key.
    #[serde(default)]
    pub batch_size: Option<u64>,
    /// In batch mode, go on after a failed batch (default: stop at the first failure).
    #[serde(default)]
    pub continue_on_error: bool,
    /// Store the upstream answer as a file (as call_tool_and_store does) with this description.
    #[serde(default)]
    pub description: Option<String>,
    /// Store the upstream answer in this directory.
    #[serde(default)]
    pub storage_path: Option<String>,
    /// Store the upstream answer under this file name.
    #[serde(default)]
    pub filename: Option<String>,
    /// Store the upstream answer in this format (json, csv, yaml, ...).
    #[serde(default)]
    pub response_format: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetFileSchema {
    /// The file: absolute, `~/...`, or relative to the default directory.
    pub path: String,
    /// Distinct sample values shown per column (default 5).
    #[serde(default = "five")]
    pub sample_rows: usize,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SummarizeFile {
    /// The file: absolute, `~/...`, or relative to the default directory.
    pub path: String,
    /// Lines shown from the start (default 20).
    #[serde(default = "twenty")]
    pub max_lines: u64,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFile {
    /// The file: absolute, `~/...`, or relative to the default directory.
    pub path: String,
    /// First line to read, 0-based (text); first row of the range (sheets); first page, 0-based
    /// (PDF). A negative value reads the last |offset| lines of a text file.
    #[serde(default)]
    pub offset: i64,
    /// Lines (text), rows (sheets) or pages (PDF) to read (default 1000); the answer may hold
    /// fewer when the size budget cuts it, and says where to go on.
    #[serde(default = "thousand")]
    pub length: u64,
    /// Spreadsheets: the sheet, by name or 0-based index (default: the first).
    #[serde(default, deserialize_with = "text_or_number")]
    #[schemars(with = "Option<String>")]
    pub sheet: Option<String>,
    /// Spreadsheets: cells to read in A1:D100 form (default: the used range).
    #[serde(default)]
    pub range: Option<String>,
    /// Text: read from this byte instead of a line, to go on inside a very long line (the
    /// answer's next_byte_offset).
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
