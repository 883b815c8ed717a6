//! Fetching one allowed URL: every hop (the URL, then each redirect) is checked against the
//! allow-list and its host's addresses against the private ranges, and the connection goes to
//! exactly the addresses checked (no second DNS answer can swap them: DNS rebinding). No proxy
//! from the environment, no automatic redirects, no decompression; a size limit and one
//! deadline for the whole fetch.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::time::Instant;
use url::Url;

use super::Rules;
use super::address::is_public;
use crate::{ErrorCode, ToolError};

const MAX_REDIRECTS: usize = 5;

/// An answer whose body is still to be read.
pub struct Opened {
    pub response: reqwest::Response,
    pub final_url: Url,
    pub content_type: Option<String>,
}

/// Parses `input` as a URL Offload may fetch (http or https, no user-info).
pub fn parse(input: &str) -> Result<Url, ToolError> {
    let url = Url::parse(input.trim()).map_err(|e| {
        ToolError::new(
            ErrorCode::InvalidArguments,
            format!("{input} is not a URL: {e}"),
        )
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(not_allowed(&url, "only http and https URLs are fetched"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(not_allowed(
            &url,
            "URLs with a user name or password are not fetched",
        ));
    }
    Ok(url)
}

/// Opens `url` (following up to five redirects, each checked), by `deadline`.
pub async fn open(rules: &Rules, url: &Url, deadline: Instant) -> Result<Opened, ToolError> {
    let mut at = url.clone();
    // The URL that redirected to `at`, for the message when `at` is not allowed.
    let mut from: Option<Url> = None;
    for _ in 0..=MAX_REDIRECTS {
        let pattern = rules.allowing(&at).map_err(|e| match &from {
            Some(from) => redirected(from, &at, &e),
            None => e,
        })?;
        let addresses = addresses(&at, pattern.names_host(), deadline).await?;
        let client = client(&at, &addresses)?;
        let response = tokio::time::timeout_at(deadline, client.get(at.clone()).send())
            .await
            .map_err(|_| timed_out(url, rules))?
            .map_err(|e| unreachable(&at, &plain(&e)))?;
        let status = response.status();
        if status.is_redirection() {
            let location = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .ok_or_else(|| unreachable(&at, &format!("{status} without a Location")))?;
            let next = at.join(location).map_err(|e| {
                unreachable(&at, &format!("{status} to {location:?}, not a URL: {e}"))
            })?;
            let next = parse(next.as_str()).map_err(|e| redirected(&at, &next, &e))?;
            from = Some(std::mem::replace(&mut at, next));
            continue;
        }
        if !status.is_success() {
            return Err(unreachable(&at, &format!("the server answered {status}")));
        }
        if let Some(length) = response.content_length()
            && length > rules.max_bytes
        {
            return Err(too_large(&at, rules.max_bytes));
        }
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|t| t.to_str().ok())
            .map(str::to_owned);
        return Ok(Opened {
            response,
            final_url: at,
            content_type,
        });
    }
    Err(unreachable(
        url,
        &format!("more than {MAX_REDIRECTS} redirects"),
    ))
}

/// The host's addresses, every one of them public unless the pattern names the host.
async fn addresses(
    url: &Url,
    named: bool,
    deadline: Instant,
) -> Result<Vec<SocketAddr>, ToolError> {
    let port = url.port_or_known_default().unwrap_or(443);
    let addresses: Vec<SocketAddr> = match url.host() {
        Some(url::Host::Ipv4(ip)) => vec![SocketAddr::new(ip.into(), port)],
        Some(url::Host::Ipv6(ip)) => vec![SocketAddr::new(ip.into(), port)],
        Some(url::Host::Domain(host)) => {
            let lookup = tokio::net::lookup_host((host, port));
            tokio::time::timeout_at(deadline, lookup)
                .await
                .map_err(|_| unreachable(url, "its host name did not resolve in time"))?
                .map_err(|e| unreachable(url, &format!("its host name does not resolve: {e}")))?
                .collect()
        }
        None => return Err(unreachable(url, "it names no host")),
    };
    if addresses.is_empty() {
        return Err(unreachable(url, "its host name has no address"));
    }
    if !named && let Some(private) = addresses.iter().find(|a| !is_public(a.ip())) {
        return Err(not_allowed(
            url,
            &format!(
                "its host is at {}, a private, loopback or link-local address; a pattern in \
                 urls.allow that names this host (without *) allows it",
                private.ip()
            ),
        ));
    }
    Ok(addresses)
}

fn client(url: &Url, addresses: &[SocketAddr]) -> Result<reqwest::Client, ToolError> {
    let mut builder = crate::crypto::http_client()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(Duration::from_secs(15))
        .user_agent(concat!("offload/", env!("CARGO_PKG_VERSION")));
    if let Some(url::Host::Domain(host)) = url.host() {
        builder = builder.resolve_to_addrs(host, addresses);
    }
    builder
        .build()
        .map_err(|e| ToolError::new(ErrorCode::Internal, format!("no HTTP client: {e}")))
}

/// A URL as the messages show it: without its query (which may hold a token).
pub fn shown(url: &Url) -> String {
    let mut u = url.clone();
    if u.query().is_some() {
        u.set_query(Some("…"));
    }
    u.to_string()
}

pub fn not_allowed(url: &Url, why: &str) -> ToolError {
    ToolError::new(
        ErrorCode::UrlNotAllowed,
        format!("{} is not fetched: {why}", shown(url)),
    )
    .with("url", shown(url))
}

fn redirected(from: &Url, to: &Url, e: &ToolError) -> ToolError {
    ToolError::new(
        ErrorCode::UrlNotAllowed,
        format!(
            "{} redirects to {}, which is not fetched: {}",
            shown(from),
            shown(to),
            e.message
        ),
    )
    .with("url", shown(from))
}

pub fn unreachable(url: &Url, why: &str) -> ToolError {
    ToolError::new(
        ErrorCode::UrlUnreachable,
        format!("{} could not be fetched: {why}", shown(url)),
    )
    .with("url", shown(url))
}

pub fn timed_out(url: &Url, rules: &Rules) -> ToolError {
    ToolError::new(
        ErrorCode::Timeout,
        format!(
            "{} was not fetched within {} s (urls.timeoutSecs); nothing was kept",
            shown(url),
            rules.timeout.as_secs()
        ),
    )
    .with("url", shown(url))
}

pub fn too_large(url: &Url, max: u64) -> ToolError {
    ToolError::new(
        ErrorCode::FileTooLarge,
        format!(
            "{} is larger than {} (urls.maxBytes); nothing was kept",
            shown(url),
            offload_formats::units::human_bytes(max)
        ),
    )
    .with("url", shown(url))
}

/// A reqwest error in words, with its causes (the top level alone says "error sending request").
fn plain(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}
