//! Stable error codes and the error a tool answers with.
//!
//! Every failure a model can act on reaches it as a tool result with `isError: true`, a one-line
//! message that says what to do next, and `structuredContent.error = {code, message, ...}`.
//! Models and the UI branch on [`ErrorCode`], never on message text, so codes are never renamed.

use offload_formats::Format;
use offload_formats::files::FileError;
use offload_formats::inputs::InputError;
use serde::Serialize;
use serde_json::{Map, Value};

/// An error message without the Rust type names some libraries put in it: rmcp's read
/// "Transport [type::path<...>] error: ..."; the words are kept.
pub fn without_type_names(text: &str) -> String {
    match (text.find(" ["), text.rfind("] ")) {
        (Some(a), Some(b)) if b > a => format!("{}{}", &text[..a], &text[b + 1..]),
        _ => text.to_owned(),
    }
}

/// Machine-readable error codes. Serialised in `snake_case`; part of the public contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// No upstream server has that name.
    UnknownServer,
    /// The upstream server has no tool of that name.
    UnknownTool,
    /// The upstream server is disabled in the configuration.
    ServerDisabled,
    /// The upstream server could not be started or reached.
    ServerUnavailable,
    /// The upstream tool's definition changed since the user approved it: it is held until the
    /// user reviews it in Offload.
    ToolChanged,
    /// The upstream server refused Offload's credentials (HTTP 401/403): the user must sign in
    /// or fix its token.
    AuthRequired,
    /// The upstream answered with a JSON-RPC error.
    UpstreamError,
    /// The upstream did not answer within its timeout.
    UpstreamTimeout,
    /// The upstream connection closed (the process exited) during the call.
    UpstreamClosed,
    /// The client cancelled the call.
    Cancelled,
    /// The arguments are well-formed JSON but not acceptable (e.g. `tool_args` not an object).
    InvalidArguments,
    /// The path lies outside every allowed directory (after resolving symlinks).
    PathOutsideRoots,
    /// The path does not exist.
    PathNotFound,
    /// The path is inside a read-only root but the operation writes.
    ReadOnlyRoot,
    /// The path could not be used for another reason (permissions, not a directory, ...).
    PathUnusable,
    /// A file could not be parsed as its format (the details name the line).
    ParseError,
    /// A file is larger than the input limit.
    FileTooLarge,
    /// The arguments built from a file are larger than the upstream message budget.
    ArgumentsTooLarge,
    /// The upstream tool answered with `isError` (nothing was stored).
    UpstreamToolError,
    /// A file of that name exists; Offload never overwrites.
    FileExists,
    /// Writing the file failed (disk full, permissions, ...); nothing was left behind.
    WriteFailed,
    /// The requested file format is not one Offload knows.
    UnsupportedFormat,
    /// An operation hit its hard time limit and was stopped (e.g. PDF text extraction).
    Timeout,
    /// A `${keyring:}` or `${env:}` reference could not be resolved.
    SecretUnavailable,
    /// The configuration is invalid for this operation.
    ConfigInvalid,
    /// The user paused Offload in its app: upstream tools are not called until they resume it.
    Paused,
    /// The caller's access token (Offload served over HTTP) lacks the scope this call needs.
    Forbidden,
    /// A query (`query_file`) is wrong: the message names the problem and where.
    QueryError,
    /// The URL is not one the user allows (`urls.allow`), or it leads somewhere they did not
    /// allow (a redirect, a private address): nothing was fetched from there.
    UrlNotAllowed,
    /// An allowed URL could not be fetched (no answer, an HTTP error, a broken body).
    UrlUnreachable,
    /// A script (`run_script`) ran past its deadline and was stopped.
    ScriptTimeout,
    /// A script needed more memory than its cap.
    ScriptMemory,
    /// A script made more tool calls than its limit.
    TooManyCalls,
    /// A script threw (the details name the line and column).
    ScriptError,
    /// A tool a script called failed, and the script did not catch its `ToolError`.
    ToolError,
    /// The worker a script ran in stopped (a crash costs that one script).
    ScriptCrashed,
    /// Scripts cannot run here (no confined worker on this system).
    ScriptUnavailable,
    /// A bug or an unexpected condition inside Offload.
    Internal,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        // Kept in sync with the serde names above by a unit test.
        match self {
            Self::UnknownServer => "unknown_server",
            Self::UnknownTool => "unknown_tool",
            Self::ServerDisabled => "server_disabled",
            Self::ServerUnavailable => "server_unavailable",
            Self::AuthRequired => "auth_required",
            Self::ToolChanged => "tool_changed",
            Self::UpstreamError => "upstream_error",
            Self::UpstreamTimeout => "upstream_timeout",
            Self::UpstreamClosed => "upstream_closed",
            Self::Cancelled => "cancelled",
            Self::InvalidArguments => "invalid_arguments",
            Self::PathOutsideRoots => "path_outside_roots",
            Self::PathNotFound => "path_not_found",
            Self::ReadOnlyRoot => "read_only_root",
            Self::PathUnusable => "path_unusable",
            Self::ParseError => "parse_error",
            Self::FileTooLarge => "file_too_large",
            Self::ArgumentsTooLarge => "arguments_too_large",
            Self::UpstreamToolError => "upstream_tool_error",
            Self::FileExists => "file_exists",
            Self::WriteFailed => "write_failed",
            Self::UnsupportedFormat => "unsupported_format",
            Self::Timeout => "timeout",
            Self::SecretUnavailable => "secret_unavailable",
            Self::ConfigInvalid => "config_invalid",
            Self::Paused => "paused",
            Self::Forbidden => "forbidden",
            Self::QueryError => "query_error",
            Self::UrlNotAllowed => "url_not_allowed",
            Self::UrlUnreachable => "url_unreachable",
            Self::ScriptTimeout => "script_timeout",
            Self::ScriptMemory => "script_memory",
            Self::TooManyCalls => "too_many_calls",
            Self::ScriptError => "script_error",
            Self::ToolError => "tool_error",
            Self::ScriptCrashed => "script_crashed",
            Self::ScriptUnavailable => "script_unavailable",
            Self::Internal => "internal",
        }
    }
}

/// The error a tool answers with: a code, a message for the model, and details.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    pub code: ErrorCode,
    pub message: String,
    pub details: Map<String, Value>,
}

impl ToolError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            details: Map::new(),
        }
    }

    /// Adds a detail field to `structuredContent.error`.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.details.insert(key.to_owned(), value.into());
        self
    }

    /// The `{code, message, ...details}` object sent as `structuredContent.error`.
    pub fn to_json(&self) -> Value {
        let mut obj = Map::new();
        obj.insert("code".into(), self.code.as_str().into());
        obj.insert("message".into(), self.message.clone().into());
        for (k, v) in &self.details {
            obj.insert(k.clone(), v.clone());
        }
        Value::Object(obj)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn as_str_matches_serde_names() {
        for code in [
            ErrorCode::UnknownServer,
            ErrorCode::UnknownTool,
            ErrorCode::ServerDisabled,
            ErrorCode::ServerUnavailable,
            ErrorCode::UpstreamError,
            ErrorCode::UpstreamTimeout,
            ErrorCode::UpstreamClosed,
            ErrorCode::Cancelled,
            ErrorCode::InvalidArguments,
            ErrorCode::PathOutsideRoots,
            ErrorCode::PathNotFound,
            ErrorCode::ReadOnlyRoot,
            ErrorCode::PathUnusable,
            ErrorCode::ParseError,
            ErrorCode::FileTooLarge,
            ErrorCode::ArgumentsTooLarge,
            ErrorCode::UpstreamToolError,
            ErrorCode::FileExists,
            ErrorCode::WriteFailed,
            ErrorCode::UnsupportedFormat,
            ErrorCode::Timeout,
            ErrorCode::SecretUnavailable,
            ErrorCode::ConfigInvalid,
            ErrorCode::Paused,
            ErrorCode::Forbidden,
            ErrorCode::QueryError,
            ErrorCode::UrlNotAllowed,
            ErrorCode::UrlUnreachable,
            ErrorCode::ScriptTimeout,
            ErrorCode::ScriptMemory,
            ErrorCode::TooManyCalls,
            ErrorCode::ScriptError,
            ErrorCode::ToolError,
            ErrorCode::ScriptCrashed,
            ErrorCode::ScriptUnavailable,
            ErrorCode::Internal,
        ] {
            assert_eq!(
                serde_json::to_value(code).unwrap(),
                Value::from(code.as_str())
            );
        }
    }

    #[test]
    fn to_json_carries_code_message_and_details() {
        let e = ToolError::new(ErrorCode::UnknownServer, "no server 'x'").with("server", "x");
        assert_eq!(
            e.to_json(),
            serde_json::json!({"code": "unknown_server", "message": "no server 'x'", "server": "x"})
        );
    }
}

impl From<FileError> for ToolError {
    fn from(e: FileError) -> Self {
        let code = match &e {
            FileError::Io(_) => ErrorCode::PathUnusable,
            FileError::Cancelled => ErrorCode::Cancelled,
            FileError::Parse(_) => ErrorCode::ParseError,
            FileError::Binary(_) => ErrorCode::UnsupportedFormat,
            FileError::Invalid(_) => ErrorCode::InvalidArguments,
            FileError::Deadline(_) => ErrorCode::Timeout,
            FileError::TooLarge(_) => ErrorCode::FileTooLarge,
        };
        ToolError::new(code, e.to_string())
    }
}

/// A file that did not parse as `format`, as a tool error naming the file (and the line).
pub fn input_error(e: InputError, path: &str, format: Format) -> ToolError {
    if e.over_cap() {
        return ToolError::new(
            ErrorCode::FileTooLarge,
            format!(
                "{path}: {}; send a list in parts with batch_size (no size limit then)",
                e.message
            ),
        )
        .with("path", path);
    }
    let mut error = ToolError::new(
        ErrorCode::ParseError,
        format!(
            "{path} is not valid {}: {}",
            format.name().to_uppercase(),
            e.message
        ),
    )
    .with("path", path)
    .with("format", format.name());
    if let Some(line) = e.line {
        error = error.with("line", line);
    }
    error
}

#[cfg(test)]
mod format_errors {
    use super::*;

    #[test]
    fn file_errors_keep_their_kind_as_the_code() {
        let deadline = ToolError::from(FileError::Deadline("took too long".into()));
        assert_eq!(deadline.code, ErrorCode::Timeout);
        let binary = ToolError::from(FileError::Binary("a PNG image".into()));
        assert_eq!(binary.code, ErrorCode::UnsupportedFormat);
    }

    #[test]
    fn input_errors_name_the_file_the_format_and_the_line() {
        let e = input_error(
            InputError::parse("expected ','").at_line(3),
            "a.json",
            Format::Json,
        );
        assert_eq!(e.code, ErrorCode::ParseError);
        assert_eq!(e.message, "a.json is not valid JSON: expected ','");
        assert_eq!(e.to_json()["line"], 3);
    }
}
