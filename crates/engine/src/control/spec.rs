//! A server's entry as the Servers screen edits it, and back.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::edit::ControlError;
use crate::config::ServerEntry;

/// The part of a server entry people edit; keys Offload does not know are kept in the file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ServerSpec {
    /// `stdio` or `http`.
    pub transport: String,
    #[serde(default)]
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub url: String,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub timeout_secs: Option<u64>,
    #[serde(default)]
    pub enabled: bool,
    /// A stdio server's confinement: `"off"`, or what it may touch beyond the defaults
    /// (absent: the defaults).
    #[serde(default)]
    #[cfg_attr(
        feature = "ts",
        ts(
            type = "\"off\" | { network?: \"off\" | \"all\" | { allow: string[] }, read?: string[], write?: string[], env?: string[], memory_mb?: number, processes?: number, unix_sockets?: boolean } | null"
        )
    )]
    pub sandbox: Option<crate::config::Sandbox>,
}

impl ServerSpec {
    pub(super) fn from_entry(name: &str, entry: &ServerEntry) -> Self {
        // The URL as the transport reads it: also Windsurf's `serverUrl` and Gemini's `httpUrl`.
        let remote = match entry.transport(name) {
            Ok(crate::config::Transport::Http { url, .. }) => Some(url),
            _ => None,
        };
        Self {
            transport: if remote.is_some() { "http" } else { "stdio" }.into(),
            command: entry.command.clone().unwrap_or_default(),
            args: entry.args.clone(),
            env: entry.env.clone(),
            cwd: entry.cwd.clone(),
            url: remote.unwrap_or_default(),
            headers: entry.headers.clone(),
            timeout_secs: entry.timeout_secs,
            enabled: !entry.disabled,
            sandbox: entry.sandbox.clone(),
        }
    }

    pub(super) fn to_entry(&self) -> Result<ServerEntry, ControlError> {
        let some = |s: &str| Some(s.trim().to_owned()).filter(|s| !s.is_empty());
        let mut entry = ServerEntry {
            disabled: !self.enabled,
            timeout_secs: self.timeout_secs.filter(|s| *s > 0),
            ..ServerEntry::default()
        };
        match self.transport.as_str() {
            "stdio" => {
                entry.command = Some(some(&self.command).ok_or_else(|| {
                    ControlError::invalid("a stdio server needs a command to run")
                })?);
                entry.args = self.args.clone();
                entry.env = self.env.clone();
                entry.cwd = self.cwd.as_deref().and_then(some);
                entry.sandbox = self.sandbox.clone();
            }
            "http" => {
                let url = some(&self.url)
                    .ok_or_else(|| ControlError::invalid("an HTTP server needs a URL"))?;
                url::Url::parse(&url)
                    .map_err(|e| ControlError::invalid(format!("'{url}' is not a URL ({e})")))?;
                entry.kind = Some("http".into());
                entry.url = Some(url);
                entry.headers = self.headers.clone();
            }
            other => {
                return Err(ControlError::invalid(format!(
                    "unknown transport '{other}' (use stdio or http)"
                )));
            }
        }
        Ok(entry)
    }
}
