//! The Overview screen and the pause switch.

use offload_engine::control::{self, ActivitySeries, Overview, Span, Status};
use tauri::State;

use crate::AppState;

#[tauri::command]
pub fn overview(state: State<'_, AppState>) -> Overview {
    control::overview(&state.engine)
}

/// The Overview's charts. The audit log is read off the main thread.
#[tauri::command]
pub async fn activity(state: State<'_, AppState>, span: Span) -> Result<ActivitySeries, String> {
    let engine = state.engine.clone();
    tokio::task::spawn_blocking(move || control::activity(&engine, span))
        .await
        .map_err(|e| e.to_string())
}

#[tauri::command]
pub fn status(state: State<'_, AppState>) -> Status {
    control::status(&state.engine)
}

#[tauri::command]
pub fn set_paused(state: State<'_, AppState>, paused: bool) -> Status {
    state.engine.set_paused(paused);
    control::status(&state.engine)
}
