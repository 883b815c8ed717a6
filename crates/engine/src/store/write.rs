//! Writing a new file whole or not at all, never replacing an existing file.
//!
//! On Linux the content goes to an unnamed file in the target directory (`O_TMPFILE`) that gets
//! its name only when it is complete and synced (`linkat`, which fails if the name is taken):
//! a crash or `kill -9` at any moment leaves no file at all, not even a temporary one. Where
//! unnamed files are not available (other systems, some file systems) a hidden temporary file
//! `.offload-*.partial` is synced and renamed without replacing; a crash there can leave that
//! hidden file behind, never a partial file under the final name.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::{ErrorCode, ToolError};

/// Where the content goes until it is whole.
enum Pending {
    #[cfg(target_os = "linux")]
    Unnamed(File),
    Named(tempfile::NamedTempFile),
}

impl Pending {
    fn new(dir: &Path) -> std::io::Result<Self> {
        #[cfg(target_os = "linux")]
        if let Some(file) = unnamed::create(dir) {
            return Ok(Self::Unnamed(file));
        }
        tempfile::Builder::new()
            .prefix(".offload-")
            .suffix(".partial")
            .tempfile_in(dir)
            .map(Self::Named)
    }

    fn file(&mut self) -> &mut File {
        match self {
            #[cfg(target_os = "linux")]
            Self::Unnamed(f) => f,
            Self::Named(t) => t.as_file_mut(),
        }
    }

    /// Gives the content its name; `AlreadyExists` when the name is taken.
    fn publish(self, target: &Path) -> std::io::Result<()> {
        match self {
            #[cfg(target_os = "linux")]
            Self::Unnamed(f) => unnamed::link(&f, target),
            Self::Named(t) => t.persist_noclobber(target).map(drop).map_err(|e| e.error),
        }
    }
}

#[cfg(target_os = "linux")]
mod unnamed {
    use std::fs::{File, OpenOptions};
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    use std::path::Path;

    use nix::fcntl::{AT_FDCWD, AtFlags};

    /// An unnamed file in `dir`, or `None` where the file system (or /proc, needed to name it)
    /// does not allow one.
    pub fn create(dir: &Path) -> Option<File> {
        if !Path::new("/proc/self/fd").is_dir() {
            return None;
        }
        OpenOptions::new()
            .read(true)
            .write(true)
            .mode(0o600)
            .custom_flags(nix::libc::O_TMPFILE | nix::libc::O_CLOEXEC)
            .open(dir)
            .ok()
    }

    pub fn link(file: &File, target: &Path) -> std::io::Result<()> {
        let fd = format!("/proc/self/fd/{}", file.as_raw_fd());
        nix::unistd::linkat(
            AT_FDCWD,
            fd.as_str(),
            AT_FDCWD,
            target,
            AtFlags::AT_SYMLINK_FOLLOW,
        )
        .map_err(std::io::Error::from)
    }
}

/// Writes a new file `dir/name` with `fill`. Fails with `file_exists` if the name is taken;
/// on any failure no file with that name appears and nothing else is left behind.
pub fn write_new<R>(
    dir: &Path,
    name: &str,
    fill: impl FnOnce(&mut (dyn Write + Send)) -> std::io::Result<R>,
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
    let mut pending = Pending::new(dir).map_err(io_err)?;
    let result = {
        let mut w = BufWriter::with_capacity(256 * 1024, pending.file());
        let r = fill(&mut w).map_err(io_err)?;
        w.flush().map_err(io_err)?;
        r
    };
    let file = pending.file();
    file.sync_all().map_err(io_err)?;
    let bytes = file.metadata().map_err(io_err)?.len();
    match pending.publish(&target) {
        Ok(()) => Ok((target, bytes, result)),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(exists(&target)),
        Err(e) => Err(io_err(e)),
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

    /// While the content is being written, the directory holds no entry for it at all.
    #[cfg(target_os = "linux")]
    #[test]
    fn nothing_is_named_before_the_file_is_whole() {
        let dir = tempfile::tempdir().unwrap();
        let (path, _, seen) = write_new(dir.path(), "c.txt", |w| {
            w.write_all(&[b'x'; 1 << 20])?;
            w.flush()?;
            Ok(std::fs::read_dir(dir.path()).unwrap().count())
        })
        .unwrap();
        assert_eq!(seen, 0, "an unnamed file until it is whole");
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 1 << 20);
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "private to the user: {mode:o}");
    }
}
