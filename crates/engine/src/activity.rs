//! What the app's window lists live, gathered for every Offload process on the machine: new
//! calls from the audit log (so calls served by `offload mcp` in embedded mode show too) and
//! changes to stored responses (the records index, and files appearing or going in writable
//! allowed directories).
//!
//! The window polls through [`Feed::poll`]; reading a few new lines from the end of a file is
//! cheap, and it batches bursts (hundreds of calls a second arrive as a few updates).

use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::SystemTime;

use notify_debouncer_mini::notify::event::ModifyKind;
use notify_debouncer_mini::notify::{
    self, EventKind, RecommendedWatcher, RecursiveMode, Watcher as _,
};

use crate::Engine;
use crate::events::Event;

/// At most this many events are read in one poll (a huge backlog is skipped to its end).
const MAX_BATCH: usize = 5_000;

/// New lines of `audit.jsonl`, followed across rotation.
pub struct AuditTail {
    path: PathBuf,
    offset: u64,
    /// The start of the file read so far: its first event's time (to the nanosecond) tells
    /// one file from the next, so a rotation is noticed even when the new file has already
    /// grown past the old offset (sizes, and inode numbers, can repeat).
    head: Vec<u8>,
}

/// The first bytes of `path` (enough to hold its first event's timestamp).
fn head_of(path: &Path) -> Vec<u8> {
    use std::io::Read;
    let mut head = Vec::with_capacity(64);
    if let Ok(file) = File::open(path) {
        let _ = file.take(64).read_to_end(&mut head);
    }
    head
}

impl AuditTail {
    /// Starts at the log's current end: only calls made from now on are read.
    pub fn from_end(dir: &Path) -> Self {
        let path = dir.join("audit.jsonl");
        let offset = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        let head = head_of(&path);
        Self { path, offset, head }
    }

    /// Events written since the last read, oldest first.
    pub fn read(&mut self) -> Vec<Event> {
        let len = std::fs::metadata(&self.path).map(|m| m.len()).unwrap_or(0);
        let head = head_of(&self.path);
        // A file that was empty (or absent) when last read has grown, not been replaced.
        let replaced = !self.head.is_empty() && !head.starts_with(&self.head);
        let rotated = len < self.offset || replaced;
        let mut out = Vec::new();
        if rotated {
            // Rotated: the rest of the previous file (when it is the one rotated last; after
            // several rotations it is gone from the live view), then the new one from its start.
            let mut previous = self.path.clone().into_os_string();
            previous.push(".1");
            let previous = Path::new(&previous);
            if head_of(previous).starts_with(&self.head) {
                read_lines(previous, self.offset, &mut out);
            }
            self.offset = 0;
        }
        self.head = head;
        self.offset = read_lines(&self.path, self.offset, &mut out);
        let skip = out.len().saturating_sub(MAX_BATCH);
        out.split_off(skip)
    }
}

/// Appends the whole lines of `path` after `from` to `out`; answers where the next read starts
/// (an unfinished last line is read again next time).
fn read_lines(path: &Path, from: u64, out: &mut Vec<Event>) -> u64 {
    let Ok(mut file) = File::open(path) else {
        return from;
    };
    if file.seek(SeekFrom::Start(from)).is_err() {
        return from;
    }
    let mut reader = BufReader::new(file);
    let mut at = from;
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(n) if n > 0 && line.ends_with('\n') => {
                at += n as u64;
                if let Ok(e) = serde_json::from_str::<Event>(line.trim_end()) {
                    out.push(e);
                }
            }
            _ => return at,
        }
    }
}

/// One poll's news.
#[derive(Debug, Default)]
pub struct Update {
    pub events: Vec<Event>,
    /// Stored responses were added, changed or removed.
    pub responses_changed: bool,
}

/// Follows the audit log, the records index and the writable allowed directories.
pub struct Feed {
    engine: Arc<Engine>,
    tail: AuditTail,
    records: PathBuf,
    records_seen: Option<(u64, SystemTime)>,
    roots_seen: Vec<PathBuf>,
    files_changed: Arc<AtomicBool>,
    watcher: Option<RecommendedWatcher>,
}

impl Feed {
    pub fn new(engine: Arc<Engine>) -> Self {
        let dir = engine.dirs.data_dir.clone();
        let mut feed = Self {
            tail: AuditTail::from_end(&dir),
            records: dir.join("records.jsonl"),
            records_seen: None,
            roots_seen: Vec::new(),
            files_changed: Arc::new(AtomicBool::new(false)),
            watcher: None,
            engine,
        };
        feed.records_seen = feed.records_stamp();
        feed.watch_roots();
        feed
    }

    fn records_stamp(&self) -> Option<(u64, SystemTime)> {
        let m = std::fs::metadata(&self.records).ok()?;
        Some((m.len(), m.modified().ok()?))
    }

    /// (Re)watches the writable roots when they changed.
    fn watch_roots(&mut self) {
        let roots: Vec<PathBuf> = self
            .engine
            .roots()
            .list()
            .iter()
            .filter(|r| r.writable)
            .map(|r| r.path.clone())
            .collect();
        if roots == self.roots_seen {
            return; // unchanged (a watcher that failed is tried again when they change)
        }
        self.roots_seen = roots.clone();
        let flag = self.files_changed.clone();
        // Files created, written, renamed or removed; not reads (previews open files in the
        // roots, which must not look like a change) nor metadata (access times).
        let watcher = notify::recommended_watcher(move |result: notify::Result<notify::Event>| {
            if let Ok(event) = result
                && !matches!(
                    event.kind,
                    EventKind::Access(_) | EventKind::Modify(ModifyKind::Metadata(_))
                )
            {
                flag.store(true, Ordering::Relaxed);
            }
        });
        self.watcher = match watcher {
            Ok(mut w) => {
                for root in &roots {
                    if let Err(e) = w.watch(root, RecursiveMode::Recursive) {
                        tracing::warn!("not watching {} for new files: {e}", root.display());
                    }
                }
                Some(w)
            }
            Err(e) => {
                tracing::warn!("not watching the allowed directories: {e}");
                None
            }
        };
    }

    pub fn poll(&mut self) -> Update {
        self.watch_roots();
        let stamp = self.records_stamp();
        let records_changed = stamp != self.records_seen;
        self.records_seen = stamp;
        let files_changed = self.files_changed.swap(false, Ordering::Relaxed);
        Update {
            events: self.tail.read(),
            responses_changed: records_changed || files_changed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::Events;

    fn event(n: u64) -> Event {
        crate::events::sample(n)
    }

    #[test]
    fn the_tail_reads_new_events_once_across_rotation_and_torn_lines() {
        let dir = tempfile::tempdir().unwrap();
        let events = Events::new(Some(dir.path()), 1_000);
        events.emit(event(0));
        let mut tail = AuditTail::from_end(dir.path());
        assert!(tail.read().is_empty(), "history is not news");

        for n in 1..=20 {
            events.emit(event(n)); // rotates every few events
        }
        let got: Vec<u64> = tail.read().iter().map(|e| e.bytes_in).collect();
        // Events rotated away twice between reads are gone from the live view (the history
        // still has the kept files); what is read is in order and never repeated.
        assert!(got.windows(2).all(|w| w[0] < w[1]), "{got:?}");
        assert_eq!(got.last(), Some(&20));
        assert!(tail.read().is_empty());

        // A line being written is read once it is whole.
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(dir.path().join("audit.jsonl"))
            .unwrap();
        let line = serde_json::to_string(&event(21)).unwrap();
        f.write_all(&line.as_bytes()[..10]).unwrap();
        assert!(tail.read().is_empty());
        f.write_all(&line.as_bytes()[10..]).unwrap();
        f.write_all(b"\n").unwrap();
        assert_eq!(tail.read()[0].bytes_in, 21);
    }

    #[test]
    fn one_rotation_between_reads_loses_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let events = Events::new(Some(dir.path()), 2_000);
        let mut tail = AuditTail::from_end(dir.path());
        let mut got = Vec::new();
        for n in 0..40 {
            events.emit(event(n));
            if n % 3 == 0 {
                got.extend(tail.read().iter().map(|e| e.bytes_in));
            }
        }
        got.extend(tail.read().iter().map(|e| e.bytes_in));
        assert_eq!(got, (0..40).collect::<Vec<_>>());
    }
}
