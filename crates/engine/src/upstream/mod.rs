//! The pool of upstream MCP servers: one kept-open connection per enabled server, started on
//! first use, shared by every client session.
//!
//! One broken server never blocks or hides the others: listings ask every server in parallel,
//! each bounded by its own timeout, and report failures per server.

mod connect;
mod error;
mod handler;
mod limited;
mod progress;
mod search_path;
mod stderr;
mod supervisor;

pub use error::{UpstreamError, closest};
pub use progress::ProgressRoute;
pub use supervisor::{CallOptions, Upstream};

use std::sync::Arc;

use rmcp::model::Tool;
use serde::Serialize;

use crate::config::{SecretSource, ServerEntry};
use search_path::SearchPath;

/// What every upstream shares.
pub struct PoolContext {
    secrets: Arc<dyn SecretSource>,
    search_path: SearchPath,
    /// The largest single message accepted from an upstream.
    answer_limit: u64,
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
}

/// The result of asking one server for its tools.
pub struct ServerTools {
    pub status: ServerStatus,
    pub tools: Arc<Vec<Tool>>,
}

pub struct Pool {
    servers: Vec<Arc<Upstream>>,
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
            answer_limit,
        });
        Self {
            servers: servers
                .iter()
                .map(|(name, entry)| {
                    Arc::new(Upstream::new(name.clone(), entry.clone(), ctx.clone()))
                })
                .collect(),
        }
    }

    pub fn servers(&self) -> &[Arc<Upstream>] {
        &self.servers
    }

    /// The server called `name`, or an error naming the closest names.
    pub fn get(&self, name: &str) -> Result<&Arc<Upstream>, UpstreamError> {
        self.servers
            .iter()
            .find(|s| s.name() == name)
            .ok_or_else(|| UpstreamError::UnknownServer {
                name: name.to_owned(),
                suggestions: closest(name, self.servers.iter().map(|s| s.name())),
            })
    }

    /// Asks every listed server for its tools in parallel (disabled ones are reported, not
    /// started). Each answer is bounded by that server's timeout.
    pub async fn list_tools(&self, only: Option<&str>) -> Vec<ServerTools> {
        let selected = self
            .servers
            .iter()
            .filter(|s| only.is_none_or(|o| s.name() == o));
        let asks = selected.map(|server| async move {
            if server.entry().disabled {
                return ServerTools {
                    status: server.status(),
                    tools: Arc::default(),
                };
            }
            match server.tools().await {
                Ok(tools) => ServerTools {
                    status: server.status(),
                    tools,
                },
                Err(e) => {
                    let mut status = server.status();
                    status.status = ServerState::Error;
                    status.error = Some(e.to_string());
                    ServerTools {
                        status,
                        tools: Arc::default(),
                    }
                }
            }
        });
        futures::future::join_all(asks).await
    }

    /// Stops every server and terminates their process groups.
    pub async fn shutdown(&self) {
        futures::future::join_all(self.servers.iter().map(|s| s.stop())).await;
    }
}
