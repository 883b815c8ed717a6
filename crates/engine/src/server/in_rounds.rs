//! A tool call from a 2026-07-28 client, in `input_required` rounds: the call runs on a task of
//! its own and waits between rounds (`crate::rounds`); a call parked for its client's answers
//! is recorded as held here, and a retry whose call another replica holds is handed to it
//! (`crate::replicas`).

use rmcp::model::{CallToolRequestParams, CallToolResponse};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};

use super::OffloadServer;
use super::marks::Asking;

impl OffloadServer {
    /// Starts the call, or resumes the one the client's `requestState` names, until it ends or
    /// asks again.
    pub(super) async fn in_rounds(
        &self,
        request: CallToolRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let rounds = &self.engine.rounds;
        if let Some(state) = request.request_state.clone() {
            let answers = request.input_responses.clone().unwrap_or_default();
            let Some(running) = rounds.resume(&state, answers) else {
                return self.hand_over(&state, request, context).await;
            };
            self.engine.replicas.resumed(&state);
            let outcome = rounds.wait(running, context.ct.clone()).await;
            return self.parked(outcome).await;
        }
        let (asks, asked) = tokio::sync::mpsc::unbounded_channel();
        context.extensions.insert(Asking(asks));
        // The call outlives this request (it waits for the client's answers in the next one).
        let cancel = tokio_util::sync::CancellationToken::new();
        let mut own = context.clone();
        own.ct = cancel.clone();
        let me = self.clone();
        let running = crate::rounds::Rounds::start(
            async move { me.serve_call(request, own).await },
            asked,
            cancel,
        );
        let outcome = rounds.wait(running, context.ct.clone()).await;
        self.parked(outcome).await
    }

    /// The client's answer; a call parked for its answers is recorded as held here, so that
    /// another replica the retry reaches hands it here.
    async fn parked(&self, outcome: crate::rounds::Outcome) -> Result<CallToolResponse, McpError> {
        if let crate::rounds::Outcome::InputRequired(asked) = &outcome
            && let Some(state) = &asked.request_state
        {
            self.engine.replicas.parked_here(state).await;
        }
        outcome.into_response()
    }

    /// A retry whose call is not parked here: handed to the replica holding it, when the
    /// shared state names one (once: a retry handed here is not handed on).
    async fn hand_over(
        &self,
        state: &str,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let headers = context
            .extensions
            .get::<http::request::Parts>()
            .map(|p| p.headers.clone())
            .unwrap_or_default();
        if !headers.contains_key(crate::replicas::HANDED_OVER)
            && let Some(holder) = self.engine.replicas.holder(state).await
        {
            tracing::debug!("a retry handed to {holder}, which holds its call");
            return self
                .engine
                .replicas
                .hand_over(&holder, request, context.meta.clone(), &headers)
                .await;
        }
        Err(McpError::invalid_params(
            "requestState names no call waiting for answers here (it ended, was let go after 10 minutes, or belongs to another Offload process)",
            None,
        ))
    }
}
