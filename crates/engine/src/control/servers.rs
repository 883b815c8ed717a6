//! Upstream servers as the app's Servers screen shows and edits them.

use serde::Serialize;

use super::edit::{ControlError, edit_config};
use super::secrets::{self, NewSecret, PlainSecret, SecretRef};
use super::spec::ServerSpec;
use crate::config::edit;
use crate::upstream::ServerState;
use crate::{Engine, ErrorCode};

/// One server on the Servers screen.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ServerView {
    pub name: String,
    pub spec: ServerSpec,
    #[cfg_attr(
        feature = "ts",
        ts(
            type = "\"idle\" | \"starting\" | \"ready\" | \"error\" | \"sign_in_required\" | \"disabled\""
        )
    )]
    pub status: ServerState,
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub tool_count: Option<usize>,
    pub last_error: Option<String>,
    /// Why it is in error now (absent when it is not).
    pub error: Option<String>,
    /// Starts after the first one: crashes recovered, retries, restarts.
    pub restarts: u32,
    /// Seconds since it became ready, while it is.
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub uptime_secs: Option<u64>,
    /// Seconds until Offload tries to start it again, while it is failing and retried.
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub retry_in_secs: Option<u64>,
    /// Tools the user turned off (`disabledTools`).
    pub disabled_tools: Vec<String>,
    /// When set, only these tools are used (`enabledTools`).
    pub enabled_tools: Option<Vec<String>>,
    /// The last lines the server wrote to stderr.
    pub stderr: String,
    /// Values kept in the keychain.
    pub secrets: Vec<SecretRef>,
    /// Values that look secret and are written in the file: offered for moving to the keychain.
    pub plain_secrets: Vec<PlainSecret>,
    /// Hosts its network proxy refused that its entry still does not allow: offered for
    /// allowing.
    pub refused: Vec<crate::upstream::Refusal>,
    /// Paths it said it was refused (on stderr) that its entry does not grant since, leaving
    /// out what no server gets by design: offered for allowing.
    pub refused_paths: Vec<crate::upstream::PathRefusal>,
}

/// One tool of a server.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ToolView {
    pub name: String,
    pub description: Option<String>,
}

pub fn servers(engine: &Engine) -> Vec<ServerView> {
    let config = engine.config();
    engine
        .pool
        .servers()
        .iter()
        .map(|s| {
            let spec = ServerSpec::from_entry(s.name(), s.entry());
            let status = s.status();
            ServerView {
                name: s.name().to_owned(),
                status: status.status,
                tool_count: s.tool_count(),
                last_error: s.last_error(),
                error: status.error,
                restarts: status.restarts,
                uptime_secs: status.uptime_secs,
                retry_in_secs: status.retry_in_secs,
                // From the configuration in effect: a change of these alone keeps the server
                // running with its old entry.
                disabled_tools: config
                    .server(s.name())
                    .map(|e| e.disabled_tools.clone())
                    .unwrap_or_default(),
                enabled_tools: config
                    .server(s.name())
                    .and_then(|e| e.enabled_tools.clone()),
                stderr: s.stderr_tail(40),
                secrets: secrets::secret_refs(engine, &spec),
                plain_secrets: secrets::plain_secrets(&spec),
                refused: still_refused(s.network_refusals(), &spec),
                refused_paths: paths_still_refused(engine, s.path_refusals(), &spec),
                spec,
            }
        })
        .collect()
}

/// The refusals a server's entry does not allow since: its network is not opened, and the host
/// is not in its allow-list as the app writes it (see [`allowed_as`]).
fn still_refused(
    refused: Vec<crate::upstream::Refusal>,
    spec: &ServerSpec,
) -> Vec<crate::upstream::Refusal> {
    use crate::config::{Sandbox, SandboxNetwork};
    let list = match &spec.sandbox {
        Some(Sandbox::Off) => return Vec::new(),
        Some(Sandbox::Confined(p)) => match &p.network {
            Some(SandboxNetwork::All) => return Vec::new(),
            Some(SandboxNetwork::Allow(list)) => list.as_slice(),
            _ => &[],
        },
        None => &[],
    };
    refused
        .into_iter()
        .filter(|r| !list.contains(&allowed_as(&r.host, r.port)))
        .collect()
}

/// The refused paths an entry does not grant since and that may be offered.
fn paths_still_refused(
    engine: &Engine,
    refused: Vec<crate::upstream::PathRefusal>,
    spec: &ServerSpec,
) -> Vec<crate::upstream::PathRefusal> {
    use crate::config::Sandbox;
    let granted: Vec<std::path::PathBuf> = match &spec.sandbox {
        Some(Sandbox::Off) => return Vec::new(),
        Some(Sandbox::Confined(p)) => p
            .read
            .iter()
            .chain(&p.write)
            .map(|g| crate::config::expand_tilde(g))
            .collect(),
        None => Vec::new(),
    };
    if spec.transport != "stdio" {
        return Vec::new();
    }
    refused
        .into_iter()
        .filter(|r| {
            let path = std::path::Path::new(&r.path);
            !granted.iter().any(|g| path.starts_with(g)) && !engine.pool.withheld(path)
        })
        .collect()
}

/// Lets server `name` read (or read and write) a path it was refused: the path if it exists,
/// else the directory it would be made in (written into its sandbox; it restarts with it).
pub async fn allow_path(
    engine: &Engine,
    name: &str,
    path: &str,
    write: bool,
) -> Result<(), ControlError> {
    let asked = std::path::Path::new(path);
    if engine.pool.withheld(asked) {
        return Err(ControlError::invalid(format!(
            "{path} is kept from every server (credentials, Offload's files, start-up files): name it in the entry's \"read\" by hand if you mean it"
        )));
    }
    let grant = if asked.exists() {
        asked
    } else {
        asked.parent().unwrap_or(asked)
    };
    let grant = grant.display().to_string();
    edit_config(engine, |doc| edit::allow_path(doc, name, &grant, write)).await
}

/// How an allow-list names a refused host: bare for HTTPS and HTTP, else with its port.
pub fn allowed_as(host: &str, port: u16) -> String {
    let host = if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_owned()
    };
    if port == 443 || port == 80 {
        host
    } else {
        format!("{host}:{port}")
    }
}

/// Lets server `name` reach a host its proxy refused, written in its allow-list (it restarts
/// with it).
pub async fn allow_host(
    engine: &Engine,
    name: &str,
    host: &str,
    port: u16,
) -> Result<(), ControlError> {
    let entry = allowed_as(host, port);
    edit_config(engine, |doc| edit::allow_host(doc, name, &entry)).await
}

/// The tools of `name` (starting it if it is not running).
pub async fn server_tools(engine: &Engine, name: &str) -> Result<Vec<ToolView>, ControlError> {
    let server = engine.pool.get(name).map_err(tool_error)?;
    let tools = server.tools().await.map_err(tool_error)?;
    Ok(tools.iter().map(tool_view).collect())
}

fn tool_view(t: &rmcp::model::Tool) -> ToolView {
    ToolView {
        name: t.name.to_string(),
        description: t.description.as_ref().map(ToString::to_string),
    }
}

pub(super) fn tool_error(e: crate::upstream::UpstreamError) -> ControlError {
    let e: crate::ToolError = e.into();
    ControlError::new(e.code, e.message)
}

/// Every stderr line of `name` that is kept (the newest 256 KiB, across restarts).
pub fn server_stderr(
    engine: &Engine,
    name: &str,
) -> Result<Vec<crate::upstream::StderrLine>, ControlError> {
    Ok(engine.pool.get(name).map_err(tool_error)?.stderr_lines())
}

/// What *Test connection* found.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Trial {
    /// The tools it listed, when it started and answered.
    pub tools: Option<Vec<String>>,
    /// Why not, when it did not.
    pub error: Option<String>,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub millis: u64,
    /// Its last stderr lines.
    pub stderr: String,
}

/// Starts the server as the editor has it (`new_secrets` used as they are, not saved), lists
/// its tools and stops it: nothing is saved and the running servers are not touched. Answers
/// within the entry's start timeout and call timeout.
pub async fn test_server(
    engine: &Engine,
    name: &str,
    spec: &ServerSpec,
    new_secrets: &[NewSecret],
) -> Result<Trial, ControlError> {
    let mut spec = spec.clone();
    secrets::inline(&mut spec, new_secrets)?;
    let mut entry = spec.to_entry()?;
    entry.disabled = false;
    let limit = entry.start_timeout() + entry.timeout();
    let started = std::time::Instant::now();
    let (listed, stderr) = engine.pool.trial(name, entry, limit).await;
    let millis = started.elapsed().as_millis() as u64;
    Ok(match listed {
        Ok(tools) => Trial {
            tools: Some(tools.iter().map(|t| t.name.to_string()).collect()),
            error: None,
            millis,
            stderr,
        },
        Err(e) => Trial {
            tools: None,
            error: Some(tool_error(e).message),
            millis,
            stderr,
        },
    })
}

/// Adds a server, or replaces `previous` (renaming it when `name` differs). `new_secrets` are
/// saved to the keychain first and the entry refers to them; they are taken back when the file
/// cannot be written.
pub async fn put_server(
    engine: &Engine,
    previous: Option<&str>,
    name: &str,
    spec: &ServerSpec,
    new_secrets: &[NewSecret],
) -> Result<(), ControlError> {
    spec.to_entry()?; // an invalid entry saves no secret
    let mut spec = spec.clone();
    let saved = secrets::save(engine, name, &mut spec, new_secrets)?;
    let entry = spec.to_entry()?;
    let written = edit_config(engine, |doc| edit::put_server(doc, previous, name, &entry)).await;
    if written.is_err() {
        secrets::forget(engine, &saved);
    }
    written
}

/// Moves the values of `name` that look secret and are written in plain text into the keychain.
/// Answers how many moved.
pub async fn move_secrets_to_keychain(engine: &Engine, name: &str) -> Result<usize, ControlError> {
    let server = engine.pool.get(name).map_err(tool_error)?;
    let spec = ServerSpec::from_entry(name, server.entry());
    let moving = secrets::to_move(&spec);
    if !moving.is_empty() {
        put_server(engine, Some(name), name, &spec, &moving).await?;
    }
    Ok(moving.len())
}

/// Removes the server, and the keychain secrets only it referred to.
pub async fn remove_server(engine: &Engine, name: &str) -> Result<(), ControlError> {
    let specs: Vec<(String, ServerSpec)> = engine
        .config()
        .mcp_servers
        .iter()
        .map(|(n, e)| (n.clone(), ServerSpec::from_entry(n, e)))
        .collect();
    edit_config(engine, |doc| edit::remove_server(doc, name)).await?;
    let (gone, others): (Vec<_>, Vec<_>) = specs.iter().partition(|(n, _)| n == name);
    let orphans: Vec<String> = gone
        .iter()
        .flat_map(|(_, spec)| secrets::referenced(spec))
        .filter(|n| {
            !others
                .iter()
                .any(|(_, spec)| secrets::referenced(spec).any(|o| o == *n))
        })
        .map(str::to_owned)
        .collect();
    secrets::forget(engine, &orphans);
    // A server added again later under this name is pinned afresh.
    engine.pins.forget(name);
    Ok(())
}

pub async fn set_server_enabled(
    engine: &Engine,
    name: &str,
    enabled: bool,
) -> Result<(), ControlError> {
    edit_config(engine, |doc| edit::set_server_enabled(doc, name, enabled)).await
}

/// *Stop retrying*: a failing server is not started again in the background (a call, a
/// restart or a change of its entry tries again).
pub fn stop_retrying(engine: &Engine, name: &str) -> Result<(), ControlError> {
    engine.pool.get(name).map_err(tool_error)?.stop_retrying();
    engine.notify();
    Ok(())
}

/// Stops `name` and starts it again; answers its tool count.
pub async fn restart_server(engine: &Engine, name: &str) -> Result<usize, ControlError> {
    let server = engine.pool.get(name).map_err(tool_error)?;
    if server.entry().disabled {
        return Err(ControlError::new(
            ErrorCode::ServerDisabled,
            format!("'{name}' is disabled; enable it to start it"),
        ));
    }
    let tools = engine.pool.restart(name).await.map_err(tool_error)?;
    Ok(tools.len())
}
