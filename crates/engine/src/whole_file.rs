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

/// Opens Offload's own log-like file (the audit log, the records index) for appending, created
/// readable by this user only: they name files, tools and arguments. An existing file made
/// readable by others (older versions created them 0644) is made private too.
pub(crate) fn open_private_append(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        options.mode(0o600);
        let file = options.open(path)?;
        let meta = file.metadata()?;
        if meta.permissions().mode() & 0o077 != 0 {
            file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        }
        Ok(file)
    }
    #[cfg(not(unix))]
    options.open(path)
}
