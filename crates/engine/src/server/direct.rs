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

use super::tools::{ListAvailableTools, ListToolDetails, OwnTool};
use super::{relay, store};
use crate::gateway::{Exposed, Exposure, Mode};
use crate::upstream::ServerState;
use crate::{Engine, ErrorCode, ToolError};

pub use crate::available::exposure;

/// Offload's own tools that direct mode leaves out: with every tool listed there is nothing to
/// search (kept when some server's tools stay behind `call_tool`). `call_tool` itself stays:
/// clients that check answers against output schemas (the Python SDK) list the tools again
/// before every call of a tool that is not listed, which doubled its cost.
const DISCOVERY: [&str; 2] = [ListAvailableTools::NAME, ListToolDetails::NAME];

/// The tools a session lists: in meta mode Offload's own; in direct mode its storage, file and
/// call tools and every exposed upstream tool, and the discovery tools while some tools stay
/// behind `call_tool` or some server is failing (`list_available_tools` says which and why).
pub fn listing(own: &[Tool], exposure: &Exposure, engine: &Engine) -> Vec<Tool> {
    if exposure.mode == Mode::Meta {
        return own.to_vec();
    }
    let config = engine.config();
    let failing = || {
        engine.pool.servers().iter().any(|s| {
            matches!(
                s.status().status,
                ServerState::Error | ServerState::SignInRequired
            )
        })
    };
    let some_hidden = !exposure.skipped.is_empty()
        || config
            .mcp_servers
            .iter()
            .any(|(_, e)| !e.disabled && e.expose == Some(false))
        || failing();
    let mut tools: Vec<Tool> = own
        .iter()
        .filter(|t| some_hidden || !DISCOVERY.contains(&t.name.as_ref()))
        .cloned()
        .collect();
    tools.extend(exposure.tools.iter().map(listed));
    tools
}

/// An upstream tool as listed: its own definition under its exposed name, with an output
/// schema that also admits a stored answer's link, and without the task support Offload keeps
/// in `_meta` for itself (Offload runs a task-only tool as a task; the client calls it plainly).
pub fn listed(e: &Exposed) -> Tool {
    let mut tool = e.tool.clone();
    tool.name = e.name.clone().into();
    tool.output_schema = tool.output_schema.map(|s| Arc::new(widened(&s)));
    if let Some(meta) = &mut tool.meta {
        meta.remove(offload_wire::EXECUTION_META);
        if meta.is_empty() {
            tool.meta = None;
        }
    }
    tool
}

/// The keys of a stored answer's link (`store::StoredAnswer`).
const LINK_KEYS: [&str; 8] = [
    "uri",
    "path",
    "bytes",
    "format",
    "mime_type",
    "summary",
    "files",
    "note",
];

/// The upstream's output schema, widened to also admit a stored answer's link, in as few bytes
/// as hold: every byte of a listed schema costs a model's client on every request. The link
/// only has to carry its `uri` (a stored answer always has it, an upstream answer rarely does).
///
/// A plain object schema (properties and `required`, other properties allowed, none named like
/// a link's) keeps its shape with `required` moved into `anyOf: [{required}, {required:
/// [uri]}]`. Anything else is wrapped whole: `{"type": "object", "anyOf": [upstream, {required:
/// [uri]}]}`, its `$defs` moved to the root so references still resolve. (Offload's own errors
/// in a direct call carry no structured content, so they need no branch: see `call`.)
fn widened(upstream: &JsonObject) -> JsonObject {
    let mut upstream = upstream.clone();
    upstream.remove("$schema");
    if is_plain(&upstream) {
        if let Some(required) = upstream.remove("required") {
            upstream.insert(
                "anyOf".into(),
                json!([{"required": required}, {"required": ["uri"]}]),
            );
        }
        return upstream;
    }
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

/// Whether a link validates against `schema` once its `required` is lifted: an object schema
/// of only properties and annotations, other properties allowed, no property named like a
/// link's.
fn is_plain(schema: &JsonObject) -> bool {
    const KEYS: [&str; 7] = [
        "type",
        "properties",
        "required",
        "title",
        "description",
        "$defs",
        "definitions",
    ];
    let only_known = schema.iter().all(|(k, v)| {
        KEYS.contains(&k.as_str()) || (k == "additionalProperties" && v == &Value::Bool(true))
    });
    let object = schema.get("type") == Some(&json!("object"));
    let clash = schema
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| LINK_KEYS.iter().any(|k| p.contains_key(*k)));
    let required_is_list = schema.get("required").is_none_or(Value::is_array);
    only_known && object && !clash && required_is_list
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
    match relay::forward(engine, &exposed.server, &exposed.tool.name, args, ctx).await {
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

/// What the tool list costs a client in each mode, for the configured servers: `tools/list` as
/// each mode answers it, in bytes (a client sends it to its model with every request).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ListingCost {
    /// Every upstream tool listed as its own (`direct`).
    pub direct_bytes: usize,
    pub direct_tools: usize,
    /// Offload's tools only, upstream ones found by search (`meta`).
    pub meta_bytes: usize,
    pub meta_tools: usize,
}

/// `own` are Offload's tool definitions.
pub async fn listing_cost(engine: &Engine, own: &[Tool]) -> ListingCost {
    use crate::config::Expose;
    let listed = async |expose| {
        let exposure = exposure(engine, Some(expose), own, crate::upstream::Listing::Look).await;
        let tools = listing(own, &exposure, engine);
        (
            serde_json::to_vec(&tools).map_or(0, |v| v.len()),
            tools.len(),
        )
    };
    let (direct_bytes, direct_tools) = listed(Expose::Direct).await;
    let (meta_bytes, meta_tools) = listed(Expose::Meta).await;
    ListingCost {
        direct_bytes,
        direct_tools,
        meta_bytes,
        meta_tools,
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

    /// A link a direct call answers with when it stores the answer.
    fn link() -> Value {
        json!({"uri": "file:///r/a.json", "path": "/r/a.json", "bytes": 10, "format": "json",
               "mime_type": "application/json", "summary": {"rows": 1}})
    }

    fn valid(schema: &JsonObject, value: &Value) -> bool {
        jsonschema::validator_for(&Value::Object(schema.clone()))
            .expect("a valid schema")
            .is_valid(value)
    }

    #[test]
    fn widened_schemas_keep_their_definitions_at_the_root() {
        let upstream: JsonObject = serde_json::from_value(json!({
            "$schema": "x", "type": "object", "additionalProperties": false,
            "properties": {"a": {"$ref": "#/$defs/A"}}, "$defs": {"A": {"type": "string"}}
        }))
        .unwrap();
        let w = widened(&upstream);
        assert_eq!(w["type"], "object");
        assert_eq!(w["$defs"]["A"]["type"], "string");
        assert_eq!(w["anyOf"][0]["properties"]["a"]["$ref"], "#/$defs/A");
        assert!(w["anyOf"][0].get("$defs").is_none());
        assert_eq!(w["anyOf"][1], json!({"required": ["uri"]}));
        assert!(valid(&w, &json!({"a": "x"})));
        assert!(valid(&w, &link()));
        assert!(!valid(&w, &json!({"a": 1})));
        assert!(!valid(&w, &json!({"b": "x"})));
    }

    /// A plain schema (what the Python SDK makes of a typed return) keeps its shape: only its
    /// `required` moves, and the same answers validate as under the whole wrapping.
    #[test]
    fn plain_schemas_move_only_their_required() {
        let upstream: JsonObject = serde_json::from_value(json!({
            "type": "object", "title": "fOutput",
            "properties": {"result": {"type": "string"}, "n": {"$ref": "#/$defs/N"}},
            "required": ["result"], "$defs": {"N": {"type": "integer"}}
        }))
        .unwrap();
        let w = widened(&upstream);
        assert_eq!(
            Value::Object(w.clone()),
            json!({"type": "object", "title": "fOutput",
                   "properties": {"result": {"type": "string"}, "n": {"$ref": "#/$defs/N"}},
                   "anyOf": [{"required": ["result"]}, {"required": ["uri"]}],
                   "$defs": {"N": {"type": "integer"}}})
        );
        assert!(valid(&w, &json!({"result": "x", "n": 2})));
        assert!(valid(&w, &link()));
        assert!(!valid(&w, &json!({"n": 2})), "neither branch's required");
        assert!(
            !valid(&w, &json!({"result": 3})),
            "a property's type still holds"
        );
        assert!(
            !valid(&w, &json!({"result": "x", "n": "two"})),
            "references resolve"
        );
        let whole = serde_json::to_string(&widened(&{
            let mut u = upstream.clone();
            u.insert("additionalProperties".into(), json!(false));
            u
        }))
        .unwrap();
        assert!(serde_json::to_string(&w).unwrap().len() < whole.len());
    }

    /// Schemas a link would not validate against once `required` is lifted are wrapped whole.
    #[test]
    fn other_schemas_are_wrapped_whole() {
        for upstream in [
            json!({"type": "object", "properties": {"uri": {"type": "integer"}}}),
            json!({"type": "object", "properties": {"summary": {"type": "string"}}, "required": ["summary"]}),
            json!({"type": "object", "additionalProperties": {"type": "string"}}),
            json!({"type": "object", "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}),
            json!({"type": "object", "minProperties": 3}),
        ] {
            let w = widened(&serde_json::from_value(upstream.clone()).unwrap());
            assert_eq!(w["anyOf"][0], upstream, "{upstream}");
            assert!(valid(&w, &link()), "{upstream}");
        }
    }

    #[test]
    fn listed_tools_leave_out_offloads_own_meta() {
        let mut tool = Tool::new("t", "d", Arc::new(JsonObject::new()));
        let mut meta = rmcp::model::MetaObject::new();
        meta.insert(
            offload_wire::EXECUTION_META.into(),
            json!({"taskSupport": "forbidden"}),
        );
        tool.meta = Some(meta.clone());
        let exposed = |tool: Tool| Exposed {
            server: "s".into(),
            name: "s__t".into(),
            tool,
        };
        assert_eq!(listed(&exposed(tool.clone())).meta, None);
        meta.insert("io.example/x".into(), json!(1));
        tool.meta = Some(meta);
        let kept = listed(&exposed(tool)).meta.unwrap();
        assert_eq!(kept.len(), 1);
        assert_eq!(kept.get("io.example/x"), Some(&json!(1)));
    }
}
