//! The Clients screen: the MCP clients on this machine, connecting Offload to them and
//! importing their servers.

use offload_engine::ErrorCode;
use offload_engine::config::Expose;
use offload_engine::control::{self, ClientChange, ControlError, ImportReport, Snippet};
use offload_engine::control::{ClientView, Machine, installed_program};
use tauri::State;

use crate::AppState;

fn machine() -> Result<Machine, ControlError> {
    Machine::current()
        .ok_or_else(|| ControlError::new(ErrorCode::Internal, "cannot find the home directory"))
}

#[tauri::command]
pub fn clients() -> Result<Vec<ClientView>, ControlError> {
    Ok(control::clients(&machine()?))
}

fn program() -> Result<std::path::PathBuf, ControlError> {
    installed_program().ok_or_else(|| {
        ControlError::new(
            ErrorCode::ServerUnavailable,
            "cannot find the offload program beside the app or on PATH; reinstall Offload",
        )
    })
}

fn expose_of(expose: Option<String>) -> Result<Option<Expose>, ControlError> {
    match expose.as_deref() {
        None | Some("") => Ok(None),
        Some(e) => Expose::parse(e).map(Some).ok_or_else(|| {
            ControlError::new(
                ErrorCode::InvalidArguments,
                format!("'{e}' is not auto, direct or meta"),
            )
        }),
    }
}

/// Adds Offload to the client, pointing at the `offload` binary installed with the app, with
/// the client's choice of how upstream tools are shown (none: the configuration's).
#[tauri::command]
pub fn connect_client(id: String, expose: Option<String>) -> Result<ClientChange, ControlError> {
    control::connect(&machine()?, &id, &program()?, expose_of(expose)?)
}

/// What to paste into the client's configuration by hand.
#[tauri::command]
pub fn client_snippet(id: String, expose: Option<String>) -> Result<Snippet, ControlError> {
    control::snippet(&id, &program()?, expose_of(expose)?)
}

#[tauri::command]
pub fn disconnect_client(id: String) -> Result<ClientChange, ControlError> {
    control::disconnect(&machine()?, &id)
}

#[tauri::command]
pub async fn import_client_servers(
    state: State<'_, AppState>,
    id: String,
    remove_from_client: bool,
) -> Result<ImportReport, ControlError> {
    control::import_servers(&state.engine, &machine()?, &id, remove_from_client).await
}
