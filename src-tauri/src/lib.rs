//! Offload's desktop app: a tray app that hosts one engine for every MCP client on this login.
//!
//! The shell stays thin. It starts the engine and the local socket ([`host`]), shows the tray
//! ([`tray`]) and the window ([`window`]), and exposes the engine's `control` operations as
//! commands ([`commands`]). Everything the window shows or changes is decided in
//! `offload_engine::control`, where it is tested without a window.

mod browser;
pub mod commands;
pub mod host;
mod notify;
mod state;
pub mod tray;
pub mod types;
mod window;

use std::process::ExitCode;
use std::time::Instant;

use tauri::{Manager, RunEvent, Runtime};

pub use state::AppState;

/// Starts the app: the engine and socket first (so clients connect within a second), then the
/// tray. The window opens from the tray, on a second launch, or at once with `--show` or under
/// WebDriver (`TAURI_WEBVIEW_AUTOMATION`); closing it leaves Offload running in the tray.
pub fn run() -> ExitCode {
    let started = Instant::now();
    offload_engine::logging::init();
    let state = match AppState::load() {
        Ok(state) => state,
        Err(e) => {
            tracing::error!("{e:#}");
            return ExitCode::FAILURE;
        }
    };
    let builder = tauri::Builder::default()
        .plugin(tauri_plugin_single_instance::init(|app, _args, _cwd| {
            window::show(app);
        }))
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_opener::init())
        .plugin(tauri_plugin_autostart::init(
            tauri_plugin_autostart::MacosLauncher::LaunchAgent,
            None,
        ));
    let app = match app(builder, state)
        .setup(move |app| {
            host::start(app.handle(), started);
            tray::create(app.handle())?;
            if window::wanted_at_start() {
                window::show(app.handle());
            }
            Ok(())
        })
        .build(tauri::generate_context!())
    {
        Ok(app) => app,
        Err(e) => {
            tracing::error!("the app did not start: {e}");
            return ExitCode::FAILURE;
        }
    };
    app.run(|handle, event| match event {
        // The last window closed: Offload stays in the tray. Quit asks with an exit code.
        RunEvent::ExitRequested {
            code: None, api, ..
        } => api.prevent_exit(),
        RunEvent::Exit => {
            let engine = handle.state::<AppState>().engine.clone();
            handle.state::<AppState>().serving.stop();
            tauri::async_runtime::block_on(engine.shutdown());
            tracing::info!("Offload app stopped");
        }
        _ => {}
    });
    ExitCode::SUCCESS
}

/// Offload's state and commands on any runtime: the real one, or Tauri's mock
/// runtime in tests.
pub fn app<R: Runtime>(builder: tauri::Builder<R>, state: AppState) -> tauri::Builder<R> {
    builder
        .plugin(tauri_plugin_notification::init())
        .manage(state)
        .invoke_handler(commands::handler())
}
