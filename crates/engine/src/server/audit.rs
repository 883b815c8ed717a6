//! The event recorded for each tool call: what was asked (names, sizes, never arguments) and how
//! it ended.

use std::time::Instant;

use rmcp::RoleServer;
use rmcp::model::{CallToolResult, JsonObject};
use rmcp::service::RequestContext;
use serde_json::Value;

use crate::events::{Event, EventKind};

/// The event's fields known before the call.
pub fn start(
    tool: &str,
    kind: EventKind,
    args: Option<&JsonObject>,
    ctx: &RequestContext<RoleServer>,
) -> Event {
    let get = |k: &str| {
        args.and_then(|a| a.get(k))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    Event {
        time: chrono::Utc::now(),
        kind,
        tool: tool.to_owned(),
        client: client(ctx),
        server: get("server"),
        upstream_tool: get("tool_name"),
        file: get("file_path").or_else(|| get("path")),
        format: get("file_format").or_else(|| get("response_format")),
        bytes_in: args.map_or(0, crate::budget::json_size),
        bytes_out: 0,
        bytes_kept: 0,
        rows: None,
        batches: None,
        first_item: None,
        duration_ms: 0,
        outcome: String::new(),
        message: None,
        stored: None,
        pid: std::process::id(),
        script: None,
    }
}

/// The client, as `name/version` from its handshake.
pub fn client(ctx: &RequestContext<RoleServer>) -> Option<String> {
    ctx.client_info()
        .map(|c| format!("{}/{}", c.name, c.version))
}

/// Completes the event with the answer. `file_bytes` is the size of the file whose data a tool
/// received (for `call_tool_with_file_content`).
pub fn finish(
    mut event: Event,
    result: &CallToolResult,
    started: Instant,
    file_bytes: Option<u64>,
) -> Event {
    event.duration_ms = started.elapsed().as_millis() as u64;
    event.bytes_out = super::store::answer_size(result);
    let s = result.structured_content.as_ref();
    let field = |path: &[&str]| {
        let mut v = s?;
        for p in path {
            v = v.get(*p)?;
        }
        Some(v)
    };
    event.outcome = match (
        result.is_error,
        field(&["error", "code"]).and_then(Value::as_str),
    ) {
        (Some(true), Some(code)) => code.to_owned(),
        (Some(true), None) => "upstream_tool_error".into(),
        _ => "ok".into(),
    };
    if event.kind == EventKind::Call && field(&["summary"]).is_some() && field(&["uri"]).is_some() {
        event.kind = EventKind::Store; // stored automatically: it was too big to answer inline
    }
    event.rows = field(&["summary", "rows"])
        .or_else(|| field(&["items"]))
        .and_then(Value::as_u64);
    event.batches = field(&["batches"]).and_then(Value::as_u64);
    if result.is_error == Some(true) {
        let message = field(&["error", "message"])
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| {
                result
                    .content
                    .iter()
                    .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
                    .collect::<Vec<_>>()
                    .join(" ")
            });
        event.message = Some(offload_formats::clip::clip(&message, 300).into_owned());
    }
    event.stored = field(&["uri"])
        .and_then(|_| field(&["path"]))
        .or_else(|| field(&["last_result", "path"]))
        .and_then(Value::as_str)
        .map(str::to_owned);
    // What stayed out of the model's context: the file a stored answer went to (the model got
    // a link and a summary), and the file whose data went to a tool.
    let stored = field(&["uri"])
        .and_then(|_| field(&["bytes"]))
        .or_else(|| field(&["last_result", "bytes"]))
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let sent = match (event.kind, event.outcome.as_str()) {
        (EventKind::FileContent | EventKind::Batch, "ok") => file_bytes.unwrap_or(0),
        _ => 0,
    };
    event.bytes_kept = stored + sent;
    if let Some(format) = field(&["format"]).and_then(Value::as_str) {
        event.format = Some(format.to_owned());
    }
    event
}
