//! The commands the window calls, one module per screen. Each converts its arguments, calls one
//! `offload_engine::control` function and answers its result or `{code, message}`.

pub mod clients;
#[cfg(test)]
mod declared;
pub mod log;
pub mod overview;
pub mod responses;
pub mod roots;
pub mod servers;
pub mod settings;
pub mod sharing;

use offload_engine::control::ControlError;
use offload_engine::{Engine, ErrorCode};
use tauri::ipc::Invoke;
use tauri::{Runtime, State};

use crate::AppState;

/// Runs file work off the async threads.
async fn blocking<T: Send + 'static>(
    state: State<'_, AppState>,
    work: impl FnOnce(&Engine) -> Result<T, ControlError> + Send + 'static,
) -> Result<T, ControlError> {
    let engine = state.engine.clone();
    tauri::async_runtime::spawn_blocking(move || work(&engine))
        .await
        .map_err(|e| ControlError::new(ErrorCode::Internal, e.to_string()))?
}

/// Every command, for `Builder::invoke_handler`.
pub fn handler<R: Runtime>() -> impl Fn(Invoke<R>) -> bool + Send + Sync + 'static {
    tauri::generate_handler![
        overview::overview,
        overview::status,
        overview::set_paused,
        servers::servers,
        servers::server_tools,
        servers::server_offers,
        servers::server_log,
        servers::server_stderr,
        servers::test_server,
        servers::put_server,
        servers::move_secrets_to_keychain,
        servers::remove_server,
        servers::set_server_enabled,
        servers::allow_host,
        servers::allow_path,
        servers::restart_server,
        servers::stop_retrying,
        servers::sign_in_server,
        sharing::sharing,
        sharing::set_http_listen,
        sharing::create_token,
        sharing::revoke_token,
        servers::sign_out_server,
        servers::tools_view,
        servers::approve_tool,
        servers::set_tool_enabled,
        roots::roots,
        roots::add_root,
        roots::add_bucket_root,
        roots::remove_root,
        roots::set_default_root,
        roots::set_root_writable,
        roots::set_root_retention,
        roots::retention_preview,
        roots::urls,
        roots::allow_url,
        roots::remove_url,
        responses::responses,
        responses::response_call,
        responses::delete_response,
        responses::file_info,
        responses::file_summary,
        responses::file_schema,
        responses::file_content,
        responses::file_query,
        responses::save_query,
        responses::reveal,
        log::call_log,
        log::save_text,
        clients::clients,
        clients::connect_client,
        clients::client_snippet,
        clients::disconnect_client,
        clients::import_client_servers,
        settings::autostart,
        settings::set_autostart,
        settings::set_notifications,
    ]
}
