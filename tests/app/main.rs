//! The app's commands on Tauri's mock runtime (no window needed), over a real engine with a real
//! config file and the fixture server as upstream. The real window is driven by the WebDriver
//! end-to-end test (`scripts/e2e.sh`).

mod commands;
mod tray;
