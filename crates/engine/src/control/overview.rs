//! The proxy at a glance: running or paused, connected clients, servers by state, and what
//! Offload did today (calls, and bytes kept out of the model's context).

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::charts::{ActivitySeries, Span, counts};
use crate::Engine;
use crate::events::Event;
use crate::sessions::Session;
use crate::upstream::ServerState;

/// What the tray shows; cheap enough to compute every second.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Status {
    pub paused: bool,
    pub clients: usize,
    pub servers: ServerCounts,
    /// Why `config.json` is not in effect, when it does not parse.
    pub config_error: Option<String>,
    /// Desktop notifications on (`notifications` in `config.json`).
    pub notifications: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ServerCounts {
    pub total: usize,
    pub ready: usize,
    pub errors: usize,
    /// Servers waiting for the user to sign in.
    pub sign_in: usize,
    pub disabled: usize,
}

/// The Overview screen.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Overview {
    pub status: Status,
    #[cfg_attr(feature = "ts", ts(as = "Vec<SessionTs>"))]
    pub clients: Vec<Session>,
    pub config_path: Option<String>,
    pub today: Activity,
    /// Everything in the audit log (it keeps about 40 MB of history).
    pub recorded: Activity,
    /// The chart's series over the span asked for, from the same reading of the audit log.
    pub activity: ActivitySeries,
}

/// `Session` as the window sees it (the engine's type stays free of TypeScript concerns).
#[cfg(feature = "ts")]
#[derive(ts_rs::TS)]
#[ts(rename = "Session")]
#[allow(dead_code)]
pub struct SessionTs {
    #[ts(type = "number")]
    id: u64,
    client: String,
    version: String,
    since: String,
}

/// Calls served, from the audit log: this process's and every embedded `offload mcp`'s.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Activity {
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub calls: u64,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub errors: u64,
    /// Bytes that reached a file or a tool instead of the model: the files stored answers went
    /// to, and the files whose data went to tools.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub bytes_kept: u64,
    pub since: Option<DateTime<Utc>>,
}

impl Activity {
    fn add(&mut self, event: &Event) {
        let (calls, errors, kept) = counts(event);
        self.calls += calls;
        self.errors += errors;
        self.bytes_kept += kept;
        self.since = Some(self.since.map_or(event.time, |s| s.min(event.time)));
    }
}

pub fn status(engine: &Engine) -> Status {
    let mut servers = ServerCounts::default();
    for server in engine.pool.servers().iter() {
        servers.total += 1;
        match server.status().status {
            ServerState::Ready => servers.ready += 1,
            ServerState::Error => servers.errors += 1,
            ServerState::SignInRequired => servers.sign_in += 1,
            ServerState::Disabled => servers.disabled += 1,
            ServerState::Idle | ServerState::Starting => {}
        }
    }
    Status {
        paused: engine.is_paused(),
        clients: engine.sessions.list().len(),
        servers,
        config_error: engine.config_error(),
        notifications: super::notifications(engine),
    }
}

/// The Overview: status, clients, today's and all recorded figures and the chart over `span`,
/// the audit log read once for all of them.
pub fn overview(engine: &Engine, span: Span) -> Overview {
    let midnight = Utc::now()
        .with_timezone(&chrono::Local)
        .date_naive()
        .and_hms_opt(0, 0, 0)
        .and_then(|t| t.and_local_timezone(chrono::Local).earliest())
        .map(|t| t.with_timezone(&Utc));
    let mut today = Activity::default();
    let mut recorded = Activity::default();
    let history = engine.events.history(usize::MAX);
    for event in &history {
        recorded.add(event);
        if midnight.is_some_and(|m| event.time >= m) {
            today.add(event);
        }
    }
    Overview {
        status: status(engine),
        clients: engine.sessions.list(),
        config_path: engine.config_path().map(|p| p.display().to_string()),
        today,
        recorded,
        activity: super::charts::series(&history, span, Utc::now()),
    }
}
