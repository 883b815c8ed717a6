//! One client session's state, carried by its requests down to the upstream calls they make.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use rmcp::RoleServer;
use rmcp::service::RequestContext;

use super::shown;
use crate::gateway::Route;

/// Upstream resources subscribed to, by the URI the client used.
pub type Subscriptions = Arc<Mutex<HashMap<String, Route>>>;

/// One client session, as its requests carry it (in their extensions) down to the upstream
/// calls they make: who gets an upstream's log messages, at what level.
#[derive(Clone)]
pub(crate) struct Session {
    pub id: u64,
    /// The level the client set with `logging/setLevel` (older protocol revisions).
    #[allow(deprecated)]
    pub(super) level: Arc<Mutex<Option<rmcp::model::LoggingLevel>>>,
    /// The upstream resources it subscribed to, by the URI it used.
    pub(super) subscriptions: Subscriptions,
    /// The mode its tools are shown in, and the upstream tools it was shown.
    pub(super) shown: shown::Shown,
}

impl Session {
    pub(super) fn new() -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Self {
            id: NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            level: Arc::default(),
            subscriptions: Arc::default(),
            shown: shown::Shown::default(),
        }
    }

    pub(super) fn subscriptions(&self) -> MutexGuard<'_, HashMap<String, Route>> {
        self.subscriptions.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The least severe upstream log message `ctx`'s client gets: the request's own opt-in
    /// (2026-07-28), else the session's `logging/setLevel`, else `info` on sessions of older
    /// revisions and nothing on 2026-07-28 (where logging is opt-in per request).
    #[allow(deprecated)]
    pub fn log_level_for(
        &self,
        ctx: &RequestContext<RoleServer>,
    ) -> Option<rmcp::model::LoggingLevel> {
        if let Some(level) = ctx.meta.log_level() {
            return Some(level);
        }
        if let Some(level) = *self.level.lock().unwrap_or_else(|p| p.into_inner()) {
            return Some(level);
        }
        let legacy = ctx
            .protocol_version()
            .is_some_and(|v| v.to_string().as_str() < "2026-07-28");
        legacy.then_some(rmcp::model::LoggingLevel::Info)
    }
}
