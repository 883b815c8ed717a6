//! The pool of upstream MCP servers: one kept-open connection per enabled server, started on
//! first use, shared by every client session.
//!
//! One broken server never blocks or hides the others: listings ask every server in parallel,
//! each bounded by its own timeout, and report failures per server.

mod callers;
mod calls;
mod catalog;
mod confine;
mod connect;
mod egress;
mod error;
mod handler;
mod http_error;
mod lifecycle;
pub(crate) mod limited;
mod logs;
mod progress;
mod refusals;
mod search_path;
mod sign_in;
mod stderr;
mod supervisor;
mod tasks;

pub use callers::Caller;
pub use confine::Setting as ConfineSetting;
pub use error::{UpstreamError, closest};
pub use logs::LogLine;
pub use progress::ProgressRoute;
pub use refusals::{PathRefusal, Refusal};
pub use stderr::StderrLine;
pub use supervisor::{CallOptions, Upstream};

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use arc_swap::ArcSwap;

use rmcp::model::Tool;
use serde::Serialize;

use crate::config::{SecretSource, ServerEntry};
use search_path::SearchPath;

/// What every upstream shares.
pub struct PoolContext {
    secrets: Arc<dyn SecretSource>,
    search_path: SearchPath,
    /// The largest single message accepted from an upstream (read when a connection opens).
    answer_limit: AtomicU64,
    /// Bumped when a server changes state or an upstream says its tools changed: what clients
    /// see of the upstream tools may have changed.
    changed: tokio::sync::watch::Sender<u64>,
    /// What upstreams announce about their prompts and resources, for every client session.
    notices: tokio::sync::broadcast::Sender<Notice>,
    /// What an upstream's `roots/list` gets: Offload's allowed directories (roots: deprecated
    /// by 2026-07-28, SEP-2577; servers on older revisions ask).
    #[allow(deprecated)]
    roots: ArcSwap<Vec<rmcp::model::Root>>,
    /// How confined servers are started (the roots on disk, the launcher, what is never theirs).
    confinement: ArcSwap<confine::Setting>,
    /// Each server's last tool list, shown while it starts.
    catalog: catalog::Catalog,
}

impl PoolContext {
    pub(super) fn bump(&self) {
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
    }

    pub(super) fn notice(&self, notice: Notice) {
        // No receiver (no client session) is not an error.
        let _ = self.notices.send(notice);
    }
}

/// An upstream's announcement that client sessions relay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    PromptsChanged {
        server: String,
    },
    ResourcesChanged {
        server: String,
    },
    /// `notifications/resources/updated` for a resource the server was subscribed to.
    ResourceUpdated {
        server: String,
        uri: String,
    },
}

/// A server's state as clients and the app see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerState {
    /// Configured but not started yet (servers start on first use).
    Idle,
    Starting,
    Ready,
    Error,
    /// A remote server that needs the user to sign in (never signed in, or the sign-in was
    /// revoked or expired): the app shows *Sign in*; calls answer `auth_required`.
    SignInRequired,
    Disabled,
}

#[derive(Debug, Clone, Serialize)]
pub struct ServerStatus {
    pub name: String,
    pub status: ServerState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_count: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Starts after the first (crashes recovered, retries, restarts).
    #[serde(skip_serializing_if = "is_zero")]
    pub restarts: u32,
    /// Seconds since it became ready (while ready).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uptime_secs: Option<u64>,
    /// Seconds until the next start attempt in the background (while failing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_in_secs: Option<u64>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// How long listing tools waits for a server that has not listed its tools yet and has none
/// remembered (its first start ever, or its entry now starts another program); never more
/// than its own start timeout. Long enough for a server that takes a few seconds to start to be
/// in the first answer; short enough that a client's own wait for Offload holds the whole
/// handshake: Claude Code headless gives its servers 5 s (`MCP_CONNECT_TIMEOUT_MS`) before its
/// first request, and a list slower than that would leave every tool of Offload's out of it.
/// Merged `prompts/list` and `resources/list` share the same window (see
/// `Upstream::capabilities_within`), so the three lists together never wait longer.
pub const LIST_WAIT: std::time::Duration = std::time::Duration::from_secs(4);

/// How long a search (`list_available_tools`, one of Offload's own tools) waits for the same:
/// a moment for fast servers, never a slow one's start (it says who is still starting).
pub const SEARCH_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// Whom a tool listing is for: how long it waits for a starting server, and whether it may
/// answer with what a server listed last time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listing {
    /// A client's `tools/list`: a starting server's remembered tools at once; one with nothing
    /// remembered waited for up to [`LIST_WAIT`].
    Client,
    /// A search, what the app and `offload tools list` show: a server's live list when it comes
    /// within [`SEARCH_WAIT`], what it listed last time otherwise.
    Look,
}

impl Listing {
    pub fn wait(self) -> std::time::Duration {
        match self {
            Self::Client => LIST_WAIT,
            Self::Look => SEARCH_WAIT,
        }
    }
}

/// The result of asking one server for its tools.
pub struct ServerTools {
    pub status: ServerStatus,
    pub tools: Arc<Vec<Tool>>,
    /// The tools are the ones it listed last time (it has not listed them yet this time).
    pub remembered: bool,
}

pub struct Pool {
    ctx: Arc<PoolContext>,
    servers: ArcSwap<Vec<Arc<Upstream>>>,
    /// Serialises reconfigurations so that two never interleave.
    applying: tokio::sync::Mutex<()>,
}

/// What a reconfiguration did, by server name.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct PoolChange {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    /// Servers whose entry changed: stopped, to start again with the new entry.
    pub restarted: Vec<String>,
}

impl PoolChange {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.restarted.is_empty()
    }
}

impl Pool {
    pub fn new(
        servers: &[(String, ServerEntry)],
        secrets: Arc<dyn SecretSource>,
        answer_limit: u64,
    ) -> Self {
        let ctx = Arc::new(PoolContext {
            secrets,
            search_path: SearchPath::from_env(),
            answer_limit: AtomicU64::new(answer_limit),
            changed: tokio::sync::watch::Sender::new(0),
            notices: tokio::sync::broadcast::Sender::new(256),
            roots: ArcSwap::default(),
            confinement: ArcSwap::default(),
            catalog: catalog::Catalog::default(),
        });
        let servers = servers
            .iter()
            .map(|(name, entry)| Upstream::new(name.clone(), entry.clone(), ctx.clone()))
            .collect();
        Self {
            ctx,
            servers: ArcSwap::from_pointee(servers),
            applying: tokio::sync::Mutex::default(),
        }
    }

    /// Remembers each server's tool list in `path` from now on, and reads what it holds.
    pub fn remember_in(&self, path: std::path::PathBuf) {
        self.ctx.catalog.open(path);
    }

    /// Wakes when a server changes state or an upstream's tool list changed.
    pub fn watch(&self) -> tokio::sync::watch::Receiver<u64> {
        self.ctx.changed.subscribe()
    }

    /// Sets the roots upstreams are offered (Offload's allowed directories); running servers
    /// that are offered roots are told when they change.
    #[allow(deprecated)]
    pub fn set_roots(&self, roots: Vec<rmcp::model::Root>) {
        if **self.ctx.roots.load() == roots {
            return;
        }
        self.ctx.roots.store(Arc::new(roots));
        for server in self.servers().iter() {
            server.roots_changed();
        }
    }

    /// Sets how confined servers start from their next start on (with the roots).
    /// Whether `path` is kept from every confined server by design (Offload's own files,
    /// servers' state, credentials, start-up files, clients' configurations): never offered
    /// for allowing.
    pub fn withheld(&self, path: &std::path::Path) -> bool {
        confine::withheld(path, &self.ctx.confinement.load())
    }

    pub fn set_confinement(&self, setting: ConfineSetting) {
        self.ctx.confinement.store(Arc::new(setting));
    }

    /// Forwards a client's `logging/setLevel` to every running server that logs (each within
    /// its timeout, in the background: a slow server delays nothing).
    #[allow(deprecated)] // logging: deprecated by 2026-07-28, what older revisions use
    pub fn set_level(&self, level: rmcp::model::LoggingLevel) {
        for server in self.servers().iter() {
            if server.capabilities().is_some_and(|c| c.logging.is_some()) {
                let server = server.clone();
                tokio::spawn(async move {
                    let params = rmcp::model::SetLevelRequestParams::new(level);
                    if let Err(e) = server
                        .ask(|peer| async move { peer.set_level(params).await })
                        .await
                    {
                        tracing::debug!(server = %server.name(), "logging/setLevel not forwarded: {e}");
                    }
                });
            }
        }
    }

    /// What upstreams announce about their prompts and resources from now on.
    pub fn notices(&self) -> tokio::sync::broadcast::Receiver<Notice> {
        self.ctx.notices.subscribe()
    }

    /// The configured servers, in configuration order (a snapshot: a reconfiguration does not
    /// change a list already taken).
    pub fn servers(&self) -> Arc<Vec<Arc<Upstream>>> {
        self.servers.load_full()
    }

    /// The server called `name`, or an error naming the closest names.
    pub fn get(&self, name: &str) -> Result<Arc<Upstream>, UpstreamError> {
        let servers = self.servers.load();
        servers
            .iter()
            .find(|s| s.name() == name)
            .cloned()
            .ok_or_else(|| UpstreamError::UnknownServer {
                name: name.to_owned(),
                suggestions: closest(name, servers.iter().map(|s| s.name())),
            })
    }

    /// The definition of `tool` on `server`, or an error naming the closest names.
    pub async fn find_tool(&self, server: &str, tool: &str) -> Result<Tool, UpstreamError> {
        let upstream = self.get(server)?;
        let tools = upstream.tools().await?;
        tools
            .iter()
            .find(|t| t.name == tool)
            .cloned()
            .ok_or_else(|| UpstreamError::UnknownTool {
                server: server.to_owned(),
                tool: tool.to_owned(),
                suggestions: closest(tool, tools.iter().map(|t| t.name.as_ref())),
            })
    }

    /// Starts `entry` apart from the pool (what *Test connection* does before a server is
    /// saved), lists its tools and stops it again, all within `limit`: no process, connection or
    /// retry is left behind. Answers the tools (or why not) and what the server wrote to stderr.
    pub async fn trial(
        &self,
        name: &str,
        entry: ServerEntry,
        limit: std::time::Duration,
    ) -> (Result<Arc<Vec<rmcp::model::Tool>>, UpstreamError>, String) {
        let upstream = Upstream::new(name.to_owned(), entry, self.ctx.clone());
        let listed = tokio::time::timeout(limit, upstream.tools()).await;
        upstream.stop().await;
        let listed = listed.unwrap_or_else(|_| {
            Err(UpstreamError::Timeout {
                name: name.to_owned(),
                secs: limit.as_secs(),
            })
        });
        (listed, upstream.stderr_tail(20))
    }

    /// Makes the pool match `servers`: a server whose entry is unchanged keeps its connection
    /// (calls in flight go on), a changed one is stopped and starts again with its new entry on
    /// next use, a removed one is stopped, an added one starts on first use.
    pub async fn apply(&self, servers: &[(String, ServerEntry)], answer_limit: u64) -> PoolChange {
        let _one_at_a_time = self.applying.lock().await;
        self.ctx.answer_limit.store(answer_limit, Ordering::Relaxed);
        let old = self.servers.load_full();
        let mut change = PoolChange::default();
        let next: Vec<Arc<Upstream>> = servers
            .iter()
            .map(
                |(name, entry)| match old.iter().find(|s| s.name() == name) {
                    // How its tools are shown is no reason to restart a server.
                    Some(same) if same.entry().connection() == entry.connection() => same.clone(),
                    found => {
                        if found.is_some() {
                            change.restarted.push(name.clone());
                        } else {
                            change.added.push(name.clone());
                        }
                        Upstream::new(name.clone(), entry.clone(), self.ctx.clone())
                    }
                },
            )
            .collect();
        let gone: Vec<Arc<Upstream>> = old
            .iter()
            .filter(|s| !next.iter().any(|n| Arc::ptr_eq(n, s)))
            .cloned()
            .collect();
        change.removed = gone
            .iter()
            .map(|s| s.name().to_owned())
            .filter(|n| !change.restarted.contains(n))
            .collect();
        self.servers.store(Arc::new(next));
        for name in &change.removed {
            self.ctx.catalog.forget(name);
        }
        futures::future::join_all(gone.iter().map(|s| s.stop())).await;
        self.ctx.bump();
        if !change.is_empty() {
            tracing::info!(?change, "upstream servers reconfigured");
        }
        change
    }

    /// Stops `name` and starts it again at once; answers its tools (or why it did not start).
    pub async fn restart(&self, name: &str) -> Result<Arc<Vec<Tool>>, UpstreamError> {
        let server = self.get(name)?;
        server.stop().await;
        server.tools().await
    }

    /// Asks every listed server for its tools in parallel (disabled ones are reported, not
    /// started). For a client, a server not running yet answers with the tools it listed last
    /// time, at once, while it starts in the background. Otherwise a server is waited for up
    /// to `listing`'s wait (and its start timeout) from the first listing that asked it, then
    /// reported as it is, with what it listed last time if anything: its start goes on and the
    /// pool's change signal tells when its tools are known. So a listing never waits for a
    /// server twice, nor for one whose tools are known. A running server listing again (its
    /// list changed) is waited for the same way: what it listed before may be what changed.
    pub async fn list_tools(&self, only: Option<&str>, listing: Listing) -> Vec<ServerTools> {
        let servers = self.servers();
        let selected = servers
            .iter()
            .filter(|s| only.is_none_or(|o| s.name() == o));
        let asks = selected.map(|server| async move {
            let as_it_is = |tools: Arc<Vec<Tool>>, remembered: bool| ServerTools {
                status: server.status(),
                tools,
                remembered,
            };
            if server.entry().disabled {
                return as_it_is(Arc::default(), false);
            }
            if let Some(tools) = server.cached_tools() {
                return as_it_is(tools, false);
            }
            let asked = tokio::spawn({
                let server = server.clone();
                async move { server.tools().await }
            });
            let running = server.status().status == ServerState::Ready;
            let remembered = server.remembered_tools().map(Arc::new);
            if listing == Listing::Client
                && !running
                && let Some(tools) = &remembered
            {
                return as_it_is(tools.clone(), true);
            }
            let (known, from_memory) = match remembered {
                Some(tools) => (tools, true),
                None => (Arc::default(), false),
            };
            match tokio::time::timeout(server.listing_wait(listing.wait()), asked).await {
                Ok(Ok(Ok(tools))) => as_it_is(tools, false),
                Ok(Ok(Err(e))) => {
                    let mut status = server.status();
                    status.status = ServerState::Error;
                    status.error = Some(e.to_string());
                    ServerTools {
                        status,
                        tools: known,
                        remembered: from_memory,
                    }
                }
                // Still starting or listing (or the task failed): as it is now.
                Ok(Err(_)) | Err(_) => as_it_is(known, from_memory),
            }
        });
        futures::future::join_all(asks).await
    }

    /// Stops every server and terminates their process groups.
    pub async fn shutdown(&self) {
        futures::future::join_all(self.servers().iter().map(|s| s.stop())).await;
    }
}
