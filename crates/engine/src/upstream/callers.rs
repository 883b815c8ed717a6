#![allow(deprecated)]
// logging, sampling: deprecated by 2026-07-28 (SEP-2577), still what clients on older revisions use

//! The client sessions an upstream connection is serving calls for right now. What an upstream
//! sends while it serves a call belongs to the client that made it: its log messages, and its
//! requests for sampling and elicitation (stdio carries no link from such a request to the call
//! that caused it, so the most recent caller that can answer gets it).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::{Peer, RoleServer};

/// One client call in flight to an upstream.
pub struct Caller {
    /// The client session (one `OffloadServer`); log messages go once per session.
    pub session: u64,
    pub peer: Peer<RoleServer>,
    /// The least severe log message this caller wants; `None`: none at all.
    pub log_level: Option<LoggingLevel>,
    /// What the client said it can do (per request on 2026-07-28, from the handshake before).
    pub capabilities: Option<rmcp::model::ClientCapabilities>,
    /// For a client on 2026-07-28: where the upstream's questions go (they reach the client in
    /// an `input_required` result, see `rounds`); `None`: they are sent as requests.
    pub asks: Option<crate::rounds::Asks>,
    /// Where a refusal for a capability this client did not declare is noted (the call then
    /// answers with it, `-32021`, when it fails).
    pub missing: Option<Arc<Mutex<Option<rmcp::ErrorData>>>>,
}

/// The calls in flight on one upstream, oldest first.
#[derive(Default)]
pub struct Callers {
    next: AtomicU64,
    live: Mutex<Vec<(u64, Arc<Caller>)>>,
}

impl Callers {
    /// Records `caller` until the returned guard drops (when the call ends).
    pub fn register(self: &Arc<Self>, caller: Caller) -> CallerGuard {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.lock().push((id, Arc::new(caller)));
        CallerGuard {
            callers: self.clone(),
            id,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(u64, Arc<Caller>)>> {
        self.live.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The most recent caller for which `can` holds.
    pub fn latest(&self, can: impl Fn(&Caller) -> bool) -> Option<Arc<Caller>> {
        self.lock()
            .iter()
            .rev()
            .map(|(_, c)| c)
            .find(|c| can(c))
            .cloned()
    }

    /// One caller per session (the most recent), for notifications.
    pub fn sessions(&self) -> Vec<Arc<Caller>> {
        let live = self.lock();
        let mut seen = Vec::new();
        let mut out = Vec::new();
        for (_, c) in live.iter().rev() {
            if !seen.contains(&c.session) {
                seen.push(c.session);
                out.push(c.clone());
            }
        }
        out
    }

    /// Relays an upstream's log message to the sessions whose calls it is serving, at or above
    /// the level each asked for, with the server's name as the logger.
    pub async fn relay_log(&self, server: &str, message: &LoggingMessageNotificationParam) {
        for caller in self.sessions() {
            let wanted = caller
                .log_level
                .is_some_and(|least| severity(message.level) >= severity(least));
            if !wanted {
                continue;
            }
            let mut relayed = message.clone();
            relayed.logger = Some(match &message.logger {
                Some(inner) if !inner.is_empty() => format!("{server}/{inner}"),
                _ => server.to_owned(),
            });
            if let Err(e) = caller.peer.notify_logging_message(relayed).await {
                tracing::debug!("log message not relayed (client gone?): {e}");
            }
        }
    }
}

/// RFC 5424 order, least severe first.
pub fn severity(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

pub struct CallerGuard {
    callers: Arc<Callers>,
    id: u64,
}

impl Drop for CallerGuard {
    fn drop(&mut self) {
        self.callers.lock().retain(|(id, _)| *id != self.id);
    }
}
