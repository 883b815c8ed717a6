//! Files a confined server saves where the user named them, in a folder it may not write (the
//! home folder, `/tmp`, any folder not granted). The server sees that folder as a private
//! directory of its own, mounted over it by the launcher (see
//! `offload_sandbox::Policy::private_folders`), holding the named file — a hard link to it, or
//! a copy where the two are on different file systems — and what it makes there to save it: a
//! temporary file renamed over it, a journal, a WAL, a lock. Offload links what it saves back
//! where the user named it. The folder's other contents it never sees, and what else it makes
//! there is gone at its next start.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use offload_sandbox::PrivateFolder;

/// A file saved through a private folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Saved {
    /// Where the user named it.
    pub file: PathBuf,
    /// The server's copy, in the private folder.
    pub copy: PathBuf,
}

/// The private folders a server needs for the files it saves (`saved`), given what it is
/// granted: none for a file whose folder it may write (it saves there) or only read (it writes
/// the file in place, nothing beside it), nor in the system's device and process folders.
pub(super) fn plan(
    saved: &[PathBuf],
    read: &[PathBuf],
    write: &[PathBuf],
    state_dir: &Path,
) -> (Vec<PrivateFolder>, Vec<Saved>) {
    let mut folders: Vec<PrivateFolder> = Vec::new();
    let mut out = Vec::new();
    for named in saved {
        // A link is saved where it leads.
        let file = std::fs::canonicalize(named).unwrap_or_else(|_| named.clone());
        let (Some(folder), Some(name)) = (file.parent(), file.file_name()) else {
            continue;
        };
        let granted = |grants: &[PathBuf]| grants.iter().any(|g| folder.starts_with(g));
        if granted(write)
            || granted(read)
            || !folder.is_dir()
            || folder.parent().is_none()
            || ["/dev", "/proc", "/sys"]
                .iter()
                .any(|s| folder.starts_with(s))
        {
            continue;
        }
        let private = state_dir.join("beside").join(private_name(folder));
        if !folders.iter().any(|f| f.folder == folder) {
            folders.push(PrivateFolder {
                folder: folder.to_owned(),
                private: private.clone(),
            });
        }
        out.push(Saved {
            copy: private.join(name),
            file,
        });
    }
    (folders, out)
}

/// A folder's private directory's name: its path, `/` and `%` escaped (`home%2Fme`).
pub(super) fn private_name(folder: &Path) -> String {
    let path = folder.to_string_lossy();
    path.trim_start_matches('/')
        .replace('%', "%25")
        .replace('/', "%2F")
}

/// What a database keeps beside its file, by the suffix of its name (SQLite's journal, WAL and
/// shared memory, needed to recover after a crash).
const JOURNALS: [&str; 3] = ["-journal", "-wal", "-shm"];

/// What a server keeps in a private folder from one run to the next: its saved file and the
/// journals beside it.
fn kept(name: &OsStr, saved: &OsStr) -> bool {
    let (name, saved) = (name.to_string_lossy(), saved.to_string_lossy());
    name == saved
        || JOURNALS
            .iter()
            .any(|s| name.strip_prefix(saved.as_ref()) == Some(*s))
}

/// A file's size and time of change: what tells whether it changed since it was last seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    len: u64,
    /// Nanoseconds since 1970.
    modified: u128,
}

impl Stamp {
    fn of(meta: &std::fs::Metadata) -> Stamp {
        Stamp {
            len: meta.len(),
            modified: meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos()),
        }
    }

    fn parse(text: &str) -> Option<Stamp> {
        let (len, modified) = text.trim().split_once(' ')?;
        Some(Stamp {
            len: len.parse().ok()?,
            modified: modified.parse().ok()?,
        })
    }
}

impl Saved {
    /// Where the stamp of the copy as it last was the same as the file is kept, so a change
    /// not linked back yet (Offload stopped first) is told from a file the user removed or
    /// replaced since: beside the private folders, one per file.
    fn record(&self) -> PathBuf {
        let beside = self
            .copy
            .parent()
            .and_then(Path::parent)
            .unwrap_or(Path::new("."));
        beside.join(format!("{}.given", private_name(&self.file)))
    }

    fn recorded(&self) -> Option<Stamp> {
        Stamp::parse(&std::fs::read_to_string(self.record()).ok()?)
    }

    fn note(&self, stamp: Stamp, last: &mut Option<Stamp>) -> std::io::Result<()> {
        if *last != Some(stamp) {
            std::fs::write(self.record(), format!("{} {}", stamp.len, stamp.modified))?;
            *last = Some(stamp);
        }
        Ok(())
    }

    /// The server's copy, if it is a file (never what a link it put there leads to).
    fn copy_meta(&self) -> Option<std::fs::Metadata> {
        std::fs::symlink_metadata(&self.copy)
            .ok()
            .filter(std::fs::Metadata::is_file)
    }
}

/// Whether a copy is its file: the same file (a link), or a copy of it as it is now (copies
/// take their file's time of change).
fn same(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    identity(a) == identity(b) || Stamp::of(a) == Stamp::of(b)
}

#[cfg(unix)]
fn identity(meta: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

#[cfg(not(unix))]
fn identity(_: &std::fs::Metadata) -> (u64, u64) {
    (0, 0)
}

/// Copies the regular file `from` (never through a link) to a new `to`, with its permissions
/// and time of change (so [`same`] tells it is unchanged).
fn copy_file(from: &Path, to: &Path) -> std::io::Result<()> {
    let mut options = std::fs::File::options();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, nix::libc::O_NOFOLLOW);
    let mut source = options.open(from)?;
    let meta = source.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut made = std::fs::File::create_new(to)?;
    std::io::copy(&mut source, &mut made)?;
    made.set_permissions(meta.permissions())?;
    made.set_modified(meta.modified()?)
}

/// The files one server saves, followed while it runs.
pub struct Saves {
    saved: Arc<Vec<Saved>>,
    last: Arc<Mutex<Vec<Option<Stamp>>>>,
    watcher:
        Option<notify_debouncer_mini::Debouncer<notify_debouncer_mini::notify::RecommendedWatcher>>,
}

impl std::fmt::Debug for Saves {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Saves").field("saved", &self.saved).finish()
    }
}

impl Saves {
    /// Before the server starts (blocking): each private folder emptied but for the files saved
    /// there and their journals — nothing the server made there last time is seen again, so it
    /// cannot plant anything for its next run —, a change it made last time and Offload did not
    /// link back yet linked back, and each copy made the file as it is now; then what the server
    /// saves is linked back as it does.
    pub fn start(saved: Vec<Saved>) -> std::io::Result<Saves> {
        let mut dirs: Vec<&Path> = saved.iter().filter_map(|s| s.copy.parent()).collect();
        dirs.sort();
        dirs.dedup();
        for dir in dirs {
            std::fs::create_dir_all(dir)?;
            let names: Vec<&OsStr> = saved
                .iter()
                .filter(|s| s.copy.parent() == Some(dir))
                .filter_map(|s| s.copy.file_name())
                .collect();
            for entry in std::fs::read_dir(dir)? {
                let entry = entry?;
                if names.iter().any(|n| kept(&entry.file_name(), n)) {
                    continue;
                }
                if entry.file_type()?.is_dir() {
                    std::fs::remove_dir_all(entry.path())?;
                } else {
                    std::fs::remove_file(entry.path())?;
                }
            }
        }
        let mut last = Vec::new();
        for s in &saved {
            last.push(take(s)?);
        }
        let mut saves = Saves {
            saved: Arc::new(saved),
            last: Arc::new(Mutex::new(last)),
            watcher: None,
        };
        saves.watcher = saves.watch();
        Ok(saves)
    }

    /// Links each change back while the server runs, a moment after it settles. Without a
    /// watcher (none could be made), changes go back when the server stops.
    fn watch(
        &self,
    ) -> Option<notify_debouncer_mini::Debouncer<notify_debouncer_mini::notify::RecommendedWatcher>>
    {
        use notify_debouncer_mini::notify::RecursiveMode;
        let (saved, last) = (self.saved.clone(), self.last.clone());
        let mut debouncer = notify_debouncer_mini::new_debouncer(
            Duration::from_millis(50),
            move |_: notify_debouncer_mini::DebounceEventResult| give_back(&saved, &last),
        )
        .map_err(|e| tracing::warn!("cannot follow the files a server saves: {e}"))
        .ok()?;
        for s in self.saved.iter() {
            if let Some(dir) = s.copy.parent()
                && let Err(e) = debouncer.watcher().watch(dir, RecursiveMode::NonRecursive)
            {
                tracing::warn!("cannot follow {}: {e}", dir.display());
            }
        }
        Some(debouncer)
    }

    /// When the server has stopped (blocking): its last changes linked back, and a folder it
    /// made where the user named one moved there.
    pub fn finish(mut self) {
        self.watcher = None;
        give_back(&self.saved, &self.last);
        for s in self.saved.iter() {
            let made_folder = std::fs::symlink_metadata(&s.copy).is_ok_and(|m| m.is_dir());
            if made_folder
                && !s.file.exists()
                && let Err(e) = std::fs::rename(&s.copy, &s.file)
            {
                tracing::warn!(
                    "a server's folder stays in its state directory, {}: {e}",
                    s.copy.display()
                );
            }
        }
    }
}

/// Before a start: makes `s`'s copy the file as it is — a hard link (the same file: what the
/// server writes in place is the user's at once), or where that cannot be (another file
/// system), a copy — unless the copy holds a change not linked back yet (Offload stopped
/// first) and the file is as it was then: that change is linked back. A copy of a file the
/// user removed or replaced since goes, with its journals. The stamp of the copy now.
fn take(s: &Saved) -> std::io::Result<Option<Stamp>> {
    let mut last = s.recorded();
    let copy = s.copy_meta();
    let real = std::fs::metadata(&s.file).ok();
    if real.as_ref().is_some_and(|r| !r.is_file()) {
        return Ok(last); // a folder the user named: granted as one
    }
    if let Some(c) = &copy {
        let unchanged_file = match (&real, last) {
            (None, _) => true,
            (Some(r), Some(was)) => Stamp::of(r) == was,
            (Some(_), None) => false,
        };
        if real.as_ref().is_some_and(|r| same(c, r)) {
            s.note(Stamp::of(c), &mut last)?;
            return Ok(last);
        }
        if Some(Stamp::of(c)) != last && unchanged_file {
            give_back_one(s, &mut last)?;
            return Ok(last);
        }
    }
    forget(s)?;
    match real {
        Some(_) => {
            if std::fs::hard_link(&s.file, &s.copy).is_err() {
                copy_file(&s.file, &s.copy)?;
            }
            if let Some(c) = s.copy_meta() {
                s.note(Stamp::of(&c), &mut last)?;
            }
        }
        None => {
            let _ = std::fs::remove_file(s.record());
            last = None;
        }
    }
    Ok(last)
}

/// Removes `s`'s copy and the journals beside it (they belong to a file no longer there).
fn forget(s: &Saved) -> std::io::Result<()> {
    let mut journals = vec![s.copy.clone()];
    for suffix in JOURNALS {
        let mut name = s.copy.as_os_str().to_owned();
        name.push(suffix);
        journals.push(name.into());
    }
    for path in journals {
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    Ok(())
}

/// Links each copy that changed since it was last given back over its file.
fn give_back(saved: &[Saved], last: &Mutex<Vec<Option<Stamp>>>) {
    let mut last = last
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    for (s, last) in saved.iter().zip(last.iter_mut()) {
        if let Err(e) = give_back_one(s, last) {
            tracing::warn!("cannot save {} where it was named: {e}", s.file.display());
        }
    }
}

/// Links `s`'s copy over its file if it changed since `last`: beside the file under a
/// temporary name (a hard link, else a copy), then renamed over it — the user's file is whole
/// at every moment, and only ever a regular file.
fn give_back_one(s: &Saved, last: &mut Option<Stamp>) -> std::io::Result<()> {
    let Some(copy) = s.copy_meta() else {
        return Ok(()); // nothing saved yet
    };
    let stamp = Stamp::of(&copy);
    if *last == Some(stamp) {
        return Ok(());
    }
    if std::fs::metadata(&s.file).is_ok_and(|f| same(&f, &copy)) {
        return s.note(stamp, last);
    }
    let name = s.file.file_name().unwrap_or_default().to_string_lossy();
    let beside = s
        .file
        .with_file_name(format!(".{name}.offload-{}", std::process::id()));
    let _ = std::fs::remove_file(&beside);
    let linked = std::fs::hard_link(&s.copy, &beside).is_ok()
        && std::fs::symlink_metadata(&beside).is_ok_and(|m| m.is_file());
    let made = if linked {
        Ok(())
    } else {
        let _ = std::fs::remove_file(&beside);
        copy_file(&s.copy, &beside)
    }
    .and_then(|()| std::fs::rename(&beside, &s.file));
    if made.is_err() {
        let _ = std::fs::remove_file(&beside);
    }
    made?;
    s.note(stamp, last)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Waits up to 5 s for `file` to hold `text` (changes go back a moment after they settle).
    fn holds(file: &Path, text: &str) -> bool {
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while std::time::Instant::now() < deadline {
            if std::fs::read_to_string(file).is_ok_and(|t| t == text) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// Saves a file the way server-memory does (a temporary file renamed over it) and the way
    /// SQLite does (in place, a journal beside it), into `private` for `folder`.
    fn saves_come_back(folder: &Path, private: &Path) {
        let file = folder.join("memory.jsonl");
        std::fs::write(&file, "before").unwrap();
        std::fs::write(folder.join("notes.txt"), "mine").unwrap();
        let s = Saved {
            file: file.clone(),
            copy: private.join("memory.jsonl"),
        };
        let saves = Saves::start(vec![s.clone()]).unwrap();
        assert_eq!(std::fs::read_to_string(&s.copy).unwrap(), "before");
        // Renamed over: the user's file is the new one, whole.
        std::fs::write(private.join("memory.jsonl.1a2b.tmp"), "renamed").unwrap();
        std::fs::rename(private.join("memory.jsonl.1a2b.tmp"), &s.copy).unwrap();
        assert!(
            holds(&file, "renamed"),
            "{:?}",
            std::fs::read_to_string(&file)
        );
        // In place, with a journal: the user's file changes too.
        std::fs::write(private.join("memory.jsonl-journal"), "j").unwrap();
        std::fs::write(&s.copy, "in place").unwrap();
        assert!(holds(&file, "in place"));
        // What else it made there goes back nowhere, and is gone at its next start but for
        // the journal.
        std::fs::write(private.join(".bashrc"), "planted").unwrap();
        std::fs::create_dir_all(private.join(".config/autostart")).unwrap();
        saves.finish();
        assert_eq!(
            std::fs::read_to_string(folder.join("notes.txt")).unwrap(),
            "mine"
        );
        assert!(!folder.join(".bashrc").exists());
        let entries = |dir: &Path| {
            let mut names: Vec<String> = std::fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        };
        assert_eq!(entries(folder), ["memory.jsonl", "notes.txt"]);
        let again = Saves::start(vec![s.clone()]).unwrap();
        assert_eq!(entries(private), ["memory.jsonl", "memory.jsonl-journal"]);
        // The user replaced the file while the server was stopped: the copy is the new one,
        // and the journal of the old one is gone.
        again.finish();
        std::fs::write(folder.join("new"), "the user's").unwrap();
        std::fs::rename(folder.join("new"), &file).unwrap();
        Saves::start(vec![s.clone()]).unwrap().finish();
        assert_eq!(std::fs::read_to_string(&s.copy).unwrap(), "the user's");
        assert_eq!(entries(private), ["memory.jsonl"]);
        // The user removed it: so does the copy.
        std::fs::remove_file(&file).unwrap();
        Saves::start(vec![s]).unwrap().finish();
        assert!(entries(private).is_empty());
    }

    /// Offload stopped before a change went back (killed, a crash): the next start links it
    /// back — a file the server made, a file it renamed over — unless the user changed the file
    /// since, and a file the user removed after it went back stays removed.
    #[test]
    fn a_change_not_linked_back_before_offload_stopped_goes_back_at_the_next_start() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("home");
        let private = dir.path().join("state/beside/home");
        std::fs::create_dir_all(&folder).unwrap();
        let s = Saved {
            file: folder.join("received.jsonl"),
            copy: private.join("received.jsonl"),
        };
        Saves::start(vec![s.clone()]).unwrap().finish();
        // Made by the server, never linked back.
        std::fs::write(&s.copy, "made").unwrap();
        Saves::start(vec![s.clone()]).unwrap().finish();
        assert_eq!(std::fs::read_to_string(&s.file).unwrap(), "made");
        // Renamed over by the server, never linked back.
        std::fs::write(private.join("t"), "renamed").unwrap();
        std::fs::rename(private.join("t"), &s.copy).unwrap();
        Saves::start(vec![s.clone()]).unwrap().finish();
        assert_eq!(std::fs::read_to_string(&s.file).unwrap(), "renamed");
        // Both changed: the user's file wins.
        std::fs::write(private.join("t"), "server's").unwrap();
        std::fs::rename(private.join("t"), &s.copy).unwrap();
        std::fs::write(folder.join("t"), "user's").unwrap();
        std::fs::rename(folder.join("t"), &s.file).unwrap();
        Saves::start(vec![s.clone()]).unwrap().finish();
        assert_eq!(std::fs::read_to_string(&s.file).unwrap(), "user's");
        assert_eq!(std::fs::read_to_string(&s.copy).unwrap(), "user's");
        // Removed by the user after it went back: stays removed.
        std::fs::remove_file(&s.file).unwrap();
        Saves::start(vec![s.clone()]).unwrap().finish();
        assert!(!s.file.exists() && !s.copy.exists());
    }

    /// The server puts a link where its copy is, to a file it cannot read: Offload never
    /// follows it, at a start or while it runs — the user's file stays a file of its own.
    #[test]
    fn a_link_planted_as_the_copy_is_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("home");
        let private = dir.path().join("state/beside/home");
        std::fs::create_dir_all(&folder).unwrap();
        let secret = dir.path().join("id_rsa");
        std::fs::write(&secret, "PRIVATE KEY").unwrap();
        std::fs::write(folder.join("memory.jsonl"), "mine").unwrap();
        let s = Saved {
            file: folder.join("memory.jsonl"),
            copy: private.join("memory.jsonl"),
        };
        let saves = Saves::start(vec![s.clone()]).unwrap();
        std::fs::remove_file(&s.copy).unwrap();
        std::os::unix::fs::symlink(&secret, &s.copy).unwrap();
        std::thread::sleep(Duration::from_millis(500));
        saves.finish();
        let file = || std::fs::symlink_metadata(&s.file).unwrap();
        assert!(file().is_file());
        assert_eq!(std::fs::read_to_string(&s.file).unwrap(), "mine");
        // At the next start the link is gone, the copy the file again.
        Saves::start(vec![s.clone()]).unwrap().finish();
        assert!(file().is_file() && std::fs::symlink_metadata(&s.copy).unwrap().is_file());
        assert_eq!(std::fs::read_to_string(&s.copy).unwrap(), "mine");
    }

    #[test]
    fn a_file_saved_beside_itself_comes_back_linked() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("home");
        std::fs::create_dir_all(&folder).unwrap();
        saves_come_back(&folder, &dir.path().join("state/beside/home"));
    }

    /// The private folder on another file system than the file (`/tmp` on a tmpfs, the state
    /// under the home folder): copies instead of links. Skipped where `/dev/shm` is not one.
    #[test]
    fn a_file_saved_beside_itself_on_another_file_system_comes_back_copied() {
        let Ok(shm) = tempfile::tempdir_in("/dev/shm") else {
            eprintln!("no /dev/shm here: skipped");
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let dev = |p: &Path| identity(&std::fs::metadata(p).unwrap()).0;
        assert_ne!(dev(shm.path()), dev(dir.path()), "two file systems");
        saves_come_back(shm.path(), &dir.path().join("state/beside/shm"));
    }

    #[test]
    fn a_folders_private_name_is_its_whole_path() {
        assert_eq!(private_name(Path::new("/home/me")), "home%2Fme");
        assert_eq!(private_name(Path::new("/a%2Fb")), "a%252Fb");
        assert_ne!(
            private_name(Path::new("/a/b")),
            private_name(Path::new("/a%2Fb"))
        );
    }
}
