//! One upstream server's lifecycle: lazy start, a kept-open connection shared by every call,
//! restart with backoff after a crash, the cached tool list, and calls with timeout,
//! cancellation and progress forwarding.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientRequest, ServerResult, Tool,
};
use rmcp::service::{PeerRequestOptions, ServiceError};
use tokio_util::sync::CancellationToken;

use super::connect::{self, ConnectContext, Opened, StartError};
use super::handler::{ToolCache, UpstreamHandler};
use super::progress::{ProgressRoute, ProgressRoutes};
use super::stderr::StderrRing;
use super::{PoolContext, ServerState, ServerStatus, UpstreamError};
use crate::ErrorCode;
use crate::config::ServerEntry;

/// One configured upstream server.
pub struct Upstream {
    name: String,
    entry: ServerEntry,
    ctx: Arc<PoolContext>,
    slot: tokio::sync::Mutex<Option<Arc<Connection>>>,
    health: Mutex<Health>,
    stderr: Arc<StderrRing>,
    routes: Arc<ProgressRoutes>,
}

struct Connection {
    client: connect::Client,
    tools: Arc<ToolCache>,
    process_group: Option<u32>,
    _stop: Option<tokio::sync::oneshot::Sender<()>>,
    exceeded: Arc<std::sync::atomic::AtomicU64>,
    /// The stderr ring's end count when this connection started (stdio only).
    stderr_ends_at_start: u64,
}

impl Connection {
    fn is_closed(&self) -> bool {
        self.client.peer().is_transport_closed()
    }
}

impl Drop for Connection {
    /// A connection that goes away takes its whole process group with it.
    fn drop(&mut self) {
        kill_group(self.process_group);
    }
}

#[derive(Default)]
struct Health {
    state: Option<ServerState>,
    last_error: Option<String>,
    failures: u32,
    last_failure: Option<Instant>,
    tool_count: Option<usize>,
}

/// Options for one call.
#[derive(Default)]
pub struct CallOptions {
    /// Where to forward the upstream's progress notifications.
    pub progress: Option<ProgressRoute>,
    /// Cancelled when the client cancels its request.
    pub cancel: CancellationToken,
}

/// Delay before restart attempt number `failures` (1 = the first failure: restart at once).
fn backoff(failures: u32) -> Duration {
    match failures {
        0 | 1 => Duration::ZERO,
        n => Duration::from_millis(250u64.saturating_mul(1 << (n - 2).min(7)))
            .min(Duration::from_secs(30)),
    }
}

impl Upstream {
    pub(super) fn new(name: String, entry: ServerEntry, ctx: Arc<PoolContext>) -> Self {
        Self {
            name,
            entry,
            ctx,
            slot: tokio::sync::Mutex::new(None),
            health: Mutex::new(Health::default()),
            stderr: Arc::new(StderrRing::new(64 * 1024)),
            routes: Arc::new(ProgressRoutes::default()),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn entry(&self) -> &ServerEntry {
        &self.entry
    }

    pub fn timeout(&self) -> Duration {
        self.entry.timeout()
    }

    /// The most recent stderr lines of the server process.
    pub fn stderr_tail(&self, lines: usize) -> String {
        self.stderr.tail(lines)
    }

    pub fn status(&self) -> ServerStatus {
        let h = self.health.lock().unwrap_or_else(|p| p.into_inner());
        let state = if self.entry.disabled {
            ServerState::Disabled
        } else {
            h.state.unwrap_or(ServerState::Idle)
        };
        ServerStatus {
            name: self.name.clone(),
            status: state,
            tool_count: h.tool_count,
            error: if state == ServerState::Error {
                h.last_error.clone()
            } else {
                None
            },
        }
    }

    /// The last failure (start, crash, call), even when the server has recovered since.
    pub fn last_error(&self) -> Option<String> {
        self.with_health(|h| h.last_error.clone())
    }

    /// The tools of a running server, without starting it.
    pub fn tool_count(&self) -> Option<usize> {
        self.with_health(|h| h.tool_count)
    }

    fn with_health<T>(&self, f: impl FnOnce(&mut Health) -> T) -> T {
        f(&mut self.health.lock().unwrap_or_else(|p| p.into_inner()))
    }

    fn note_failure(&self, message: String) {
        self.with_health(|h| {
            h.failures += 1;
            h.last_failure = Some(Instant::now());
            h.last_error = Some(message);
            h.state = Some(ServerState::Error);
        });
    }

    fn note_success(&self) {
        self.with_health(|h| {
            h.failures = 0;
            h.state = Some(ServerState::Ready);
        });
    }

    /// The kept-open connection, started (or restarted after a crash) when needed. Concurrent
    /// callers share one start.
    async fn connection(&self) -> Result<Arc<Connection>, UpstreamError> {
        if self.entry.disabled {
            return Err(UpstreamError::Disabled {
                name: self.name.clone(),
            });
        }
        let mut slot = self.slot.lock().await;
        if let Some(conn) = slot.as_ref() {
            if !conn.is_closed() {
                return Ok(conn.clone());
            }
            let tail = self.stderr.tail(1);
            self.note_failure(if tail.is_empty() {
                "the server process exited".into()
            } else {
                format!("the server process exited; last stderr: {tail}")
            });
            if let Some(conn) = slot.take() {
                kill_group(conn.process_group);
            }
        }

        let (failures, since) =
            self.with_health(|h| (h.failures, h.last_failure.map(|t| t.elapsed())));
        let wait = backoff(failures).saturating_sub(since.unwrap_or(Duration::MAX));
        if !wait.is_zero() {
            if wait > self.timeout() {
                let last = self
                    .with_health(|h| h.last_error.clone())
                    .unwrap_or_default();
                return Err(UpstreamError::Unavailable {
                    name: self.name.clone(),
                    message: format!("{last} (next start attempt in {} s)", wait.as_secs().max(1)),
                    code: ErrorCode::ServerUnavailable,
                });
            }
            tokio::time::sleep(wait).await;
        }

        self.with_health(|h| h.state = Some(ServerState::Starting));
        let stderr_ends_at_start = self.stderr.ends();
        let started = tokio::time::timeout(self.timeout(), self.open()).await;
        let result = match started {
            Ok(Ok(opened)) => Ok(opened),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(StartError {
                code: ErrorCode::ServerUnavailable,
                message: format!(
                    "it did not finish starting within {} s",
                    self.timeout().as_secs()
                ),
            }),
        };
        match result {
            Ok((opened, tools)) => {
                let conn = Arc::new(Connection {
                    client: opened.client,
                    tools,
                    process_group: opened.process_group,
                    _stop: opened.stop,
                    exceeded: opened.exceeded,
                    stderr_ends_at_start,
                });
                self.with_health(|h| h.state = Some(ServerState::Ready));
                *slot = Some(conn.clone());
                Ok(conn)
            }
            Err(e) => {
                self.note_failure(e.message.clone());
                Err(UpstreamError::Unavailable {
                    name: self.name.clone(),
                    message: e.message,
                    code: e.code,
                })
            }
        }
    }

    async fn open(&self) -> Result<(Opened, Arc<ToolCache>), StartError> {
        let transport = self.entry.transport(&self.name)?;
        let tools = Arc::new(ToolCache::default());
        let handler = UpstreamHandler {
            server: self.name.clone(),
            tools: tools.clone(),
        };
        let ctx = ConnectContext {
            answer_limit: self
                .ctx
                .answer_limit
                .load(std::sync::atomic::Ordering::Relaxed),
            name: &self.name,
            secrets: self.ctx.secrets.as_ref(),
            search_path: &self.ctx.search_path,
            stderr: self.stderr.clone(),
            routes: self.routes.clone(),
            handler,
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
        self.with_health(|h| h.tool_count = Some(tools.len()));
        self.note_success();
        Ok(tools)
    }

    /// Calls `tool` with `arguments` on the kept-open connection.
    pub async fn call(
        &self,
        tool: &str,
        arguments: Option<rmcp::model::JsonObject>,
        options: CallOptions,
    ) -> Result<CallToolResult, UpstreamError> {
        let conn = self.connection().await?;
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = arguments;
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let peer = conn.client.peer().clone();
        let handle = peer
            .send_request_with_option(request, PeerRequestOptions::with_timeout(self.timeout()))
            .await
            .map_err(|e| self.service_error(e))?;
        let id = handle.id.clone();
        let _route = options
            .progress
            .map(|route| self.routes.register(handle.progress_token.clone(), route));

        let answer = tokio::select! {
            answer = handle.await_response() => answer,
            () = options.cancel.cancelled() => {
                let cancel = CancelledNotificationParam::new(Some(id), Some("cancelled by the client".into()));
                let _ = peer.notify_cancelled(cancel).await;
                return Err(UpstreamError::Cancelled { name: self.name.clone() });
            }
        };
        match answer {
            Ok(ServerResult::CallToolResult(mut result)) => {
                self.note_success();
                // Servers on older revisions omit `resultType`; clients on 2026-07-28 require
                // it (rmcp drops it again for clients on older revisions).
                result.result_type.get_or_insert(rmcp::model::ResultType::COMPLETE);
                Ok(result)
            }
            Ok(_) => Err(UpstreamError::Rpc {
                name: self.name.clone(),
                rpc_code: -32603,
                message: "the server asked for interactive input or a task, which Offload does not relay yet".into(),
            }),
            Err(ServiceError::TransportClosed)
                if conn.exceeded.load(std::sync::atomic::Ordering::SeqCst) > 0 =>
            {
                let limit = conn.exceeded.load(std::sync::atomic::Ordering::SeqCst);
                Err(UpstreamError::Rpc {
                    name: self.name.clone(),
                    rpc_code: -32603,
                    message: format!(
                        "its answer was larger than {}, the most Offload accepts from an upstream (\"limits.maxUpstreamAnswerBytes\"); ask for less (filters, paging), or have the user raise the limit",
                        crate::store::human_bytes(limit)
                    ),
                })
            }
            Err(ServiceError::TransportClosed) if conn.process_group.is_some() => {
                // The process died: let its last words reach the stderr ring first.
                self.stderr
                    .wait_end(conn.stderr_ends_at_start, Duration::from_millis(500))
                    .await;
                Err(self.service_error(ServiceError::TransportClosed))
            }
            Err(e) => Err(self.service_error(e)),
        }
    }

    fn service_error(&self, e: ServiceError) -> UpstreamError {
        let name = self.name.clone();
        match e {
            ServiceError::McpError(err) => UpstreamError::Rpc {
                name,
                rpc_code: err.code.0,
                message: err.message.into_owned(),
            },
            ServiceError::Timeout { .. } => UpstreamError::Timeout {
                name,
                secs: self.timeout().as_secs(),
            },
            ServiceError::Cancelled { .. } => UpstreamError::Cancelled { name },
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                UpstreamError::Closed {
                    name,
                    stderr: self.stderr.tail(3),
                }
            }
            other => UpstreamError::Rpc {
                name,
                rpc_code: -32603,
                message: other.to_string(),
            },
        }
    }

    /// Closes the connection and terminates the server's process group.
    pub async fn stop(&self) {
        let conn = self.slot.lock().await.take();
        if let Some(conn) = conn {
            let group = conn.process_group;
            if let Ok(mut conn) = Arc::try_unwrap(conn) {
                let _ = conn.client.close_with_timeout(Duration::from_secs(2)).await;
            }
            // Also when other holders keep the connection alive a little longer.
            kill_group(group);
        }
        self.with_health(|h| h.state = None);
    }
}

/// SIGKILL to a whole process group (children and grandchildren, such as `npx`'s node).
pub(super) fn kill_group(group: Option<u32>) {
    #[cfg(unix)]
    if let Some(pgid) = group.and_then(|g| i32::try_from(g).ok()) {
        use nix::sys::signal::{Signal, killpg};
        let _ = killpg(nix::unistd::Pid::from_raw(pgid), Signal::SIGKILL);
    }
    #[cfg(not(unix))]
    let _ = group;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_starts_at_zero_and_is_capped() {
        assert_eq!(backoff(1), Duration::ZERO);
        assert_eq!(backoff(2), Duration::from_millis(250));
        assert_eq!(backoff(3), Duration::from_millis(500));
        assert_eq!(backoff(40), Duration::from_secs(30));
    }
}
