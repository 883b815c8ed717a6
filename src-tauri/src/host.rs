//! The app as host: one engine, its configuration watched, and the local socket that every
//! `offload mcp` connects to. The engine keeps serving while the window is closed.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::Context;
use offload_engine::config::{AppDirs, NoKeychain};
use offload_engine::config_watch::{self, ConfigWatch};
use offload_engine::{Engine, EngineOptions, ipc};
use tauri::{AppHandle, Emitter, Manager, Runtime};

/// What every command and the tray share.
pub struct AppState {
    pub engine: Arc<Engine>,
    /// Kept for as long as the app runs.
    watch: Mutex<Option<ConfigWatch>>,
}

/// The event the window listens to: something it shows changed.
pub const CHANGED: &str = "offload://changed";

impl AppState {
    /// The engine from `OFFLOAD_CONFIG` or the platform's `config.json`.
    pub fn load() -> anyhow::Result<Self> {
        let options = EngineOptions {
            config_path: std::env::var_os("OFFLOAD_CONFIG").map(Into::into),
            compat: Default::default(),
            secrets: Arc::new(NoKeychain),
            dirs: None,
        };
        let (engine, warnings) = Engine::load(options).context("Offload's configuration")?;
        for w in warnings {
            tracing::warn!("{w}");
        }
        Ok(Self::new(Arc::new(engine)))
    }

    pub fn new(engine: Arc<Engine>) -> Self {
        Self {
            engine,
            watch: Mutex::new(None),
        }
    }
}

/// Binds the socket and serves on it, watches `config.json`, and keeps the tray and window
/// told of changes.
pub fn start<R: Runtime>(app: &AppHandle<R>, started: Instant) -> anyhow::Result<()> {
    let state = app.state::<AppState>();
    let engine = state.engine.clone();
    let socket = AppDirs::platform()
        .map(|dirs| ipc::socket_path(&dirs))
        .context("cannot determine the home directory")?;
    tauri::async_runtime::block_on(async {
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
        match config_watch::watch(engine.clone()) {
            Ok(watch) => *state.watch.lock().unwrap_or_else(|p| p.into_inner()) = watch,
            Err(e) => tracing::warn!("configuration changes apply at the next start: {e}"),
        }
    });
    tauri::async_runtime::spawn(notify_changes(app.clone(), engine));
    Ok(())
}

/// Tells the tray and the window whenever what they show changes: the configuration, the
/// pause, connected clients, or a server's state (polled, as servers change on their own).
async fn notify_changes<R: Runtime>(app: AppHandle<R>, engine: Arc<Engine>) {
    let mut config = engine.watch();
    let mut sessions = engine.sessions.watch();
    let mut tick = tokio::time::interval(std::time::Duration::from_millis(500));
    let mut shown = None;
    loop {
        tokio::select! {
            _ = config.changed() => {}
            _ = sessions.changed() => {}
            _ = tick.tick() => {}
        }
        let revision = *config.borrow_and_update();
        let now = crate::tray::Snapshot::of(&engine, revision);
        if shown.as_ref() != Some(&now) {
            crate::tray::update(&app, &now);
            let _ = app.emit(CHANGED, &now.status);
            shown = Some(now);
        }
    }
}
