//! The main window: made when the user opens it and destroyed when they close it, so that an
//! idle Offload holds no webview (and none of its processes); the engine keeps serving from
//! the tray either way.

use tauri::{
    AppHandle, Emitter, Manager, Runtime, WebviewUrl, WebviewWindow, WebviewWindowBuilder,
    WindowEvent,
};

use crate::state::{AppState, CALLS, RESPONSES};

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
            follow_activity(&window);
            let _ = window.set_focus();
        }
        Err(e) => tracing::error!("cannot open the window: {e}"),
    }
}

/// While `window` lives, streams new calls and changes to stored responses to it a few times a
/// second (a burst of calls arrives as one batch). Only then: following the audit log and
/// watching the writable roots is work an idle app with its window closed does not do.
pub fn follow_activity<R: Runtime>(window: &WebviewWindow<R>) {
    let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
    let stop = std::sync::Mutex::new(Some(stop));
    window.on_window_event(move |event| {
        if let WindowEvent::Destroyed = event
            && let Some(stop) = stop.lock().unwrap_or_else(|p| p.into_inner()).take()
        {
            let _ = stop.send(());
        }
    });
    let app = window.app_handle().clone();
    let engine = app.state::<AppState>().engine.clone();
    tauri::async_runtime::spawn(async move {
        let mut feed = offload_engine::activity::Feed::new(engine);
        let mut tick = tokio::time::interval(std::time::Duration::from_millis(250));
        loop {
            tokio::select! {
                _ = &mut stopped => return,
                _ = tick.tick() => {}
            }
            let update = feed.poll();
            if !update.events.is_empty() {
                let _ = app.emit(CALLS, &update.events);
            }
            if update.responses_changed {
                let _ = app.emit(RESPONSES, ());
            }
        }
    });
}
