//! The Sharing screen: *Serve over HTTP* and access tokens.

use offload_engine::control::{self, ControlError, CreatedToken, SharingView};
use tauri::State;

use crate::AppState;

#[tauri::command]
pub fn sharing(state: State<'_, AppState>) -> SharingView {
    control::sharing(&state.engine, state.serving.state())
}

/// Serves over HTTP at `listen` (`None` stops); answers what is served now.
#[tauri::command]
pub async fn set_http_listen(
    state: State<'_, AppState>,
    listen: Option<String>,
) -> Result<SharingView, ControlError> {
    control::set_http_listen(&state.engine, listen).await?;
    state.apply_serving().await;
    Ok(control::sharing(&state.engine, state.serving.state()))
}

/// Makes an access token; the entries name the URL served (or the default address).
#[tauri::command]
pub fn create_token(
    state: State<'_, AppState>,
    name: String,
    scopes: Vec<String>,
) -> Result<CreatedToken, ControlError> {
    let url = state
        .serving
        .state()
        .url
        .unwrap_or_else(|| format!("http://{}/mcp", control::DEFAULT_LISTEN));
    control::create_token(&state.engine, &name, &scopes, &url)
}

#[tauri::command]
pub fn revoke_token(state: State<'_, AppState>, name: String) -> Result<(), ControlError> {
    control::revoke_token(&state.engine, &name)
}
