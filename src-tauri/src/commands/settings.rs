//! App settings: start at login, desktop notifications.

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
        // On Linux the login item goes to ~/.config/autostart, which the launcher library
        // creates only when ~/.config exists.
        #[cfg(target_os = "linux")]
        if let Some(dirs) = directories::BaseDirs::new() {
            std::fs::create_dir_all(dirs.home_dir().join(".config")).map_err(failed)?;
        }
        launcher.enable().map_err(failed)?;
    } else {
        launcher.disable().map_err(failed)?;
    }
    launcher.is_enabled().map_err(failed)
}

/// Turns desktop notifications on (one is shown at once to say so) or off.
#[tauri::command]
pub async fn set_notifications<R: Runtime>(
    app: AppHandle<R>,
    state: tauri::State<'_, crate::AppState>,
    enabled: bool,
) -> Result<(), ControlError> {
    crate::notify::switch(&app, &state.engine, enabled).await
}
