//! Offload's client side of one upstream connection: it drops the cached tool list when the
//! upstream says it changed. (Progress is forwarded by `progress::Forwarding`, in order.)

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, Tool};
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient};

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
    /// Told when the upstream's tools change (clients that list them are told in turn).
    pub pool: std::sync::Weak<super::PoolContext>,
}

impl ClientHandler for UpstreamHandler {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("offload", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::info!(server = %self.server, "tool list changed upstream");
        self.tools.invalidate();
        if let Some(pool) = self.pool.upgrade() {
            pool.bump();
        }
    }
}
