//! The front door of Offload's HTTP server: routes `/mcp` to rmcp's streamable HTTP service
//! after deciding who the caller is. The grant it attaches to the request reaches the MCP
//! handlers (rmcp hands them the request's parts), which refuse calls outside its scopes.

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
use crate::access::{Grant, Tokens};
use crate::server::OffloadServer;

type Body = http_body_util::combinators::BoxBody<Bytes, std::convert::Infallible>;

pub(super) struct Front {
    mcp: StreamableHttpService<OffloadServer, LocalSessionManager>,
    tokens: Tokens,
    /// Requests without a token may do everything (a loopback bind the user opened).
    open: bool,
}

impl Front {
    pub(super) fn new(engine: Arc<Engine>, options: &HttpOptions, stop: CancellationToken) -> Self {
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
        let config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(hosts)
            .with_allowed_origins(origins)
            .enforce_origin_validation()
            .with_cancellation_token(stop);
        let for_sessions = engine.clone();
        let mcp = StreamableHttpService::new(
            move || Ok(OffloadServer::new(for_sessions.clone())),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        let tokens = Tokens::open(&engine.dirs.data_dir);
        let open = options.allow_unauthenticated_loopback;
        if !open && tokens.is_empty() {
            tracing::warn!(
                "no access token exists yet, so no client can connect: create one with `offload token create NAME --scope read,call`"
            );
        }
        Self { mcp, tokens, open }
    }

    pub(super) async fn handle(
        &self,
        mut request: Request<Incoming>,
        peer: SocketAddr,
    ) -> Response<Body> {
        let path = request.uri().path();
        if path != "/mcp" && path != "/mcp/" {
            return text(StatusCode::NOT_FOUND, "Offload serves MCP at /mcp".into());
        }
        match self.grant(request.headers()) {
            Ok(grant) => {
                request.extensions_mut().insert(grant);
                match self.mcp.clone().call(request).await {
                    Ok(response) => response,
                    Err(never) => match never {},
                }
            }
            Err(why) => {
                tracing::warn!("refused an HTTP request from {peer}: {why}");
                let mut response = text(StatusCode::UNAUTHORIZED, format!("{why}\n"));
                let challenge = if why == Refusal::Missing {
                    "Bearer realm=\"offload\"".to_owned()
                } else {
                    "Bearer realm=\"offload\", error=\"invalid_token\", error_description=\"the token is unknown or revoked\"".to_owned()
                };
                if let Ok(value) = challenge.parse() {
                    response
                        .headers_mut()
                        .insert(header::WWW_AUTHENTICATE, value);
                }
                response
            }
        }
    }

    fn grant(&self, headers: &HeaderMap) -> Result<Grant, Refusal> {
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
        self.tokens.verify(token).ok_or(Refusal::Unknown)
    }
}

/// Why a request was turned away (never the token it carried).
#[derive(Debug, PartialEq, Eq)]
enum Refusal {
    Missing,
    Malformed,
    Unknown,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Missing => "Offload needs an access token: send `Authorization: Bearer <token>` (create one with `offload token create NAME --scope read,call`)",
            Self::Malformed => "the Authorization header is not `Bearer <token>`",
            Self::Unknown => "the access token is unknown or was revoked",
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
