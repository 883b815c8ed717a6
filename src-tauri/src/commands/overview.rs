//! The Overview screen and the pause switch.

use offload_engine::control::{self, Overview, Span, Status};
use tauri::State;

use crate::AppState;

/// The Overview with its chart over `span` (a day when not given): one reading of the audit
/// log, off the main thread, where the window would wait for it.
#[tauri::command]
pub async fn overview(state: State<'_, AppState>, span: Option<Span>) -> Result<Overview, String> {
    let engine = state.engine.clone();
    let span = span.unwrap_or(Span::Day);
    tokio::task::spawn_blocking(move || control::overview(&engine, span))
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
