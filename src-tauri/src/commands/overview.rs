//! The Overview screen and the pause switch.

use offload_engine::control::{self, ActivitySeries, Overview, Span, Status};
use tauri::State;

use crate::AppState;

/// Both read the whole audit log: off the main thread, where the window would wait for it.
async fn off_main_thread<T: Send + 'static>(
    state: State<'_, AppState>,
    read: impl FnOnce(&offload_engine::Engine) -> T + Send + 'static,
) -> Result<T, String> {
    let engine = state.engine.clone();
    tokio::task::spawn_blocking(move || read(&engine))
        .await
        .map_err(|e| e.to_string())
}

#[tauri::command]
pub async fn overview(state: State<'_, AppState>) -> Result<Overview, String> {
    off_main_thread(state, control::overview).await
}

/// The Overview's charts.
#[tauri::command]
pub async fn activity(state: State<'_, AppState>, span: Span) -> Result<ActivitySeries, String> {
    off_main_thread(state, move |engine| control::activity(engine, span)).await
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
