//! What the prompt, resource and completion handlers share: the servers that offer something,
//! asked together, and an upstream's failure as the error a client gets.

use std::sync::Arc;

use rmcp::ErrorData as McpError;
use rmcp::model::{ErrorCode, ServerCapabilities};

use crate::Engine;
use crate::upstream::{Upstream, UpstreamError};

/// The enabled servers whose declared capabilities satisfy `offers`, in configuration order.
/// Servers are started if need be, all at once, each within its own start timeout; one that
/// does not start is left out (its state and tools listing say why).
pub async fn offering(
    engine: &Engine,
    offers: impl Fn(&ServerCapabilities) -> bool,
) -> Vec<Arc<Upstream>> {
    let servers = engine.pool.servers();
    let asks = servers
        .iter()
        .filter(|s| !s.entry().disabled)
        .map(|s| async move { (s.clone(), s.started_capabilities().await) });
    futures::future::join_all(asks)
        .await
        .into_iter()
        .filter_map(|(server, caps)| match caps {
            Ok(caps) if offers(&caps) => Some(server),
            Ok(_) => None,
            Err(e) => {
                tracing::debug!(server = %server.name(), "left out of a merged list: {e}");
                None
            }
        })
        .collect()
}

/// An upstream's failure as a client's error: the upstream's own JSON-RPC error passes through
/// (its code and message), anything else is an internal error that names the server.
pub fn relayed(e: UpstreamError) -> McpError {
    match e {
        UpstreamError::Rpc {
            rpc_code,
            message,
            data,
            ..
        } if rpc_code != -32603 => McpError::new(ErrorCode(rpc_code), message, data),
        other => McpError::internal_error(other.to_string(), None),
    }
}
