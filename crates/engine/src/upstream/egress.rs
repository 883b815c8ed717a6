//! The egress proxy of a confined server whose network is an allow-list: an HTTP proxy
//! (`CONNECT host:port` for HTTPS, absolute-form requests for plain HTTP) that reaches only the
//! hosts the list names. The server is told of it by `HTTPS_PROXY`/`HTTP_PROXY` and can reach
//! nothing else: the launcher gives it a network namespace whose only way out leads here (the
//! proxy's unix socket), or, where none can be made, holds it to the proxy's TCP port.
//!
//! One proxy a server start, on a port and a socket of its own, ended with the server. A refusal
//! answers 403 and is written to the server's log, naming the host to add.

#![allow(deprecated)] // logging: deprecated by 2026-07-28 (SEP-2577), still the server's log

use std::convert::Infallible;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Full, combinators::BoxBody};
use hyper::{Method, Request, Response, StatusCode, body::Incoming};
use hyper_util::rt::TokioIo;
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};

use super::logs::LogRing;
use super::refusals::Refusals;

/// How long reaching an allowed host may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The hosts a server may reach: `api.github.com` (HTTPS and HTTP: ports 443 and 80),
/// `*.example.org` (any name below it, not itself), `host:port` (that port only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allow(Vec<Rule>);

#[derive(Debug, Clone, PartialEq, Eq)]
struct Rule {
    /// Lowercase, without a trailing dot; for `*.example.org`, `.example.org`.
    host: String,
    below: bool,
    port: Option<u16>,
}

impl Allow {
    pub fn parse(entries: &[String]) -> Result<Allow, String> {
        let bad = |entry: &str| {
            format!("sandbox: \"{entry}\" in network.allow: write host, *.domain or host:port")
        };
        let mut rules = Vec::with_capacity(entries.len());
        for entry in entries {
            let (host, port) = match entry.rsplit_once(':') {
                // An IPv6 address is written in brackets: `[::1]:8080`.
                Some((host, port)) if !host.contains(':') || host.ends_with(']') => {
                    (host, Some(port.parse::<u16>().map_err(|_| bad(entry))?))
                }
                _ => (entry.as_str(), None),
            };
            let host = normalize(host);
            let (host, below) = match host.strip_prefix("*.") {
                Some(rest) => (format!(".{rest}"), true),
                None => (host, false),
            };
            let name = host.trim_start_matches('.');
            let valid = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '_'));
            if !valid {
                return Err(bad(entry));
            }
            rules.push(Rule { host, below, port });
        }
        Ok(Allow(rules))
    }

    /// The registries package runners install from (`npx`, `uvx`, ...).
    pub fn registries() -> Allow {
        let hosts = [
            "registry.npmjs.org",
            "registry.yarnpkg.com",
            "pypi.org",
            "files.pythonhosted.org",
        ];
        Allow::parse(&hosts.map(str::to_owned)).expect("valid hosts")
    }

    /// This list and `other`'s hosts.
    pub fn and(mut self, other: Allow) -> Allow {
        for rule in other.0 {
            if !self.0.contains(&rule) {
                self.0.push(rule);
            }
        }
        self
    }

    pub fn permits(&self, host: &str, port: u16) -> bool {
        let host = normalize(host);
        self.0.iter().any(|rule| {
            let name = if rule.below {
                host.ends_with(&rule.host)
            } else {
                host == rule.host
            };
            name && rule.port.map_or(port == 443 || port == 80, |p| p == port)
        })
    }
}

/// Lowercase, brackets and a trailing dot taken off.
fn normalize(host: &str) -> String {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.')
        .to_ascii_lowercase()
}

/// A running proxy; dropping it stops it and removes its socket.
pub struct Egress {
    /// Its TCP port on 127.0.0.1 (also the relay's, inside a namespace).
    pub port: u16,
    /// Its unix socket, which the relay inside a network namespace connects to.
    pub socket: PathBuf,
    _dir: tempfile::TempDir,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for Egress {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl std::fmt::Debug for Egress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Egress")
            .field("port", &self.port)
            .field("socket", &self.socket)
            .finish()
    }
}

/// Where a proxy tells of what it refused: the server's log, its kept refusals, and whoever
/// shows them (the app's screens reload).
#[derive(Clone, Default)]
pub struct Witness {
    pub logs: Arc<LogRing>,
    pub refusals: Arc<Refusals>,
    pub told: Option<Arc<dyn Fn() + Send + Sync>>,
}

struct Proxy {
    server: String,
    allow: Allow,
    witness: Witness,
}

/// Starts `server`'s proxy.
pub async fn start(server: &str, allow: Allow, witness: Witness) -> std::io::Result<Egress> {
    // A short path (a unix socket's is limited to ~100 bytes), private to this user.
    let dir = tempfile::Builder::new()
        .prefix("offload-egress")
        .tempdir()?;
    let socket = dir.path().join("proxy.sock");
    let unix = tokio::net::UnixListener::bind(&socket)?;
    let tcp = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
    let port = tcp.local_addr()?.port();
    let proxy = Arc::new(Proxy {
        server: server.to_owned(),
        allow,
        witness,
    });
    let on_tcp = {
        let proxy = proxy.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = tcp.accept().await {
                tokio::spawn(serve(stream, proxy.clone()));
            }
        })
    };
    let on_unix = tokio::spawn(async move {
        while let Ok((stream, _)) = unix.accept().await {
            tokio::spawn(serve(stream, proxy.clone()));
        }
    });
    Ok(Egress {
        port,
        socket,
        _dir: dir,
        tasks: vec![on_tcp, on_unix],
    })
}

async fn serve<S>(stream: S, proxy: Arc<Proxy>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let service = hyper::service::service_fn(move |req| handle(req, proxy.clone()));
    let _ = hyper::server::conn::http1::Builder::new()
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades()
        .await;
}

type Body = BoxBody<Bytes, hyper::Error>;

fn answer(status: StatusCode, text: String) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(text)).map_err(|e| match e {}).boxed());
    *response.status_mut() = status;
    response
}

/// The host and port a request is for: `CONNECT host:port`, or an absolute `http://` URL.
fn target(req: &Request<Incoming>) -> Option<(String, u16)> {
    let uri = req.uri();
    let authority = uri.authority()?;
    let port = match (req.method() == Method::CONNECT, uri.scheme_str()) {
        (true, _) => authority.port_u16()?,
        (false, Some("http")) => authority.port_u16().unwrap_or(80),
        _ => return None,
    };
    Some((normalize(authority.host()), port))
}

async fn handle(req: Request<Incoming>, proxy: Arc<Proxy>) -> Result<Response<Body>, Infallible> {
    let Some((host, port)) = target(&req) else {
        return Ok(answer(
            StatusCode::BAD_REQUEST,
            "offload's egress proxy takes CONNECT host:port and absolute http:// URLs".into(),
        ));
    };
    if !proxy.allow.permits(&host, port) {
        let said = format!(
            "network: refused {host}:{port}, not in this server's allow-list (add \"{host}\" to \"sandbox\": {{\"network\": {{\"allow\": [...]}}}} to let it through)"
        );
        tracing::warn!(server = %proxy.server, "{said}");
        proxy.witness.refusals.host(&host, port);
        if let Some(told) = &proxy.witness.told {
            told();
        }
        proxy.witness.logs.push(
            &LoggingMessageNotificationParam::new(LoggingLevel::Warning, said.clone().into())
                .with_logger("offload"),
        );
        return Ok(answer(StatusCode::FORBIDDEN, format!("offload: {said}")));
    }
    let upstream = match tokio::time::timeout(
        CONNECT_TIMEOUT,
        tokio::net::TcpStream::connect((host.as_str(), port)),
    )
    .await
    {
        Ok(Ok(stream)) => stream,
        Ok(Err(e)) => {
            return Ok(answer(
                StatusCode::BAD_GATEWAY,
                format!("offload: cannot reach {host}:{port}: {e}"),
            ));
        }
        Err(_) => {
            return Ok(answer(
                StatusCode::GATEWAY_TIMEOUT,
                format!("offload: {host}:{port} did not answer"),
            ));
        }
    };
    if req.method() == Method::CONNECT {
        tokio::spawn(async move {
            if let Ok(upgraded) = hyper::upgrade::on(req).await {
                let mut upstream = upstream;
                let _ =
                    tokio::io::copy_bidirectional(&mut TokioIo::new(upgraded), &mut upstream).await;
            }
        });
        return Ok(Response::new(Empty::new().map_err(|e| match e {}).boxed()));
    }
    Ok(forward(req, upstream)
        .await
        .unwrap_or_else(|e| answer(StatusCode::BAD_GATEWAY, format!("offload: {e}"))))
}

/// A plain-HTTP request, sent on to its host in origin form.
async fn forward(
    req: Request<Incoming>,
    upstream: tokio::net::TcpStream,
) -> Result<Response<Body>, hyper::Error> {
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(TokioIo::new(upstream)).await?;
    tokio::spawn(connection);
    let (mut parts, body) = req.into_parts();
    if let Some(origin) = parts.uri.path_and_query().cloned() {
        parts.uri = origin.as_str().parse().unwrap_or_default();
    }
    parts.headers.remove("proxy-connection");
    parts.headers.remove("proxy-authorization");
    let response = sender
        .send_request(Request::from_parts(parts, body))
        .await?;
    Ok(response.map(BodyExt::boxed))
}

#[cfg(test)]
mod tests;
