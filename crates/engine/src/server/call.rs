//! `call_tool`: forward one call to an upstream on its kept-open connection.

use rmcp::RoleServer;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;

use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

use super::{answer, discovery, params, store};
use crate::upstream::{CallOptions, ProgressRoute, UpstreamError};
use crate::{Engine, ToolError};

pub async fn call_tool(
    engine: &Arc<Engine>,
    p: params::CallTool,
    ctx: &RequestContext<RoleServer>,
) -> CallToolResult {
    let started = Instant::now();
    let args = Value::Object(p.tool_args.clone().unwrap_or_default());
    match forward(engine, &p.server, &p.tool_name, p.tool_args, ctx).await {
        Ok(result) => {
            store::offload_if_large(engine, &p.server, &p.tool_name, args, result, started).await
        }
        Err(e) => answer::error(&e),
    }
}

/// Calls the upstream tool and returns its result as it is (an upstream `isError` stays one).
pub async fn forward(
    engine: &Engine,
    server: &str,
    tool: &str,
    args: Option<serde_json::Map<String, serde_json::Value>>,
    ctx: &RequestContext<RoleServer>,
) -> Result<CallToolResult, ToolError> {
    let upstream = engine.pool.get(server)?;
    // The tool list is cached after the first call, so this check is cheap and turns a typo
    // into an error that names the closest tools.
    match discovery::find_tool(engine, server, tool).await {
        Ok(_) => {}
        Err(e @ UpstreamError::UnknownTool { .. }) => return Err(e.into()),
        Err(e @ (UpstreamError::Disabled { .. } | UpstreamError::Unavailable { .. })) => {
            return Err(e.into());
        }
        Err(_) => {} // listing failed for another reason: let the call itself say what happens
    }
    let options = CallOptions {
        progress: ctx.meta.get_progress_token().map(|token| ProgressRoute {
            peer: ctx.peer.clone(),
            token,
        }),
        cancel: ctx.ct.clone(),
    };
    Ok(upstream.call(tool, args, options).await?)
}
