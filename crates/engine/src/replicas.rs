//! What replicas on several machines do for each other beyond sharing documents: a 2026-07-28
//! call parked for its client's answers (`rounds`) stays in the replica that asked, for the
//! upstream call is open there; a retry that reaches another replica is handed to it.
//!
//! The state bucket names, as `rounds/<requestState>.json`, the replica holding each parked
//! call: its URL as the others reach it (`http.advertise`, else the address it serves at when
//! that is not a wildcard). The replica a retry reached sends it on as the client sent it — the
//! client's own credentials, which every replica accepts, its protocol headers and `_meta` —
//! and answers what the holder answers. A retry is handed on once at most (a holder that no
//! longer has the call says so), and only to a URL the bucket names, never one from a request.

use std::sync::OnceLock;
use std::time::Duration;

use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResponse, CallToolResult, ClientJsonRpcMessage,
    ClientRequest, GetMeta, InputRequiredResult, RequestId, RequestMetaObject,
};
use serde_json::Value;

use crate::objects::Bucket;

/// Marks a request handed on by a replica (it is not handed on again).
pub const HANDED_OVER: &str = "x-offload-handed-over";
/// A holder gets this long to answer a retry handed to it (it may wait for its upstream).
const ANSWER_WITHIN: Duration = Duration::from_secs(600);

#[derive(Default)]
pub struct Replicas {
    shared: OnceLock<Shared>,
}

struct Shared {
    /// This replica's URL as the others reach it.
    url: String,
    bucket: Bucket,
    client: reqwest::Client,
}

impl Replicas {
    /// From now on, parked calls are recorded in `bucket` as held at `url` (once; the HTTP
    /// front calls it when it serves with shared state).
    pub fn start(&self, url: String, bucket: Bucket) {
        let client = crate::crypto::http_client()
            .timeout(ANSWER_WITHIN)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap_or_default();
        if self
            .shared
            .set(Shared {
                url: url.clone(),
                bucket,
                client,
            })
            .is_ok()
        {
            tracing::info!("calls parked for a client's answers are handed here at {url}");
        }
    }

    fn record(shared: &Shared, state: &str) -> Option<object_store::path::Path> {
        plain(state).then(|| {
            shared
                .bucket
                .url
                .join("rounds")
                .join(&format!("{state}.json"))
                .key()
        })
    }

    /// Records that the call parked under `state` is held here (before the client is told).
    pub async fn parked_here(&self, state: &str) {
        let Some(shared) = self.shared.get() else {
            return;
        };
        let Some(key) = Self::record(shared, state) else {
            return;
        };
        let body = serde_json::json!({"replica": shared.url}).to_string();
        let put = shared.bucket.store.put(&key, PutPayload::from(body));
        match tokio::time::timeout(Duration::from_secs(5), put).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => tracing::warn!(
                "a parked call's replica not recorded (a retry reaching another replica fails): {e}"
            ),
            Err(_) => tracing::warn!("a parked call's replica not recorded within 5 s"),
        }
    }

    /// Forgets the record of a call resumed here (on a task of its own).
    pub fn resumed(&self, state: &str) {
        let Some(shared) = self.shared.get() else {
            return;
        };
        if let Some(key) = Self::record(shared, state) {
            let store = shared.bucket.store.clone();
            tokio::spawn(async move {
                let _ = tokio::time::timeout(Duration::from_secs(5), store.delete(&key)).await;
            });
        }
    }

    /// The other replica holding the call parked under `state`, if the bucket names one.
    pub async fn holder(&self, state: &str) -> Option<String> {
        let shared = self.shared.get()?;
        let key = Self::record(shared, state)?;
        let get = shared.bucket.store.get_opts(&key, Default::default());
        let got = tokio::time::timeout(Duration::from_secs(5), get)
            .await
            .ok()?
            .ok()?;
        let bytes = got.bytes().await.ok()?;
        let url = serde_json::from_slice::<Value>(&bytes).ok()?["replica"]
            .as_str()?
            .to_owned();
        (url != shared.url).then_some(url)
    }

    /// Hands the client's retry (`params` with its `_meta`, and the headers it came with) to
    /// the replica at `to`, and answers what that replica answers.
    pub async fn hand_over(
        &self,
        to: &str,
        params: CallToolRequestParams,
        meta: RequestMetaObject,
        headers: &http::HeaderMap,
    ) -> Result<CallToolResponse, McpError> {
        let shared = self
            .shared
            .get()
            .ok_or_else(|| McpError::internal_error("replicas share no state", None))?;
        let mut request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        *request.get_meta_mut() = meta;
        let message = ClientJsonRpcMessage::request(request, RequestId::Number(1));
        let mut forward = shared
            .client
            .post(to)
            .header(HANDED_OVER, "1")
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, "application/json, text/event-stream")
            .json(&message);
        for name in [
            "authorization",
            "mcp-protocol-version",
            "mcp-method",
            "mcp-name",
            "traceparent",
        ] {
            if let Some(value) = headers.get(name) {
                forward = forward.header(name, value);
            }
        }
        let failed = |e: String| {
            McpError::internal_error(
                format!("the replica holding this call ({to}) did not answer: {e}"),
                None,
            )
        };
        let response = forward.send().await.map_err(|e| failed(e.to_string()))?;
        let sse = response
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("text/event-stream"));
        let body = response.text().await.map_err(|e| failed(e.to_string()))?;
        let answer = if sse {
            last_message(&body)
        } else {
            Some(body.as_str())
        }
        .and_then(|text| serde_json::from_str::<Value>(text).ok())
        .ok_or_else(|| failed(format!("not a JSON-RPC answer: {}", clip(&body))))?;
        response_of(answer).map_err(|e| match e {
            Answer::Error(e) => e,
            Answer::Unreadable(why) => failed(why),
        })
    }
}

/// Whether a client's `requestState` may name a record: ours are hex, and a client's copy is
/// checked before it names a key (no separators, dots, escapes or control characters).
fn plain(state: &str) -> bool {
    !state.is_empty() && state.len() <= 128 && state.bytes().all(|b| b.is_ascii_alphanumeric())
}

enum Answer {
    Error(McpError),
    Unreadable(String),
}

/// The last JSON-RPC message of an SSE body (the response ends the stream).
fn last_message(body: &str) -> Option<&str> {
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .rfind(|d| d.contains("\"jsonrpc\""))
}

fn clip(s: &str) -> String {
    offload_formats::clip::clip(s, 300).into_owned()
}

/// A JSON-RPC answer as the call's response or its error.
fn response_of(answer: Value) -> Result<CallToolResponse, Answer> {
    if let Some(error) = answer.get("error") {
        return Err(match serde_json::from_value::<McpError>(error.clone()) {
            Ok(e) => Answer::Error(e),
            Err(e) => Answer::Unreadable(format!("an error that does not parse ({e})")),
        });
    }
    let result = answer
        .get("result")
        .cloned()
        .ok_or_else(|| Answer::Unreadable("neither a result nor an error".into()))?;
    let unreadable =
        |e: serde_json::Error| Answer::Unreadable(format!("a result that does not parse ({e})"));
    if result.get("resultType").and_then(Value::as_str) == Some("input_required") {
        serde_json::from_value::<InputRequiredResult>(result)
            .map(CallToolResponse::InputRequired)
            .map_err(unreadable)
    } else {
        serde_json::from_value::<CallToolResult>(result)
            .map(CallToolResponse::Complete)
            .map_err(unreadable)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_states_name_a_record() {
        assert!(plain("0123456789abcdef0123456789abcdef"));
        for hostile in [
            "",
            "../tokens",
            "a/b",
            "a%2Fb",
            "a.json",
            "a\\b",
            "a\u{0}b",
            "é",
            &"a".repeat(129),
        ] {
            assert!(!plain(hostile), "{hostile:?}");
        }
    }

    #[test]
    fn a_holders_answer_reads_as_the_calls_response() {
        let body = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"Hello\"}],\"resultType\":\"complete\"}}\n\n";
        let answer: Value = serde_json::from_str(last_message(body).unwrap()).unwrap();
        let Ok(CallToolResponse::Complete(r)) = response_of(answer) else {
            panic!("a complete result")
        };
        assert_eq!(r.content[0].as_text().unwrap().text, "Hello");
        let asked = serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {
            "resultType": "input_required", "requestState": "abc",
            "inputRequests": {"q": {"method": "elicitation/create", "params": {
                "message": "name?", "requestedSchema": {"type": "object", "properties": {}}}}}}});
        let Ok(CallToolResponse::InputRequired(r)) = response_of(asked) else {
            panic!("input required")
        };
        assert_eq!(r.request_state.as_deref(), Some("abc"));
        let error = serde_json::json!({"jsonrpc": "2.0", "id": 1,
            "error": {"code": -32602, "message": "requestState names no call"}});
        let Err(Answer::Error(e)) = response_of(error) else {
            panic!("the holder's error")
        };
        assert_eq!(e.code.0, -32602);
        assert!(matches!(
            response_of(serde_json::json!({"jsonrpc": "2.0"})),
            Err(Answer::Unreadable(_))
        ));
    }
}
