//! The tools Offload offers: names, titles, descriptions written for a model, schemas and
//! honest annotations. Tool names and parameter names are part of the contract.

use std::sync::Arc;

use rmcp::handler::server::common::{schema_for_output, schema_for_type};
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde_json::{Value, json};

use super::{discovery, params, query, store};
use crate::files;

pub const LIST_ALLOWED_DIRECTORIES: &str = "list_allowed_directories";
pub const LIST_AVAILABLE_TOOLS: &str = "list_available_tools";
pub const LIST_TOOL_DETAILS: &str = "list_tool_details";
pub const CALL_TOOL: &str = "call_tool";
pub const CALL_TOOL_AND_STORE: &str = "call_tool_and_store";
pub const CALL_TOOL_WITH_FILE_CONTENT: &str = "call_tool_with_file_content";
pub const GET_FILE_SCHEMA: &str = "get_file_schema";
pub const SUMMARIZE_FILE: &str = "summarize_file";
pub const READ_FILE: &str = "read_file";
pub const QUERY_FILE: &str = "query_file";

/// Every tool of the server, in the order clients show them.
pub fn tools() -> Vec<Tool> {
    vec![
        tool(
            LIST_ALLOWED_DIRECTORIES,
            "List allowed directories",
            "The directories Offload may use (the user chooses them) and the default one, where \
             answers are stored and relative paths resolve.",
            schema_for_type::<params::ListAllowedDirectories>(),
            Some(with_error::<discovery::AllowedDirectories>(&[
                "directories",
                "default_directory",
            ])),
            reads(/* contacts upstreams: */ false),
        ),
        tool(
            LIST_AVAILABLE_TOOLS,
            "Find upstream tools",
            "Find upstream tools by what you need (query: \"git history\") and see each \
             server's status; then call one with call_tool.",
            schema_for_type::<params::ListAvailableTools>(),
            Some(with_error::<discovery::AvailableTools>(&[
                "tools", "servers", "note",
            ])),
            reads(/* contacts upstreams: */ true),
        ),
        tool(
            LIST_TOOL_DETAILS,
            "Show one upstream tool",
            "An upstream tool's whole definition, to check its arguments.",
            schema_for_type::<params::ListToolDetails>(),
            Some(with_error::<discovery::ToolDetails>(&[
                "inputSchema",
                "outputSchema",
            ])),
            reads(/* contacts upstreams: */ true),
        ),
        tool(
            CALL_TOOL,
            "Call an upstream tool",
            "Call an upstream tool. An answer over the inline budget is stored as a file: you get \
             its path and a summary.",
            schema_for_type::<params::CallTool>(),
            None,
            // It calls whatever the upstream tool does, which may change or delete things.
            calls_upstream(),
        ),
        tool(
            CALL_TOOL_AND_STORE,
            "Call an upstream tool and store its answer in a file",
            "Call an upstream tool and write its answer to a file instead of your context: you \
             get the path and a summary (typed columns for tables); ask the file questions with \
             query_file.",
            schema_for_type::<params::CallToolAndStore>(),
            Some(with_error::<store::StoredAnswer>(&[
                "uri", "path", "bytes", "summary",
            ])),
            // Calls the upstream tool (which may change things) and creates a file; it never
            // replaces an existing file.
            calls_upstream(),
        ),
        tool(
            CALL_TOOL_WITH_FILE_CONTENT,
            "Call an upstream tool with a file's data as arguments",
            "Pass a file's data (CSV, TSV, JSON, JSONL, YAML, XML, Excel, text) to an upstream \
             tool without it passing through you (description, storage_path, filename, \
             response_format: store the answer). Example: \
             {\"server\": \"db\", \"tool_name\": \"insert\", \"file_path\": \"a.csv\", \
             \"data_key\": \"rows\", \"batch_size\": 5000}",
            schema_for_type::<params::CallToolWithFileContent>(),
            None,
            // Calls the upstream tool with the file's data: it may change anything.
            calls_upstream(),
        ),
        tool(
            GET_FILE_SCHEMA,
            "Show a file's structure",
            "A file's structure, fast on many-GB files: CSV columns, types, exact row count, \
             samples; JSON/YAML/XML shape; sheets; PDF pages; images. Use it first.",
            schema_for_type::<params::GetFileSchema>(),
            Some(with_error::<files::Schema>(&[
                "path",
                "format",
                "size",
                "row_count",
                "columns",
            ])),
            reads_files(),
        ),
        tool(
            SUMMARIZE_FILE,
            "Summarize a file",
            "A file's first and last lines, exact line count, size and encoding; cheap at any \
             size.",
            schema_for_type::<params::SummarizeFile>(),
            Some(with_error::<files::Summary>(&[
                "path",
                "size",
                "line_count",
                "head",
                "tail",
            ])),
            reads_files(),
        ),
        tool(
            READ_FILE,
            "Read part of a file",
            "Read part of a file exactly: lines from offset, sheet rows or a range, PDF pages as \
             Markdown, images. An answer fits a budget and says how to go on.",
            schema_for_type::<params::ReadFile>(),
            Some(with_error::<files::ReadAnswer>(&[
                "path",
                "content",
                "rows",
                "next_offset",
                "truncated",
            ])),
            reads_files(),
        ),
        tool(
            QUERY_FILE,
            "Query a data file",
            "SQL (or jq) over a CSV, TSV, JSON, JSONL or Parquet file or a sheet, without reading \
             it; only the result comes back. Example: {\"path\": \
             \"sales.csv\", \"sql\": \"SELECT region, SUM(amount) FROM data GROUP BY region\"}",
            schema_for_type::<params::QueryFile>(),
            Some(with_error::<query::QueryAnswer>(&[
                "columns",
                "rows",
                "results",
                "row_count",
                "truncated",
            ])),
            // Reads; storing a result creates a new file and never replaces one.
            ToolAnnotations::new()
                .read_only(false)
                .destructive(false)
                .idempotent(false)
                .open_world(false),
        ),
    ]
}

/// A tool that only reads; `open_world` when it asks upstream servers. (MCP gives the
/// destructive and idempotent hints meaning only for tools that do not only read.)
fn reads(open_world: bool) -> ToolAnnotations {
    ToolAnnotations::new()
        .read_only(true)
        .open_world(open_world)
}

/// A file tool: it only reads, and reaches beyond the machine only for URLs the user allows
/// (fetched into a stored download).
fn reads_files() -> ToolAnnotations {
    reads(/* allowed URLs: */ true)
}

/// A tool that calls an upstream tool, which may change or delete anything.
fn calls_upstream() -> ToolAnnotations {
    ToolAnnotations::new()
        .read_only(false)
        .destructive(true)
        .idempotent(false)
        .open_world(true)
}

fn tool(
    name: &'static str,
    title: &str,
    description: &'static str,
    input: Arc<JsonObject>,
    output: Option<Arc<JsonObject>>,
    annotations: ToolAnnotations,
) -> Tool {
    let mut t = Tool::new(name, description, compact_input(input));
    t.title = Some(title.to_owned());
    t.output_schema = output;
    t.annotations = Some(annotations);
    t
}

/// The output schema of `T`, kept small (a model pays for every byte of it on every turn):
/// the top-level fields named in `fields` (those a caller most often reads; the others are
/// allowed, as the schema does not close the object) with their JSON types only — names tell
/// a model what comes back, the rest is said in the answers. No field is required, so an
/// error answer (`{"error": {code, message}}`, also listed) validates too.
fn with_error<T: JsonSchema + std::any::Any>(fields: &[&str]) -> Arc<JsonObject> {
    let full = schema_for_output::<T>();
    let defs = full.get("$defs").cloned().unwrap_or(Value::Null);
    let mut all = serde_json::Map::new();
    collect_properties(&Value::Object((*full).clone()), &defs, &mut all);
    let mut properties: serde_json::Map<String, Value> = fields
        .iter()
        .map(|f| {
            let found = all.get(*f).cloned();
            debug_assert!(found.is_some(), "{f} is not a field of the output");
            ((*f).to_owned(), found.unwrap_or_else(|| json!({})))
        })
        .collect();
    properties.insert("error".into(), json!({"type": "object"}));
    let mut root = serde_json::Map::new();
    root.insert("type".into(), json!("object"));
    root.insert("properties".into(), Value::Object(properties));
    Arc::new(root)
}

/// The top-level fields of `schema` (through `$ref`, `anyOf`, `oneOf`, `allOf`), each as
/// `{"type": ...}` (or `{}` when it is not one JSON type).
fn collect_properties(schema: &Value, defs: &Value, out: &mut serde_json::Map<String, Value>) {
    if let Some(name) = schema["$ref"]
        .as_str()
        .and_then(|r| r.strip_prefix("#/$defs/"))
    {
        return collect_properties(&defs[name], defs, out);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        for variant in schema[key].as_array().into_iter().flatten() {
            collect_properties(variant, defs, out);
        }
    }
    for (name, property) in schema["properties"].as_object().into_iter().flatten() {
        let shallow = match property.get("type") {
            Some(t) => json!({"type": t}),
            None => json!({}),
        };
        match out.get(name) {
            Some(seen) if *seen != shallow => {
                out.insert(name.clone(), json!({}));
            }
            Some(_) => {}
            None => {
                out.insert(name.clone(), shallow);
            }
        }
    }
}

/// An input schema without what costs bytes and tells a model nothing: the `$schema` and
/// `title` keys, `null` in the types of optional fields (leaving one out is the way to say
/// nothing), `default: null`, integer formats, line breaks inside descriptions.
fn compact_input(schema: Arc<JsonObject>) -> Arc<JsonObject> {
    let mut schema = (*schema).clone();
    schema.remove("$schema");
    schema.remove("title");
    // Unknown arguments are refused all the same (-32602, naming the known ones).
    schema.remove("additionalProperties");
    let required: Vec<Value> = schema
        .get("required")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        for (name, property) in properties.iter_mut() {
            let Value::Object(p) = property else { continue };
            if let Some(Value::Array(types)) = p.get("type")
                && !required.contains(&Value::String(name.clone()))
            {
                let kept: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
                if kept.len() == 1 {
                    p.insert("type".into(), kept[0].clone());
                }
            }
            // Defaults worth knowing are in the descriptions.
            p.remove("default");
            if p.get("minimum") == Some(&json!(0)) {
                p.remove("minimum");
            }
            if p.get("additionalProperties") == Some(&json!(true)) {
                p.remove("additionalProperties");
            }
            if p.get("format")
                .and_then(Value::as_str)
                .is_some_and(|f| f.starts_with("uint") || f.starts_with("int"))
            {
                p.remove("format");
            }
            if let Some(Value::String(d)) = p.get_mut("description") {
                *d = d.split_whitespace().collect::<Vec<_>>().join(" ");
            }
        }
    }
    Arc::new(schema)
}

#[cfg(test)]
mod golden {
    //! Every byte of Offload's tool definitions reaches every user's model on every request, so a
    //! change to one is reviewed as a diff of `tests/golden/tools.json` (with each tool's size).

    const PATH: &str = "tests/golden/tools.json";

    fn sizes(list: &serde_json::Value) -> Vec<(String, usize)> {
        list.as_array()
            .into_iter()
            .flatten()
            .map(|t| {
                let name = t["name"].as_str().unwrap_or_default().to_owned();
                (name, serde_json::to_string(t).map_or(0, |s| s.len()))
            })
            .collect()
    }

    #[test]
    fn tool_definitions_match_the_golden_file() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(PATH);
        let now = serde_json::to_value(super::tools()).expect("tools serialize");
        let want = serde_json::to_string_pretty(&now).expect("pretty") + "\n";
        if std::env::var_os("OFFLOAD_UPDATE_GOLDEN").is_some() {
            std::fs::write(&path, &want).expect("write the golden file");
            return;
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        if have == want {
            return;
        }
        let before: serde_json::Value = serde_json::from_str(&have).unwrap_or_default();
        let old = sizes(&before);
        let mut table = vec!["tool: bytes before -> after (compact JSON)".to_owned()];
        for (name, after) in sizes(&now) {
            let was = old.iter().find(|(n, _)| *n == name).map(|(_, b)| *b);
            match was {
                Some(b) if b == after => {}
                Some(b) => table.push(format!("  {name}: {b} -> {after}")),
                None => table.push(format!("  {name}: new, {after}")),
            }
        }
        let diff = similar::TextDiff::from_lines(&have, &want)
            .unified_diff()
            .context_radius(2)
            .header(PATH, "now")
            .to_string();
        panic!(
            "Offload's tool definitions changed. If that is meant, review the bytes and run \
             `OFFLOAD_UPDATE_GOLDEN=1 cargo test -p offload-engine golden`.\n{}\n{diff}",
            table.join("\n")
        );
    }
}
