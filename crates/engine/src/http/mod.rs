//! Serving Offload's MCP surface to clients on other machines: streamable HTTP at `/mcp`
//! (rmcp's server: 2025-11-25 sessions and the 2026-07-28 stateless mode), behind a front door
//! that checks who is calling. Host and Origin are validated against DNS rebinding; every bind
//! but an explicitly opened loopback one needs an access token; TLS with rustls or plain HTTP
//! behind the user's reverse proxy.

mod front;
mod serving;
mod sessions;
mod tls;

pub use serving::{Serving, ServingState};

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::net::TcpListener;
use tokio_util::either::Either;
use tokio_util::sync::CancellationToken;

use crate::Engine;

/// How `offload serve --http` (or the app's *Serve over HTTP*) serves.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    pub addr: SocketAddr,
    /// PEM certificate chain and private key: serve HTTPS.
    pub tls: Option<(PathBuf, PathBuf)>,
    /// On a loopback bind, requests without a token may do everything (local agents only).
    pub allow_unauthenticated_loopback: bool,
    /// Host names (or `host:port`) clients use to reach this server, beyond the bind address
    /// and the loopback names.
    pub allowed_hosts: Vec<String>,
    /// Browser origins allowed to call besides the loopback ones (a request with any other
    /// `Origin` is refused, which is what stops DNS-rebinding pages).
    pub allowed_origins: Vec<String>,
}

impl HttpOptions {
    pub fn new(addr: SocketAddr) -> Self {
        Self {
            addr,
            tls: None,
            allow_unauthenticated_loopback: false,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
        }
    }
}

/// A bound HTTP server, not yet serving.
pub struct HttpServer {
    listener: TcpListener,
    /// The address bound (port 0 picks a free one).
    addr: SocketAddr,
    front: Arc<front::Front>,
    tls: Option<tokio_rustls::TlsAcceptor>,
    stop: CancellationToken,
}

/// This replica's MCP URL as the others reach it: `http.advertise`, else the address it serves
/// at unless that is a wildcard (then none, and the log says what to set when state is shared).
fn replica_url(
    engine: &Engine,
    http: Option<&crate::config::HttpConfig>,
    scheme: &str,
    addr: SocketAddr,
) -> Option<String> {
    let http = http?;
    match http.advertise.as_deref() {
        Some(named) => crate::config::interpolate(named, engine.secrets.as_ref())
            .map_err(|e| tracing::warn!("http.advertise: {e}"))
            .ok(),
        None if !addr.ip().is_unspecified() => Some(format!("{scheme}://{addr}/mcp")),
        None => {
            if http.state.is_some() {
                tracing::warn!(
                    "serving on {addr} with shared state: set http.advertise (this replica's URL as the others reach it) so that a client's answers reaching another replica are handed here"
                );
            }
            None
        }
    }
}

impl HttpServer {
    /// Binds `options.addr` and prepares TLS; errors are sentences for the person starting it.
    pub async fn bind(engine: Arc<Engine>, options: &HttpOptions) -> Result<Self, String> {
        let loopback = options.addr.ip().is_loopback();
        if options.allow_unauthenticated_loopback && !loopback {
            return Err(format!(
                "--allow-unauthenticated-loopback only applies to a loopback address (127.0.0.1, ::1); {} is reachable from other machines, so it needs access tokens",
                options.addr.ip()
            ));
        }
        let tls = match &options.tls {
            Some((cert, key)) => Some(tls::acceptor(cert, key)?),
            None => None,
        };
        let listener = TcpListener::bind(options.addr)
            .await
            .map_err(|e| format!("cannot listen on {}: {e}", options.addr))?;
        let addr = listener
            .local_addr()
            .map_err(|e| format!("cannot listen on {}: {e}", options.addr))?;
        let stop = CancellationToken::new();
        let scheme = if tls.is_some() { "https" } else { "http" };
        let mut options = options.clone();
        // What replicas share, read once for the sessions, the tokens and parked calls.
        let http = engine.config().http.clone();
        let state = crate::objects::state_bucket(http.as_ref(), engine.secrets.as_ref());
        if let Some(url) = replica_url(&engine, http.as_ref(), scheme, addr) {
            // Other replicas hand retries here by this name.
            if let Some(host) = reqwest::Url::parse(&url)
                .ok()
                .and_then(|u| Some(u.host_str()?.to_owned()))
            {
                options
                    .allowed_hosts
                    .push(host.trim_matches(['[', ']']).to_owned());
            }
            if let Some(Ok(state)) = &state {
                engine.replicas.start(url, state.clone());
            }
        }
        let front = front::Front::new(engine, &options, http, state, stop.child_token());
        if !loopback && tls.is_none() {
            tracing::warn!(
                "serving plain HTTP on {}: put it behind a reverse proxy that terminates TLS, or pass --tls-cert/--tls-key",
                options.addr
            );
        }
        Ok(Self {
            listener,
            addr,
            front: Arc::new(front),
            tls,
            stop,
        })
    }

    /// The address actually bound (port 0 picks a free one).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serves until `shutdown` fires, then stops accepting, ends open MCP streams and gives
    /// requests in flight a few seconds to finish.
    pub async fn serve(self, shutdown: CancellationToken) {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        tracing::info!("serving MCP at {scheme}://{}/mcp", self.local_addr());
        let graceful = hyper_util::server::graceful::GracefulShutdown::new();
        loop {
            let (stream, peer) = tokio::select! {
                () = shutdown.cancelled() => break,
                accepted = self.listener.accept() => match accepted {
                    Ok(a) => a,
                    Err(e) => {
                        // Out of file descriptors and the like: wait a moment, do not spin.
                        tracing::warn!("accepting a connection failed: {e}");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                },
            };
            let _ = stream.set_nodelay(true);
            let front = self.front.clone();
            let service = hyper::service::service_fn(move |request| {
                let front = front.clone();
                async move { Ok::<_, std::convert::Infallible>(front.handle(request, peer).await) }
            });
            let watcher = graceful.watcher();
            let tls = self.tls.clone();
            tokio::spawn(async move {
                let stream = match tls {
                    None => Either::Left(stream),
                    // A client that opens a socket and never speaks TLS costs one task for ten
                    // seconds, nothing more.
                    Some(acceptor) => {
                        match tokio::time::timeout(Duration::from_secs(10), acceptor.accept(stream))
                            .await
                        {
                            Ok(Ok(s)) => Either::Right(s),
                            Ok(Err(e)) => {
                                tracing::debug!("TLS handshake with {peer} failed: {e}");
                                return;
                            }
                            Err(_) => return,
                        }
                    }
                };
                let builder = auto::Builder::new(TokioExecutor::new());
                let connection =
                    builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
                if let Err(e) = watcher.watch(connection.into_owned()).await {
                    tracing::debug!("connection from {peer} ended: {e}");
                }
            });
        }
        drop(self.listener);
        // Ends the MCP sessions' SSE streams so their connections can close.
        self.stop.cancel();
        if tokio::time::timeout(Duration::from_secs(5), graceful.shutdown())
            .await
            .is_err()
        {
            tracing::info!("closed HTTP connections still busy after 5 s");
        }
    }
}
