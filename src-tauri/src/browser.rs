//! Opening a sign-in page: the browser named by `OFFLOAD_BROWSER` when set (what the end-to-end
//! test uses), else the system browser through the opener plugin.

pub fn open(url: &str) -> Result<(), String> {
    offload_engine::oauth::open_in_chosen_browser(url).unwrap_or_else(|| {
        tauri_plugin_opener::open_url(url, None::<&str>)
            .map_err(|e| format!("cannot open the browser: {e}"))
    })
}
