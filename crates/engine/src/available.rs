//! The upstream tools a client may use right now, in any mode: each server's tools less those
//! the user turned off (`disabledTools`, `enabledTools`) and those held by pinning; and what a
//! session in direct mode lists of them.

use rmcp::model::Tool;

use crate::config::ServerEntry;
use crate::gateway::{Expose, Exposure, Held, ServerInput, decide};
use crate::upstream::Listing;
use crate::{Engine, ErrorCode, ToolError};

/// Whether `tool` runs only as an MCP task (`execution.taskSupport: "required"`): Offload then
/// calls it as a task and answers with its result. (rmcp's `Tool` drops `execution`;
/// `offload_wire` keeps it in `_meta`, for stdio upstreams.)
pub fn needs_tasks(tool: &Tool) -> bool {
    tool.meta
        .as_ref()
        .and_then(|m| m.get(offload_wire::EXECUTION_META))
        .and_then(|e| e.get("taskSupport"))
        .and_then(|t| t.as_str())
        == Some("required")
}

/// The upstream tools a client may use, by server (disabled and held tools removed), and the
/// held ones; servers whose tools are not known yet waited for as `listing` says (see
/// `Pool::list_tools`).
pub async fn usable(engine: &Engine, listing: Listing) -> (Vec<(String, Vec<Tool>)>, Vec<Held>) {
    let config = engine.config();
    let pin = config.pin_tools.unwrap_or(true);
    if pin {
        engine.pins.settle().await;
    }
    let listed = engine.pool.list_tools(None, listing).await;
    let mut held = Vec::new();
    let none = ServerEntry::default();
    let servers = listed
        .into_iter()
        .map(|s| {
            let name = s.status.name.clone();
            let input = input(&name, config.server(&name).unwrap_or(&none), &[]);
            // Every tool is pinned, also those turned off now (turning one on later must not
            // make it look new); held ones are reported only when they are in use.
            let checked = if pin && s.remembered {
                // What it listed last time was pinned then: checked, never pinned again.
                let (ok, h) = engine.pins.check_remembered(&name, &s.tools);
                held.extend(h.into_iter().filter(|h| input.allows(&h.tool)));
                ok
            } else if pin && !s.tools.is_empty() {
                let (ok, h) = engine.pins.check_listed(&name, &s.tools);
                held.extend(h.into_iter().filter(|h| input.allows(&h.tool)));
                ok
            } else {
                s.tools.to_vec()
            };
            let tools: Vec<Tool> = checked
                .into_iter()
                .filter(|t| input.allows(&t.name))
                .collect();
            (name, tools)
        })
        .collect();
    (servers, held)
}

/// How many tools are held now, counted as `usable` reports them (tools turned off are not),
/// from the tools the running servers last listed: synchronous, never starts or asks a server.
pub fn held_count(engine: &Engine) -> usize {
    held_tools(engine).len()
}

/// The tools held for review, as (server, tool), from the tool lists already asked (nothing is
/// started to find them).
pub fn held_tools(engine: &Engine) -> Vec<(String, String)> {
    let config = engine.config();
    if !config.pin_tools.unwrap_or(true) {
        return Vec::new();
    }
    let none = ServerEntry::default();
    engine
        .pool
        .servers()
        .iter()
        .filter(|s| !s.entry().disabled)
        .filter_map(|s| Some((s.name(), s.cached_tools()?)))
        .flat_map(|(name, tools)| {
            let input = input(name, config.server(name).unwrap_or(&none), &[]);
            tools
                .iter()
                .filter(|t| input.allows(&t.name) && engine.pins.is_held(name, t))
                .map(|t| (name.to_owned(), t.name.to_string()))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Why `tool` of `server` may not be called, in any mode: turned off by the user, or held
/// because its definition changed since it was approved.
pub fn refusal(engine: &Engine, server: &str, tool: &Tool) -> Option<ToolError> {
    let config = engine.config();
    let none = ServerEntry::default();
    if !input(server, config.server(server).unwrap_or(&none), &[]).allows(&tool.name) {
        return Some(
            ToolError::new(
                ErrorCode::UnknownTool,
                format!(
                    "{server}/{} is turned off in Offload by the user",
                    tool.name
                ),
            )
            .with("server", server)
            .with("tool", tool.name.as_ref()),
        );
    }
    if config.pin_tools.unwrap_or(true)
        && let Some(why) = engine.pins.unchecked()
    {
        return Some(
            ToolError::new(
                ErrorCode::ServerUnavailable,
                format!(
                    "{server}/{} cannot be checked against the definition the user approved now ({why}); try again shortly",
                    tool.name
                ),
            )
            .with("server", server)
            .with("tool", tool.name.as_ref()),
        );
    }
    if config.pin_tools.unwrap_or(true) && engine.pins.is_held(server, tool) {
        return Some(
            ToolError::new(
                ErrorCode::ToolChanged,
                format!(
                    "{server}/{} changed since the user approved it, so Offload holds it until they review the change (in Offload's window, or `offload tools approve {server} {}`); tell the user",
                    tool.name, tool.name
                ),
            )
            .with("server", server)
            .with("tool", tool.name.as_ref()),
        );
    }
    None
}

/// Why a call of `name`, the name an upstream tool would have in direct mode, is refused
/// when that tool is held for review (`tool_changed`: the model must ask the user). `None`
/// when no held tool goes by that name; a tool the user turned off stays unknown.
pub fn refusal_by_name(engine: &Engine, name: &str) -> Option<ToolError> {
    let config = engine.config();
    if !config.pin_tools.unwrap_or(true) {
        return None;
    }
    let none = ServerEntry::default();
    engine.pool.servers().iter().find_map(|server| {
        let entry = config.server(server.name()).unwrap_or(&none);
        // While it lists again (its list changed), as it listed last.
        let tools = server
            .cached_tools()
            .or_else(|| server.remembered_tools().map(std::sync::Arc::new))?;
        let tool = tools.iter().find(|t| {
            let wanted =
                crate::gateway::names::exposed(server.name(), &t.name, &entry.tool_prefix());
            wanted == name || crate::gateway::names::hashed(&wanted, server.name(), &t.name) == name
        })?;
        let allowed = input(server.name(), entry, &[]).allows(&tool.name);
        (allowed && engine.pins.is_held(server.name(), tool))
            .then(|| refusal(engine, server.name(), tool))
            .flatten()
    })
}

fn input<'a>(name: &'a str, entry: &'a ServerEntry, tools: &'a [Tool]) -> ServerInput<'a> {
    ServerInput {
        name,
        tools,
        expose: entry.expose.unwrap_or(true),
        prefix: entry.tool_prefix(),
        disabled_tools: &entry.disabled_tools,
        enabled_tools: entry.enabled_tools.as_deref(),
        expected: &[],
    }
}

/// What a session shows: the mode in effect and the exposed tools. `own` are Offload's tools;
/// servers whose tools are not known yet are waited for as `listing` says.
pub async fn exposure(
    engine: &Engine,
    expose: Option<Expose>,
    own: &[Tool],
    listing: Listing,
) -> Exposure {
    let config = engine.config();
    let expose = expose.unwrap_or(config.tools.expose);
    if expose == Expose::Meta {
        return decide(expose, 0, &[], &[]);
    }
    let (servers, _) = usable(engine, listing).await;
    let none = ServerEntry::default();
    // Servers still starting: the tools they listed last time.
    let expected: Vec<Vec<String>> = servers
        .iter()
        .map(|(name, tools)| {
            let starting = tools.is_empty()
                && engine.pool.get(name).is_ok_and(|s| {
                    matches!(
                        s.status().status,
                        crate::upstream::ServerState::Starting | crate::upstream::ServerState::Idle
                    )
                });
            if starting {
                engine.pins.pinned_names(name)
            } else {
                Vec::new()
            }
        })
        .collect();
    let inputs: Vec<ServerInput<'_>> = servers
        .iter()
        .zip(&expected)
        .map(|((name, tools), expected)| ServerInput {
            expected,
            ..input(name, config.server(name).unwrap_or(&none), tools)
        })
        .collect();
    // Upstream tools never take the name of one of Offload's (discovery tools included: they
    // are listed again when some tools stay behind call_tool).
    let own: Vec<&str> = own.iter().map(|t| t.name.as_ref()).collect();
    decide(expose, config.tools.direct_limit, &inputs, &own)
}
