//! The MCP server Offload offers to clients: one [`OffloadServer`] a session, answering MCP's
//! requests (tools, resources, prompts, completions, subscriptions, logging) from the engine.
//! Each of Offload's tools is one module of `tools`; a session's state is `session`'s, serving
//! it over a transport `serve`'s.

mod announce;
mod answer;
mod audit;
mod direct;
mod dispatch;
pub(crate) mod downloads;
mod file_text;
mod file_work;
mod in_rounds;
mod marks;

/// The text renderings of the file tools' answers (shared with the human CLI).
pub mod text {
    pub use super::file_text::{read_text as read, schema_text as schema, summary_text as summary};
}
mod params;
mod prompts;
mod relay;
mod resources;
mod scopes;
mod search;
mod serve;
mod session;
mod shown;
mod store;
mod tools;
mod typescript;
mod upstream_resources;
mod upstreams;

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult,
    GetPromptRequestParams, GetPromptResponse, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
    SubscribeRequestParams, Tool, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};

use crate::Engine;
pub use direct::{ListingCost, listing_cost};
pub(crate) use session::Session;

const INSTRUCTIONS: &str = "Offload connects you to upstream MCP servers and keeps large data out \
of your context. Find a tool with list_available_tools (use `query`), check its arguments with \
list_tool_details, and call it with call_tool. Paths must lie in the directories that \
list_allowed_directories shows.";

/// One MCP session's view of the shared engine. Cheap to clone: every session shares the
/// engine and its upstream pool.
#[derive(Clone)]
pub struct OffloadServer {
    engine: Arc<Engine>,
    tools: Arc<Vec<Tool>>,
    /// This client's choice of how upstream tools are shown; the configuration's when `None`.
    expose: Option<crate::gateway::Expose>,
    /// The last exposure computed, with what it was computed from (see `exposure`).
    exposed: Arc<std::sync::Mutex<Option<CachedExposure>>>,
    session: Session,
}

/// What an exposure depends on: the pool's and the configuration's change counters, the
/// pins file's modification time (approvals in other processes) and the mode asked for.
type ExposureKey = (
    u64,
    u64,
    crate::shared_doc::Stamp,
    Option<crate::gateway::Expose>,
);

/// An exposure and what it was computed from.
type CachedExposure = (ExposureKey, Arc<crate::gateway::Exposure>);

impl OffloadServer {
    pub fn new(engine: Arc<Engine>) -> Self {
        Self {
            engine,
            tools: tools::shared_definitions(),
            expose: None,
            exposed: Arc::default(),
            session: Session::new(),
        }
    }

    /// A server for another session (or stateless request) of the same door: a session of its
    /// own, the tool definitions and the last exposure shared (a stateless client's direct call
    /// does not compute what is listed again each time).
    pub fn for_new_session(&self) -> Self {
        Self {
            session: Session::new(),
            ..self.clone()
        }
    }

    /// Shows upstream tools as `expose` says instead of as the configuration does.
    pub fn with_expose(mut self, expose: Option<crate::gateway::Expose>) -> Self {
        self.expose = expose;
        // What was listed under another choice is not this one's.
        self.exposed = Arc::default();
        self
    }

    /// What this session lists, computed again only when something it depends on changed (a
    /// direct call looks it up, and must cost no more than `call_tool`). The mode is the one
    /// the session settled on at its first look while the configuration stays the same: `auto`
    /// never changes mode under a client because more servers started.
    async fn exposure(&self) -> Arc<crate::gateway::Exposure> {
        let config = *self.engine.watch().borrow();
        let expose = self.session.shown.mode(config).or(self.expose);
        let key: ExposureKey = (
            *self.engine.pool.watch().borrow(),
            config,
            self.engine.pins.stamp(),
            expose,
        );
        if let Some((k, e)) = self
            .exposed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            && *k == key
        {
            self.session.shown.settle(config, e.mode);
            return e.clone();
        }
        let exposure = Arc::new(
            direct::exposure(
                &self.engine,
                expose,
                &self.tools,
                crate::upstream::Listing::Client,
            )
            .await,
        );
        self.session.shown.settle(config, exposure.mode);
        if exposure.mode == crate::gateway::Mode::Meta {
            search::prepare(&self.engine);
        }
        // Computing may have started servers (and changed the counters): key it by what it saw
        // before, so the next look computes once more and then settles.
        *self.exposed.lock().unwrap_or_else(|p| p.into_inner()) = Some((key, exposure.clone()));
        exposure
    }
}

/// Refuses a resource request whose caller lacks the `read` scope (Offload served over HTTP).
fn read_allowed(context: &RequestContext<RoleServer>, what: &str) -> Result<(), McpError> {
    match scopes::refusal(&context.extensions, what, &[crate::access::Scope::Read]) {
        None => Ok(()),
        Some(e) => Err(McpError::invalid_request(
            e.message.clone(),
            Some(serde_json::json!({ "error": e.to_json() })),
        )),
    }
}

impl ServerHandler for OffloadServer {
    #[allow(deprecated)] // logging: deprecated by 2026-07-28, relayed for older revisions
    fn get_info(&self) -> ServerConfig {
        let mut implementation = Implementation::new("offload", env!("CARGO_PKG_VERSION"));
        implementation.title = Some("Offload".into());
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_prompts()
                .enable_prompts_list_changed()
                .enable_resources()
                .enable_resources_list_changed()
                .enable_resources_subscribe()
                .enable_completions()
                .enable_logging()
                .build(),
        )
        .with_server_info(implementation)
        .with_instructions(match self.engine.config_path() {
            Some(path) => format!(
                "{INSTRUCTIONS} Servers and directories come from {}.",
                path.display()
            ),
            None => INSTRUCTIONS.to_owned(),
        })
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let exposure = self.exposure().await;
        self.session.shown.listed(&exposure.tools);
        Ok(ListToolsResult::with_all_items(direct::listing(
            &self.tools,
            &exposure,
            &self.engine,
        )))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        read_allowed(&context, "resources/list")?;
        // Responses other Offload processes stored in shared bucket roots.
        self.engine
            .store
            .refresh_buckets(&self.engine.roots())
            .await;
        let server = self.clone();
        let (mut page, stored) =
            tokio::task::spawn_blocking(move || server.list_resources_page(request))
                .await
                .map_err(|e| McpError::internal_error(e.to_string(), None))??;
        // The upstreams' resources come with the first page of stored responses.
        if let Some(stored) = stored {
            page.resources.extend(
                upstream_resources::list(&self.engine.pool, &self.engine.routes, &stored).await,
            );
        }
        Ok(page)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        read_allowed(&context, "resources/templates/list")?;
        let (templates, fresh) =
            upstream_resources::list_templates(&self.engine.pool, &self.engine.routes).await;
        let mut result = ListResourceTemplatesResult::with_all_items(templates);
        if let Some(fresh) = fresh {
            result.ttl_ms = Some(fresh.ttl_ms);
            result.cache_scope = Some(fresh.scope());
        }
        Ok(result)
    }

    #[allow(deprecated)] // resources/subscribe: what clients before 2026-07-28 use
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        read_allowed(&context, "resources/subscribe")?;
        if self.owns(&request.uri).await? {
            return Ok(()); // a stored response never changes
        }
        if self.session.subscriptions().contains_key(&request.uri) {
            return Ok(());
        }
        let route =
            upstream_resources::subscribe(&self.engine.pool, &self.engine.routes, &request.uri)
                .await?;
        self.session.subscriptions().insert(request.uri, route);
        Ok(())
    }

    #[allow(deprecated)] // resources/unsubscribe: what clients before 2026-07-28 use
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let route = self.session.subscriptions().remove(&request.uri);
        match route {
            Some(route) => {
                upstream_resources::unsubscribe(&self.engine.pool, &self.engine.routes, &route)
                    .await
            }
            None => Ok(()),
        }
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        read_allowed(&context, "prompts/list")?;
        Ok(prompts::list(&self.engine.pool, &self.engine.routes).await)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        read_allowed(&context, "prompts/get")?;
        let started = std::time::Instant::now();
        let arguments = serde_json::json!(request.arguments);
        let (answer, route) = prompts::get(&self.engine.pool, &self.engine.routes, request).await?;
        Ok(match answer {
            GetPromptResponse::Complete(result) => GetPromptResponse::Complete(
                store::prompt_within_budget(
                    &self.engine,
                    &route.server,
                    &route.inner,
                    arguments,
                    result,
                    started,
                )
                .await,
            ),
            other => other,
        })
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        read_allowed(&context, "completion/complete")?;
        prompts::complete(&self.engine.pool, &self.engine.routes, request).await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        read_allowed(&context, "resources/read")?;
        let engine = self.engine.clone();
        if crate::objects::is_object_url(&request.uri) {
            engine.store.refresh_buckets(&engine.roots()).await;
        }
        let (reader, uri) = (engine.clone(), request.uri.clone());
        let stored = tokio::task::spawn_blocking(move || resources::read(&reader, &uri))
            .await
            .map_err(|e| McpError::internal_error(e.to_string(), None))??;
        if let Some(read) = stored {
            return Ok(read.into());
        }
        let started = std::time::Instant::now();
        let uri = request.uri.clone();
        let (answer, server) =
            upstream_resources::read(&engine.pool, &engine.routes, request).await?;
        Ok(match answer {
            ReadResourceResponse::Complete(result) => ReadResourceResponse::Complete(
                store::resource_within_budget(&engine, &server, &uri, result, started).await,
            ),
            other => other,
        })
    }

    /// Tells this client when a response is stored (by any session of this engine).
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // A script worker started and confined ahead of this client's first script.
        self.engine.scripts.warm_up();
        let to = announce::To::Session(context.peer);
        announce::start(self.clone(), to, self.session.subscriptions.clone());
    }

    /// What a 2026-07-28 client asks to hear about on a `subscriptions/listen` stream: all of
    /// it is offered (the SDK keeps what Offload declares).
    fn accepted_subscription_filter(
        &self,
        requested: &rmcp::model::SubscriptionFilter,
    ) -> Option<rmcp::model::SubscriptionFilter> {
        Some(requested.clone())
    }

    /// One `subscriptions/listen` stream: list changes and updates of the resources it names
    /// (upstream ones subscribed upstream while it listens), until the client ends it.
    async fn listen(&self, context: rmcp::service::SubscriptionContext) -> Result<(), McpError> {
        announce::listen(self.clone(), context).await
    }

    /// The level of upstream log messages this session gets (relayed with the server as logger).
    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        *self.session.level.lock().unwrap_or_else(|p| p.into_inner()) = Some(request.level);
        self.engine.pool.set_level(request.level);
        Ok(())
    }

    /// A client on 2026-07-28 is asked an upstream's questions in `input_required` rounds
    /// (`in_rounds`).
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        context.extensions.insert(self.session.clone());
        let in_rounds = context
            .protocol_version()
            .is_some_and(|v| v.to_string().as_str() >= "2026-07-28");
        if !in_rounds {
            return self.serve_call(request, context).await.map(Into::into);
        }
        self.in_rounds(request, context).await
    }
}

impl OffloadServer {
    fn list_resources_page(
        &self,
        request: Option<PaginatedRequestParams>,
    ) -> Result<
        (
            ListResourcesResult,
            Option<std::collections::HashSet<String>>,
        ),
        McpError,
    > {
        resources::list(
            &self.engine.store,
            request.as_ref().and_then(|r| r.cursor.as_deref()),
        )
    }

    /// Whether `uri` is a stored response's (the records index is read off the async threads).
    pub(super) async fn owns(&self, uri: &str) -> Result<bool, McpError> {
        let (engine, uri) = (self.engine.clone(), uri.to_owned());
        tokio::task::spawn_blocking(move || resources::owns(&engine.store, &uri))
            .await
            .map_err(|e| McpError::internal_error(e.to_string(), None))
    }
}

pub use offload_formats::clip::clip;

/// Offload's own tool definitions.
pub fn tool_definitions() -> Vec<Tool> {
    tools::definitions()
}
