//! Upstream tools as the user controls them: which are listed to clients and how (the mode in
//! effect and why), switches per tool, tools held by pinning with what changed, approval.
//! Shared by the app's Servers screen and `offload tools`.

use serde::Serialize;

use super::edit::{ControlError, edit_config};
use super::servers::tool_error;
use crate::Engine;
use crate::available;
use crate::config::edit;
use crate::gateway::Held;
pub use crate::server::ListingCost;

/// What clients see of the upstream tools.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ToolsView {
    /// `direct` or `meta`, as the configuration's `tools.expose` decides for a client that
    /// does not choose.
    pub mode: String,
    /// Why (for `auto`: the count against `directLimit`).
    pub why: String,
    /// Upstream tools listed as tools of their own, with the name clients see.
    pub exposed: Vec<ExposedView>,
    pub held: Vec<Held>,
    /// Tools that could not be listed under a name of their own, and why.
    pub skipped: Vec<String>,
    /// What the tool list costs a client in each mode.
    pub cost: ListingCost,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ExposedView {
    pub name: String,
    pub server: String,
    pub tool: String,
}

/// How many upstream tools are held for review now (for the tray; never starts or asks a
/// server): see `available::held_count`.
pub fn held_count(engine: &Engine) -> usize {
    available::held_count(engine)
}

/// [`tools_view`] once every server has listed its tools or failed to, waiting at most `wait`:
/// what `offload tools list` shows — a command a person runs once, who expects every server's
/// tools and every held one, not a model's first look at what is ready.
pub async fn tools_view_settled(engine: &Engine, wait: std::time::Duration) -> ToolsView {
    let servers = engine.pool.servers();
    let _ = tokio::time::timeout(
        wait,
        futures::future::join_all(servers.iter().map(|s| s.tools())),
    )
    .await;
    tools_view(engine).await
}

pub async fn tools_view(engine: &Engine) -> ToolsView {
    let own = crate::server::tool_definitions();
    let look = crate::upstream::Listing::Look;
    let exposure = available::exposure(engine, None, &own, look).await;
    let (_, held) = available::usable(engine, look).await;
    ToolsView {
        mode: match exposure.mode {
            crate::gateway::Mode::Direct => "direct".into(),
            crate::gateway::Mode::Meta => "meta".into(),
        },
        why: exposure.why,
        exposed: exposure
            .tools
            .iter()
            .map(|e| ExposedView {
                name: e.name.clone(),
                server: e.server.clone(),
                tool: e.tool.name.to_string(),
            })
            .collect(),
        held,
        skipped: exposure.skipped,
        cost: crate::server::listing_cost(engine, &own).await,
    }
}

/// Approves the current definition of `tool` of `server` (all its held tools when `None`);
/// answers how many were approved. Clients are told their tools changed.
pub async fn approve_tool(
    engine: &Engine,
    server: &str,
    tool: Option<&str>,
) -> Result<usize, ControlError> {
    let upstream = engine.pool.get(server).map_err(tool_error)?;
    let tools = upstream.tools().await.map_err(tool_error)?;
    if let Some(name) = tool
        && !tools.iter().any(|t| t.name == name)
    {
        return Err(ControlError::invalid(format!(
            "'{server}' has no tool '{name}'"
        )));
    }
    let approved = engine
        .pins
        .approve(server, tool, &tools)
        .await
        .map_err(|e| ControlError::invalid(format!("cannot save the approval: {e}")))?;
    engine.notify();
    Ok(approved)
}

/// Turns one tool of a server on or off for every client.
pub async fn set_tool_enabled(
    engine: &Engine,
    server: &str,
    tool: &str,
    enabled: bool,
) -> Result<(), ControlError> {
    edit_config(engine, |doc| {
        edit::set_tool_enabled(doc, server, tool, enabled)
    })
    .await
}
