//! What the app's parts share: the engine and its HTTP serving, and the names of the events
//! the window listens to.

use std::sync::Arc;

use anyhow::Context;
use offload_engine::keychain::Keychain;
use offload_engine::{Engine, EngineOptions};

/// What every command and the tray share.
pub struct AppState {
    pub engine: Arc<Engine>,
    /// *Serve over HTTP* (`http.listen`), for agents on other machines.
    pub serving: Arc<offload_engine::http::Serving>,
}

/// The event the window listens to: something it shows changed.
pub const CHANGED: &str = "offload://changed";
/// New calls (a batch of events, oldest first), from every Offload process.
pub const CALLS: &str = "offload://calls";
/// Stored responses were added, changed or removed.
pub const RESPONSES: &str = "offload://responses";

impl AppState {
    /// The engine from `OFFLOAD_CONFIG` or the platform's `config.json`.
    pub fn load() -> anyhow::Result<Self> {
        let options = EngineOptions {
            config_path: std::env::var_os("OFFLOAD_CONFIG").map(Into::into),
            require_config: false,
            compat: Default::default(),
            secrets: Arc::new(Keychain::platform()),
            dirs: None,
        };
        let (engine, warnings) = Engine::load(options).context("Offload's configuration")?;
        for w in warnings {
            tracing::warn!("{w}");
        }
        Ok(Self::new(Arc::new(engine)))
    }

    pub fn new(engine: Arc<Engine>) -> Self {
        Self {
            engine,
            serving: Arc::default(),
        }
    }

    /// Serves over HTTP what `http.listen` says (nothing when it is absent).
    pub async fn apply_serving(&self) {
        let listen = self
            .engine
            .config()
            .http
            .as_ref()
            .and_then(|h| h.listen.clone());
        self.serving.apply(&self.engine, listen).await;
    }
}
