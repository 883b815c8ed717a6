//! The MCP sessions an engine is serving right now: which client (name and version from its
//! handshake), over what, since when. The desktop app shows them; nothing here talks MCP.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::Serialize;
use tokio::sync::watch;

#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq, Eq)]
pub struct Session {
    pub id: u64,
    /// The client's name from its handshake (`claude-ai`, `cursor`, ...).
    pub client: String,
    pub version: String,
    pub since: DateTime<Utc>,
}

/// The live sessions, and a signal that changes whenever one starts or ends.
pub struct Sessions {
    next: AtomicU64,
    live: Mutex<BTreeMap<u64, Session>>,
    changed: watch::Sender<usize>,
}

impl Default for Sessions {
    fn default() -> Self {
        Self {
            next: AtomicU64::new(1),
            live: Mutex::default(),
            changed: watch::channel(0).0,
        }
    }
}

impl Sessions {
    /// Records a session until the returned guard is dropped.
    pub fn open(&self, client: &str, version: &str) -> Open<'_> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let session = Session {
            id,
            client: client.to_owned(),
            version: version.to_owned(),
            since: Utc::now(),
        };
        tracing::info!(id, client, version, "client connected");
        self.update(|live| {
            live.insert(id, session);
        });
        Open { sessions: self, id }
    }

    /// The live sessions, oldest first.
    pub fn list(&self) -> Vec<Session> {
        self.live
            .lock()
            .map(|live| live.values().cloned().collect())
            .unwrap_or_default()
    }

    /// Wakes on every start and end of a session (its value is the number of live sessions).
    pub fn watch(&self) -> watch::Receiver<usize> {
        self.changed.subscribe()
    }

    fn update(&self, change: impl FnOnce(&mut BTreeMap<u64, Session>)) {
        if let Ok(mut live) = self.live.lock() {
            change(&mut live);
            self.changed.send_replace(live.len());
        }
    }
}

/// A session being served; it leaves the list when dropped.
pub struct Open<'a> {
    sessions: &'a Sessions,
    id: u64,
}

impl Drop for Open<'_> {
    fn drop(&mut self) {
        tracing::info!(id = self.id, "client disconnected");
        self.sessions.update(|live| {
            live.remove(&self.id);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_are_listed_while_open() {
        let sessions = Sessions::default();
        let mut changed = sessions.watch();
        let a = sessions.open("claude-ai", "1.0");
        let b = sessions.open("cursor", "2.1");
        assert_eq!(*changed.borrow_and_update(), 2);
        let names: Vec<_> = sessions.list().into_iter().map(|s| s.client).collect();
        assert_eq!(names, ["claude-ai", "cursor"]);
        drop(a);
        assert_eq!(*changed.borrow_and_update(), 1);
        assert_eq!(sessions.list()[0].client, "cursor");
        drop(b);
        assert!(sessions.list().is_empty());
    }
}
