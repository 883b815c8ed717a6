//! The tray icon and its menu: status, connected clients, servers with enable toggles, tools
//! held for review, pause, notifications on or off, open the window, quit. The menu is rebuilt
//! when what it shows changes.

use offload_engine::Engine;
use offload_engine::control::ServerState;
use offload_engine::control::{self, Look, Status};
use tauri::menu::{CheckMenuItem, IsMenuItem, Menu, MenuItem, PredefinedMenuItem, Submenu};
use tauri::tray::{MouseButton, MouseButtonState, TrayIconBuilder, TrayIconEvent};
use tauri::{AppHandle, Manager, Runtime};

use crate::AppState;

const TRAY: &str = "offload";

/// What the tray shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub status: Status,
    pub servers: Vec<(String, ServerState)>,
    /// Upstream tools held until the user reviews their changed definitions.
    pub held: usize,
    /// The configuration's revision, so that any change of it reaches the window.
    pub revision: u64,
}

impl Snapshot {
    pub fn of(engine: &Engine, look: &Look, revision: u64) -> Self {
        Self {
            status: control::status(engine),
            servers: look
                .servers
                .iter()
                .map(|(name, state, _)| (name.clone(), *state))
                .collect(),
            held: look.held.len(),
            revision,
        }
    }
}

/// The status line, e.g. "Offload is running · 2 clients".
pub fn headline(status: &Status) -> String {
    let state = if status.paused { "paused" } else { "running" };
    let clients = match status.clients {
        1 => "1 client".to_owned(),
        n => format!("{n} clients"),
    };
    format!("Offload is {state} · {clients}")
}

fn servers_line(status: &Status) -> String {
    let s = &status.servers;
    let mut line = format!("Servers: {} ready of {}", s.ready, s.total - s.disabled);
    if s.errors > 0 {
        line.push_str(&format!(", {} with errors", s.errors));
    }
    if s.sign_in > 0 {
        line.push_str(&format!(", {} to sign in", s.sign_in));
    }
    line
}

/// The menu item for held tools, e.g. "2 tools changed: review…"; `None` when none is held.
fn held_line(held: usize) -> Option<String> {
    match held {
        0 => None,
        1 => Some("1 tool changed: review in Offload…".into()),
        n => Some(format!("{n} tools changed: review in Offload…")),
    }
}

fn menu<R: Runtime>(app: &AppHandle<R>, now: &Snapshot) -> tauri::Result<Menu<R>> {
    let info = |id: &str, text: String| MenuItem::with_id(app, id, text, false, None::<&str>);
    let headline = info("status", headline(&now.status))?;
    let servers_line = info("servers-status", servers_line(&now.status))?;
    let toggles = now
        .servers
        .iter()
        .map(|(name, state)| {
            let label = match state {
                ServerState::Error => format!("{name} (error)"),
                ServerState::SignInRequired => format!("{name} (sign-in required)"),
                _ => name.clone(),
            };
            let enabled = *state != ServerState::Disabled;
            CheckMenuItem::with_id(
                app,
                format!("server:{name}"),
                label,
                true,
                enabled,
                None::<&str>,
            )
        })
        .collect::<tauri::Result<Vec<_>>>()?;
    let toggles: Vec<&dyn IsMenuItem<R>> =
        toggles.iter().map(|t| t as &dyn IsMenuItem<R>).collect();
    let servers =
        Submenu::with_id_and_items(app, "servers", "Servers", !toggles.is_empty(), &toggles)?;
    let held = held_line(now.held)
        .map(|text| MenuItem::with_id(app, "review", text, true, None::<&str>))
        .transpose()?;
    let sign_ins = now
        .servers
        .iter()
        .filter(|(_, state)| *state == ServerState::SignInRequired)
        .map(|(name, _)| {
            MenuItem::with_id(
                app,
                format!("sign-in:{name}"),
                format!("Sign in to {name}…"),
                true,
                None::<&str>,
            )
        })
        .collect::<tauri::Result<Vec<_>>>()?;
    let pause_text = if now.status.paused {
        "Resume proxying"
    } else {
        "Pause proxying"
    };
    let separator = PredefinedMenuItem::separator(app)?;
    let open = MenuItem::with_id(app, "open", "Open Offload", true, None::<&str>)?;
    let pause = MenuItem::with_id(app, "pause", pause_text, true, None::<&str>)?;
    let notifications = CheckMenuItem::with_id(
        app,
        "notifications",
        "Notifications",
        true,
        now.status.notifications,
        None::<&str>,
    )?;
    let separator2 = PredefinedMenuItem::separator(app)?;
    let quit = MenuItem::with_id(app, "quit", "Quit Offload", true, None::<&str>)?;
    let mut items: Vec<&dyn IsMenuItem<R>> = vec![&headline, &servers_line];
    if let Some(held) = &held {
        items.push(held);
    }
    items.extend(sign_ins.iter().map(|i| i as &dyn IsMenuItem<R>));
    items.extend([
        &separator as &dyn IsMenuItem<R>,
        &open,
        &servers,
        &pause,
        &notifications,
        &separator2,
        &quit,
    ]);
    Menu::with_items(app, &items)
}

pub fn create<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<()> {
    let engine = app.state::<AppState>().engine.clone();
    let now = Snapshot::of(&engine, &Look::of(&engine), 0);
    let mut tray = TrayIconBuilder::with_id(TRAY)
        .tooltip(headline(&now.status))
        .menu(&menu(app, &now)?)
        .show_menu_on_left_click(false)
        .on_menu_event(|app, event| on_menu(app, event.id().as_ref()))
        .on_tray_icon_event(|tray, event| {
            if let TrayIconEvent::Click {
                button: MouseButton::Left,
                button_state: MouseButtonState::Up,
                ..
            } = event
            {
                crate::window::show(tray.app_handle());
            }
        });
    if let Some(icon) = app.default_window_icon() {
        tray = tray.icon(icon.clone());
    }
    tray.build(app)?;
    Ok(())
}

pub fn update<R: Runtime>(app: &AppHandle<R>, now: &Snapshot) {
    let Some(tray) = app.tray_by_id(TRAY) else {
        return;
    };
    match menu(app, now) {
        Ok(menu) => {
            let _ = tray.set_menu(Some(menu));
        }
        Err(e) => tracing::warn!("tray menu: {e}"),
    }
    let _ = tray.set_tooltip(Some(headline(&now.status)));
}

/// What a click on the menu item `id` does.
pub fn on_menu<R: Runtime>(app: &AppHandle<R>, id: &str) {
    let engine = app.state::<AppState>().engine.clone();
    match id {
        "open" | "review" => crate::window::show(app),
        "pause" => engine.set_paused(!engine.is_paused()),
        "notifications" => {
            let app = app.clone();
            let on = !control::notifications(&engine);
            tauri::async_runtime::spawn(async move {
                if let Err(e) = crate::notify::switch(&app, &engine, on).await {
                    tracing::warn!("{e}");
                }
            });
        }
        "quit" => app.exit(0),
        _ => {
            if let Some(name) = id.strip_prefix("sign-in:") {
                let name = name.to_owned();
                tauri::async_runtime::spawn(async move {
                    if let Err(e) = control::sign_in(&engine, &name, crate::browser::open).await {
                        tracing::warn!("{}", e.message);
                    }
                });
            } else if let Some(name) = id.strip_prefix("server:") {
                let name = name.to_owned();
                let enable = engine.pool().get(&name).is_ok_and(|s| s.entry().disabled);
                tauri::async_runtime::spawn(async move {
                    if let Err(e) = control::set_server_enabled(&engine, &name, enable).await {
                        tracing::warn!("{e}");
                    }
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use control::ServerCounts;

    #[test]
    fn the_status_line_says_running_or_paused_and_counts_clients() {
        let mut status = Status {
            paused: false,
            clients: 1,
            servers: ServerCounts {
                total: 3,
                ready: 1,
                errors: 1,
                sign_in: 0,
                disabled: 1,
            },
            config_error: None,
            notifications: false,
        };
        assert_eq!(headline(&status), "Offload is running · 1 client");
        assert_eq!(
            servers_line(&status),
            "Servers: 1 ready of 2, 1 with errors"
        );
        status.servers.total = 4;
        status.servers.sign_in = 1;
        assert_eq!(
            servers_line(&status),
            "Servers: 1 ready of 3, 1 with errors, 1 to sign in"
        );
        status.paused = true;
        status.clients = 2;
        assert_eq!(headline(&status), "Offload is paused · 2 clients");
        assert_eq!(held_line(0), None);
        assert_eq!(
            held_line(2).as_deref(),
            Some("2 tools changed: review in Offload…")
        );
    }
}
