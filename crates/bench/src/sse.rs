//! A client transport for MCP's legacy HTTP+SSE transport (protocol 2024-11-05), so that a peer
//! serving only that (mcp-hub) is driven by the same rmcp client and load as the others. MCP
//! replaced it with streamable HTTP in 2025-03-26 and rmcp has no client for it; the bench needs
//! only this much of it: `GET` opens the event stream, whose first `endpoint` event names where
//! to `POST`; each message is POSTed there and the answers arrive as `message` events.

use std::io;

use futures::StreamExt;
use futures::stream::BoxStream;
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use sse_stream::{Sse, SseStream};

pub struct SseClientTransport {
    http: reqwest::Client,
    post_to: reqwest::Url,
    events: BoxStream<'static, Result<Sse, sse_stream::Error>>,
}

impl SseClientTransport {
    /// Opens the event stream at `url` and waits for the endpoint it names.
    pub async fn connect(url: &str) -> anyhow::Result<Self> {
        let http = reqwest::Client::new();
        let base = reqwest::Url::parse(url)?;
        let answer = http
            .get(base.clone())
            .header(reqwest::header::ACCEPT, "text/event-stream")
            .send()
            .await?
            .error_for_status()?;
        let mut events = SseStream::from_bytes_stream(answer.bytes_stream()).boxed();
        while let Some(event) = events.next().await {
            let event = event?;
            if event.event.as_deref() == Some("endpoint") {
                let post_to = base.join(event.data.as_deref().unwrap_or_default().trim())?;
                return Ok(Self {
                    http,
                    post_to,
                    events,
                });
            }
        }
        anyhow::bail!("{url} closed its event stream before naming an endpoint")
    }
}

impl Transport<RoleClient> for SseClientTransport {
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let (http, post_to) = (self.http.clone(), self.post_to.clone());
        async move {
            http.post(post_to)
                .json(&item)
                .send()
                .await
                .and_then(|r| r.error_for_status())
                .map(drop)
                .map_err(io::Error::other)
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let event = self.events.next().await?.ok()?;
            if event.event.as_deref().is_some_and(|e| e != "message") {
                continue;
            }
            if let Some(message) = event.data.and_then(|data| serde_json::from_str(&data).ok()) {
                return Some(message);
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}
