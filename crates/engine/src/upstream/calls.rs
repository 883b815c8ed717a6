//! A tool call on a server's kept-open connection: timeout reset by progress, cancellation,
//! progress routing, 2026-07-28 `input_required` rounds answered through the client, and the
//! resource links its answers hand out (so a read of one goes back to this server).

use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientRequest, ServerResult,
};
use rmcp::service::{PeerRequestOptions, ServiceError};

use super::UpstreamError;
use super::supervisor::{CallOptions, Upstream};

/// The most `input_required` rounds one call may take.
const MAX_INPUT_ROUNDS: usize = 10;

impl Upstream {
    /// Whether one of this server's tools returned a link to `uri` (the last 1,000 links).
    pub fn handed_out(&self, uri: &str) -> bool {
        self.links
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .any(|l| l == uri)
    }

    fn note_links(&self, result: &CallToolResult) {
        let mut links = self.links.lock().unwrap_or_else(|p| p.into_inner());
        for link in result.content.iter().filter_map(|c| c.as_resource_link()) {
            if !links.contains(&link.uri) {
                if links.len() >= 1000 {
                    links.pop_front();
                }
                links.push_back(link.uri.clone());
            }
        }
    }

    /// Calls `tool` with `arguments` on the kept-open connection: a span of the trace the
    /// call is part of, if any, whose context goes along (`_meta.traceparent`).
    pub async fn call(
        &self,
        tool: &str,
        arguments: Option<rmcp::model::JsonObject>,
        options: CallOptions,
    ) -> Result<CallToolResult, UpstreamError> {
        let span = crate::traces::Span::upstream(&self.name, tool);
        let traceparent = span.as_ref().map(|s| s.context().traceparent());
        let before = self.confined().then(|| Seen {
            stderr: self.stderr.pushed(),
            hosts: self.refusals.hosts(),
        });
        let mut result = self
            .call_traced(tool, arguments, options, traceparent)
            .await;
        if let Some(before) = before {
            self.tell_refusals(&mut result, before).await;
        }
        if let Some(span) = span {
            span.end(&result);
        }
        result
    }

    /// Whether this server is started confined (a stdio server without `"sandbox": "off"`):
    /// read off its entry, as every call asks.
    fn confined(&self) -> bool {
        let entry = self.entry();
        entry.command.is_some() && !matches!(entry.sandbox, Some(crate::config::Sandbox::Off))
    }

    /// A confined server's call that failed right after a refusal Offload saw — a host its
    /// proxy turned away, a path its stderr says it could not open — says so in its error,
    /// with the `sandbox` change that allows it: the model can tell the user, instead of
    /// guessing at a bug.
    async fn tell_refusals(
        &self,
        result: &mut Result<CallToolResult, UpstreamError>,
        before: Seen,
    ) {
        let failed = match result {
            Ok(r) => r.is_error == Some(true),
            Err(
                UpstreamError::Rpc { .. }
                | UpstreamError::Unavailable { .. }
                | UpstreamError::Closed { .. },
            ) => true,
            Err(_) => false,
        };
        if !failed {
            return;
        }
        // Its stderr is read apart from its answers: a line written just before may lag.
        tokio::time::sleep(Duration::from_millis(50)).await;
        let hosts = self.refusals.hosts();
        let host = hosts.iter().find(|h| {
            !before
                .hosts
                .iter()
                .any(|b| b.host == h.host && b.port == h.port && b.times == h.times)
        });
        let advice = match host {
            Some(h) => Some(super::refusals::host_advice(&h.host, h.port)),
            None => super::refusals::advice(
                self.stderr
                    .fresh(Some(before.stderr))
                    .iter()
                    .map(String::as_str),
            ),
        };
        let Some(advice) = advice else {
            return;
        };
        match result {
            Ok(r) => r.content.push(rmcp::model::ContentBlock::text(advice)),
            Err(
                UpstreamError::Rpc { message, .. }
                | UpstreamError::Unavailable { message, .. }
                | UpstreamError::Closed {
                    stderr: message, ..
                },
            ) => {
                message.push_str(&format!(". {advice}"));
            }
            Err(_) => {}
        }
    }

    async fn call_traced(
        &self,
        tool: &str,
        arguments: Option<rmcp::model::JsonObject>,
        options: CallOptions,
        traceparent: Option<String>,
    ) -> Result<CallToolResult, UpstreamError> {
        let conn = self.connection().await?;
        let log_level = options.caller.as_ref().and_then(|c| c.log_level);
        let _caller = options.caller.map(|c| self.callers.register(c));
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = arguments;
        if let Some(traceparent) = &traceparent {
            params
                .meta
                .get_or_insert_with(Default::default)
                .set_traceparent(traceparent);
        }
        // On 2026-07-28 a server logs only for requests that ask: ask at the caller's level.
        if let Some(level) = log_level {
            params
                .meta
                .get_or_insert_with(Default::default)
                .set_log_level(level);
        }
        if options.as_task {
            let result = self
                .call_as_task(&conn, params, options.progress, options.cancel)
                .await?;
            self.note_links(&result);
            return Ok(result);
        }
        let peer = conn.client.peer().clone();
        // A server on 2026-07-28 asks its questions in an `input_required` result: Offload
        // answers them (through the client, as it does requests) and calls again, with the
        // answers and the server's `requestState`, on the same connection.
        let mut rounds = 0;
        let answer = loop {
            let request = ClientRequest::CallToolRequest(CallToolRequest::new(params.clone()));
            let handle = peer
                .send_request_with_option(
                    request,
                    // The timer restarts with each progress notification: a long tool that
                    // reports progress is not cut off, a silent one is.
                    PeerRequestOptions::with_timeout(self.timeout()).reset_timeout_on_progress(),
                )
                .await
                .map_err(|e| self.service_error(e))?;
            let id = handle.id.clone();
            let route = options
                .progress
                .clone()
                .map(|route| self.routes.register(handle.progress_token.clone(), route));
            let answer = tokio::select! {
                answer = handle.await_response() => answer,
                () = options.cancel.cancelled() => {
                    let cancel = CancelledNotificationParam::new(Some(id), Some("cancelled by the client".into()));
                    let _ = peer.notify_cancelled(cancel).await;
                    return Err(UpstreamError::Cancelled { name: self.name.clone() });
                }
            };
            if let Some(route) = &route {
                route.flush().await;
            }
            let Ok(ServerResult::InputRequiredResult(asked)) = answer else {
                break answer;
            };
            rounds += 1;
            if rounds > MAX_INPUT_ROUNDS {
                return Err(UpstreamError::Rpc {
                    name: self.name.clone(),
                    rpc_code: -32603,
                    data: None,
                    message: format!(
                        "it asked for input more than {MAX_INPUT_ROUNDS} times in one call"
                    ),
                });
            }
            let mut answers = rmcp::model::InputResponses::new();
            for (key, question) in asked.input_requests.unwrap_or_default() {
                let answered = tokio::select! {
                    answered = conn.client.service().answer(question) => answered,
                    () = options.cancel.cancelled() => {
                        return Err(UpstreamError::Cancelled { name: self.name.clone() });
                    }
                };
                let answered = answered.map_err(|e| UpstreamError::Rpc {
                    name: self.name.clone(),
                    rpc_code: e.code.0,
                    data: e.data.clone(),
                    message: e.message.into_owned(),
                })?;
                answers.insert(key, answered);
            }
            params.input_responses = Some(answers);
            params.request_state = asked.request_state;
        };
        match answer {
            Ok(ServerResult::CallToolResult(mut result)) => {
                // Servers on older revisions omit `resultType`; clients on 2026-07-28 require
                // it (rmcp drops it again for clients on older revisions).
                result
                    .result_type
                    .get_or_insert(rmcp::model::ResultType::COMPLETE);
                self.note_links(&result);
                Ok(result)
            }
            Ok(_) => Err(UpstreamError::Rpc {
                name: self.name.clone(),
                rpc_code: -32603,
                data: None,
                message: "the server answered a tool call with a task Offload did not ask for"
                    .into(),
            }),
            Err(ServiceError::TransportClosed)
                if conn.exceeded.load(std::sync::atomic::Ordering::SeqCst) > 0 =>
            {
                let limit = conn.exceeded.load(std::sync::atomic::Ordering::SeqCst);
                Err(UpstreamError::Rpc {
                    name: self.name.clone(),
                    rpc_code: -32603,
                    data: None,
                    message: format!(
                        "its answer was larger than {}, the most Offload accepts from an upstream (\"limits.maxUpstreamAnswerBytes\"); ask for less (filters, paging), or have the user raise the limit",
                        offload_formats::units::human_bytes(limit)
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
}

/// What a confined server had been refused when a call began.
struct Seen {
    stderr: u64,
    hosts: Vec<super::refusals::Refusal>,
}
