//! The app as host: one engine, its configuration watched, and the local socket that every
//! `offload mcp` connects to. The engine keeps serving while the window is closed.

use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use offload_engine::config_watch::{self, ConfigWatch};
use offload_engine::keychain::Keychain;
use offload_engine::{Engine, EngineOptions, ipc};
use tauri::{AppHandle, Emitter, Manager, Runtime, WebviewWindow, WindowEvent};

/// What every command and the tray share.
pub struct AppState {
    pub engine: Arc<Engine>,
    /// *Serve over HTTP* (`http.listen`), for agents on other machines.
    pub serving: Arc<offload_engine::http::Serving>,
}

/// The event the window listens to: something it shows changed.
pub const CHANGED: &str = "offload://changed";
/// New calls (a batch of events, oldest first), from every Offload process.
pub const CALLS: &str = "offload://calls";
/// Stored responses were added, changed or removed.
pub const RESPONSES: &str = "offload://responses";

impl AppState {
    /// The engine from `OFFLOAD_CONFIG` or the platform's `config.json`.
    pub fn load() -> anyhow::Result<Self> {
        let options = EngineOptions {
            config_path: std::env::var_os("OFFLOAD_CONFIG").map(Into::into),
            require_config: false,
            compat: Default::default(),
            secrets: Arc::new(Keychain::platform()),
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
            serving: Arc::default(),
        }
    }

    /// Serves over HTTP what `http.listen` says (nothing when it is absent).
    pub async fn apply_serving(&self) {
        let listen = self
            .engine
            .config()
            .http
            .as_ref()
            .and_then(|h| h.listen.clone());
        self.serving.apply(&self.engine, listen).await;
    }
}

/// Binds the socket and serves on it, watches `config.json`, and keeps the tray and window
/// told of changes.
pub fn start<R: Runtime>(app: &AppHandle<R>, started: Instant) {
    let state = app.state::<AppState>();
    let engine = state.engine.clone();
    let socket = ipc::socket_path(&engine.dirs);
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
    let mut sessions = engine.sessions.watch();
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
