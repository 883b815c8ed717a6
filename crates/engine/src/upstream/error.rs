//! What can go wrong talking to an upstream server, with a stable code for each case.

use crate::{ErrorCode, ToolError};

#[derive(Debug, Clone, thiserror::Error)]
pub enum UpstreamError {
    #[error("no upstream server is called '{name}'{}", suggest(suggestions))]
    UnknownServer {
        name: String,
        suggestions: Vec<String>,
    },
    #[error("server '{server}' has no tool '{tool}'{}", suggest(suggestions))]
    UnknownTool {
        server: String,
        tool: String,
        suggestions: Vec<String>,
    },
    #[error(
        "server '{name}' is disabled in Offload's configuration; the user can enable it in the app or in config.json"
    )]
    Disabled { name: String },
    #[error("server '{name}' is not available: {message}")]
    Unavailable {
        name: String,
        message: String,
        code: ErrorCode,
    },
    #[error(
        "server '{name}' did not answer within {secs} s; the call was cancelled upstream. Try again, or ask the user to raise \"timeoutSecs\""
    )]
    Timeout { name: String, secs: u64 },
    #[error(
        "server '{name}' closed the connection during the call (the process exited){}; it will be restarted on the next call",
        stderr_hint(stderr)
    )]
    Closed { name: String, stderr: String },
    #[error("server '{name}' answered with an error: {message}")]
    Rpc {
        name: String,
        rpc_code: i32,
        message: String,
        /// The error's `data`, as the server sent it.
        data: Option<serde_json::Value>,
    },
    #[error("the call to server '{name}' was cancelled by the client")]
    Cancelled { name: String },
}

fn suggest(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => format!("; did you mean '{one}'?"),
        many => format!(
            "; closest: {}",
            many.iter()
                .map(|n| format!("'{n}'"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The stderr lines that say why (`StderrRing::cause`), quoted on one line.
fn stderr_hint(stderr: &str) -> String {
    let said: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if said.is_empty() {
        return String::new();
    }
    format!(
        "; stderr: {}",
        offload_formats::clip::clip(&said.join(" | "), 400)
    )
}

impl UpstreamError {
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::UnknownServer { .. } => ErrorCode::UnknownServer,
            Self::UnknownTool { .. } => ErrorCode::UnknownTool,
            Self::Disabled { .. } => ErrorCode::ServerDisabled,
            Self::Unavailable { code, .. } => *code,
            Self::Timeout { .. } => ErrorCode::UpstreamTimeout,
            Self::Closed { .. } => ErrorCode::UpstreamClosed,
            Self::Rpc { .. } => ErrorCode::UpstreamError,
            Self::Cancelled { .. } => ErrorCode::Cancelled,
        }
    }
}

impl From<UpstreamError> for ToolError {
    fn from(e: UpstreamError) -> Self {
        let mut t = ToolError::new(e.code(), e.to_string());
        match &e {
            UpstreamError::UnknownServer { name, suggestions } => {
                t = t
                    .with("server", name.as_str())
                    .with("suggestions", suggestions.clone());
            }
            UpstreamError::UnknownTool {
                server,
                tool,
                suggestions,
            } => {
                t = t
                    .with("server", server.as_str())
                    .with("tool", tool.as_str())
                    .with("suggestions", suggestions.clone());
            }
            UpstreamError::Rpc { name, rpc_code, .. } => {
                t = t.with("server", name.as_str()).with("rpc_code", *rpc_code);
            }
            UpstreamError::Timeout { name, secs } => {
                t = t.with("server", name.as_str()).with("timeout_secs", *secs);
            }
            UpstreamError::Disabled { name }
            | UpstreamError::Unavailable { name, .. }
            | UpstreamError::Closed { name, .. }
            | UpstreamError::Cancelled { name } => t = t.with("server", name.as_str()),
        }
        t
    }
}

/// Up to three names closest to `wanted`, best first: case-insensitive, by the better of
/// Jaro-Winkler (good for shared prefixes) and normalised Damerau-Levenshtein (good for short
/// names and transposed letters).
pub fn closest<'a>(wanted: &str, names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let wanted = wanted.to_lowercase();
    let mut scored: Vec<(f64, &str)> = names
        .into_iter()
        .map(|n| {
            let n_lower = n.to_lowercase();
            let jw = strsim::jaro_winkler(&wanted, &n_lower);
            let dl = strsim::normalized_damerau_levenshtein(&wanted, &n_lower);
            let contains =
                !wanted.is_empty() && (n_lower.contains(&wanted) || wanted.contains(&n_lower));
            (
                if contains {
                    jw.max(dl).max(0.8)
                } else {
                    jw.max(dl)
                },
                n,
            )
        })
        .filter(|(s, _)| *s >= 0.5)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored
        .into_iter()
        .take(3)
        .map(|(_, n)| n.to_owned())
        .collect()
}

/// Why a connection could not be opened; the code tells config problems from start failures.
#[derive(Debug)]
pub struct StartError {
    pub code: ErrorCode,
    pub message: String,
}

impl StartError {
    pub(super) fn unavailable(message: impl Into<String>) -> Self {
        Self {
            code: ErrorCode::ServerUnavailable,
            message: message.into(),
        }
    }
}

impl From<crate::config::ConfigError> for StartError {
    fn from(e: crate::config::ConfigError) -> Self {
        Self {
            code: e.code(),
            message: e.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::closest;

    #[test]
    fn closest_names_catch_short_typos_and_transpositions() {
        let names = ["fx", "github", "filesystem", "paged"];
        assert_eq!(closest("fix", names)[0], "fx");
        assert_eq!(closest("fz", names)[0], "fx");
        assert_eq!(closest("gihtub", names)[0], "github");
        assert_eq!(closest("FILESYSTEM", names)[0], "filesystem");
        assert!(closest("zzzzzz", names).is_empty());
    }
}
