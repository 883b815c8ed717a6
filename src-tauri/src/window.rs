//! The main window: made when the user opens it and destroyed when they close it, so that an
//! idle Offload holds no webview (and none of its processes); the engine keeps serving from
//! the tray either way.

use tauri::{AppHandle, Manager, Runtime, WebviewUrl, WebviewWindowBuilder};

const MAIN: &str = "main";

/// Whether to open the window at start: `--show`, or under WebDriver, where the window must
/// exist (and be visible to be clicked) from the first moment.
pub fn wanted_at_start() -> bool {
    std::env::var_os("TAURI_WEBVIEW_AUTOMATION").is_some_and(|v| v == "true")
        || std::env::args().any(|a| a == "--show")
}

/// Brings the window forward, making it first if it is closed.
pub fn show<R: Runtime>(app: &AppHandle<R>) {
    if let Some(window) = app.get_webview_window(MAIN) {
        let _ = window.unminimize();
        let _ = window.show();
        let _ = window.set_focus();
        return;
    }
    let made = WebviewWindowBuilder::new(app, MAIN, WebviewUrl::App("index.html".into()))
        .title("Offload")
        .inner_size(1040.0, 700.0)
        .min_inner_size(720.0, 480.0)
        .build();
    match made {
        Ok(window) => {
            crate::host::follow_activity(&window);
            let _ = window.set_focus();
        }
        Err(e) => tracing::error!("cannot open the window: {e}"),
    }
}
