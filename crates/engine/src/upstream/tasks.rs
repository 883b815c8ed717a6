//! Tools that run only as MCP tasks (2025-11-25 tasks, `taskSupport: "required"`): Offload
//! makes the task, waits for its result and answers with it, so clients never see the task.

use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, ClientRequest};
use tokio_util::sync::CancellationToken;

use super::UpstreamError;
use super::progress::ProgressRoute;
use super::supervisor::{Connection, Upstream};

/// How long a task Offload makes may live on the server (its `ttl`).
const TASK_TTL: Duration = Duration::from_secs(600);

impl Upstream {
    /// A call of a tool that runs only as a task (MCP 2025-11-25 tasks): `tools/call` with a
    /// `task` makes it, `tasks/result` waits for its result (the server's requests while it
    /// runs — elicitation, sampling — arrive meanwhile and are relayed like a call's), and
    /// `tasks/get` is polled beside it: each poll must answer within the server's timeout (a
    /// server that stops answering fails the call), and each status message goes to the client
    /// as progress. A client's cancellation cancels the task.
    pub(super) async fn call_as_task(
        &self,
        conn: &Connection,
        params: CallToolRequestParams,
        progress: Option<ProgressRoute>,
        cancel: CancellationToken,
    ) -> Result<CallToolResult, UpstreamError> {
        let peer = conn.client.peer().clone();
        let mut body = serde_json::to_value(&params).unwrap_or_default();
        body["task"] = serde_json::json!({ "ttl": TASK_TTL.as_millis() as u64 });
        let created = self.custom(&peer, "tools/call", body).await?;
        let task = &created["task"];
        let Some(id) = task["taskId"].as_str().map(str::to_owned) else {
            return Err(UpstreamError::Rpc {
                name: self.name().to_owned(),
                rpc_code: -32603,
                data: None,
                message: format!("it answered a task-augmented call without a task: {created}"),
            });
        };
        let poll = Duration::from_millis(task["pollInterval"].as_u64().unwrap_or(1000))
            .clamp(Duration::from_millis(100), Duration::from_secs(5));
        let ask = serde_json::json!({ "taskId": id });
        let result = self.custom_unbounded(&peer, "tasks/result", ask.clone());
        tokio::pin!(result);
        let mut step = 0.0;
        let mut last_message: Option<String> = None;
        // The first poll at once: its status is what the client sees first.
        let mut polls = tokio::time::interval(poll);
        polls.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                done = &mut result => {
                    let value = done?;
                    return serde_json::from_value::<CallToolResult>(value.clone()).map_err(|e| {
                        UpstreamError::Rpc {
                            name: self.name().to_owned(),
                            rpc_code: -32603,
                            data: None,
                            message: format!("its task result is not a tool result ({e}): {value}"),
                        }
                    });
                }
                () = cancel.cancelled() => {
                    let _ = self.custom(&peer, "tasks/cancel", ask.clone()).await;
                    return Err(UpstreamError::Cancelled { name: self.name().to_owned() });
                }
                _ = polls.tick() => {
                    let status = self.custom(&peer, "tasks/get", ask.clone()).await?;
                    let message = status["statusMessage"].as_str().map(str::to_owned);
                    if let (Some(route), Some(text)) = (&progress, &message)
                        && last_message.as_ref() != Some(text)
                    {
                        step += 1.0;
                        let mut note = rmcp::model::ProgressNotificationParam::new(route.token.clone(), step);
                        note.message = Some(text.clone());
                        let _ = route.peer.notify_progress(note).await;
                    }
                    last_message = message;
                }
            }
        }
    }

    /// A request rmcp has no type for (2025-11-25 tasks), answered within the server's timeout.
    async fn custom(
        &self,
        peer: &rmcp::Peer<rmcp::RoleClient>,
        method: &str,
        params: serde_json::Value,
    ) -> Result<serde_json::Value, UpstreamError> {
        match tokio::time::timeout(self.timeout(), self.custom_unbounded(peer, method, params))
            .await
        {
            Ok(answer) => answer,
            Err(_) => Err(UpstreamError::Timeout {
                name: self.name().to_owned(),
                secs: self.timeout().as_secs(),
            }),
        }
    }

    async fn custom_unbounded(
        &self,
        peer: &rmcp::Peer<rmcp::RoleClient>,
        method: &str,
        params: serde_json::Value,
    ) -> Result<serde_json::Value, UpstreamError> {
        let request =
            ClientRequest::CustomRequest(rmcp::model::CustomRequest::new(method, Some(params)));
        let answer = peer
            .send_request(request)
            .await
            .map_err(|e| self.service_error(e))?;
        Ok(serde_json::to_value(answer).unwrap_or_default())
    }
}
