//! One tool call: the scope check, the dispatch to Offload's own tools or to an upstream tool
//! listed directly, the audit event, and the protocol error a missing client capability becomes.

use rmcp::model::CallToolRequestParams;
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};

use super::marks::{MissingCapability, ScriptRun};
use super::{OffloadServer, answer, audit, direct, scopes, tools};
use crate::events::EventKind;

impl OffloadServer {
    /// The upstream tool listed under `name`. A name not listed now may belong to a server
    /// still starting or listing again (its tools are not known yet): those servers are
    /// waited for, each up to its start timeout, and the name looked up once more. Only
    /// unknown names wait.
    async fn direct_tool(&self, name: &str) -> Option<crate::gateway::Exposed> {
        if let Some(found) = self.exposure().await.find(name) {
            return Some(found.clone());
        }
        if let Some(listed) = self.still_offered(name).await {
            return Some(listed);
        }
        let starting: Vec<_> = self
            .engine
            .pool
            .servers()
            .iter()
            .filter(|s| !s.entry().disabled && s.cached_tools().is_none())
            .filter(|s| {
                use crate::upstream::ServerState::{Idle, Ready, Starting};
                matches!(s.status().status, Starting | Idle | Ready)
            })
            .cloned()
            .collect();
        if starting.is_empty() {
            return None;
        }
        futures::future::join_all(starting.iter().map(|s| s.tools())).await;
        self.exposure().await.find(name).cloned()
    }

    /// An upstream tool listed to this session earlier under `name`, while its server still
    /// offers it (as it lists it now, waiting for its start or listing) and the user
    /// has neither turned it off nor has it changed since they approved it.
    async fn still_offered(&self, name: &str) -> Option<crate::gateway::Exposed> {
        let mut listed = self.session.shown.find(name)?;
        let server = self.engine.pool.get(&listed.server).ok()?;
        if server.entry().disabled {
            return None;
        }
        // As the server lists it now (asked again when its list changed), not as it was shown.
        let tools = match server.cached_tools() {
            Some(tools) => tools,
            None => server.tools().await.ok()?,
        };
        listed.tool = tools.iter().find(|t| t.name == listed.tool.name)?.clone();
        crate::available::refusal(&self.engine, &listed.server, &listed.tool)
            .is_none()
            .then_some(listed)
    }

    /// Serves a call: a span of the client's trace when it sent one (`_meta.traceparent`, or
    /// the HTTP `traceparent` header), or when spans are exported.
    pub(super) async fn serve_call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CallToolResult, McpError> {
        let parent = context
            .meta
            .get_traceparent()
            .map(str::to_owned)
            .or_else(|| {
                let parts = context.extensions.get::<http::request::Parts>()?;
                Some(parts.headers.get("traceparent")?.to_str().ok()?.to_owned())
            });
        let Some(span) = crate::traces::Span::serving(parent.as_deref(), &request.name) else {
            return self.serve_call_traced(request, context).await;
        };
        let result = span.scope(self.serve_call_traced(request, context)).await;
        span.end(&result);
        result
    }

    async fn serve_call_traced(
        &self,
        request: CallToolRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CallToolResult, McpError> {
        let missing = MissingCapability::default();
        context.extensions.insert(missing.clone());
        let script = ScriptRun::default();
        context.extensions.insert(script.clone());
        let engine = &self.engine;
        let started = std::time::Instant::now();
        let args = request.arguments;
        let mut event = audit::start(
            &request.name,
            tools::event_kind(&request.name, args.as_ref()),
            args.as_ref(),
            &context,
        );
        // A name that is not one of Offload's own may be an upstream tool listed directly.
        let own = tools::find(&request.name);
        let direct_tool = if own.is_some() {
            None
        } else {
            self.direct_tool(&request.name).await
        };
        let denied = scopes::refusal(
            &context.extensions,
            &request.name,
            &tools::scopes_needed(&request.name, args.as_ref()),
        );
        let result = match request.name.as_ref() {
            _ if denied.is_some() => answer::error(denied.as_ref().expect("matched above")),
            _ if let Some(tool) = own => (tool.call)(engine, args, &context).await?,
            _ if direct_tool.is_some() => {
                let exposed = direct_tool.expect("matched above");
                event.kind = EventKind::Direct;
                event.server = Some(exposed.server.clone());
                event.upstream_tool = Some(exposed.tool.name.to_string());
                direct::call(engine, &exposed, args, &context).await
            }
            // An upstream tool held for review or turned off, called by its direct name: the
            // model is told why (`tool_changed`: ask the user), not "unknown tool".
            other if let Some(refused) = crate::available::refusal_by_name(engine, other) => {
                answer::error(&refused)
            }
            other => {
                return Err(McpError::invalid_params(
                    format!(
                        "unknown tool '{other}': not one of Offload's tools ({}) nor an upstream tool listed to this client (it may be turned off or held for review; see tools/list)",
                        self.tools
                            .iter()
                            .map(|t| t.name.as_ref())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    None,
                ));
            }
        };
        let run = script.0.load(std::sync::atomic::Ordering::Relaxed);
        event.script = (run != 0).then_some(run);
        let file_bytes = event
            .file
            .as_deref()
            .filter(|_| matches!(event.kind, EventKind::FileContent | EventKind::Batch))
            .and_then(|f| engine.roots().resolve(f, crate::roots::Access::Read).ok())
            .and_then(|r| std::fs::metadata(&r.path).ok())
            .map(|m| m.len());
        engine
            .events
            .emit(audit::finish(event, &result, started, file_bytes));
        // The upstream needed a capability this client did not declare: that stays the
        // protocol's error (-32021), so the client learns what to declare.
        let refused = missing.0.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(refused) = refused
            && result.is_error == Some(true)
        {
            return Err(refused);
        }
        Ok(result)
    }
}
