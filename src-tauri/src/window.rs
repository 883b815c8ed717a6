//! The main window: hidden at start (Offload lives in the tray), shown on demand, and hidden
//! rather than closed so that the engine keeps serving.

use tauri::{AppHandle, Manager, Runtime, Window, WindowEvent};

const MAIN: &str = "main";

/// Whether to show the window at start: `--show`, or under WebDriver, where a hidden window's
/// content cannot be clicked.
pub fn wanted_at_start() -> bool {
    std::env::var_os("TAURI_WEBVIEW_AUTOMATION").is_some_and(|v| v == "true")
        || std::env::args().any(|a| a == "--show")
}

pub fn show<R: Runtime>(app: &AppHandle<R>) {
    if let Some(window) = app.get_webview_window(MAIN) {
        let _ = window.unminimize();
        let _ = window.show();
        let _ = window.set_focus();
    }
}

pub fn on_event<R: Runtime>(window: &Window<R>, event: &WindowEvent) {
    if let WindowEvent::CloseRequested { api, .. } = event
        && window.label() == MAIN
    {
        api.prevent_close();
        let _ = window.hide();
    }
}
