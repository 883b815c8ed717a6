//! The app as host: one engine, its configuration watched, and the local socket that every
//! `offload mcp` connects to. The engine keeps serving while the window is closed.

use std::sync::Arc;
use std::time::Instant;

use offload_engine::config_watch::{self, ConfigWatch};
use offload_engine::{Engine, ipc};
use tauri::{AppHandle, Emitter, Manager, Runtime};

use crate::state::{AppState, CHANGED, RESPONSES};

/// Binds the socket and serves on it, watches `config.json`, and keeps the tray and window
/// told of changes.
pub fn start<R: Runtime>(app: &AppHandle<R>, started: Instant) {
    let state = app.state::<AppState>();
    let engine = state.engine.clone();
    let socket = ipc::socket_path(engine.dirs());
    let watch = tauri::async_runtime::block_on(async {
        match ipc::Host::bind(&socket).await {
            Ok(host) => {
                tracing::info!(
                    ms = started.elapsed().as_millis() as u64,
                    "ready: offload mcp connects through {}",
                    socket.display()
                );
                tauri::async_runtime::spawn(host.serve(engine.clone()));
            }
            // The window still shows and edits the configuration; clients use the other host.
            Err(e) => tracing::error!("not serving clients: {e}"),
        }
        state.apply_serving().await;
        engine.keep_shared_state_fresh();
        // Retention rules (off unless the user sets one in Directories).
        let told = app.clone();
        offload_engine::control::keep_tidy(&engine, move |_| {
            let _ = told.emit(RESPONSES, ());
        });
        config_watch::watch_or_warn(engine.clone())
    });
    tauri::async_runtime::spawn(notify_changes(app.clone(), engine, watch));
}

/// Tells the tray and the window whenever what they show changes: the configuration, the
/// pause, connected clients, or a server's state (polled, as servers change on their own); and,
/// when notifications are on, the desktop about what needs the user.
/// Holds the configuration watch, which so lasts as long as the app.
async fn notify_changes<R: Runtime>(
    app: AppHandle<R>,
    engine: Arc<Engine>,
    _watch: Option<ConfigWatch>,
) {
    let mut config = engine.watch();
    let mut sessions = engine.sessions().watch();
    let mut tick = tokio::time::interval(std::time::Duration::from_millis(500));
    let mut shown = None;
    let mut notices = offload_engine::control::Notices::default();
    // The configuration revision HTTP serving was last brought in line with.
    let mut served = None;
    loop {
        tokio::select! {
            _ = config.changed() => {}
            _ = sessions.changed() => {}
            _ = tick.tick() => {}
        }
        let revision = *config.borrow_and_update();
        if served != Some(revision) {
            // `http.listen` edited in the file (or on the Sharing screen): serve accordingly.
            app.state::<AppState>().apply_serving().await;
            served = Some(revision);
        }
        let look = offload_engine::control::Look::of(&engine);
        crate::notify::tell(&app, &engine, &mut notices, &look);
        let now = crate::tray::Snapshot::of(&engine, &look, revision);
        if shown.as_ref() != Some(&now) {
            crate::tray::update(&app, &now);
            let _ = app.emit(CHANGED, &now.status);
            shown = Some(now);
        }
    }
}
