//! Forwarding upstream progress notifications (and log messages) to the client that made the
//! call, in order.
//!
//! rmcp hands notifications to handlers on spawned tasks, so a handler can run after the
//! response that followed the notification on the wire; the client would then drop the final
//! progress as late. We forward instead from inside the upstream transport's `receive`, which
//! rmcp calls sequentially: a notification reaches the client before the response behind it is
//! even read.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{ClientRequest, JsonRpcMessage, ProgressToken, ServerNotification};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{Peer, RoleClient, RoleServer};

/// Where to send an upstream's progress for one call: the downstream peer and its token.
#[derive(Clone)]
pub struct ProgressRoute {
    pub peer: Peer<RoleServer>,
    pub token: ProgressToken,
}

/// Upstream progress token → downstream route, for calls in flight.
#[derive(Default)]
pub struct ProgressRoutes(Mutex<HashMap<ProgressToken, ProgressRoute>>);

impl ProgressRoutes {
    /// Registers a route; it is removed when the returned guard drops.
    pub fn register(self: &Arc<Self>, upstream: ProgressToken, route: ProgressRoute) -> RouteGuard {
        self.lock().insert(upstream.clone(), route);
        RouteGuard {
            routes: self.clone(),
            token: upstream,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<ProgressToken, ProgressRoute>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

pub struct RouteGuard {
    routes: Arc<ProgressRoutes>,
    token: ProgressToken,
}

impl Drop for RouteGuard {
    fn drop(&mut self) {
        self.routes.lock().remove(&self.token);
    }
}

/// Wraps an upstream transport and forwards routed progress notifications as they arrive.
pub struct Forwarding<T> {
    pub inner: T,
    pub routes: Arc<ProgressRoutes>,
    /// The calls in flight: their clients get the upstream's log messages.
    pub callers: Arc<super::callers::Callers>,
    /// The upstream's name (the logger of its relayed log messages).
    pub server: String,
    /// Where its log messages are kept for the app.
    pub logs: Arc<super::logs::LogRing>,
    /// Whether `inner` writes splices itself (`offload_wire::Lines`); otherwise tool calls'
    /// splices are expanded here (see `offload_wire::splice`).
    pub writes_splices: bool,
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Forwarding<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        mut item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if !self.writes_splices
            && let JsonRpcMessage::Request(request) = &mut item
            && let ClientRequest::CallToolRequest(call) = &mut request.request
            && let Some(arguments) = &mut call.params.arguments
        {
            arguments
                .values_mut()
                .for_each(offload_wire::splice::expand);
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await?;
        if let JsonRpcMessage::Notification(n) = &message
            && let ServerNotification::ProgressNotification(p) = &n.notification
        {
            let route = self.routes.lock().get(&p.params.progress_token).cloned();
            if let Some(route) = route {
                let mut forwarded = p.params.clone();
                forwarded.progress_token = route.token;
                if let Err(e) = route.peer.notify_progress(forwarded).await {
                    tracing::debug!("progress not forwarded: {e}");
                }
            }
        }
        if let JsonRpcMessage::Notification(n) = &message
            && let ServerNotification::LoggingMessageNotification(m) = &n.notification
        {
            self.logs.push(&m.params);
            self.callers.relay_log(&self.server, &m.params).await;
        }
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
