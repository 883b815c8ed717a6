//! The Overview screen and the pause switch.

use offload_engine::control::{self, Overview, Status};
use tauri::State;

use crate::AppState;

#[tauri::command]
pub fn overview(state: State<'_, AppState>) -> Overview {
    control::overview(&state.engine)
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
