//! Only regular files (and directories, for listings) are read. Opening a FIFO for reading
//! blocks until some other process writes to it, a character device may never end (`/dev/zero`)
//! and a socket cannot be opened at all: each would hang a tool and, at exit, Offload itself.
//! Files are therefore opened non-blocking (which changes nothing for regular files) and
//! checked with `fstat` on what was opened, so a path swapped for a FIFO in between is caught.

use std::fs::File;
use std::io;

/// The flag to open with (`O_NONBLOCK`, so that opening a FIFO returns at once).
#[cfg(unix)]
pub const OPEN_FLAGS: i32 = nix::libc::O_NONBLOCK;
#[cfg(not(unix))]
pub const OPEN_FLAGS: i32 = 0;

/// What kind of special file `file` is, or `None` for a regular file or a directory.
pub fn special_kind(file: &File) -> io::Result<Option<&'static str>> {
    let kind = file.metadata()?.file_type();
    if kind.is_file() || kind.is_dir() {
        return Ok(None);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return Ok(Some("a FIFO (named pipe)"));
        }
        if kind.is_socket() {
            return Ok(Some("a socket"));
        }
        if kind.is_char_device() {
            return Ok(Some("a character device"));
        }
        if kind.is_block_device() {
            return Ok(Some("a block device"));
        }
    }
    Ok(Some("not a regular file"))
}

/// The error for a special file: what it is, and that only regular files are read.
pub fn refusal(kind: &str) -> String {
    format!("it is {kind}, not a regular file; Offload reads only regular files")
}

/// Opens `path` for reading without blocking on a FIFO, refusing special files.
pub fn open(path: &std::path::Path) -> io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(OPEN_FLAGS);
    }
    let file = options.open(path)?;
    match special_kind(&file)? {
        None => Ok(file),
        Some(kind) => Err(io::Error::new(io::ErrorKind::InvalidInput, refusal(kind))),
    }
}
