//! The Live log screen's history; new calls arrive as `offload://calls` events.

use offload_engine::control;
use offload_engine::events::Event;
use tauri::State;

use crate::AppState;

/// The newest `limit` calls (at most 5,000), oldest first.
#[tauri::command]
pub async fn call_log(state: State<'_, AppState>, limit: usize) -> Result<Vec<Event>, ()> {
    let engine = state.engine.clone();
    let limit = limit.min(5_000);
    tauri::async_runtime::spawn_blocking(move || control::call_log(&engine, limit))
        .await
        .map_err(|_| ())
}
