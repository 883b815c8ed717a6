//! The Responses screen, and the preview it shares with files dropped on the window.

use offload_engine::ErrorCode;
use offload_engine::control::Summary;
use offload_engine::control::{
    self, CallView, ControlError, FileInfo, Page, QueryView, Responses, SchemaView,
};
use tauri::State;

use super::blocking;
use crate::AppState;

#[tauri::command]
pub async fn responses(state: State<'_, AppState>) -> Result<Responses, ControlError> {
    control::refresh_bucket_records(&state.engine).await;
    blocking(state, |e| Ok(control::responses(e))).await
}

#[tauri::command]
pub async fn response_call(
    state: State<'_, AppState>,
    path: String,
) -> Result<CallView, ControlError> {
    blocking(state, move |e| control::response_call(e, &path)).await
}

#[tauri::command]
pub async fn delete_response(state: State<'_, AppState>, path: String) -> Result<(), ControlError> {
    blocking(state, move |e| control::delete_response(e, &path)).await
}

#[tauri::command]
pub async fn file_info(state: State<'_, AppState>, path: String) -> Result<FileInfo, ControlError> {
    blocking(state, move |e| control::file_info(e, &path)).await
}

#[tauri::command]
pub async fn file_summary(
    state: State<'_, AppState>,
    path: String,
) -> Result<Summary, ControlError> {
    blocking(state, move |e| control::summary(e, &path)).await
}

#[tauri::command]
pub async fn file_schema(
    state: State<'_, AppState>,
    path: String,
) -> Result<SchemaView, ControlError> {
    blocking(state, move |e| control::schema(e, &path)).await
}

#[tauri::command]
pub async fn file_content(
    state: State<'_, AppState>,
    path: String,
    offset: u64,
    length: u64,
) -> Result<Page, ControlError> {
    blocking(state, move |e| control::content(e, &path, offset, length)).await
}

/// The Query tab: `sql` over the file (the table `data`), its first `limit` rows.
#[tauri::command]
pub async fn file_query(
    state: State<'_, AppState>,
    path: String,
    sql: String,
    limit: usize,
) -> Result<QueryView, ControlError> {
    blocking(state, move |e| control::query(e, &path, &sql, limit)).await
}

/// *Save as response*: the whole result stored in the default directory; its path.
#[tauri::command]
pub async fn save_query(
    state: State<'_, AppState>,
    path: String,
    sql: String,
) -> Result<String, ControlError> {
    blocking(state, move |e| control::save_query(e, &path, &sql, None)).await
}

/// Shows the file in the system's file manager.
#[tauri::command]
pub fn reveal(path: String) -> Result<(), ControlError> {
    // The file manager's "show this file" (a D-Bus call on Linux), else its folder opened the
    // desktop's usual way (xdg-open); the error says where the file is either way.
    if tauri_plugin_opener::reveal_item_in_dir(&path).is_ok() {
        return Ok(());
    }
    let folder = std::path::Path::new(&path)
        .parent()
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default();
    tauri_plugin_opener::open_path(&folder, None::<&str>).map_err(|_| {
        ControlError::new(
            ErrorCode::PathUnusable,
            format!("no file manager could be opened here; the file is at {path}"),
        )
    })
}
