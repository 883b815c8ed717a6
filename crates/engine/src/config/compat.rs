//! Compatibility with earlier file proxies: positional directories, `APP_CONFIG_PATH` and
//! `ABSTRACT_PROXY_SERVERS`, so a user can swap the command in their client config and keep the
//! rest.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Config, ConfigError, RootEntry, ServerEntry};

/// What the command line and environment add to the configuration file.
#[derive(Debug, Clone, Default)]
pub struct CompatInputs {
    /// Positional `DIR` arguments: they replace the configured roots (read-write, first = default).
    pub dirs: Vec<String>,
    /// `APP_CONFIG_PATH`: a client config whose `mcpServers` (or `servers`) become upstreams.
    pub app_config_path: Option<PathBuf>,
    /// `ABSTRACT_PROXY_SERVERS`: comma-separated names to take from that file (all when absent).
    pub proxy_servers: Option<String>,
}

/// Applies `inputs` to `config`; returns warnings worth logging.
pub fn apply_compat(
    config: &mut Config,
    inputs: &CompatInputs,
) -> Result<Vec<String>, ConfigError> {
    let mut warnings = Vec::new();
    if !inputs.dirs.is_empty() {
        config.roots = inputs.dirs.iter().cloned().map(RootEntry::Path).collect();
    }
    let Some(path) = &inputs.app_config_path else {
        return Ok(warnings);
    };
    let wanted: Option<Vec<String>> = inputs.proxy_servers.as_ref().map(|s| {
        s.split(',')
            .map(|n| n.trim().to_owned())
            .filter(|n| !n.is_empty())
            .collect()
    });
    let imported = read_client_servers(path)?;
    if let Some(wanted) = &wanted {
        for name in wanted {
            if !imported.iter().any(|(n, _)| n == name) {
                warnings.push(format!(
                    "ABSTRACT_PROXY_SERVERS names '{name}', which {} does not define",
                    path.display()
                ));
            }
        }
    }
    for (name, entry) in imported {
        if wanted.as_ref().is_some_and(|w| !w.contains(&name)) {
            continue;
        }
        if is_offload_itself(&entry) {
            warnings.push(format!(
                "skipping '{name}' from {}: it is Offload itself",
                path.display()
            ));
            continue;
        }
        if config.mcp_servers.iter().any(|(n, _)| *n == name) {
            warnings.push(format!(
                "'{name}' from {} is also in Offload's config; keeping Offload's",
                path.display()
            ));
            continue;
        }
        config.mcp_servers.push((name, entry));
    }
    Ok(warnings)
}

/// Reads the servers of a client configuration file (`mcpServers`, or VS Code's `servers`).
fn read_client_servers(path: &Path) -> Result<Vec<(String, ServerEntry)>, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_owned(),
        source,
    })?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| ConfigError::Parse {
        path: path.to_owned(),
        line: e.line(),
        column: e.column(),
        message: super::strip_position(&e.to_string()),
    })?;
    let servers = doc
        .get("mcpServers")
        .or_else(|| doc.get("servers"))
        .cloned()
        .unwrap_or(Value::Object(Default::default()));
    let Value::Object(map) = servers else {
        return Err(ConfigError::Server {
            server: String::new(),
            message: format!("{}: \"mcpServers\" is not an object", path.display()),
        });
    };
    map.into_iter()
        .map(|(name, v)| {
            serde_json::from_value::<ServerEntry>(v)
                .map(|e| (name.clone(), e))
                .map_err(|e| ConfigError::Server {
                    server: name,
                    message: format!("in {}: {e}", path.display()),
                })
        })
        .collect()
}

/// An entry that would make Offload proxy to itself (`offload mcp`).
fn is_offload_itself(entry: &ServerEntry) -> bool {
    let Some(cmd) = &entry.command else {
        return false;
    };
    let stem = Path::new(cmd)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    stem == "offload" && entry.args.first().map(String::as_str) == Some("mcp")
}
