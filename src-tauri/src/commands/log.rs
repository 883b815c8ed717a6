//! The Live log screen's history; new calls arrive as `offload://calls` events.

use offload_engine::ErrorCode;
use offload_engine::control::Event;
use offload_engine::control::{self, ControlError};
use tauri::State;

use super::blocking;
use crate::AppState;

/// The newest `limit` calls (at most 5,000), oldest first.
#[tauri::command]
pub async fn call_log(
    state: State<'_, AppState>,
    limit: usize,
) -> Result<Vec<Event>, ControlError> {
    blocking(state, move |e| Ok(control::call_log(e, limit.min(5_000)))).await
}

/// Saves what the window exports (the Live log as JSONL or CSV, a server's stderr) to `path`,
/// the file the user chose in the native save dialog: whole or not at all (written beside it,
/// then renamed over it).
#[tauri::command]
pub async fn save_text(path: String, contents: String) -> Result<(), ControlError> {
    tauri::async_runtime::spawn_blocking(move || {
        write_whole(std::path::Path::new(&path), &contents)
    })
    .await
    .map_err(|e| ControlError::new(ErrorCode::Internal, e.to_string()))?
}

fn write_whole(path: &std::path::Path, contents: &str) -> Result<(), ControlError> {
    use std::io::Write;
    let failed = |e: std::io::Error| {
        ControlError::new(
            ErrorCode::WriteFailed,
            format!("cannot save '{}': {e}", path.display()),
        )
    };
    if !path.is_absolute() {
        return Err(ControlError::new(
            ErrorCode::InvalidArguments,
            format!(
                "'{}' is not an absolute path; choose the file in the save dialog",
                path.display()
            ),
        ));
    }
    let dir = path
        .parent()
        .ok_or_else(|| ControlError::new(ErrorCode::InvalidArguments, "no folder to save in"))?;
    let mut file = tempfile::NamedTempFile::new_in(dir).map_err(failed)?;
    file.write_all(contents.as_bytes()).map_err(failed)?;
    file.persist(path).map_err(|e| failed(e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::write_whole;

    #[test]
    fn an_export_is_saved_whole_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("calls.jsonl");
        write_whole(&path, "{\"a\":1}\n").unwrap();
        write_whole(&path, "{\"b\":2}\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"b\":2}\n");
        assert!(write_whole(std::path::Path::new("calls.csv"), "x").is_err());
        let missing = dir.path().join("no such folder/calls.csv");
        assert!(write_whole(&missing, "x").is_err());
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file is left behind");
    }
}
