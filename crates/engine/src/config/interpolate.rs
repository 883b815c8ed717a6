//! `${env:NAME}` and `${keyring:NAME}` references in server entries.
//!
//! Values are resolved when a server starts, so one missing secret disables one server, not the
//! whole configuration. Error messages name the reference, never a value.

use super::ConfigError;

/// Where `${keyring:NAME}` values come from (the OS keychain in the desktop build).
pub trait SecretSource: Send + Sync {
    /// The secret called `name`, `Ok(None)` when there is none.
    fn secret(&self, name: &str) -> Result<Option<String>, String>;

    /// Saves `value` as the secret `name` (the app's server editor). Read-only by default.
    fn set_secret(&self, name: &str, _value: &str) -> Result<(), String> {
        Err(format!(
            "cannot save '{name}': no writable keychain is available to this process"
        ))
    }

    /// Removes the secret `name`; removing one that is not there is not an error.
    fn delete_secret(&self, name: &str) -> Result<(), String> {
        Err(format!(
            "cannot remove '{name}': no writable keychain is available to this process"
        ))
    }
}

/// The secret source used when no keychain is wired in: every `${keyring:}` lookup fails with a
/// message saying so, rather than silently resolving to an empty string.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoKeychain;

impl SecretSource for NoKeychain {
    fn secret(&self, _name: &str) -> Result<Option<String>, String> {
        Err("no OS keychain is available to this process; use ${env:NAME} or set the value directly".into())
    }
}

/// Replaces every `${env:NAME}` and `${keyring:NAME}` in `text`. Other `${...}` sequences are left
/// as they are (some clients use `${VAR}` themselves).
pub fn interpolate(text: &str, secrets: &dyn SecretSource) -> Result<String, ConfigError> {
    interpolate_noting(text, secrets, &mut Vec::new())
}

/// [`interpolate`], adding to `sensitive` every value that came from the keychain or from an
/// environment variable whose name looks secret (`${env:API_TOKEN}`), so that what a server
/// prints can be cleaned of them.
pub fn interpolate_noting(
    text: &str,
    secrets: &dyn SecretSource,
    sensitive: &mut Vec<String>,
) -> Result<String, ConfigError> {
    if !text.contains("${") {
        return Ok(text.to_owned());
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let inner = &after[..end];
        match inner.split_once(':') {
            Some(("env", name)) if !name.is_empty() => match std::env::var(name) {
                Ok(v) => {
                    if looks_secret(name) {
                        sensitive.push(v.clone());
                    }
                    out.push_str(&v)
                }
                Err(_) => {
                    return Err(ConfigError::Secret(format!(
                        "${{env:{name}}} is not set in Offload's environment"
                    )));
                }
            },
            Some(("keyring", name)) if !name.is_empty() => match secrets.secret(name) {
                Ok(Some(v)) => {
                    sensitive.push(v.clone());
                    out.push_str(&v)
                }
                Ok(None) => {
                    return Err(ConfigError::Secret(format!(
                        "${{keyring:{name}}} is not in the keychain (service \"offload\"); add it in the app or with your OS keychain tool"
                    )));
                }
                Err(why) => {
                    return Err(ConfigError::Secret(format!(
                        "${{keyring:{name}}} could not be read: {why}"
                    )));
                }
            },
            _ => out.push_str(&rest[start..start + 2 + end + 1]),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Whether a key (an argument, an env variable, a header) names something secret.
pub fn looks_secret(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    [
        "token",
        "secret",
        "password",
        "passwd",
        "apikey",
        "api_key",
        "api-key",
        "authorization",
        "auth",
        "credential",
        "private",
        "cookie",
        "session",
    ]
    .iter()
    .any(|s| k.contains(s))
}
