//! Offload's configuration: the `config.json` model, where it lives, and how it is loaded.
//!
//! The file uses the `mcpServers` shape every MCP client already uses, so entries can be pasted
//! unchanged. Unknown keys are kept (they round-trip through `extra`). A file that fails to parse
//! is reported with line and column and is never written over by this module.

mod compat;
pub mod edit;
mod interpolate;
mod model;
mod paths;
mod sandbox;

pub use compat::{CompatInputs, apply_compat};
pub use interpolate::{NoKeychain, SecretSource, interpolate, interpolate_noting, looks_secret};
pub use model::{
    Config, Expose, HttpConfig, Limits, OAuthConfig, Prefix, Retention, RootEntry, ServerEntry,
    StateEntry, Transport, UrlsConfig,
};
pub use paths::{AppDirs, expand_tilde};
pub use sandbox::{Sandbox, SandboxNetwork, SandboxPolicy};

use std::path::{Path, PathBuf};

/// Errors from loading or interpreting the configuration.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{path} is not valid JSON at line {line}, column {column}: {message}. Fix the file; Offload will not overwrite it."
    )]
    Parse {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error(
        "{path}, line {line}, column {column}: {message}. Fix the file; Offload will not overwrite it."
    )]
    Invalid {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{path}: {message}")]
    Missing { path: PathBuf, message: String },
    #[error("server '{server}': {message}")]
    Server { server: String, message: String },
    #[error("{0}")]
    Secret(String),
}

impl ConfigError {
    pub fn code(&self) -> crate::ErrorCode {
        match self {
            Self::Secret(_) => crate::ErrorCode::SecretUnavailable,
            _ => crate::ErrorCode::ConfigInvalid,
        }
    }
}

impl Config {
    /// Reads `path`: [`Config::load_required`] when the person named it, else
    /// [`Config::load`].
    pub fn read(path: &Path, required: bool) -> Result<Self, ConfigError> {
        if required {
            Self::load_required(path)
        } else {
            Self::load(path)
        }
    }

    /// Reads `path`. A missing file is an empty configuration; anything else that goes wrong is
    /// an error naming the file (and line and column for JSON errors).
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(source) => {
                return Err(ConfigError::Read {
                    path: path.to_owned(),
                    source,
                });
            }
        };
        Self::parse(&text, path)
    }

    /// Reads a file the person named: missing or empty is an error, not an empty
    /// configuration.
    pub fn load_required(path: &Path) -> Result<Self, ConfigError> {
        let missing = |message: &str| ConfigError::Missing {
            path: path.to_owned(),
            message: message.to_owned(),
        };
        match std::fs::read_to_string(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(missing(
                "the configuration file given with --config (or OFFLOAD_CONFIG) does not exist",
            )),
            Err(source) => Err(ConfigError::Read {
                path: path.to_owned(),
                source,
            }),
            Ok(text) if text.trim().is_empty() => Err(missing(
                "the configuration file is empty; write {\"mcpServers\": {...}} into it",
            )),
            Ok(text) => Self::parse(&text, path),
        }
    }

    /// Parses configuration text; `origin` names the file in errors. A file that is JSON but
    /// holds a wrong value (a string for a number, say) is said to be that, not "not JSON".
    pub fn parse(text: &str, origin: &Path) -> Result<Self, ConfigError> {
        if text.trim().is_empty() {
            return Ok(Self::default());
        }
        serde_json::from_str(text).map_err(|e| {
            let (path, line, column) = (origin.to_owned(), e.line(), e.column());
            let message = strip_position(&e.to_string());
            match e.classify() {
                serde_json::error::Category::Data => ConfigError::Invalid {
                    path,
                    line,
                    column,
                    message,
                },
                _ => ConfigError::Parse {
                    path,
                    line,
                    column,
                    message,
                },
            }
        })
    }
}

/// serde_json appends " at line L column C" to its messages; we report those separately.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message.to_owned(),
    }
}

#[cfg(test)]
mod tests;
