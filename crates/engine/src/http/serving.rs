//! Serving over HTTP as a setting (the app's *Serve over HTTP*): the address in `http.listen`
//! is served while it is set; changing it moves the server, clearing it stops it. The state —
//! the URL served, or why it could not be — is what the Sharing screen shows.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::{HttpOptions, HttpServer};
use crate::Engine;

/// What the app's HTTP serving is doing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ServingState {
    /// The address asked for (`http.listen`).
    pub listen: Option<String>,
    /// The URL served at, while serving.
    pub url: Option<String>,
    /// Why the address is not served.
    pub error: Option<String>,
}

#[derive(Default)]
pub struct Serving {
    now: Mutex<(ServingState, Option<CancellationToken>)>,
    /// Held through an apply: the app applies the setting both when it changes it and when it
    /// sees the file change, and two applies must not both bind the address (the second would
    /// fail with "address in use" and hide the first's URL).
    applying: tokio::sync::Mutex<()>,
}

impl Serving {
    pub fn state(&self) -> ServingState {
        self.lock().0.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (ServingState, Option<CancellationToken>)> {
        self.now.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Serves `listen` (from the configuration), moving or stopping what is served.
    pub async fn apply(&self, engine: &Arc<Engine>, listen: Option<String>) {
        let _one_at_a_time = self.applying.lock().await;
        {
            let now = self.lock();
            if now.0.listen == listen
                && (now.1.is_some() || now.0.error.is_some() || listen.is_none())
            {
                return;
            }
        }
        if let Some(stop) = self.lock().1.take() {
            stop.cancel();
        }
        let Some(addr_text) = listen.clone() else {
            *self.lock() = (ServingState::default(), None);
            return;
        };
        let state = |url: Option<String>, error: Option<String>| ServingState {
            listen: listen.clone(),
            url,
            error,
        };
        let addr: SocketAddr = match addr_text.trim().parse() {
            Ok(a) => a,
            Err(_) => {
                *self.lock() = (
                    state(
                        None,
                        Some(format!(
                            "'{addr_text}' is not an address to listen on: write IP:PORT, e.g. 127.0.0.1:8765"
                        )),
                    ),
                    None,
                );
                return;
            }
        };
        match HttpServer::bind(engine.clone(), &HttpOptions::new(addr)).await {
            Ok(server) => {
                let url = format!("http://{}/mcp", server.local_addr());
                let stop = CancellationToken::new();
                tokio::spawn(server.serve(stop.clone()));
                *self.lock() = (state(Some(url), None), Some(stop));
            }
            Err(e) => *self.lock() = (state(None, Some(e)), None),
        }
    }

    /// Stops serving (the app quits).
    pub fn stop(&self) {
        if let Some(stop) = self.lock().1.take() {
            stop.cancel();
        }
    }
}
