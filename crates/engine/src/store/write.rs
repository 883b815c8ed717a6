//! Writing a new file whole or not at all: a temporary file in the same directory, synced, then
//! renamed to its name without ever replacing an existing file.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::{ErrorCode, ToolError};

/// Writes a new file `dir/name` with `fill`. Fails with `file_exists` if the name is taken;
/// on any failure no file with that name appears and the temporary file is removed.
pub fn write_new<R>(
    dir: &Path,
    name: &str,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<R>,
) -> Result<(PathBuf, u64, R), ToolError> {
    let io_err = |e: std::io::Error| {
        ToolError::new(
            ErrorCode::WriteFailed,
            format!("cannot write in {}: {e}", dir.display()),
        )
        .with("directory", dir.display().to_string())
    };
    let target = dir.join(name);
    if target.symlink_metadata().is_ok() {
        return Err(exists(&target));
    }
    let mut tmp = tempfile::Builder::new()
        .prefix(".offload-")
        .suffix(".partial")
        .tempfile_in(dir)
        .map_err(io_err)?;
    let result = {
        let mut w = BufWriter::with_capacity(256 * 1024, tmp.as_file_mut());
        let r = fill(&mut w).map_err(io_err)?;
        w.flush().map_err(io_err)?;
        r
    };
    tmp.as_file().sync_all().map_err(io_err)?;
    let bytes = tmp.as_file().metadata().map_err(io_err)?.len();
    match tmp.persist_noclobber(&target) {
        Ok(_) => Ok((target, bytes, result)),
        Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => Err(exists(&target)),
        Err(e) => Err(io_err(e.error)),
    }
}

fn exists(path: &Path) -> ToolError {
    ToolError::new(
        ErrorCode::FileExists,
        format!(
            "{} already exists and is never overwritten; choose another filename",
            path.display()
        ),
    )
    .with("path", path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_whole_files_and_never_overwrites() {
        let dir = tempfile::tempdir().unwrap();
        let (path, bytes, ()) = write_new(dir.path(), "a.txt", |w| w.write_all(b"hello")).unwrap();
        assert_eq!(
            (std::fs::read_to_string(&path).unwrap().as_str(), bytes),
            ("hello", 5)
        );
        let e = write_new(dir.path(), "a.txt", |w| w.write_all(b"other")).unwrap_err();
        assert_eq!(e.code, ErrorCode::FileExists);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "hello");
    }

    #[test]
    fn a_failing_writer_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let e = write_new(dir.path(), "b.txt", |w| {
            w.write_all(b"partial")?;
            Err::<(), _>(std::io::Error::other("disk full"))
        })
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::WriteFailed);
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "no partial or temp file"
        );
    }
}
