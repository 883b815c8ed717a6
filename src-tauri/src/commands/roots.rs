//! The Directories screen. `add_root` is what the native folder picker's choice is given to;
//! `add_bucket_root` what the Add bucket form sends; `allow_url` what the URLs form sends.

use offload_engine::config::Retention;
use offload_engine::control::{self, BucketForm, ControlError, RootView, Swept, UrlsView};
use tauri::State;

use super::blocking;
use crate::AppState;

#[tauri::command]
pub async fn roots(state: State<'_, AppState>) -> Result<Vec<RootView>, ControlError> {
    control::refresh_bucket_records(&state.engine).await;
    Ok(control::roots(&state.engine))
}

#[tauri::command]
pub async fn add_bucket_root(
    state: State<'_, AppState>,
    form: BucketForm,
) -> Result<(), ControlError> {
    control::add_bucket_root(&state.engine, &form).await
}

#[tauri::command]
pub async fn add_root(
    state: State<'_, AppState>,
    path: String,
    writable: bool,
) -> Result<(), ControlError> {
    control::add_root(&state.engine, &path, writable).await
}

#[tauri::command]
pub async fn remove_root(state: State<'_, AppState>, path: String) -> Result<(), ControlError> {
    control::remove_root(&state.engine, &path).await
}

#[tauri::command]
pub async fn set_default_root(
    state: State<'_, AppState>,
    path: String,
) -> Result<(), ControlError> {
    control::set_default_root(&state.engine, &path).await
}

#[tauri::command]
pub async fn set_root_writable(
    state: State<'_, AppState>,
    path: String,
    writable: bool,
) -> Result<(), ControlError> {
    control::set_root_writable(&state.engine, &path, writable).await
}

/// Sets (or, with `None`, removes) a root's retention rule and applies it at once; answers what
/// that deleted.
#[tauri::command]
pub async fn set_root_retention(
    state: State<'_, AppState>,
    path: String,
    retention: Option<Retention>,
) -> Result<Vec<Swept>, ControlError> {
    control::set_root_retention(&state.engine, &path, retention).await?;
    blocking(state, |e| Ok(control::sweep(e))).await
}

/// What a retention rule would delete in `path` now (the confirmation asks with it).
#[tauri::command]
pub async fn retention_preview(
    state: State<'_, AppState>,
    path: String,
    retention: Retention,
) -> Result<Swept, ControlError> {
    blocking(state, move |e| {
        Ok(control::retention_preview(e, &path, retention))
    })
    .await
}

#[tauri::command]
pub fn urls(state: State<'_, AppState>) -> UrlsView {
    control::urls(&state.engine)
}

#[tauri::command]
pub async fn allow_url(state: State<'_, AppState>, pattern: String) -> Result<(), ControlError> {
    control::allow_url(&state.engine, &pattern).await
}

#[tauri::command]
pub async fn remove_url(state: State<'_, AppState>, pattern: String) -> Result<(), ControlError> {
    control::remove_url(&state.engine, &pattern).await
}
