//! The tray's items on the mock runtime: they act on the engine and the config file like the
//! window does. (The menu itself is GTK's and needs a display: the real app builds it in the
//! WebDriver end-to-end run.)

use std::time::Duration;

use offload_app::AppState;
use offload_app::tray::{self, Snapshot};
use offload_engine::control::Look;
use offload_testkit::target_bin;
use serde_json::json;
use tauri::Manager;

use crate::commands::harness;

#[test]
fn tray_items_pause_and_toggle_servers() {
    let h = harness(json!({"mcpServers": {"fx": {"command": target_bin("offload-fixture")}}}));
    let handle = h.app.handle();
    let engine = handle.state::<AppState>().engine.clone();

    tray::on_menu(handle, "pause");
    assert!(engine.is_paused());
    tray::on_menu(handle, "pause");
    assert!(!engine.is_paused());

    let before = Snapshot::of(&engine, &Look::of(&engine), 0);
    tray::on_menu(handle, "server:fx");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while h.file()["mcpServers"]["fx"]["disabled"] != true {
        assert!(std::time::Instant::now() < deadline, "fx was not disabled");
        std::thread::sleep(Duration::from_millis(20));
    }
    let after = Snapshot::of(&engine, &Look::of(&engine), 1);
    assert_ne!(before, after);
    assert_eq!(after.status.servers.disabled, 1);

    tray::on_menu(handle, "server:fx");
    while h.file()["mcpServers"]["fx"].get("disabled").is_some() {
        assert!(
            std::time::Instant::now() < deadline,
            "fx was not enabled again"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The tray's *Notifications* item switches them in `config.json` (off by default), and the
/// status the window and tray show follows.
#[test]
fn the_tray_switches_notifications() {
    let h = harness(json!({"mcpServers": {}}));
    let handle = h.app.handle();
    let engine = handle.state::<AppState>().engine.clone();
    assert!(!offload_engine::control::status(&engine).notifications);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    tray::on_menu(handle, "notifications");
    while h.file().get("notifications") != Some(&json!(true)) {
        assert!(std::time::Instant::now() < deadline, "not turned on");
        std::thread::sleep(Duration::from_millis(20));
    }
    while !offload_engine::control::status(&engine).notifications {
        assert!(
            std::time::Instant::now() < deadline,
            "the status did not follow"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    tray::on_menu(handle, "notifications");
    while h.file().get("notifications").is_some() {
        assert!(std::time::Instant::now() < deadline, "not turned off");
        std::thread::sleep(Duration::from_millis(20));
    }
}
