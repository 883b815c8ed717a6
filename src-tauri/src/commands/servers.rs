//! The Servers screen.

use offload_engine::control::{
    self, ControlError, NewSecret, OffersView, ServerSpec, ServerView, ToolView,
};
use offload_engine::control::{LogLine, StderrLine};
use tauri::State;

use crate::AppState;

#[tauri::command]
pub fn servers(state: State<'_, AppState>) -> Vec<ServerView> {
    control::servers(&state.engine)
}

#[tauri::command]
pub async fn server_tools(
    state: State<'_, AppState>,
    name: String,
) -> Result<Vec<ToolView>, ControlError> {
    control::server_tools(&state.engine, &name).await
}

/// The server's prompts, resources and resource templates (starting it if need be).
#[tauri::command]
pub async fn server_offers(
    state: State<'_, AppState>,
    name: String,
) -> Result<OffersView, ControlError> {
    control::server_offers(&state.engine, &name).await
}

/// The server's recent log messages, oldest first.
#[tauri::command]
pub fn server_log(state: State<'_, AppState>, name: String) -> Result<Vec<LogLine>, ControlError> {
    control::server_log(&state.engine, &name)
}

/// Every stderr line of the server that is kept, oldest first.
#[tauri::command]
pub fn server_stderr(
    state: State<'_, AppState>,
    name: String,
) -> Result<Vec<StderrLine>, ControlError> {
    control::server_stderr(&state.engine, &name)
}

/// *Test connection*: starts the server as the editor has it, lists its tools, stops it.
#[tauri::command]
pub async fn test_server(
    state: State<'_, AppState>,
    name: String,
    spec: ServerSpec,
    secrets: Option<Vec<NewSecret>>,
) -> Result<control::Trial, ControlError> {
    let secrets = secrets.unwrap_or_default();
    control::test_server(&state.engine, &name, &spec, &secrets).await
}

/// Adds a server, or replaces `previous` (renaming it when `name` differs).
#[tauri::command]
pub async fn put_server(
    state: State<'_, AppState>,
    previous: Option<String>,
    name: String,
    spec: ServerSpec,
    secrets: Option<Vec<NewSecret>>,
) -> Result<(), ControlError> {
    let secrets = secrets.unwrap_or_default();
    control::put_server(&state.engine, previous.as_deref(), &name, &spec, &secrets).await
}

/// Lets the server reach a host its network proxy refused (added to its allow-list).
#[tauri::command]
pub async fn allow_host(
    state: State<'_, AppState>,
    name: String,
    host: String,
    port: u16,
) -> Result<(), ControlError> {
    control::allow_host(&state.engine, &name, &host, port).await
}

/// Lets the server read (or read and write) a path it was refused (added to its sandbox).
#[tauri::command]
pub async fn allow_path(
    state: State<'_, AppState>,
    name: String,
    path: String,
    write: bool,
) -> Result<(), ControlError> {
    control::allow_path(&state.engine, &name, &path, write).await
}

/// Moves the server's plain-text secrets into the keychain; answers how many moved.
#[tauri::command]
pub async fn move_secrets_to_keychain(
    state: State<'_, AppState>,
    name: String,
) -> Result<usize, ControlError> {
    control::move_secrets_to_keychain(&state.engine, &name).await
}

/// What clients see of the upstream tools: the mode and why, exposed names, held tools.
#[tauri::command]
pub async fn tools_view(state: State<'_, AppState>) -> Result<control::ToolsView, ControlError> {
    Ok(control::tools_view(&state.engine).await)
}

/// Approves a held tool's new definition (every held tool of `server` without `tool`).
#[tauri::command]
pub async fn approve_tool(
    state: State<'_, AppState>,
    server: String,
    tool: Option<String>,
) -> Result<usize, ControlError> {
    control::approve_tool(&state.engine, &server, tool.as_deref()).await
}

/// Turns one upstream tool on or off for every client.
#[tauri::command]
pub async fn set_tool_enabled(
    state: State<'_, AppState>,
    server: String,
    tool: String,
    enabled: bool,
) -> Result<(), ControlError> {
    control::set_tool_enabled(&state.engine, &server, &tool, enabled).await
}

/// *Stop retrying* a failing server.
#[tauri::command]
pub fn stop_retrying(state: State<'_, AppState>, name: String) -> Result<(), ControlError> {
    control::stop_retrying(&state.engine, &name)
}

#[tauri::command]
pub async fn remove_server(state: State<'_, AppState>, name: String) -> Result<(), ControlError> {
    control::remove_server(&state.engine, &name).await
}

#[tauri::command]
pub async fn set_server_enabled(
    state: State<'_, AppState>,
    name: String,
    enabled: bool,
) -> Result<(), ControlError> {
    control::set_server_enabled(&state.engine, &name, enabled).await
}

#[tauri::command]
pub async fn restart_server(
    state: State<'_, AppState>,
    name: String,
) -> Result<usize, ControlError> {
    control::restart_server(&state.engine, &name).await
}

/// *Sign in*: opens the system browser on the server's sign-in page and waits (up to five
/// minutes) for the user to finish there; the server then starts with its new token.
#[tauri::command]
pub async fn sign_in_server(
    state: State<'_, AppState>,
    name: String,
) -> Result<String, ControlError> {
    control::sign_in(&state.engine, &name, crate::browser::open).await
}

/// *Sign out*: forgets the server's tokens (the keychain entry) and stops it.
#[tauri::command]
pub async fn sign_out_server(state: State<'_, AppState>, name: String) -> Result<(), ControlError> {
    control::sign_out(&state.engine, &name).await
}
