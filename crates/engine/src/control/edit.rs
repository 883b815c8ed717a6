//! What a change from the app answers when it fails, and the one way a change is written: to
//! `config.json`, then put in effect.

use serde::Serialize;

use crate::config::edit::EditError;
use crate::{Engine, ErrorCode};

/// A failed change: a stable code for the window to branch on, and a message that says what to
/// do.
#[derive(Debug, Clone, Serialize, thiserror::Error)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[error("{message}")]
pub struct ControlError {
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub code: ErrorCode,
    pub message: String,
}

impl ControlError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    pub(super) fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidArguments, message)
    }
}

impl From<EditError> for ControlError {
    fn from(e: EditError) -> Self {
        Self::new(e.code(), e.to_string())
    }
}

impl From<crate::config::ConfigError> for ControlError {
    fn from(e: crate::config::ConfigError) -> Self {
        Self::new(e.code(), e.to_string())
    }
}

/// Edits the engine's configuration file with `change` and puts the result in effect.
pub(super) async fn edit_config<T>(
    engine: &Engine,
    change: impl FnOnce(&mut serde_json::Map<String, serde_json::Value>) -> Result<T, EditError>,
) -> Result<T, ControlError> {
    let path = engine.config_path().ok_or_else(|| {
        ControlError::new(
            ErrorCode::ConfigInvalid,
            "this Offload runs without a configuration file, so it cannot be changed here",
        )
    })?;
    let answer = crate::config::edit::edit(path, change)?;
    engine.reload().await?;
    Ok(answer)
}
