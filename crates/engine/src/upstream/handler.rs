//! Offload's client side of one upstream connection: it drops the cached tool list when the
//! upstream says it changed, passes on what it announces about its prompts and resources,
//! answers `roots/list` with Offload's allowed directories, and hands the upstream's sampling
//! and elicitation requests to the client whose call the upstream is serving. (Progress and
//! log messages are forwarded by `progress::Forwarding`, in order.)
#![allow(deprecated)] // sampling: deprecated by 2026-07-28 (SEP-2577), still used on older revisions

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ElicitationCapability, FormElicitationCapability,
    Implementation, InputRequest, ListRootsResult, RootsCapabilities, SamplingCapability, Tool,
    UrlElicitationCapability,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ClientHandler, ErrorData as McpError, RoleClient};

use super::callers::{Caller, Callers};

/// The cached tool list of one connection.
#[derive(Default)]
pub struct ToolCache {
    tools: Mutex<Option<Arc<Vec<Tool>>>>,
    generation: AtomicU64,
}

impl ToolCache {
    pub fn get(&self) -> Option<Arc<Vec<Tool>>> {
        self.tools.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// Stores a list fetched when the cache was at `generation`, unless it changed since.
    pub fn store(&self, generation: u64, tools: Arc<Vec<Tool>>) {
        let mut slot = self.tools.lock().unwrap_or_else(|p| p.into_inner());
        if self.generation() == generation {
            *slot = Some(tools);
        }
    }

    pub fn invalidate(&self) {
        let mut slot = self.tools.lock().unwrap_or_else(|p| p.into_inner());
        self.generation.fetch_add(1, Ordering::SeqCst);
        *slot = None;
    }
}

pub struct UpstreamHandler {
    pub server: String,
    pub tools: Arc<ToolCache>,
    /// Told when the upstream's tools change (clients that list them are told in turn).
    pub pool: std::sync::Weak<super::PoolContext>,
    /// The client calls in flight on this upstream.
    pub callers: Arc<Callers>,
    /// Whether the server is offered Offload's allowed directories as roots.
    pub offers_roots: bool,
}

impl UpstreamHandler {
    /// The client to hand a request to, or the error the upstream gets when none can answer:
    /// `-32021` (missing required client capability, naming it) when the clients waiting on
    /// this server did not declare it, `-32601` when none is waiting.
    fn answerer(
        &self,
        what: &str,
        can: impl Fn(&ClientCapabilities) -> bool,
        required: impl FnOnce() -> ClientCapabilities,
    ) -> Result<Arc<Caller>, McpError> {
        if let Some(caller) = self
            .callers
            .latest(|c| c.capabilities.as_ref().is_some_and(&can))
        {
            return Ok(caller);
        }
        tracing::info!(server = %self.server, "{what} refused: no client call in flight can answer it");
        if let Some(caller) = self.callers.latest(|_| true) {
            let mut refused = McpError::missing_required_client_capability(required());
            refused.message = format!(
                "{what}: the client of Offload whose call this server is serving did not declare the capability it needs"
            )
            .into();
            if let Some(missing) = &caller.missing {
                *missing.lock().unwrap_or_else(|p| p.into_inner()) = Some(refused.clone());
            }
            return Err(refused);
        }
        Err(McpError::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            format!(
                "{what}: no client of Offload is waiting on this server, so none can answer it"
            ),
            None,
        ))
    }

    fn notice(&self, notice: super::Notice) {
        if let Some(pool) = self.pool.upgrade() {
            pool.notice(notice);
        }
    }
}

/// Asks a 2026-07-28 client through the call's `input_required` rounds; its answer as `T`.
async fn ask<T: serde::de::DeserializeOwned>(
    asks: &crate::rounds::Asks,
    request: InputRequest,
) -> Result<T, McpError> {
    let (reply, answer) = tokio::sync::oneshot::channel();
    asks.send(crate::rounds::Ask { request, reply })
        .map_err(|_| McpError::internal_error("the client's call has ended", None))?;
    let answer = answer.await.map_err(|_| {
        McpError::internal_error(
            "the client did not answer (it retried without an answer, or gave up)",
            None,
        )
    })?;
    serde_json::from_value(answer).map_err(|e| {
        McpError::invalid_params(format!("the client's answer is malformed: {e}"), None)
    })
}

/// What an upstream asks of Offload's clients, answered the same way whether it asks with a
/// request (2025-11-25) or in an `input_required` result (2026-07-28).
impl UpstreamHandler {
    async fn roots(&self) -> Result<ListRootsResult, McpError> {
        let roots = match self.pool.upgrade() {
            Some(pool) if self.offers_roots => pool.roots.load().as_ref().clone(),
            _ => Vec::new(),
        };
        Ok(ListRootsResult::new(roots))
    }

    async fn sample(
        &self,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, McpError> {
        let caller = self.answerer(
            "sampling/createMessage",
            |c| c.sampling.is_some(),
            || ClientCapabilities::builder().enable_sampling().build(),
        )?;
        tracing::info!(server = %self.server, "relaying sampling/createMessage to the client");
        if let Some(asks) = &caller.asks {
            let request =
                InputRequest::CreateMessage(rmcp::model::CreateMessageRequest::new(params));
            return ask(asks, request).await;
        }
        caller.peer.create_message(params).await.map_err(relayed)
    }

    async fn elicit(&self, request: ElicitRequestParams) -> Result<ElicitResult, McpError> {
        let url = matches!(request, ElicitRequestParams::UrlElicitationParams { .. });
        let caller = self.answerer(
            "elicitation/create",
            |c| {
                c.elicitation.as_ref().is_some_and(|e| {
                    if url {
                        e.url.is_some()
                    } else {
                        // A client that declares `elicitation: {}` supports forms (2025-06-18).
                        e.form.is_some() || e.url.is_none()
                    }
                })
            },
            || ClientCapabilities::builder().enable_elicitation().build(),
        )?;
        tracing::info!(server = %self.server, "relaying elicitation/create to the client");
        if let Some(asks) = &caller.asks {
            let request = InputRequest::Elicitation(rmcp::model::ElicitRequest::new(request));
            return ask(asks, request).await;
        }
        caller
            .peer
            .create_elicitation(request)
            .await
            .map_err(relayed)
    }

    /// Answers one question of an upstream's `input_required` result; the answer as JSON.
    pub async fn answer(&self, request: InputRequest) -> Result<serde_json::Value, McpError> {
        let json = |v: Result<serde_json::Value, serde_json::Error>| {
            v.map_err(|e| McpError::internal_error(e.to_string(), None))
        };
        match request {
            InputRequest::CreateMessage(r) => {
                json(serde_json::to_value(self.sample(r.params).await?))
            }
            InputRequest::Elicitation(r) => {
                json(serde_json::to_value(self.elicit(r.params).await?))
            }
            InputRequest::ListRoots(_) => json(serde_json::to_value(self.roots().await?)),
            _ => Err(McpError::invalid_params(
                "the server asked for input of a kind Offload does not know",
                None,
            )),
        }
    }
}

fn relayed(e: rmcp::ServiceError) -> McpError {
    match e {
        rmcp::ServiceError::McpError(e) => e,
        other => McpError::internal_error(format!("the client did not answer: {other}"), None),
    }
}

impl ClientHandler for UpstreamHandler {
    fn get_info(&self) -> ClientConfig {
        // What Offload's clients may be able to do; a request none of the waiting clients can
        // answer is refused then (`answerer`).
        let mut capabilities = ClientCapabilities::default();
        capabilities.sampling = Some(SamplingCapability::default());
        let mut elicitation = ElicitationCapability::new();
        elicitation.form = Some(FormElicitationCapability::default());
        elicitation.url = Some(UrlElicitationCapability::default());
        capabilities.elicitation = Some(elicitation);
        if self.offers_roots {
            let mut roots = RootsCapabilities::default();
            roots.list_changed = Some(true);
            capabilities.roots = Some(roots);
        }
        ClientConfig::new(
            capabilities,
            Implementation::new("offload", env!("CARGO_PKG_VERSION")),
        )
    }

    /// Offload's allowed directories, as `file://` URIs (a filesystem server behind Offload
    /// sees exactly what the user allowed).
    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, McpError> {
        self.roots().await
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, McpError> {
        self.sample(params).await
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, McpError> {
        self.elicit(request).await
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.notice(super::Notice::PromptsChanged {
            server: self.server.clone(),
        });
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.notice(super::Notice::ResourcesChanged {
            server: self.server.clone(),
        });
    }

    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.notice(super::Notice::ResourceUpdated {
            server: self.server.clone(),
            uri: params.uri,
        });
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::info!(server = %self.server, "tool list changed upstream");
        self.tools.invalidate();
        if let Some(pool) = self.pool.upgrade() {
            pool.bump();
        }
    }
}
