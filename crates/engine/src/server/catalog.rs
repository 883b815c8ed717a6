//! The tools Offload offers: names, titles, descriptions written for a model, schemas and
//! honest annotations. Tool names and parameter names are part of the contract.

use std::sync::Arc;

use rmcp::handler::server::common::{schema_for_output, schema_for_type};
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde_json::{Value, json};

use super::{discovery, params, store};
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

/// Every tool of the server, in the order clients show them.
pub fn tools() -> Vec<Tool> {
    vec![
        tool(
            LIST_ALLOWED_DIRECTORIES,
            "List allowed directories",
            "List the directories Offload may read and write, and the default directory where \
             stored responses go and relative paths resolve. Use it before passing paths to other \
             tools; paths outside these directories are refused. The user chooses them; no tool \
             can change them. Example: {}",
            schema_for_type::<params::ListAllowedDirectories>(),
            Some(with_error::<discovery::AllowedDirectories>()),
            reads(/* contacts upstreams: */ false),
        ),
        tool(
            LIST_AVAILABLE_TOOLS,
            "Find upstream tools",
            "List the tools of the upstream MCP servers Offload connects to, with each server's \
             status. Use `query` to find the one tool you need by keywords instead of reading all \
             of them; use `filter_by_server` to see one server; set `detailed` only when you need \
             input schemas (or call list_tool_details for one tool). Then call a tool with \
             call_tool. Example: {\"query\": \"weather forecast\"}",
            schema_for_type::<params::ListAvailableTools>(),
            Some(with_error::<discovery::AvailableTools>()),
            reads(/* contacts upstreams: */ true),
        ),
        tool(
            LIST_TOOL_DETAILS,
            "Show one upstream tool",
            "Show the full definition of one upstream tool: description, input schema, output \
             schema and annotations. Use it before call_tool when you are unsure of the \
             arguments. Example: {\"server\": \"github\", \"tool_name\": \"search_issues\"}",
            schema_for_type::<params::ListToolDetails>(),
            Some(with_error::<discovery::ToolDetails>()),
            reads(/* contacts upstreams: */ true),
        ),
        tool(
            CALL_TOOL,
            "Call an upstream tool",
            "Call a tool of an upstream MCP server and return its result as it is. Use it for \
             small answers; when the answer may be large (search results, tables, logs), prefer \
             call_tool_and_store so it goes to a file instead of your context. An answer larger \
             than the inline budget (100 KB by default) is stored automatically and you get a \
             link and a summary instead. Upstream errors come back as errors with the server's \
             message. Example: {\"server\": \"weather\", \"tool_name\": \"forecast\", \
             \"tool_args\": {\"city\": \"Oslo\"}}",
            schema_for_type::<params::CallTool>(),
            None,
            // It calls whatever the upstream tool does, which may change or delete things.
            calls_upstream(),
        ),
        tool(
            CALL_TOOL_AND_STORE,
            "Call an upstream tool and store its answer in a file",
            "Call a tool of an upstream MCP server and write its answer to a file in an allowed \
             directory instead of returning it: you get a link, the size and a short summary \
             (rows and typed columns for tables), never the payload. Use it for anything that may \
             be large: search results, query results, exports, logs. Choose file_format for the \
             user (csv or md for tables, json to keep everything). Inspect the file afterwards \
             with get_file_schema, summarize_file or read_file. Upstream errors are returned as \
             errors and nothing is stored. Example: {\"server\": \"github\", \"tool_name\": \
             \"search_issues\", \"tool_args\": {\"q\": \"is:open label:bug\"}, \"file_format\": \
             \"csv\", \"description\": \"open bugs\"}",
            schema_for_type::<params::CallToolAndStore>(),
            Some(with_error::<store::StoredAnswer>()),
            // Calls the upstream tool (which may change things) and creates a file; it never
            // replaces an existing file.
            calls_upstream(),
        ),
        tool(
            CALL_TOOL_WITH_FILE_CONTENT,
            "Call an upstream tool with a file's data as arguments",
            "Read a file (CSV, TSV, JSON, JSONL, YAML, XML or text), turn it into JSON and pass it \
             to an upstream tool, without the data passing through you. Use it to insert a CSV \
             into a database, upload a JSON document, or send a long text. data_key says which \
             argument takes the data (dotted paths allowed); without it a JSON object becomes the \
             arguments. CSV cells become numbers, booleans or null only when they clearly are \
             (00123 stays a string). For big lists set batch_size: the file is streamed and the \
             tool called once per batch, with a summary of what succeeded. Example: \
             {\"server\": \"db\", \"tool_name\": \"insert_rows\", \"file_path\": \"users.csv\", \
             \"data_key\": \"rows\", \"tool_args\": {\"table\": \"users\"}, \"batch_size\": 5000}",
            schema_for_type::<params::CallToolWithFileContent>(),
            None,
            // Calls the upstream tool with the file's data: it may change anything.
            calls_upstream(),
        ),
        tool(
            GET_FILE_SCHEMA,
            "Show a file's structure",
            "Describe a file's structure without reading its content into your context: for \
             CSV/TSV the delimiter, header, exact row count and typed columns with samples; for \
             JSON/JSONL/YAML the merged shape of the elements (optional keys marked with ?); for \
             XML the root and its children; for Excel/ODS each sheet's size and typed columns; \
             for PDF the page count and metadata; for images format and size; for other files \
             encoding and line count. Fast on files of many GB. Use it first on any data file, \
             then read what you need with read_file. Example: {\"path\": \"exports/users.csv\"}",
            schema_for_type::<params::GetFileSchema>(),
            Some(with_error::<files::Schema>()),
            reads(/* contacts upstreams: */ false),
        ),
        tool(
            SUMMARIZE_FILE,
            "Summarize a file",
            "Show a file's first lines (max_lines, default 20), its last 5 lines when there are \
             more, its exact line count, size, encoding and content type. Long lines are cut. \
             Cheap on files of any size; use it to see what a text file looks like before \
             paging through it with read_file. Example: {\"path\": \"logs/server.log\"}",
            schema_for_type::<params::SummarizeFile>(),
            Some(with_error::<files::Summary>()),
            reads(/* contacts upstreams: */ false),
        ),
        tool(
            READ_FILE,
            "Read part of a file",
            "Read part of a file: text lines [offset, offset+length) with exact line numbers \
             (offset is 0-based; a negative offset reads the last lines); Excel/ODS cells of a \
             sheet and range (A1:D100) as a JSON grid; PDF pages as markdown; images as an image. \
             Answers stay within a size budget and say how to go on (next_offset, or \
             next_byte_offset inside a very long line). Prefer get_file_schema or summarize_file \
             first, and read only what you need. Example: {\"path\": \"data/log.txt\", \
             \"offset\": 5000, \"length\": 100}",
            schema_for_type::<params::ReadFile>(),
            Some(with_error::<files::ReadAnswer>()),
            reads(/* contacts upstreams: */ false),
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
    let mut t = Tool::new(name, description, input);
    t.title = Some(title.to_owned());
    t.output_schema = output;
    let mut annotations = annotations;
    annotations.title = Some(title.to_owned());
    t.annotations = Some(annotations);
    t
}

/// The output schema of `T`, widened so that an error answer (`{"error": {...}}`) also matches:
/// clients that validate structured content of error results must not reject our errors.
fn with_error<T: JsonSchema + std::any::Any>() -> Arc<JsonObject> {
    let success = schema_for_output::<T>();
    let mut success_obj = (*success).clone();
    let defs = success_obj.remove("$defs");
    success_obj.remove("$schema");
    let error = json!({
        "type": "object",
        "required": ["error"],
        "properties": {
            "error": {
                "type": "object",
                "required": ["code", "message"],
                "properties": {
                    "code": {"type": "string", "description": "Stable machine-readable error code."},
                    "message": {"type": "string"}
                }
            }
        }
    });
    let mut root = serde_json::Map::new();
    root.insert("type".into(), json!("object"));
    root.insert("anyOf".into(), json!([Value::Object(success_obj), error]));
    if let Some(defs) = defs {
        root.insert("$defs".into(), defs);
    }
    Arc::new(root)
}
