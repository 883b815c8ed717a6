//! Desktop notifications (`tauri-plugin-notification`: the freedesktop notification service on
//! Linux, Notification Center on macOS, toasts on Windows) for what needs the user. What to say
//! is decided in the engine (`control::Notices`); here it is shown, each on a blocking task of its
//! own, so a notification service that is slow or gone holds nothing up.

use offload_engine::Engine;
use offload_engine::control::{self, ControlError, Look, Notice, Notices};
use tauri::{AppHandle, Runtime};
use tauri_plugin_notification::NotificationExt;

/// Shows `notice` now.
pub fn show<R: Runtime>(app: &AppHandle<R>, notice: Notice) {
    let app = app.clone();
    tauri::async_runtime::spawn_blocking(move || {
        let shown = app
            .notification()
            .builder()
            .title(&notice.title)
            .body(&notice.body)
            .show();
        if let Err(e) = shown {
            tracing::warn!("could not show a notification: {e}");
        }
    });
}

/// Said when the user turns notifications on, so they see what one looks like.
pub fn turned_on() -> Notice {
    Notice {
        title: "Offload notifications are on".into(),
        body: "You will be told when a server stops working, a tool is held for review or a \
               sign-in is needed."
            .into(),
    }
}

/// Shows what is new in `look` when notifications are on (and keeps track of it either way, so
/// that turning them on does not announce the past).
pub fn tell<R: Runtime>(app: &AppHandle<R>, engine: &Engine, notices: &mut Notices, look: &Look) {
    let said = notices.changes(look);
    if control::notifications(engine) {
        for notice in said {
            show(app, notice);
        }
    }
}

/// Turns notifications on or off (the Overview switch, the tray's check item); on, one is shown
/// at once to say so.
pub async fn switch<R: Runtime>(
    app: &AppHandle<R>,
    engine: &Engine,
    on: bool,
) -> Result<(), ControlError> {
    control::set_notifications(engine, on).await?;
    if on {
        show(app, turned_on());
    }
    Ok(())
}
