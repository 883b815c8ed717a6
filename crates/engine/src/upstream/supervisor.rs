//! One upstream server: its kept-open connection shared by every call (started and restarted
//! by `lifecycle`, never while a caller waits on a lock), its state and health, the cached tool
//! list, and the errors calls answer with. Calls themselves are in `calls` (and `tasks`), a
//! server's sign-in as the pool sees it in `sign_in`.

use std::sync::{Arc, Weak};
use std::time::Duration;

use rmcp::model::{ServerCapabilities, Tool};
use rmcp::service::ServiceError;
use tokio_util::sync::CancellationToken;

use super::callers::{Caller, Callers};
use super::connect::{self, ConnectContext, Opened, kill_group};
use super::error::StartError;
use super::handler::{ToolCache, UpstreamHandler};
use super::lifecycle::{Lifecycle, NotReady, Started};
use super::progress::{ProgressRoute, ProgressRoutes};
use super::stderr::StderrRing;
use super::{PoolContext, ServerState, ServerStatus, UpstreamError};
use crate::ErrorCode;
use crate::config::ServerEntry;

/// One configured upstream server.
pub struct Upstream {
    pub(super) name: String,
    pub(super) entry: ServerEntry,
    pub(super) ctx: Arc<PoolContext>,
    pub(super) life: Arc<Lifecycle<Connection>>,
    pub(super) stderr: Arc<StderrRing>,
    /// Its recent log messages (`notifications/message`), for the app.
    logs: Arc<super::logs::LogRing>,
    /// The hosts its network proxy refused (see `egress`).
    pub(super) refusals: Arc<super::refusals::Refusals>,
    pub(super) routes: Arc<ProgressRoutes>,
    /// The client calls in flight (for relaying what the upstream sends while serving them).
    pub(super) callers: Arc<Callers>,
    /// URIs of the `resource_link`s its tools returned (so a read of one goes to this server).
    pub(super) links: std::sync::Mutex<std::collections::VecDeque<String>>,
    /// Told by a remote connection's HTTP client when the server refuses its sign-in.
    auth_watch: Arc<crate::oauth::watch::AuthWatch>,
    /// A remote server reached with an OAuth sign-in (no static `Authorization` header).
    pub(super) signs_in: bool,
    /// While it needs a sign-in: the keychain entry last tried, so that it is started again
    /// (by a call, a listing, the app) only once the sign-in changed, not on every request.
    pub(super) sign_in_tried: std::sync::Mutex<Option<u64>>,
    /// When a listing of its tools first found none known (it was starting, or listing):
    /// listings wait for it until their bound after that, then no more.
    listing_since: std::sync::Mutex<Option<std::time::Instant>>,
    /// Itself, for the background starter (which must not keep a removed server alive).
    me: Weak<Upstream>,
}

pub(super) struct Connection {
    pub(super) client: connect::Client,
    tools: Arc<ToolCache>,
    pub(super) process_group: Option<u32>,
    _stop: Option<tokio::sync::oneshot::Sender<()>>,
    pub(super) exceeded: Arc<std::sync::atomic::AtomicU64>,
    /// The stderr ring's end count when this connection started (stdio only).
    pub(super) stderr_ends_at_start: u64,
}

impl Connection {
    pub(super) fn is_closed(&self) -> bool {
        self.client.peer().is_transport_closed()
    }
}

impl Drop for Connection {
    /// A connection that goes away takes its whole process group with it.
    fn drop(&mut self) {
        kill_group(self.process_group);
    }
}

/// Options for one call.
#[derive(Default)]
pub struct CallOptions {
    /// Where to forward the upstream's progress notifications.
    pub progress: Option<ProgressRoute>,
    /// Cancelled when the client cancels its request.
    pub cancel: CancellationToken,
    /// The client session making the call: it gets the upstream's log messages, sampling and
    /// elicitation requests while the call runs.
    pub caller: Option<Caller>,
    /// The tool runs only as an MCP task (`taskSupport: "required"`): Offload makes the task,
    /// waits for its result and answers with it (see `Upstream::call_as_task`).
    pub as_task: bool,
}

/// What a crash looks like in messages: the process exited, with the stderr lines that say why.
fn exited(stderr: &StderrRing) -> String {
    let tail = stderr.cause(None, 400);
    if tail.is_empty() {
        "the server process exited".into()
    } else {
        format!("the server process exited; stderr: {tail}")
    }
}

/// How much of each server's stderr is kept (its newest lines; older ones make room).
pub const STDERR_KEPT: usize = 256 * 1024;

impl Upstream {
    pub(super) fn new(name: String, entry: ServerEntry, ctx: Arc<PoolContext>) -> Arc<Self> {
        let notify = Arc::downgrade(&ctx);
        let signs_in = entry.transport(&name).is_ok_and(|t| t.signs_in());
        Arc::new_cyclic(|me| Self {
            signs_in,
            name,
            entry,
            ctx,
            life: Arc::new(Lifecycle::new(move || {
                if let Some(ctx) = notify.upgrade() {
                    ctx.bump();
                }
            })),
            stderr: Arc::new(StderrRing::new(STDERR_KEPT)),
            logs: Arc::default(),
            refusals: Arc::default(),
            routes: Arc::new(ProgressRoutes::default()),
            callers: Arc::new(Callers::default()),
            links: std::sync::Mutex::default(),
            auth_watch: Arc::default(),
            sign_in_tried: std::sync::Mutex::default(),
            listing_since: std::sync::Mutex::default(),
            me: me.clone(),
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// How long a listing may still wait for this server's tools: `bound` (and its start timeout) from
    /// the first listing that found them unknown, so only the first listings after a start
    /// wait, and never more than that.
    pub(super) fn listing_wait(&self, bound: Duration) -> Duration {
        let mut since = self.listing_since.lock().unwrap_or_else(|p| p.into_inner());
        let since = *since.get_or_insert_with(std::time::Instant::now);
        bound
            .min(self.entry.start_timeout())
            .saturating_sub(since.elapsed())
    }

    /// Its capabilities once it has started, waiting for its start at most what is left of
    /// `bound` from the first listing that found it unknown (the window tool listings use, so
    /// a client's lists after the first do not wait again); its start goes on in the background.
    pub async fn capabilities_within(
        self: &Arc<Self>,
        bound: Duration,
    ) -> Result<ServerCapabilities, String> {
        if let Some(caps) = self.capabilities() {
            return Ok(caps);
        }
        let me = self.clone();
        let starting = tokio::spawn(async move { me.started_capabilities().await });
        match tokio::time::timeout(self.listing_wait(bound), starting).await {
            Ok(Ok(caps)) => caps.map_err(|e| e.to_string()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err("still starting".to_owned()),
        }
    }

    /// The tools it listed the last time it ran (see `catalog`), while it has not listed them
    /// this time.
    pub fn remembered_tools(&self) -> Option<Vec<Tool>> {
        self.ctx.catalog.tools(&self.name, &self.entry)
    }

    fn listing_done(&self) {
        *self.listing_since.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    pub fn entry(&self) -> &ServerEntry {
        &self.entry
    }

    pub fn timeout(&self) -> Duration {
        self.entry.timeout()
    }

    /// The tools listed by the running connection, if it is running and has listed them
    /// (never starts the server or asks it).
    pub fn cached_tools(&self) -> Option<Arc<Vec<Tool>>> {
        self.life.ready()?.tools.get()
    }

    /// What the running server declared it offers (never starts the server).
    pub fn capabilities(&self) -> Option<ServerCapabilities> {
        let conn = self.life.ready()?;
        let info = conn.client.peer().peer_info()?;
        Some(info.capabilities.clone())
    }

    /// What the server declared it offers, starting it if need be (as a tool listing would).
    pub async fn started_capabilities(&self) -> Result<ServerCapabilities, UpstreamError> {
        let conn = self.connection().await?;
        Ok(conn
            .client
            .peer()
            .peer_info()
            .map(|info| info.capabilities.clone())
            .unwrap_or_default())
    }

    /// Asks the server something other than a tool call (prompts, resources, completion) on
    /// the kept-open connection, within its timeout; rmcp's peer does the paging and keeps
    /// lists for the time the server allows (`ttlMs`).
    pub async fn ask<T, F, Fut>(&self, ask: F) -> Result<T, UpstreamError>
    where
        F: FnOnce(rmcp::Peer<rmcp::RoleClient>) -> Fut,
        Fut: Future<Output = Result<T, ServiceError>>,
    {
        let conn = self.connection().await?;
        match tokio::time::timeout(self.timeout(), ask(conn.client.peer().clone())).await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(e)) => Err(self.service_error(e)),
            Err(_) => Err(UpstreamError::Timeout {
                name: self.name.clone(),
                secs: self.timeout().as_secs(),
            }),
        }
    }

    /// Tells the running server that the roots it is offered changed (if it is offered any).
    pub fn roots_changed(&self) {
        let Some(conn) = self.life.ready() else {
            return;
        };
        if !self.entry.offers_roots() {
            return;
        }
        let peer = conn.client.peer().clone();
        let name = self.name.clone();
        tokio::spawn(async move {
            if let Err(e) = peer.notify_roots_list_changed().await {
                tracing::debug!(server = %name, "roots/list_changed not sent: {e}");
            }
        });
    }

    /// Its most recent log messages, oldest first (kept across restarts).
    pub fn log_lines(&self) -> Vec<super::LogLine> {
        self.logs.lines()
    }

    /// The hosts its network proxy refused, oldest first (kept across restarts).
    pub fn network_refusals(&self) -> Vec<super::Refusal> {
        self.refusals.hosts()
    }

    /// The paths it said it was refused, oldest first (kept across restarts).
    pub fn path_refusals(&self) -> Vec<super::PathRefusal> {
        self.refusals.paths()
    }

    /// The most recent stderr lines of the server process.
    pub fn stderr_tail(&self, lines: usize) -> String {
        self.stderr.tail(lines)
    }

    /// Every stderr line kept (the newest [`STDERR_KEPT`] bytes, across restarts), oldest first.
    pub fn stderr_lines(&self) -> Vec<super::StderrLine> {
        self.stderr.lines()
    }

    pub fn status(&self) -> ServerStatus {
        let health = self.life.health();
        let now = self.life.snapshot(Connection::is_closed);
        let state = if self.entry.disabled {
            ServerState::Disabled
        } else if self.waits_for_sign_in(&now) {
            ServerState::SignInRequired
        } else {
            now.state
        };
        let error = match (state, now.crashed) {
            (ServerState::Error, true) => Some(exited(&self.stderr)),
            (ServerState::Error | ServerState::SignInRequired, false) => health.last_error,
            _ => None,
        };
        ServerStatus {
            name: self.name.clone(),
            status: state,
            tool_count: health.tool_count,
            error,
            restarts: health.restarts,
            uptime_secs: now.up.map(|d| d.as_secs()),
            retry_in_secs: now.retry_in.map(|d| d.as_secs_f64().ceil() as u64),
        }
    }

    /// The last failure (start, crash, call), even when the server has recovered since.
    pub fn last_error(&self) -> Option<String> {
        self.life.health().last_error
    }

    /// The tools of a running server, without starting it.
    pub fn tool_count(&self) -> Option<usize> {
        self.life.health().tool_count
    }

    /// *Stop retrying*: a failing server is not started again in the background.
    pub fn stop_retrying(&self) {
        self.life.stop_retrying();
    }

    /// The kept-open connection. A server that is not started yet (or crashed while ready) is
    /// started and waited for, at most its start timeout; a server known to be broken answers
    /// at once with its last error and when it is retried (in the background).
    pub(super) async fn connection(&self) -> Result<Arc<Connection>, UpstreamError> {
        if self.entry.disabled {
            return Err(UpstreamError::Disabled {
                name: self.name.clone(),
            });
        }
        self.sign_in_gate().await?;
        let me = self.me.clone();
        let start_timeout = self.entry.start_timeout();
        let stderr = self.stderr.clone();
        let acquired = self
            .life
            .acquire(
                // A little past the start's own limit, so its own message is the one given.
                start_timeout + Duration::from_secs(1),
                Connection::is_closed,
                move || exited(&stderr),
                move || {
                    let me = me.clone();
                    async move {
                        match me.upgrade() {
                            Some(me) => me.start().await,
                            None => Started::Failed {
                                message: "removed".into(),
                                code: ErrorCode::ServerUnavailable,
                                retry: false,
                            },
                        }
                    }
                },
            )
            .await;
        acquired.map_err(|e| self.not_ready(e, start_timeout))
    }

    fn not_ready(&self, e: NotReady, start_timeout: Duration) -> UpstreamError {
        let (message, code) = match e {
            NotReady::Down {
                last_error,
                code,
                retry_in,
                starting,
            } => {
                let when = match (starting, retry_in) {
                    (true, _) => "; Offload is starting it again right now".to_owned(),
                    (false, Some(d)) => format!(
                        "; Offload retries in {} s",
                        d.as_secs_f64().ceil().max(1.0) as u64
                    ),
                    (false, None) => String::new(),
                };
                (format!("{last_error}{when}"), code)
            }
            NotReady::Stopped => (
                "it was stopped while starting (its configuration changed, or it was restarted); try again".to_owned(),
                ErrorCode::ServerUnavailable,
            ),
            NotReady::StartTimedOut => (
                format!(
                    "it is still starting after {} s (\"startTimeoutSecs\"); try again shortly",
                    start_timeout.as_secs()
                ),
                ErrorCode::ServerUnavailable,
            ),
        };
        UpstreamError::Unavailable {
            name: self.name.clone(),
            message,
            code,
        }
    }

    /// One start attempt, bounded by the start timeout.
    async fn start(&self) -> Started<Connection> {
        let stderr_ends_at_start = self.stderr.ends();
        let timeout = self.entry.start_timeout();
        let opened = tokio::time::timeout(timeout, self.open()).await;
        // A refusal during the start is the start's outcome; only later ones are a call's.
        self.auth_watch.take();
        match opened {
            Ok(Ok((opened, tools))) => Started::Ok(Connection {
                client: opened.client,
                tools,
                process_group: opened.process_group,
                _stop: opened.stop,
                exceeded: opened.exceeded,
                stderr_ends_at_start,
            }),
            Ok(Err(e)) => Started::Failed {
                retry: e.code == ErrorCode::ServerUnavailable,
                message: e.message,
                code: e.code,
            },
            Err(_) => Started::Failed {
                message: format!(
                    "it did not finish starting within {} s (\"startTimeoutSecs\")",
                    timeout.as_secs()
                ),
                code: ErrorCode::ServerUnavailable,
                retry: true,
            },
        }
    }

    async fn open(&self) -> Result<(Opened, Arc<ToolCache>), StartError> {
        let transport = self.entry.transport(&self.name)?;
        let tools = Arc::new(ToolCache::default());
        let handler = UpstreamHandler {
            server: self.name.clone(),
            tools: tools.clone(),
            pool: Arc::downgrade(&self.ctx),
            callers: self.callers.clone(),
            offers_roots: self.entry.offers_roots(),
        };
        let ctx = ConnectContext {
            answer_limit: self
                .ctx
                .answer_limit
                .load(std::sync::atomic::Ordering::Relaxed),
            name: &self.name,
            secrets: &self.ctx.secrets,
            search_path: &self.ctx.search_path,
            stderr: self.stderr.clone(),
            routes: self.routes.clone(),
            callers: self.callers.clone(),
            logs: self.logs.clone(),
            witness: super::egress::Witness {
                logs: self.logs.clone(),
                refusals: self.refusals.clone(),
                told: Some({
                    let pool = Arc::downgrade(&self.ctx);
                    Arc::new(move || {
                        if let Some(pool) = pool.upgrade() {
                            pool.bump();
                        }
                    })
                }),
            },
            handler,
            lifecycle: self.entry.lifecycle(),
            auth_watch: self.auth_watch.clone(),
            confinement: self.ctx.confinement.load_full(),
        };
        let opened = connect::open(&transport, ctx).await?;
        Ok((opened, tools))
    }

    /// The server's tools (cached per connection; refreshed after `tools/list_changed` and on
    /// reconnect). Follows `nextCursor` to the end.
    pub async fn tools(&self) -> Result<Arc<Vec<Tool>>, UpstreamError> {
        let conn = self.connection().await?;
        if let Some(tools) = conn.tools.get() {
            return Ok(tools);
        }
        let generation = conn.tools.generation();
        let listed =
            tokio::time::timeout(self.timeout(), conn.client.peer().list_all_tools()).await;
        let tools = match listed {
            Ok(Ok(tools)) => Arc::new(tools),
            Ok(Err(e)) => return Err(self.service_error(e)),
            Err(_) => {
                return Err(UpstreamError::Timeout {
                    name: self.name.clone(),
                    secs: self.timeout().as_secs(),
                });
            }
        };
        conn.tools.store(generation, tools.clone());
        self.ctx.catalog.remember(&self.name, &self.entry, &tools);
        self.listing_done();
        self.ctx.bump();
        self.life.with_health(|h| h.tool_count = Some(tools.len()));
        Ok(tools)
    }

    pub(super) fn service_error(&self, e: ServiceError) -> UpstreamError {
        let name = self.name.clone();
        if let Some(refusal) = self.auth_watch.take() {
            return self.refused(refusal);
        }
        match e {
            ServiceError::McpError(err) => UpstreamError::Rpc {
                name,
                rpc_code: err.code.0,
                message: err.message.into_owned(),
                data: err.data,
            },
            ServiceError::Timeout { .. } => UpstreamError::Timeout {
                name,
                secs: self.timeout().as_secs(),
            },
            ServiceError::Cancelled { .. } => UpstreamError::Cancelled { name },
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                UpstreamError::Closed {
                    name,
                    stderr: self.stderr.cause(None, 400),
                }
            }
            other => UpstreamError::Rpc {
                name,
                rpc_code: -32603,
                data: None,
                message: other.to_string(),
            },
        }
    }

    /// Closes the connection and terminates the server's process group; ends a start under
    /// way and any scheduled retry at once. The next use starts the server again.
    pub async fn stop(&self) {
        self.listing_done();
        if let Some(conn) = self.life.stop() {
            let group = conn.process_group;
            if let Ok(mut conn) = Arc::try_unwrap(conn) {
                let _ = conn
                    .client
                    .close_with_timeout(Duration::from_millis(500))
                    .await;
            }
            // Also when other holders keep the connection alive a little longer.
            kill_group(group);
        }
    }
}
