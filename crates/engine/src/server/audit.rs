//! The event recorded for each tool call: what was asked (names, sizes, never arguments) and how
//! it ended.

use std::time::Instant;

use rmcp::RoleServer;
use rmcp::model::{CallToolResult, JsonObject};
use rmcp::service::RequestContext;
use serde_json::Value;

use super::catalog;
use crate::events::{Event, EventKind};

/// The event's fields known before the call.
pub fn start(tool: &str, args: Option<&JsonObject>, ctx: &RequestContext<RoleServer>) -> Event {
    let get = |k: &str| {
        args.and_then(|a| a.get(k))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let kind = match tool {
        catalog::CALL_TOOL => EventKind::Call,
        catalog::CALL_TOOL_AND_STORE => EventKind::Store,
        catalog::CALL_TOOL_WITH_FILE_CONTENT
            if args.is_some_and(|a| a.contains_key("batch_size")) =>
        {
            EventKind::Batch
        }
        catalog::CALL_TOOL_WITH_FILE_CONTENT => EventKind::FileContent,
        _ => EventKind::Tool,
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
        bytes_in: args.map_or(0, super::call::json_size),
        bytes_out: 0,
        rows: None,
        batches: None,
        first_item: None,
        duration_ms: 0,
        outcome: String::new(),
        pid: std::process::id(),
    }
}

/// The client, as `name/version` from its handshake.
pub fn client(ctx: &RequestContext<RoleServer>) -> Option<String> {
    ctx.client_info()
        .map(|c| format!("{}/{}", c.name, c.version))
}

/// Completes the event with the answer.
pub fn finish(mut event: Event, result: &CallToolResult, started: Instant) -> Event {
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
    if let Some(format) = field(&["format"]).and_then(Value::as_str) {
        event.format = Some(format.to_owned());
    }
    event
}
