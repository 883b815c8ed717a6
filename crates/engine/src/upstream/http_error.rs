//! What went wrong reaching a streamable-HTTP upstream, in words a user can act on: the status
//! and the URL, and what to check (the URL, `headers`, the token, signing in). rmcp's errors
//! quote internal type names (`Transport [...StreamableHttpClientWorker<reqwest...>] error`);
//! none of that reaches a message. A 401 or 403 is `auth_required`, not `server_unavailable`.

use rmcp::service::ClientInitializeError;
use rmcp::transport::streamable_http_client::StreamableHttpError;

use super::error::StartError;
use crate::ErrorCode;

type HttpError = StreamableHttpError<reqwest::Error>;

/// What a model is told when a server needs the user to sign in (the server's name leads the
/// message where it is shown).
pub const SIGN_IN_REQUIRED: &str = "it needs you to sign in: open Offload and click Sign in next to it on the Servers screen (or run `offload auth login` with its name)";
const SIGN_IN_AGAIN: &str =
    "sign in to it again in Offload (Servers screen, or `offload auth login`)";

/// What a model is told when a server wants more access (`insufficient_scope`) than the
/// sign-in holds.
pub fn needs_scope(scope: Option<&str>) -> String {
    format!(
        "it needs more access than Offload was granted{}; {SIGN_IN_AGAIN}",
        scope
            .map(|s| format!(" (scope \"{s}\")"))
            .unwrap_or_default()
    )
}

/// The start error for a failed handshake with the server at `url`; `signs_in` when it is
/// reached with an OAuth sign-in (no static `Authorization` header).
pub fn explain(url: &str, e: &ClientInitializeError, signs_in: bool) -> StartError {
    let unavailable = |message: String| StartError {
        code: ErrorCode::ServerUnavailable,
        message,
    };
    let ClientInitializeError::TransportError { error, .. } = e else {
        return unavailable(format!("the MCP handshake with {url} failed: {}", plain(e)));
    };
    let Some(http) = error.error.downcast_ref::<HttpError>() else {
        return unavailable(format!(
            "cannot talk to {url}: {}",
            chain(error.error.as_ref())
        ));
    };
    match http {
        HttpError::AuthRequired(_) if signs_in => StartError {
            code: ErrorCode::AuthRequired,
            message: SIGN_IN_REQUIRED.to_owned(),
        },
        HttpError::InsufficientScope(e) if signs_in => StartError {
            code: ErrorCode::AuthRequired,
            message: needs_scope(e.required_scope.as_deref()),
        },
        HttpError::Auth(auth) => StartError {
            code: ErrorCode::AuthRequired,
            message: format!(
                "its sign-in could not be used ({}); {SIGN_IN_AGAIN}",
                crate::oauth::describe(auth)
            ),
        },
        HttpError::AuthRequired(_) => StartError {
            code: ErrorCode::AuthRequired,
            message: format!(
                "{url} answered 401 Unauthorized: it needs credentials. Check the token in the server's \"headers\" (for example \"Authorization\": \"Bearer ${{keyring:NAME}}\"), or sign in to it in Offload"
            ),
        },
        HttpError::InsufficientScope(_) => StartError {
            code: ErrorCode::AuthRequired,
            message: format!(
                "{url} answered 403 Forbidden: the credentials in the server's \"headers\" are not allowed to use it (insufficient scope); use a token with more access"
            ),
        },
        HttpError::HttpStatus(status) => unavailable(format!(
            "{url} answered HTTP {}{}; check the URL and that the server is up",
            status.status,
            status
                .retry_after
                .as_deref()
                .map(|r| format!(" (retry after {r})"))
                .unwrap_or_default()
        )),
        HttpError::Client(e) => unavailable(format!(
            "cannot reach {url}: {}; check the URL and that the server is running",
            chain(e)
        )),
        HttpError::UnexpectedServerResponse(why) => {
            let status = why
                .split_whitespace()
                .find_map(|w| {
                    w.trim_matches(|c: char| !c.is_ascii_digit())
                        .parse::<u16>()
                        .ok()
                })
                .filter(|s| (400..600).contains(s));
            match status {
                Some(401 | 403) => StartError {
                    code: ErrorCode::AuthRequired,
                    message: format!(
                        "{url} refused the request ({why}); check the token in the server's \"headers\", or sign in to it in Offload"
                    ),
                },
                _ => unavailable(format!(
                    "{url} did not answer as an MCP server ({why}); check the URL (it usually ends in /mcp)"
                )),
            }
        }
        HttpError::UnexpectedContentType(kind) => unavailable(format!(
            "{url} answered with {} instead of MCP; check the URL (it usually ends in /mcp)",
            kind.as_deref().unwrap_or("no content type")
        )),
        other => unavailable(format!("cannot talk to {url}: {}", plain(other))),
    }
}

/// An error's message, with its sources, without Rust type names.
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![e.to_string()];
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = s.source();
    }
    parts.join(": ")
}

fn plain(e: &dyn std::fmt::Display) -> String {
    crate::error::without_type_names(&e.to_string())
}
