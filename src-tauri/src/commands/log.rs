//! The Live log screen's history; new calls arrive as `offload://calls` events.

use offload_engine::control::{self, ControlError};
use offload_engine::events::Event;
use tauri::State;

use super::blocking;
use crate::AppState;

/// The newest `limit` calls (at most 5,000), oldest first.
#[tauri::command]
pub async fn call_log(
    state: State<'_, AppState>,
    limit: usize,
) -> Result<Vec<Event>, ControlError> {
    blocking(state, move |e| Ok(control::call_log(e, limit.min(5_000)))).await
}
