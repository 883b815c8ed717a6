//! App settings: start at login.

use offload_engine::ErrorCode;
use offload_engine::control::ControlError;
use tauri::{AppHandle, Runtime};
use tauri_plugin_autostart::ManagerExt;

fn failed(e: impl std::fmt::Display) -> ControlError {
    ControlError::new(ErrorCode::Internal, format!("start at login: {e}"))
}

#[tauri::command]
pub fn autostart<R: Runtime>(app: AppHandle<R>) -> Result<bool, ControlError> {
    app.autolaunch().is_enabled().map_err(failed)
}

#[tauri::command]
pub fn set_autostart<R: Runtime>(app: AppHandle<R>, enabled: bool) -> Result<bool, ControlError> {
    let launcher = app.autolaunch();
    if enabled {
        launcher.enable().map_err(failed)?;
    } else {
        launcher.disable().map_err(failed)?;
    }
    launcher.is_enabled().map_err(failed)
}
