//! What a server's mount namespace holds: paths kept read-only (a repository's hooks) and
//! private folders (see [`Policy::private_folders`]), made before Landlock forbids any change
//! of mounts.

use std::path::{Path, PathBuf};

use super::own_user_namespace;
use crate::{Policy, SandboxError};

/// Enters a mount namespace of this process's own, its mounts private (nothing done in it
/// reaches the rest of the system), unless it is in one already; whether it is. False where
/// none can be made (nothing changed).
pub(super) fn own_mount_namespace(
    entered: &mut bool,
    user_namespace: &mut bool,
) -> Result<bool, SandboxError> {
    use nix::mount::{MsFlags, mount};
    if *entered {
        return Ok(true);
    }
    if !crate::runs_as_root() && !own_user_namespace(user_namespace)? {
        return Ok(false);
    }
    if nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWNS).is_err() {
        return Ok(false);
    }
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        None::<&str>,
    )
    .map_err(os_error("cannot make the mount namespace private"))?;
    *entered = true;
    Ok(true)
}

fn os_error(what: &'static str) -> impl Fn(nix::Error) -> SandboxError {
    move |e| SandboxError::Os {
        what,
        source: e.into(),
    }
}

/// Bind-mounts `from` (and what is mounted beneath it) at `at`.
fn bind(from: &Path, at: &Path, what: &'static str) -> Result<(), SandboxError> {
    use nix::mount::{MsFlags, mount};
    mount(
        Some(from),
        at,
        None::<&str>,
        MsFlags::MS_BIND | MsFlags::MS_REC,
        None::<&str>,
    )
    .map_err(os_error(what))
}

/// Makes the bind mount at `path` read-only, keeping the flags the mount it came from has (a
/// user namespace may add `ro`, never drop `nosuid`, `nodev`, `noexec`).
fn remount_read_only(path: &Path) -> Result<(), SandboxError> {
    use nix::mount::{MsFlags, mount};
    use nix::sys::statvfs::{FsFlags, statvfs};
    let had = statvfs(path)
        .map_err(os_error("cannot read a mount's flags"))?
        .flags();
    let mut flags = MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY;
    for (has, keep) in [
        (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
        (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
        (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
        (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
        (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
        (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
    ] {
        if had.contains(has) {
            flags |= keep;
        }
    }
    mount(None::<&str>, path, None::<&str>, flags, None::<&str>)
        .map_err(os_error("cannot make a path read-only"))
}

/// Makes each of `paths` read-only for this process and what it execs: each bind-mounted on
/// itself and remounted read-only, in a mount namespace of its own. Landlock, applied next,
/// forbids any change of mounts after. False where no mount namespace can be made.
pub(super) fn keep_read_only(
    paths: &[PathBuf],
    mount_namespace: &mut bool,
    user_namespace: &mut bool,
) -> Result<bool, SandboxError> {
    let paths: Vec<&PathBuf> = paths.iter().filter(|p| p.exists()).collect();
    if paths.is_empty() || !own_mount_namespace(mount_namespace, user_namespace)? {
        return Ok(false);
    }
    for path in paths {
        bind(path, path, "cannot bind-mount a path kept read-only")?;
        remount_read_only(path)?;
    }
    Ok(true)
}

/// Mounts each of `policy`'s private folders (see [`Policy::private_folders`]): its private
/// directory over the folder, then every grant beneath the folder back at its place, shallowest
/// first, those only read read-only (the folder's write grant covers what is mounted in it).
/// Mount points are made in the private directory, which the engine empties before each start
/// but for the files saved there.
/// Every source is opened before the first mount, since a mount hides what was beneath it. The
/// folders mounted, which the caller grants for writing; none where no mount namespace can be
/// made.
pub(super) fn private_folders(
    policy: &Policy,
    mount_namespace: &mut bool,
    user_namespace: &mut bool,
) -> Result<Vec<PathBuf>, SandboxError> {
    use std::os::fd::AsRawFd;
    let folders: Vec<&crate::PrivateFolder> = policy
        .private_folders
        .iter()
        .filter(|f| f.folder.is_dir() && f.private.is_dir() && f.folder.parent().is_some())
        .collect();
    if folders.is_empty() || !own_mount_namespace(mount_namespace, user_namespace)? {
        return Ok(Vec::new());
    }
    let beneath = |p: &Path| {
        folders
            .iter()
            .any(|f| p != f.folder && p.starts_with(&f.folder))
    };
    // (where, what is mounted there, read-only)
    let mut mounts: Vec<(PathBuf, std::fs::File, bool)> = Vec::new();
    let open = |path: &Path| {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::libc::O_PATH)
            .open(path)
            .map_err(|e| SandboxError::Invalid(format!("cannot open {}: {e}", path.display())))
    };
    for folder in &folders {
        mounts.push((folder.folder.clone(), open(&folder.private)?, false));
    }
    for (grants, writable) in [(&policy.write, true), (&policy.read, false)] {
        for grant in grants.iter().filter(|g| beneath(g) && g.exists()) {
            // A file written directly in a private folder is one it saves there: its private
            // copy is in place (the engine links it to the file); a mount could not be renamed
            // over.
            let saved = writable
                && grant.is_file()
                && folders
                    .iter()
                    .any(|f| grant.parent() == Some(f.folder.as_path()));
            if saved || mounts.iter().any(|(at, _, _)| at == grant) {
                continue; // (read and written: the write grant's mount)
            }
            let written = writable || policy.write.iter().any(|w| grant.starts_with(w));
            mounts.push((grant.clone(), open(grant)?, !written));
        }
    }
    mounts.sort_by_key(|(at, _, _)| (at.components().count(), at.clone()));
    for (at, source, read_only) in &mounts {
        // A place for it in the private directory (what is mounted back was beneath the folder).
        if !at.exists() {
            let made = if source.metadata().is_ok_and(|m| m.is_dir()) {
                std::fs::create_dir_all(at)
            } else {
                at.parent()
                    .map_or(Ok(()), std::fs::create_dir_all)
                    .and_then(|()| std::fs::File::create(at).map(drop))
            };
            made.map_err(|e| SandboxError::Os {
                what: "cannot make a mount point in a private folder",
                source: e,
            })?;
        }
        let from = format!("/proc/self/fd/{}", source.as_raw_fd());
        bind(Path::new(&from), at, "cannot mount a private folder")?;
        if *read_only {
            remount_read_only(at)?;
        }
    }
    // The working directory may be beneath a folder now mounted over: enter it again by name.
    if let Ok(here) = std::env::current_dir() {
        let _ = std::env::set_current_dir(here);
    }
    Ok(folders.iter().map(|f| f.folder.clone()).collect())
}
