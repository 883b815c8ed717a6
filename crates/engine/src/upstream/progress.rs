//! Forwarding upstream progress notifications (and log messages) to the client that made the
//! call, in order.
//!
//! rmcp hands notifications to handlers on spawned tasks, so a handler can run after the
//! response that followed the notification on the wire; the client would then drop the final
//! progress as late. We forward instead from inside the upstream transport's `receive`, which
//! rmcp calls sequentially: a notification reaches the client before the response behind it is
//! even read.
//!
//! rmcp picks a call's progress token as it sends the call, so its route is registered only
//! once the call is on its way: a fast upstream's first notifications can come before it (the
//! MCP conformance suite's progress scenario lost one that way under CI's load). Those are
//! kept, [`PENDING`] at most, and forwarded in order before anything after them.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    ClientRequest, JsonRpcMessage, ProgressNotificationParam, ProgressToken, ServerNotification,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{Peer, RoleClient, RoleServer};

/// Notifications kept for calls whose route is not registered yet (a call Offload sends without
/// a route never gets one: the oldest are dropped past this).
const PENDING: usize = 64;

/// Where to send an upstream's progress for one call: the downstream peer and its token.
#[derive(Clone)]
pub struct ProgressRoute {
    pub peer: Peer<RoleServer>,
    pub token: ProgressToken,
}

/// Upstream progress token → downstream route, for calls in flight.
#[derive(Default)]
pub struct ProgressRoutes(Mutex<Table<ProgressRoute>>);

/// The routes, and the notifications that came before theirs.
struct Table<R> {
    routes: HashMap<ProgressToken, R>,
    pending: VecDeque<ProgressNotificationParam>,
}

impl<R> Default for Table<R> {
    fn default() -> Self {
        Self {
            routes: HashMap::new(),
            pending: VecDeque::new(),
        }
    }
}

impl<R: Clone> Table<R> {
    /// The route of `progress`, or `None` with it kept for a route registered later.
    fn route_or_keep(&mut self, progress: &ProgressNotificationParam) -> Option<R> {
        let route = self.routes.get(&progress.progress_token).cloned();
        if route.is_none() {
            if self.pending.len() == PENDING {
                self.pending.pop_front();
            }
            self.pending.push_back(progress.clone());
        }
        route
    }

    /// The kept notifications that now have a route (of `token` alone, when given), in the
    /// order they came; the others stay.
    fn take_routed(
        &mut self,
        token: Option<&ProgressToken>,
    ) -> Vec<(R, ProgressNotificationParam)> {
        if self.pending.is_empty() {
            return Vec::new();
        }
        let mut routed = Vec::new();
        self.pending.retain(|p| {
            let route = token
                .is_none_or(|t| *t == p.progress_token)
                .then(|| self.routes.get(&p.progress_token))
                .flatten();
            match route {
                Some(route) => {
                    routed.push((route.clone(), p.clone()));
                    false
                }
                None => true,
            }
        });
        routed
    }
}

impl ProgressRoutes {
    /// Registers a route; it is removed when the returned guard drops.
    pub fn register(self: &Arc<Self>, upstream: ProgressToken, route: ProgressRoute) -> RouteGuard {
        self.lock().routes.insert(upstream.clone(), route);
        RouteGuard {
            routes: self.clone(),
            token: upstream,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table<ProgressRoute>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

pub struct RouteGuard {
    routes: Arc<ProgressRoutes>,
    token: ProgressToken,
}

impl RouteGuard {
    /// Forwards what came for this call before its route did and was not forwarded since (the
    /// call's answer came first): before the answer is given.
    pub async fn flush(&self) {
        let routed = self.routes.lock().take_routed(Some(&self.token));
        for (route, progress) in routed {
            forward(route, progress).await;
        }
    }
}

impl Drop for RouteGuard {
    fn drop(&mut self) {
        self.routes.lock().routes.remove(&self.token);
    }
}

async fn forward(route: ProgressRoute, mut progress: ProgressNotificationParam) {
    progress.progress_token = route.token.clone();
    if let Err(e) = route.peer.notify_progress(progress).await {
        tracing::debug!("progress not forwarded: {e}");
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
        // What came before its route, first: it precedes this message on the wire.
        let routed = self.routes.lock().take_routed(None);
        for (route, progress) in routed {
            forward(route, progress).await;
        }
        if let JsonRpcMessage::Notification(n) = &message
            && let ServerNotification::ProgressNotification(p) = &n.notification
        {
            let route = self.routes.lock().route_or_keep(&p.params);
            if let Some(route) = route {
                forward(route, p.params.clone()).await;
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

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::NumberOrString;

    fn token(n: i64) -> ProgressToken {
        ProgressToken(NumberOrString::Number(n))
    }

    fn progress(n: i64, step: f64) -> ProgressNotificationParam {
        ProgressNotificationParam::new(token(n), step)
    }

    fn steps(routed: &[(u32, ProgressNotificationParam)]) -> Vec<(u32, f64)> {
        routed.iter().map(|(r, p)| (*r, p.progress)).collect()
    }

    /// Progress that comes before its call's route is forwarded once the route is there, in
    /// the order it came; another call's stays kept; a routed one goes at once.
    #[test]
    fn progress_before_its_route_waits_for_it() {
        let mut table = Table::<u32>::default();
        assert!(table.route_or_keep(&progress(1, 1.0)).is_none());
        assert!(table.route_or_keep(&progress(2, 1.0)).is_none());
        assert!(table.route_or_keep(&progress(1, 2.0)).is_none());
        assert!(table.take_routed(None).is_empty(), "no route yet");
        table.routes.insert(token(1), 10);
        assert_eq!(steps(&table.take_routed(Some(&token(2)))), []);
        assert_eq!(steps(&table.take_routed(None)), [(10, 1.0), (10, 2.0)]);
        assert!(table.take_routed(None).is_empty(), "each forwarded once");
        assert_eq!(table.route_or_keep(&progress(1, 3.0)), Some(10));
        table.routes.insert(token(2), 20);
        assert_eq!(steps(&table.take_routed(Some(&token(2)))), [(20, 1.0)]);
        assert!(table.pending.is_empty());
    }

    /// Progress of calls that never get a route (sent without one) keeps at most `PENDING`
    /// notifications, the newest.
    #[test]
    fn unrouted_progress_is_bounded() {
        let mut table = Table::<u32>::default();
        for step in 0..(PENDING as i64 + 10) {
            table.route_or_keep(&progress(step, step as f64));
        }
        assert_eq!(table.pending.len(), PENDING);
        assert_eq!(table.pending.front().unwrap().progress, 10.0);
    }
}
