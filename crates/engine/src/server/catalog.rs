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
            "The directories Offload may read and write (the user chooses them), and the default \
             one where answers are stored and relative paths resolve. Example: {}",
            schema_for_type::<params::ListAllowedDirectories>(),
            Some(with_error::<discovery::AllowedDirectories>()),
            reads(/* contacts upstreams: */ false),
        ),
        tool(
            LIST_AVAILABLE_TOOLS,
            "Find upstream tools",
            "Find upstream tools and see each server's status. Describe what you need in `query` \
             (\"remember a fact\", \"git history\") rather than reading every tool. Then call one \
             with call_tool. Example: {\"query\": \"weather forecast\"}",
            schema_for_type::<params::ListAvailableTools>(),
            Some(with_error::<discovery::AvailableTools>()),
            reads(/* contacts upstreams: */ true),
        ),
        tool(
            LIST_TOOL_DETAILS,
            "Show one upstream tool",
            "One upstream tool's full definition (input and output schema, annotations); use it \
             when unsure of the arguments. Example: {\"server\": \"github\", \"tool_name\": \"search_issues\"}",
            schema_for_type::<params::ListToolDetails>(),
            Some(with_error::<discovery::ToolDetails>()),
            reads(/* contacts upstreams: */ true),
        ),
        tool(
            CALL_TOOL,
            "Call an upstream tool",
            "Call an upstream tool and get its result. An answer over the inline budget (100 KB) is \
             stored as a file and you get a link and summary; for answers likely to be big, use \
             call_tool_and_store. Example: {\"server\": \"weather\", \"tool_name\": \"forecast\", \
             \"tool_args\": {\"city\": \"Oslo\"}}",
            schema_for_type::<params::CallTool>(),
            None,
            // It calls whatever the upstream tool does, which may change or delete things.
            calls_upstream(),
        ),
        tool(
            CALL_TOOL_AND_STORE,
            "Call an upstream tool and store its answer in a file",
            "Call an upstream tool and write its answer to a file instead of your context: you \
             get a link and a short summary (rows and typed columns for tables). Use csv or md for \
             tables, json to keep everything; read the file later with get_file_schema or \
             read_file. Example: {\"server\": \"github\", \"tool_name\": \"search_issues\", \
             \"tool_args\": {\"q\": \"is:open\"}, \"file_format\": \"csv\"}",
            schema_for_type::<params::CallToolAndStore>(),
            Some(with_error::<store::StoredAnswer>()),
            // Calls the upstream tool (which may change things) and creates a file; it never
            // replaces an existing file.
            calls_upstream(),
        ),
        tool(
            CALL_TOOL_WITH_FILE_CONTENT,
            "Call an upstream tool with a file's data as arguments",
            "Pass a file's data (CSV, TSV, JSON, JSONL, YAML, XML, Excel, text) to an upstream \
             tool without it passing through you, e.g. to insert a CSV into a database. For big \
             lists set batch_size: one call per batch. Example: \
             {\"server\": \"db\", \"tool_name\": \"insert_rows\", \"file_path\": \"users.csv\", \
             \"data_key\": \"rows\", \"batch_size\": 5000}",
            schema_for_type::<params::CallToolWithFileContent>(),
            None,
            // Calls the upstream tool with the file's data: it may change anything.
            calls_upstream(),
        ),
        tool(
            GET_FILE_SCHEMA,
            "Show a file's structure",
            "A file's structure without its content, fast on many-GB files: CSV columns with \
             types, exact row count and samples; JSON/YAML/XML shape; sheets; PDF pages; image \
             size. Use it first on data files. Example: {\"path\": \"exports/users.csv\"}",
            schema_for_type::<params::GetFileSchema>(),
            Some(with_error::<files::Schema>()),
            reads_files(),
        ),
        tool(
            SUMMARIZE_FILE,
            "Summarize a file",
            "A file's first lines, last 5 lines, exact line count, size and encoding. Cheap on \
             any size. Example: {\"path\": \"logs/server.log\"}",
            schema_for_type::<params::SummarizeFile>(),
            Some(with_error::<files::Summary>()),
            reads_files(),
        ),
        tool(
            READ_FILE,
            "Read part of a file",
            "Read part of a file exactly: text lines from offset (negative: the last lines), sheet \
             rows (range A1:D100), PDF pages as markdown, images as images. Answers fit a \
             budget, say how to go on. Example: {\"path\": \"log.txt\", \"offset\": 5000, \
             \"length\": 100}",
            schema_for_type::<params::ReadFile>(),
            Some(with_error::<files::ReadAnswer>()),
            reads_files(),
        ),
        tool(
            QUERY_FILE,
            "Query a data file",
            "Ask a data file a question without reading it: SQL over CSV, TSV, JSON, JSONL, \
             Parquet or a sheet, or jq over JSON/YAML; only the result comes back. Example: \
             {\"path\": \"sales.csv\", \"sql\": \"SELECT region, SUM(amount) FROM data GROUP \
             BY region\"}",
            schema_for_type::<params::QueryFile>(),
            Some(with_error::<query::QueryAnswer>()),
            // Reads; storing a result creates a new file and never replaces one.
            ToolAnnotations::new()
                .read_only(false)
                .destructive(false)
                .idempotent(false)
                .open_world(false),
        ),
    ]
}

/// A tool that only reads; `open_world` when it asks upstream servers.
fn reads(open_world: bool) -> ToolAnnotations {
    ToolAnnotations::new()
        .read_only(true)
        .destructive(false)
        .idempotent(true)
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
    let mut annotations = annotations;
    annotations.title = Some(title.to_owned());
    t.annotations = Some(annotations);
    t
}

/// The output schema of `T`, kept small (a model pays for every byte of it on every turn):
/// the top-level fields with their JSON types only — names tell a model what comes back, and
/// the descriptions live in the tool's description. No field is required, so an error answer
/// (`{"error": {code, message}}`, also listed) validates too.
fn with_error<T: JsonSchema + std::any::Any>() -> Arc<JsonObject> {
    let full = schema_for_output::<T>();
    let defs = full.get("$defs").cloned().unwrap_or(Value::Null);
    let mut properties = serde_json::Map::new();
    collect_properties(&Value::Object((*full).clone()), &defs, &mut properties);
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
            if p.get("default") == Some(&Value::Null) {
                p.remove("default");
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
