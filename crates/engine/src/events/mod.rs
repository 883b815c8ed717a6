//! Typed events for every call Offload serves, appended to a rotating audit log (JSON lines) in
//! the data directory, which the desktop app reads, so that history survives restarts and calls
//! served by other Offload processes are seen too.
//!
//! Events carry names, paths, sizes, counts, durations and outcomes: never arguments, file
//! content or secrets. Each is counted for Prometheus as it is emitted ([`metrics`]).

pub mod metrics;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What kind of work an event records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// A discovery or file tool (no upstream call).
    Tool,
    /// `call_tool`.
    Call,
    /// `call_tool_and_store`, or a `call_tool` answer stored automatically.
    Store,
    /// `call_tool_with_file_content` in one call.
    FileContent,
    /// `call_tool_with_file_content` with `batch_size`.
    Batch,
    /// One batch of a `batch_size` run, recorded as soon as the upstream answered it, so a run
    /// that was cut short (even by `kill -9`) still tells which batches were sent.
    BatchPart,
    /// One `$file` reference resolved.
    FileRef,
    /// An upstream tool called directly (listed as a tool of the client's own).
    Direct,
    /// `run_script`: one script run (the calls it made carry its `script` number).
    Script,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Event {
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub time: DateTime<Utc>,
    pub kind: EventKind,
    /// The Offload tool that was called.
    pub tool: String,
    /// The client, as `name/version` from its handshake.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream_tool: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub bytes_in: u64,
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub bytes_out: u64,
    /// Bytes that went to a file or a tool instead of the model: the stored file of an answer
    /// that was stored and linked, the file whose data a tool received.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub bytes_kept: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub rows: Option<u64>,
    /// Batches of a run; for a `batch_part`, the batch's number (from 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub batches: Option<u64>,
    /// For a `batch_part`: the 0-based index of its first item in the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub first_item: Option<u64>,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub duration_ms: u64,
    /// `ok`, or the error code (`upstream_tool_error` when the upstream answered isError).
    pub outcome: String,
    /// What went wrong, in words (an error's message, cut to 300 bytes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The file the answer was stored in, when it was stored and linked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stored: Option<String>,
    /// The process that served it (to tell embedded shims from the app).
    pub pid: u32,
    /// The script run (`run_script`) this call was made by, or that was: the run's own event
    /// and the calls its script made share it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub script: Option<u64>,
}

pub struct Events {
    audit: Mutex<Option<AuditLog>>,
    /// The calls counted for `/metrics`.
    pub metrics: metrics::Metrics,
    /// Where events are sent on as well (the shared audit log), and how many could not be.
    tee: std::sync::OnceLock<tokio::sync::mpsc::Sender<Event>>,
    dropped: std::sync::atomic::AtomicU64,
}

impl Events {
    /// Events that go to `dir/audit.jsonl` (rotated at `max_bytes`).
    pub fn new(dir: Option<&Path>, max_bytes: u64) -> Self {
        Self {
            audit: Mutex::new(dir.map(|d| AuditLog {
                path: d.join("audit.jsonl"),
                max_bytes,
                keep: 3,
                open: None,
            })),
            metrics: metrics::Metrics::default(),
            tee: std::sync::OnceLock::new(),
            dropped: Default::default(),
        }
    }

    /// Sends every event from now on to `to` as well (once: `false` when another was set). An
    /// event that finds its queue full is not sent there (the local log has it), and counted.
    pub fn tee(&self, to: tokio::sync::mpsc::Sender<Event>) -> bool {
        self.tee.set(to).is_ok()
    }

    pub fn emit(&self, event: Event) {
        self.metrics.observe(&event);
        if let Some(tee) = self.tee.get()
            && tee.try_send(event.clone()).is_err()
        {
            let n = self
                .dropped
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if n.is_power_of_two() {
                tracing::warn!("{} event(s) not sent to the shared audit log", n + 1);
            }
        }
        if let Some(log) = self
            .audit
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_mut()
            && let Err(e) = log.append(&event)
        {
            tracing::warn!("cannot write the audit log: {e}");
        }
    }

    /// The audit log's events, oldest first (rotated files included), at most `limit` newest.
    pub fn history(&self, limit: usize) -> Vec<Event> {
        let guard = self.audit.lock().unwrap_or_else(|p| p.into_inner());
        guard.as_ref().map(|l| l.read(limit)).unwrap_or_default()
    }
}

struct AuditLog {
    path: PathBuf,
    max_bytes: u64,
    keep: usize,
    /// The file appended to, kept open between events, with its identity: when the file at
    /// `path` is another (rotated by this or another Offload process, or removed), it is
    /// opened again.
    open: Option<(std::fs::File, Identity)>,
}

/// Which file a path names: device and inode where there are such.
#[derive(PartialEq, Eq, Clone, Copy)]
struct Identity(u64, u64);

impl Identity {
    #[cfg(unix)]
    fn of(meta: &std::fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt;
        Identity(meta.dev(), meta.ino())
    }

    /// Without inodes, a file is known by its creation time.
    #[cfg(not(unix))]
    fn of(meta: &std::fs::Metadata) -> Self {
        let created = meta
            .created()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as u64);
        Identity(created, 0)
    }
}

impl AuditLog {
    fn rotated(&self, n: usize) -> PathBuf {
        let mut p = self.path.clone().into_os_string();
        p.push(format!(".{n}"));
        PathBuf::from(p)
    }

    /// Appends one line: a look at the path (is it still the file held open, is it full?) and
    /// one write, the file opened only when it changed.
    fn append(&mut self, event: &Event) -> std::io::Result<()> {
        let now = std::fs::metadata(&self.path).ok();
        if now.as_ref().is_some_and(|m| m.len() >= self.max_bytes) {
            for n in (1..self.keep).rev() {
                let _ = std::fs::rename(self.rotated(n), self.rotated(n + 1));
            }
            std::fs::rename(&self.path, self.rotated(1))?;
            self.open = None;
        }
        let current = now.as_ref().map(Identity::of);
        let file = match &mut self.open {
            Some((file, held)) if Some(*held) == current => file,
            slot => {
                if let Some(dir) = self.path.parent() {
                    std::fs::create_dir_all(dir)?;
                }
                let file = crate::whole_file::open_private_append(&self.path)?;
                let identity = Identity::of(&file.metadata()?);
                &mut slot.insert((file, identity)).0
            }
        };
        let mut line = serde_json::to_vec(event).map_err(std::io::Error::other)?;
        line.push(b'\n');
        file.write_all(&line)
    }

    fn read(&self, limit: usize) -> Vec<Event> {
        let mut events = Vec::new();
        for n in (0..=self.keep).rev() {
            let path = if n == 0 {
                self.path.clone()
            } else {
                self.rotated(n)
            };
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            events.extend(
                text.lines()
                    .filter_map(|l| serde_json::from_str::<Event>(l).ok()),
            );
        }
        let skip = events.len().saturating_sub(limit);
        events.split_off(skip)
    }
}

/// A `call_tool` event with `bytes_in` set to `n`, for tests.
#[cfg(test)]
pub(crate) fn sample(n: u64) -> Event {
    Event {
        time: Utc::now(),
        kind: EventKind::Call,
        tool: "call_tool".into(),
        client: Some("t/1".into()),
        server: Some("s".into()),
        upstream_tool: Some("x".into()),
        file: None,
        format: None,
        bytes_in: n,
        bytes_out: 0,
        bytes_kept: 0,
        rows: None,
        batches: None,
        first_item: None,
        duration_ms: 1,
        outcome: "ok".into(),
        message: None,
        stored: None,
        pid: 1,
        script: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(n: u64) -> Event {
        sample(n)
    }

    #[test]
    fn events_rotate_and_read_back_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let events = Events::new(Some(dir.path()), 600);
        for n in 0..30 {
            events.emit(event(n));
        }
        assert!(dir.path().join("audit.jsonl.1").exists(), "rotated");
        assert!(!dir.path().join("audit.jsonl.5").exists(), "bounded");
        let history = events.history(5);
        let got: Vec<u64> = history.iter().map(|e| e.bytes_in).collect();
        assert_eq!(got, [25, 26, 27, 28, 29]);
    }

    /// The file is kept open between events, yet a log rotated or removed by another Offload
    /// process (or a person) is followed: events go to the file at the path, never to the
    /// renamed one or into a deleted one.
    #[test]
    fn a_log_moved_or_removed_underneath_is_followed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let events = Events::new(Some(dir.path()), 1 << 20);
        events.emit(event(1));
        std::fs::rename(&path, dir.path().join("audit.jsonl.1")).unwrap();
        events.emit(event(2));
        let lines = |p: &Path| std::fs::read_to_string(p).unwrap().lines().count();
        assert_eq!(
            lines(&dir.path().join("audit.jsonl.1")),
            1,
            "the moved file kept its one"
        );
        assert_eq!(
            lines(&path),
            1,
            "the new event went to a new file at the path"
        );
        std::fs::remove_file(&path).unwrap();
        events.emit(event(3));
        events.emit(event(4));
        assert_eq!(lines(&path), 2);
        let got: Vec<u64> = events.history(10).iter().map(|e| e.bytes_in).collect();
        assert_eq!(
            got,
            [1, 3, 4],
            "the removed event is gone, the rest in order"
        );
    }
}
