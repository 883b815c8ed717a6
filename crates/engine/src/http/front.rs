//! The front door of Offload's HTTP server: routes `/mcp` to rmcp's streamable HTTP service
//! after deciding who the caller is. The grant it attaches to the request reaches the MCP
//! handlers (rmcp hands them the request's parts), which refuse calls outside its scopes.
//!
//! Beside it, for orchestrators: `/healthz` (the process answers), `/readyz` (it takes calls:
//! not paused, not stopping) without a token, and `/metrics` (Prometheus) with any valid one.

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderMap, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;
use tower_service::Service;

use super::HttpOptions;
use crate::Engine;
use crate::access::issuer::Issuer;
use crate::access::{Grant, Tokens, Verdict};
use crate::server::OffloadServer;

type Body = http_body_util::combinators::BoxBody<Bytes, std::convert::Infallible>;

pub(super) struct Front {
    engine: Arc<Engine>,
    /// Fired when the server stops: it is no longer ready.
    stop: CancellationToken,
    mcp: StreamableHttpService<OffloadServer, LocalSessionManager>,
    tokens: Tokens,
    /// OAuth resource-server mode: JWTs from this authorization server are accepted too.
    issuer: Option<Issuer>,
    /// Requests without a token may do everything (a loopback bind the user opened).
    open: bool,
}

impl Front {
    /// The door for `engine` under `http` (the configuration's `http` section) and the state
    /// replicas share, as `state_bucket` made it of `http.state`.
    pub(super) fn new(
        engine: Arc<Engine>,
        options: &HttpOptions,
        http: Option<crate::config::HttpConfig>,
        state: Option<Result<crate::objects::Bucket, String>>,
        stop: CancellationToken,
    ) -> Self {
        let mut hosts: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
        let ip = options.addr.ip();
        if !ip.is_unspecified() && !ip.is_loopback() {
            hosts.push(ip.to_string());
        }
        hosts.extend(options.allowed_hosts.iter().cloned());
        // Pages served from this machine's loopback names may call (they still need a token);
        // any other origin must be named: a page that rebinds its own name to this machine
        // sends its own origin and is refused.
        let mut origins: Vec<String> = ["http", "https"]
            .iter()
            .flat_map(|scheme| {
                ["localhost", "127.0.0.1", "[::1]"]
                    .iter()
                    .map(move |host| format!("{scheme}://{host}:*"))
            })
            .collect();
        origins.extend(options.allowed_origins.iter().cloned());
        let mut config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(hosts)
            .with_allowed_origins(origins)
            .enforce_origin_validation()
            .with_cancellation_token(stop.clone());
        // Replicas sharing state continue each other's sessions and share their tokens.
        if let Some(Ok(state)) = &state {
            config.session_store = Some(Arc::new(super::sessions::SharedSessions::new(state)));
        }
        let prototype = OffloadServer::new(engine.clone());
        let mcp = StreamableHttpService::new(
            move || Ok(prototype.for_new_session()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        let tokens = Tokens::at(&engine.dirs.data_dir, state);
        if tokens.is_shared() {
            tokens.keep_fresh();
            tracing::info!("access tokens are shared through {}", tokens.place());
        }
        let issuer = http.and_then(|h| match (h.issuer, h.audience) {
            (Some(issuer), Some(audience)) => Some(Issuer::new(&issuer, &audience)),
            (None, None) => None,
            _ => {
                tracing::warn!(
                    "\"http\" needs both \"issuer\" and \"audience\" to accept OAuth tokens; only Offload's access tokens are accepted"
                );
                None
            }
        });
        if let Some(i) = &issuer {
            tracing::info!(
                "accepting access tokens from {} for {} (metadata at {})",
                i.issuer(),
                i.audience(),
                i.metadata_url()
            );
        }
        let open = options.allow_unauthenticated_loopback;
        if !open && !tokens.is_shared() && tokens.is_empty() && issuer.is_none() {
            tracing::warn!(
                "no access token exists yet, so no client can connect: create one with `offload token create NAME --scope read,call`"
            );
        }
        Self {
            engine,
            stop,
            mcp,
            tokens,
            issuer,
            open,
        }
    }

    pub(super) async fn handle(
        &self,
        mut request: Request<Incoming>,
        peer: SocketAddr,
    ) -> Response<Body> {
        let path = request.uri().path();
        if let Some(issuer) = &self.issuer
            && (path == "/.well-known/oauth-protected-resource"
                || path.starts_with("/.well-known/oauth-protected-resource/"))
        {
            let mut response =
                Response::new(Full::new(Bytes::from(issuer.metadata().to_string())).boxed());
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                http::HeaderValue::from_static("application/json"),
            );
            return response;
        }
        match path {
            "/healthz" => return text(StatusCode::OK, "ok\n".into()),
            "/readyz" => return self.readiness(),
            "/metrics" => return self.metrics(request.headers()).await,
            _ => {}
        }
        if path != "/mcp" && path != "/mcp/" {
            return text(StatusCode::NOT_FOUND, "Offload serves MCP at /mcp".into());
        }
        match self.grant(request.headers()).await {
            Ok(grant) => {
                request.extensions_mut().insert(grant);
                match self.mcp.clone().call(request).await {
                    Ok(response) => response,
                    Err(never) => match never {},
                }
            }
            Err(why) => {
                tracing::warn!("refused an HTTP request from {peer}: {why}");
                self.refused(&why)
            }
        }
    }

    /// 401 with a challenge saying why, and with an issuer where to sign in.
    fn refused(&self, why: &Refusal) -> Response<Body> {
        if let Refusal::Unchecked(detail) = why {
            tracing::warn!("{detail}");
            let mut response = text(StatusCode::SERVICE_UNAVAILABLE, format!("{why}\n"));
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, http::HeaderValue::from_static("1"));
            return response;
        }
        let mut response = text(StatusCode::UNAUTHORIZED, format!("{why}\n"));
        // With an issuer, the challenge points clients at the metadata that says where
        // to sign in (RFC 9728).
        let metadata = self
            .issuer
            .as_ref()
            .map(|i| format!(", resource_metadata=\"{}\"", i.metadata_url()))
            .unwrap_or_default();
        let challenge = match why {
            Refusal::Missing => format!("Bearer realm=\"offload\"{metadata}"),
            other => format!(
                "Bearer realm=\"offload\", error=\"invalid_token\", error_description=\"{}\"{metadata}",
                other.to_string().replace(['"', '\\'], "'")
            ),
        };
        if let Ok(value) = challenge.parse() {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, value);
        }
        response
    }

    /// Ready for calls: 503 while paused (calls would be refused) or stopping.
    fn readiness(&self) -> Response<Body> {
        if self.stop.is_cancelled() {
            text(StatusCode::SERVICE_UNAVAILABLE, "stopping\n".into())
        } else if self.engine.is_paused() {
            text(StatusCode::SERVICE_UNAVAILABLE, "paused\n".into())
        } else {
            text(StatusCode::OK, "ready\n".into())
        }
    }

    /// The Prometheus metrics, for any valid access token (they name servers and tools).
    async fn metrics(&self, headers: &HeaderMap) -> Response<Body> {
        if let Err(why) = self.grant(headers).await {
            return self.refused(&why);
        }
        let servers: Vec<(String, String)> = self
            .engine
            .pool
            .servers()
            .iter()
            .map(|s| {
                let state = serde_json::to_value(s.status().status)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
                (s.name().to_owned(), state)
            })
            .collect();
        let mut response = text(StatusCode::OK, self.engine.events.metrics.encode(&servers));
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            http::HeaderValue::from_static(
                "application/openmetrics-text; version=1.0.0; charset=utf-8",
            ),
        );
        response
    }

    async fn grant(&self, headers: &HeaderMap) -> Result<Grant, Refusal> {
        let Some(value) = headers.get(header::AUTHORIZATION) else {
            return if self.open {
                Ok(Grant::everything("loopback"))
            } else {
                Err(Refusal::Missing)
            };
        };
        let token = value
            .to_str()
            .ok()
            .and_then(|v| {
                let (scheme, token) = v.split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
            })
            .ok_or(Refusal::Malformed)?;
        // Offload's own tokens first (a hash lookup); a JWT goes to the issuer.
        match self.tokens.verify(token).await {
            Verdict::Granted(grant) => return Ok(grant),
            Verdict::Unchecked(why) => return Err(Refusal::Unchecked(why)),
            Verdict::Unknown => {}
        }
        match &self.issuer {
            Some(issuer) if token.matches('.').count() == 2 => issuer
                .verify(token)
                .await
                .map_err(|r| Refusal::Invalid(r.0)),
            _ => Err(Refusal::Unknown),
        }
    }
}

/// Why a request was turned away (never the token it carried).
#[derive(Debug, PartialEq, Eq)]
enum Refusal {
    Missing,
    Malformed,
    Unknown,
    /// A JWT the issuer's keys or claims do not vouch for, and why.
    Invalid(String),
    /// The shared tokens cannot be checked now (the state bucket does not answer).
    Unchecked(String),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Missing => "Offload needs an access token: send `Authorization: Bearer <token>` (create one with `offload token create NAME --scope read,call`)",
            Self::Malformed => "the Authorization header is not `Bearer <token>`",
            Self::Unknown => "the access token is unknown or was revoked",
            Self::Invalid(why) => why,
            Self::Unchecked(_) => "access tokens cannot be checked now (the shared state does not answer); try again shortly",
        })
    }
}

fn text(status: StatusCode, body: String) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(body)).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}
