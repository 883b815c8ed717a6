//! Offload's client side of one upstream connection: forwards progress notifications to the
//! client that made the call, and drops the cached tool list when the upstream says it changed.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam, ProgressToken,
    Tool,
};
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, Peer, RoleClient, RoleServer};

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
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(upstream.clone(), route);
        RouteGuard {
            routes: self.clone(),
            token: upstream,
        }
    }

    fn get(&self, token: &ProgressToken) -> Option<ProgressRoute> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(token)
            .cloned()
    }
}

pub struct RouteGuard {
    routes: Arc<ProgressRoutes>,
    token: ProgressToken,
}

impl Drop for RouteGuard {
    fn drop(&mut self) {
        self.routes
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.token);
    }
}

/// The cached tool list of one connection.
#[derive(Default)]
pub struct ToolCache {
    tools: Mutex<Option<Arc<Vec<Tool>>>>,
    generation: AtomicU64,
}

impl ToolCache {
    pub fn get(&self) -> Option<Arc<Vec<Tool>>> {
        self.tools.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// Stores a list fetched when the cache was at `generation`, unless it changed since.
    pub fn store(&self, generation: u64, tools: Arc<Vec<Tool>>) {
        let mut slot = self.tools.lock().unwrap_or_else(|p| p.into_inner());
        if self.generation() == generation {
            *slot = Some(tools);
        }
    }

    pub fn invalidate(&self) {
        let mut slot = self.tools.lock().unwrap_or_else(|p| p.into_inner());
        self.generation.fetch_add(1, Ordering::SeqCst);
        *slot = None;
    }
}

pub struct UpstreamHandler {
    pub server: String,
    pub tools: Arc<ToolCache>,
    pub routes: Arc<ProgressRoutes>,
}

impl ClientHandler for UpstreamHandler {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("offload", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some(route) = self.routes.get(&params.progress_token) {
            let mut forwarded = params;
            forwarded.progress_token = route.token;
            if let Err(e) = route.peer.notify_progress(forwarded).await {
                tracing::debug!(server = %self.server, "progress not forwarded: {e}");
            }
        }
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::info!(server = %self.server, "tool list changed upstream");
        self.tools.invalidate();
    }
}
