//! The Live log screen's history: the audit log of every Offload process (the app and
//! `offload mcp` in embedded mode), so it survives restarts. New calls arrive through
//! [`crate::activity::Feed`].

use crate::Engine;
use crate::events::Event;

/// The newest `limit` calls, oldest first.
pub fn call_log(engine: &Engine, limit: usize) -> Vec<Event> {
    engine.events.history(limit)
}
