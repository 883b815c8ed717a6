//! Upstream tools as tools of the client's own (direct mode, see `gateway`): the tools a
//! session shows and a call of one. A direct call is forwarded like `call_tool` and keeps
//! Offload's powers: `{"$file": ...}` in any argument, `x-mcp-file` arguments filled from files
//! as `data:` URIs, and an answer over the inline budget stored and linked. Disabled tools and
//! tools held by pinning are never listed nor called, in any mode.

use std::sync::Arc;
use std::time::Instant;

use base64::Engine as _;
use rmcp::RoleServer;
use rmcp::model::{CallToolResult, JsonObject, Tool};
use rmcp::service::RequestContext;
use serde_json::{Map, Value, json};

use super::{call, catalog, store};
use crate::gateway::{Exposed, Exposure, Mode};
use crate::{Engine, ErrorCode, ToolError};

pub use crate::gateway::available::{exposure, refusal};

/// Offload's own tools that direct mode leaves out: with every tool listed there is nothing to
/// search (kept when some server's tools stay behind `call_tool`). `call_tool` itself stays:
/// clients that check answers against output schemas (the Python SDK) list the tools again
/// before every call of a tool that is not listed, which doubled its cost.
const DISCOVERY: [&str; 2] = [catalog::LIST_AVAILABLE_TOOLS, catalog::LIST_TOOL_DETAILS];

/// The tools a session lists: in meta mode Offload's own; in direct mode its storage, file and
/// call tools and every exposed upstream tool (and the discovery tools while some tools stay
/// behind `call_tool`).
pub fn listing(own: &[Tool], exposure: &Exposure, engine: &Engine) -> Vec<Tool> {
    if exposure.mode == Mode::Meta {
        return own.to_vec();
    }
    let config = engine.config();
    let some_hidden = !exposure.skipped.is_empty()
        || config
            .mcp_servers
            .iter()
            .any(|(_, e)| !e.disabled && e.expose == Some(false));
    let mut tools: Vec<Tool> = own
        .iter()
        .filter(|t| some_hidden || !DISCOVERY.contains(&t.name.as_ref()))
        .cloned()
        .collect();
    tools.extend(exposure.tools.iter().map(listed));
    tools
}

/// An upstream tool as listed: its own definition under its exposed name, with an output
/// schema that also admits a stored answer's link and an error.
pub fn listed(e: &Exposed) -> Tool {
    let mut tool = e.tool.clone();
    tool.name = e.name.clone().into();
    tool.output_schema = tool.output_schema.map(|s| Arc::new(widened(&s)));
    tool
}

/// `{"type": "object", "anyOf": [upstream, a stored answer's link]}`, the upstream's `$defs`
/// moved to the root so its references still resolve. The added branch only requires the
/// link's `uri` (a stored answer always has it, an upstream answer rarely does): every byte of
/// a listed schema costs a model context. (Offload's own errors
/// in a direct call carry no structured content, so they need no branch: see `call`.)
fn widened(upstream: &JsonObject) -> JsonObject {
    let mut upstream = upstream.clone();
    upstream.remove("$schema");
    let defs = upstream.remove("$defs");
    let definitions = upstream.remove("definitions");
    let mut root = Map::new();
    root.insert("type".into(), json!("object"));
    root.insert(
        "anyOf".into(),
        json!([Value::Object(upstream), {"required": ["uri"]}]),
    );
    if let Some(d) = defs {
        root.insert("$defs".into(), d);
    }
    if let Some(d) = definitions {
        root.insert("definitions".into(), d);
    }
    root
}

/// Calls an exposed upstream tool: `x-mcp-file` arguments filled, `$file` resolved, the size
/// checked, the answer stored and linked when it is over the inline budget.
pub async fn call(
    engine: &Arc<Engine>,
    exposed: &Exposed,
    args: Option<JsonObject>,
    ctx: &RequestContext<RoleServer>,
) -> CallToolResult {
    let started = Instant::now();
    let mut args = args;
    if let Some(a) = &mut args
        && let Err(e) = fill_file_arguments(engine, &exposed.tool, a).await
    {
        return error(&e);
    }
    let recorded = Value::Object(args.clone().unwrap_or_default());
    match call::forward(engine, &exposed.server, &exposed.tool.name, args, ctx).await {
        Ok(result) => {
            store::offload_if_large(
                engine,
                &exposed.server,
                &exposed.tool.name,
                recorded,
                result,
                started,
            )
            .await
        }
        Err(e) => error(&e),
    }
}

/// Offload's own error in a direct call: the message and the code in text, no structured
/// content (it would have to match the upstream tool's output schema).
fn error(e: &ToolError) -> CallToolResult {
    let mut result = super::answer::error(e);
    result.structured_content = None;
    result
}

/// Arguments whose schema carries `x-mcp-file` (a `format: uri` string that takes a `data:`
/// URI) also take `{"$file": path}`: the file is sent as a `data:` URI with its MIME type,
/// checked against the schema's `accept` and `maxSize`.
async fn fill_file_arguments(
    engine: &Arc<Engine>,
    tool: &Tool,
    args: &mut JsonObject,
) -> Result<(), ToolError> {
    let Some(properties) = tool
        .input_schema
        .get("properties")
        .and_then(Value::as_object)
    else {
        return Ok(());
    };
    for (key, schema) in properties {
        let Some(spec) = schema.get("x-mcp-file") else {
            continue;
        };
        let Some(path) = args
            .get(key)
            .and_then(Value::as_object)
            .filter(|o| o.len() == 1)
            .and_then(|o| o.get("$file"))
            .and_then(Value::as_str)
            .map(str::to_owned)
        else {
            continue;
        };
        let engine = engine.clone();
        let spec = spec.clone();
        let key_name = key.clone();
        let uri = tokio::task::spawn_blocking(move || data_uri(&engine, &path, &spec, &key_name))
            .await
            .map_err(|e| ToolError::new(ErrorCode::Internal, e.to_string()))??;
        args.insert(key.clone(), Value::String(uri));
    }
    Ok(())
}

fn data_uri(engine: &Engine, path: &str, spec: &Value, key: &str) -> Result<String, ToolError> {
    use std::io::Read;
    let (source, shown) = engine.roots().open(path)?;
    let size = source.len().unwrap_or(0);
    let file = source.reader();
    let max = spec
        .get("maxSize")
        .and_then(Value::as_u64)
        .unwrap_or(u64::MAX)
        .min(engine.limits().max_input_bytes);
    if size > max {
        return Err(ToolError::new(
            ErrorCode::FileTooLarge,
            format!("{path} is {size} bytes; argument '{key}' takes at most {max}"),
        ));
    }
    let mime = mime_of(&shown);
    if let Some(accept) = spec.get("accept").and_then(Value::as_array)
        && !accept
            .iter()
            .filter_map(Value::as_str)
            .any(|a| accepts(a, &mime, &shown))
    {
        return Err(ToolError::new(
            ErrorCode::InvalidArguments,
            format!(
                "argument '{key}' accepts {}, and {path} is {mime}",
                accept
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    let mut bytes = Vec::with_capacity(size as usize);
    file.take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| ToolError::new(ErrorCode::PathUnusable, e.to_string()))?;
    Ok(format!(
        "data:{mime};base64,{}",
        base64::engine::general_purpose::STANDARD.encode(&bytes)
    ))
}

/// A MIME type from the file's extension (`mime_guess`, as `files::kind` does for text).
fn mime_of(path: &std::path::Path) -> String {
    mime_guess::from_path(path)
        .first_or_octet_stream()
        .essence_str()
        .to_owned()
}

/// Whether an `accept` entry (`image/png`, `image/*`, `.pdf`) takes this file.
fn accepts(entry: &str, mime: &str, path: &std::path::Path) -> bool {
    let entry = entry.trim().to_ascii_lowercase();
    if let Some(ext) = entry.strip_prefix('.') {
        return path
            .extension()
            .is_some_and(|e| e.to_string_lossy().eq_ignore_ascii_case(ext));
    }
    match entry.strip_suffix("/*") {
        Some(kind) => mime.split('/').next() == Some(kind),
        None => entry == mime || entry == "*/*",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_patterns() {
        let p = std::path::Path::new("/x/a.PNG");
        assert!(accepts("image/*", "image/png", p));
        assert!(accepts(".png", "image/png", p));
        assert!(accepts("image/png", "image/png", p));
        assert!(!accepts("application/pdf", "image/png", p));
        assert!(!accepts("text/*", "image/png", p));
    }

    #[test]
    fn widened_schemas_keep_their_definitions_at_the_root() {
        let upstream: JsonObject = serde_json::from_value(json!({
            "$schema": "x", "type": "object",
            "properties": {"a": {"$ref": "#/$defs/A"}}, "$defs": {"A": {"type": "string"}}
        }))
        .unwrap();
        let w = widened(&upstream);
        assert_eq!(w["type"], "object");
        assert_eq!(w["$defs"]["A"]["type"], "string");
        assert_eq!(w["anyOf"][0]["properties"]["a"]["$ref"], "#/$defs/A");
        assert!(w["anyOf"][0].get("$defs").is_none());
        assert_eq!(w["anyOf"][1], json!({"required": ["uri"]}));
    }
}
