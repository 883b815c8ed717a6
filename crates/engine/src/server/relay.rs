//! One call forwarded to an upstream on its kept-open connection (`$file` references resolved,
//! the message held to its budget), for every tool that calls one.

use rmcp::RoleServer;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;

use std::sync::Arc;

use crate::budget::check_message_size;
use crate::upstream::{CallOptions, ProgressRoute, UpstreamError};
use crate::{Engine, ToolError};

/// Calls the upstream tool and returns its result as it is (an upstream `isError` stays one).
/// `$file` references in `args` are resolved first, and the arguments must fit the upstream
/// message budget.
pub async fn forward(
    engine: &Arc<Engine>,
    server: &str,
    tool: &str,
    args: Option<serde_json::Map<String, serde_json::Value>>,
    ctx: &RequestContext<RoleServer>,
) -> Result<CallToolResult, ToolError> {
    let args = match args {
        Some(a) if crate::refs::has_refs(&a) => Some(resolve_refs(engine, a).await?),
        other => other,
    };
    if let Some(a) = &args {
        check_message_size(engine.limits().max_upstream_message_bytes, a, None)?;
    }
    forward_resolved(engine, server, tool, args, ctx).await
}

/// Like `forward`, for arguments that are complete: no `$file` resolution (file data is never
/// scanned for references) and no size check (the caller made it).
pub async fn forward_resolved(
    engine: &Arc<Engine>,
    server: &str,
    tool: &str,
    args: Option<serde_json::Map<String, serde_json::Value>>,
    ctx: &RequestContext<RoleServer>,
) -> Result<CallToolResult, ToolError> {
    if engine.is_paused() {
        return Err(ToolError::new(
            crate::ErrorCode::Paused,
            "Offload is paused, so upstream tools are not called. The user can resume it from \
             Offload's tray menu or window; tell them.",
        ));
    }
    let upstream = engine.pool.get(server)?;
    // The tool list is cached after the first call, so this check is cheap and turns a typo
    // into an error that names the closest tools.
    let mut as_task = false;
    match engine.pool.find_tool(server, tool).await {
        Ok(found) if let Some(refused) = crate::available::refusal(engine, server, &found) => {
            return Err(refused);
        }
        Ok(found) => as_task = crate::available::needs_tasks(&found),
        Err(
            e @ (UpstreamError::UnknownTool { .. }
            | UpstreamError::Disabled { .. }
            | UpstreamError::Unavailable { .. }),
        ) => {
            return Err(e.into());
        }
        Err(_) => {} // listing failed for another reason: let the call itself say what happens
    }
    call_upstream(&upstream, tool, args, as_task, ctx).await
}

async fn call_upstream(
    upstream: &crate::upstream::Upstream,
    tool: &str,
    args: Option<serde_json::Map<String, serde_json::Value>>,
    as_task: bool,
    ctx: &RequestContext<RoleServer>,
) -> Result<CallToolResult, ToolError> {
    let options = CallOptions {
        as_task,
        progress: ctx.meta.get_progress_token().map(|token| ProgressRoute {
            peer: ctx.peer.clone(),
            token,
        }),
        cancel: ctx.ct.clone(),
        caller: ctx
            .extensions
            .get::<super::Session>()
            .map(|session| crate::upstream::Caller {
                session: session.id,
                peer: ctx.peer.clone(),
                log_level: session.log_level_for(ctx),
                capabilities: ctx.client_capabilities(),
                asks: ctx
                    .extensions
                    .get::<super::marks::Asking>()
                    .map(|asking| asking.0.clone()),
                missing: ctx
                    .extensions
                    .get::<super::marks::MissingCapability>()
                    .map(|m| m.0.clone()),
            }),
    };
    match upstream.call(tool, args, options).await {
        Ok(result) => Ok(result),
        Err(e) => {
            if let crate::upstream::UpstreamError::Rpc {
                rpc_code: -32021,
                message,
                data,
                ..
            } = &e
                && let Some(missing) = ctx.extensions.get::<super::marks::MissingCapability>()
            {
                // Offload's own refusal (with the capability named) is noted already.
                missing
                    .0
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .get_or_insert(rmcp::ErrorData::new(
                        rmcp::model::ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
                        message.clone(),
                        data.clone(),
                    ));
            }
            Err(e.into())
        }
    }
}

/// Resolves `$file` references on a blocking thread.
pub async fn resolve_refs(
    engine: &Arc<Engine>,
    mut args: serde_json::Map<String, serde_json::Value>,
) -> Result<serde_json::Map<String, serde_json::Value>, ToolError> {
    // References to URLs are fetched first and then read as their downloads.
    for url in crate::refs::urls(&args) {
        let path = super::downloads::localize(engine, &url).await?;
        crate::refs::redirect(&mut args, &url, &path);
    }
    let engine = engine.clone();
    tokio::task::spawn_blocking(move || {
        let done =
            crate::refs::resolve(&mut args, &engine.roots(), engine.limits().max_input_bytes)?;
        for r in &done {
            engine.events.emit(crate::events::Event {
                time: chrono::Utc::now(),
                kind: crate::events::EventKind::FileRef,
                tool: "$file".into(),
                client: None,
                server: None,
                upstream_tool: None,
                file: Some(r.path.clone()),
                format: Some(r.kind.clone()),
                bytes_in: r.bytes,
                bytes_out: 0,
                bytes_kept: r.bytes,
                rows: None,
                batches: None,
                first_item: None,
                duration_ms: 0,
                outcome: "ok".into(),
                message: None,
                stored: None,
                pid: std::process::id(),
                script: None,
            });
        }
        Ok(args)
    })
    .await
    .map_err(|e| ToolError::new(crate::ErrorCode::Internal, e.to_string()))?
}
