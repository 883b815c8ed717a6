//! The Clients screen: the MCP clients on this machine, connecting Offload to them and
//! importing their servers.

use offload_engine::ErrorCode;
use offload_engine::clients::{self, ClientView, Machine};
use offload_engine::control::{self, ClientChange, ControlError, ImportReport};
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

/// Adds Offload to the client, pointing at the `offload` binary installed with the app.
#[tauri::command]
pub fn connect_client(id: String) -> Result<ClientChange, ControlError> {
    let program = clients::installed_program().ok_or_else(|| {
        ControlError::new(
            ErrorCode::ServerUnavailable,
            "cannot find the offload program beside the app or on PATH; reinstall Offload",
        )
    })?;
    control::connect(&machine()?, &id, &program)
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
