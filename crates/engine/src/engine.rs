//! The engine: configuration turned into roots, limits and an upstream pool, served as MCP.
//!
//! One engine serves any number of client sessions (one per stdio or socket connection); they
//! share the pool, so every client sees the same kept-open upstream connections.

use std::path::PathBuf;
use std::sync::Arc;

use rmcp::service::ServiceExt;

use crate::config::{
    AppDirs, CompatInputs, Config, ConfigError, Limits, SecretSource, apply_compat,
};
use crate::events::Events;
use crate::files::{self, Inspector};
use crate::roots::Roots;
use crate::server::OffloadServer;
use crate::sessions::Sessions;
use crate::store::Store;
use crate::upstream::Pool;

pub struct Engine {
    pub roots: Roots,
    pub pool: Pool,
    pub limits: Limits,
    pub store: Store,
    pub events: Events,
    /// The file tools (`get_file_schema`, `summarize_file`, `read_file`) and their line indexes.
    pub files: Inspector,
    /// The client sessions being served.
    pub sessions: Sessions,
}

/// Where the engine's configuration comes from.
pub struct EngineOptions {
    /// The config file (`--config` / `OFFLOAD_CONFIG`); the platform's otherwise.
    pub config_path: Option<PathBuf>,
    pub compat: CompatInputs,
    pub secrets: Arc<dyn SecretSource>,
}

impl Engine {
    /// Loads the configuration and builds the engine. Returns warnings worth logging (ignored
    /// roots, skipped imported servers). Upstream servers are not started here: they start on
    /// first use.
    pub fn load(options: EngineOptions) -> Result<(Self, Vec<String>), ConfigError> {
        let dirs = AppDirs::platform().ok_or_else(|| ConfigError::Server {
            server: String::new(),
            message: "cannot determine the home directory".into(),
        })?;
        let path = options
            .config_path
            .clone()
            .unwrap_or_else(|| dirs.config_file());
        let mut config = Config::load(&path)?;
        let mut warnings = apply_compat(&mut config, &options.compat)?;
        let (engine, more) = Self::from_config(&config, &dirs, options.secrets);
        warnings.extend(more);
        Ok((engine, warnings))
    }

    pub fn from_config(
        config: &Config,
        dirs: &AppDirs,
        secrets: Arc<dyn SecretSource>,
    ) -> (Self, Vec<String>) {
        let (roots, mut warnings) = Roots::from_entries(&config.roots, &dirs.default_root());
        let (store, more) = Store::open(&dirs.data_dir, &roots);
        warnings.extend(more);
        let engine = Self {
            roots,
            pool: Pool::new(
                &config.mcp_servers,
                secrets,
                config.limits.max_upstream_answer_bytes,
            ),
            limits: config.limits.clone(),
            store,
            events: Events::new(Some(&dirs.data_dir), 10 * 1024 * 1024),
            files: Inspector::new(files::Settings {
                pdf_helper: pdf_helper(),
                ..files::Settings::default()
            }),
            sessions: Sessions::default(),
        };
        (engine, warnings)
    }

    /// Serves one MCP session over `transport` until the client goes away. A client that
    /// leaves before the handshake is not an error.
    pub async fn serve<T, E, A>(self: &Arc<Self>, transport: T) -> Result<(), String>
    where
        T: rmcp::transport::IntoTransport<rmcp::RoleServer, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let running = match OffloadServer::new(self.clone()).serve(transport).await {
            Ok(running) => running,
            Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => {
                tracing::info!("the client closed the connection before the MCP handshake");
                return Ok(());
            }
            Err(e) => return Err(format!("MCP session did not start: {e}")),
        };
        let client = running
            .peer()
            .peer_info()
            .map(|info| info.client_info.clone());
        let (name, version) = client.map_or_else(
            || ("unknown".to_owned(), String::new()),
            |c| (c.name, c.version),
        );
        let _open = self.sessions.open(&name, &version);
        running
            .waiting()
            .await
            .map(|_| ())
            .map_err(|e| format!("MCP session ended abnormally: {e}"))
    }

    /// Stops every upstream server (and their children).
    pub async fn shutdown(&self) {
        self.pool.shutdown().await;
    }
}

/// The `offload` program that extracts PDF text in a child process: this program when it is
/// `offload` (the shim and the CLI), or the one named by `OFFLOAD_HELPER` (the desktop app sets
/// its sidecar). Without one, extraction runs in-process, checked page by page.
fn pdf_helper() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("OFFLOAD_HELPER") {
        return Some(PathBuf::from(path));
    }
    std::env::current_exe()
        .ok()
        .filter(|exe| exe.file_stem().is_some_and(|s| s == "offload"))
}
