//! Secrets of server entries (env values and headers) kept in the OS keychain and written to
//! `config.json` as `${keyring:NAME}`, so the file never holds them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::edit::ControlError;
use super::spec::ServerSpec;
use crate::keychain;
use crate::{Engine, ErrorCode};

/// Where in a server entry a value lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum Place {
    Env,
    Header,
}

/// A value of the entry that is a keychain reference.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SecretRef {
    pub place: Place,
    pub key: String,
    /// The keychain entry (`${keyring:NAME}`).
    pub name: String,
    /// Whether the keychain holds it.
    pub present: bool,
}

/// A value that looks like a secret (by its key) and is written in the file in plain text.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PlainSecret {
    pub place: Place,
    pub key: String,
}

/// A value the editor marked secret: saved to the keychain, referenced from the file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct NewSecret {
    pub place: Place,
    pub key: String,
    pub value: String,
}

/// The keychain name Offload gives the value `key` of `server`.
pub fn secret_name(server: &str, key: &str) -> String {
    format!("{server}_{key}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '.') {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// `NAME` when `value` is exactly `${keyring:NAME}`.
fn reference(value: &str) -> Option<&str> {
    value
        .trim()
        .strip_prefix("${keyring:")?
        .strip_suffix('}')
        .filter(|n| keychain::check_name(n).is_ok())
}

fn fields(spec: &ServerSpec) -> impl Iterator<Item = (Place, &String, &String)> {
    let env = spec.env.iter().map(|(k, v)| (Place::Env, k, v));
    let headers = spec.headers.iter().map(|(k, v)| (Place::Header, k, v));
    env.chain(headers)
}

fn field_mut(spec: &mut ServerSpec, place: Place) -> &mut BTreeMap<String, String> {
    match place {
        Place::Env => &mut spec.env,
        Place::Header => &mut spec.headers,
    }
}

/// The keychain entries `spec` refers to.
pub(super) fn referenced(spec: &ServerSpec) -> impl Iterator<Item = &str> {
    fields(spec).filter_map(|(_, _, value)| reference(value))
}

/// The keychain references of `spec`, and whether each is in the keychain.
pub fn secret_refs(engine: &Engine, spec: &ServerSpec) -> Vec<SecretRef> {
    fields(spec)
        .filter_map(|(place, key, value)| {
            let name = reference(value)?;
            Some(SecretRef {
                place,
                key: key.clone(),
                name: name.to_owned(),
                present: matches!(engine.secrets.secret(name), Ok(Some(_))),
            })
        })
        .collect()
}

/// The values of `spec` that look like secrets and are written in plain text.
pub fn plain_secrets(spec: &ServerSpec) -> Vec<PlainSecret> {
    fields(spec)
        .filter(|(_, key, value)| {
            crate::config::looks_secret(key) && !value.trim().is_empty() && !value.contains("${")
        })
        .map(|(place, key, _)| PlainSecret {
            place,
            key: key.clone(),
        })
        .collect()
}

/// Saves `secrets` to the keychain and points `spec` at them. Answers the names saved, so a
/// failed config write can take them back.
pub(super) fn save(
    engine: &Engine,
    server: &str,
    spec: &mut ServerSpec,
    secrets: &[NewSecret],
) -> Result<Vec<String>, ControlError> {
    let mut saved = Vec::new();
    for s in secrets {
        if s.key.trim().is_empty() {
            return Err(ControlError::invalid("a secret needs a name"));
        }
        if s.value.is_empty() {
            return Err(ControlError::invalid(format!(
                "the secret '{}' is empty: type its value, or remove the row",
                s.key
            )));
        }
        let name = secret_name(server, &s.key);
        if let Err(why) = engine.secrets.set_secret(&name, &s.value) {
            forget(engine, &saved);
            return Err(ControlError::new(ErrorCode::SecretUnavailable, why));
        }
        field_mut(spec, s.place).insert(s.key.clone(), format!("${{keyring:{name}}}"));
        saved.push(name);
    }
    Ok(saved)
}

/// Writes `secrets` into `spec` as they are (for a trial that saves nothing).
pub(super) fn inline(spec: &mut ServerSpec, secrets: &[NewSecret]) -> Result<(), ControlError> {
    for s in secrets {
        if s.key.trim().is_empty() {
            return Err(ControlError::invalid("a secret needs a name"));
        }
        field_mut(spec, s.place).insert(s.key.clone(), s.value.clone());
    }
    Ok(())
}

/// Takes back secrets saved for a change that did not happen.
pub(super) fn forget(engine: &Engine, names: &[String]) {
    for name in names {
        if let Err(why) = engine.secrets.delete_secret(name) {
            tracing::warn!("{why}");
        }
    }
}

/// The plain-text secrets of `spec`, as values to move into the keychain.
pub(super) fn to_move(spec: &ServerSpec) -> Vec<NewSecret> {
    plain_secrets(spec)
        .into_iter()
        .map(|p| NewSecret {
            value: match p.place {
                Place::Env => spec.env[&p.key].clone(),
                Place::Header => spec.headers[&p.key].clone(),
            },
            place: p.place,
            key: p.key,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_keychain_safe_and_references_are_exact() {
        assert_eq!(secret_name("My Server", "API_KEY"), "my_server_api_key");
        assert_eq!(secret_name("a.b", "x-y"), "a.b_x-y");
        assert_eq!(
            reference("${keyring:tavily_api_key}"),
            Some("tavily_api_key")
        );
        assert_eq!(reference("Bearer ${keyring:t}"), None);
        assert_eq!(reference("${keyring:}"), None);
        assert_eq!(reference("${env:HOME}"), None);
    }

    #[test]
    fn plain_secrets_are_found_by_key_and_references_are_not() {
        let spec = ServerSpec {
            env: BTreeMap::from([
                ("API_KEY".into(), "abc".into()),
                ("TOKEN".into(), "${keyring:x}".into()),
                ("MODE".into(), "fast".into()),
                ("PASSWORD".into(), String::new()),
            ]),
            headers: BTreeMap::from([("Authorization".into(), "Bearer abc".into())]),
            ..ServerSpec::default()
        };
        let keys: Vec<_> = plain_secrets(&spec).into_iter().map(|p| p.key).collect();
        assert_eq!(keys, ["API_KEY", "Authorization"]);
    }
}
