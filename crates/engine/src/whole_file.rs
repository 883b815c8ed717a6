//! Replacing a file whole: the new content goes to a temporary file in the same directory, is
//! synced, then renamed over the old one, so a reader sees the old file or the new one, never a
//! part. The old file's permissions carry over (it may hold tokens).

use std::io::{BufWriter, Write};
use std::path::Path;

/// Replaces (or creates) `path` with what `fill` writes.
pub(crate) fn replace(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".offload-")
        .suffix(".partial")
        .tempfile_in(dir)?;
    {
        let mut w = BufWriter::new(tmp.as_file_mut());
        fill(&mut w)?;
        w.flush()?;
    }
    tmp.as_file().sync_all()?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(tmp.path(), meta.permissions());
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
