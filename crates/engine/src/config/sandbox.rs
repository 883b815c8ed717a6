//! `"sandbox"` in a stdio server's entry: `"off"`, or what the server may touch beyond the
//! defaults `upstream::confine` gives it. Read by hand so a wrong value says what to write.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `"sandbox"` of a stdio server entry: `"off"`, or what it may touch beyond its defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sandbox {
    /// `"off"`: the server runs with the user's full rights (shown as unconfined).
    Off,
    Confined(SandboxPolicy),
}

impl Serialize for Sandbox {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Off => s.serialize_str("off"),
            Self::Confined(policy) => policy.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Sandbox {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        match Value::deserialize(d)? {
            Value::String(s) if s == "off" => Ok(Self::Off),
            Value::Object(o) => serde_json::from_value(Value::Object(o))
                .map(Self::Confined)
                .map_err(|e| D::Error::custom(format!("\"sandbox\": {e}"))),
            other => Err(D::Error::custom(format!(
                "\"sandbox\" is \"off\" or an object such as {{\"network\": \"all\", \"read\": [\"~/data\"]}}, not {other}"
            ))),
        }
    }
}

/// What a confined server may touch beyond its defaults (its roots, its state directory, the
/// paths its entry names, its runtime).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxPolicy {
    /// `"off"` (the default), `"all"`, or `{"allow": ["api.github.com", "host:port"]}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<SandboxNetwork>,
    /// More paths it may read (`~` allowed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read: Vec<String>,
    /// More paths it may read and write.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write: Vec<String>,
    /// Names of Offload's environment variables passed through.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<String>,
    /// Megabytes of memory it may allocate (default: half the machine's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mb: Option<u64>,
    /// Processes and threads it may run at once (default 1024).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processes: Option<u64>,
    /// Unix sockets: made (a browser's own), and connected to wherever it can name one (an
    /// ssh-agent, the session bus, Docker's). Off by default.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unix_sockets: bool,
}

/// `"network"` of a sandbox entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SandboxNetwork {
    Off,
    All,
    /// Hosts (`api.github.com`, `*.example.org`) and `host:port`s.
    Allow(Vec<String>),
}

impl Serialize for SandboxNetwork {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Off => s.serialize_str("off"),
            Self::All => s.serialize_str("all"),
            Self::Allow(allow) => serde_json::json!({ "allow": allow }).serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for SandboxNetwork {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let value = Value::deserialize(d)?;
        match &value {
            Value::String(s) if s == "off" => return Ok(Self::Off),
            Value::String(s) if s == "all" => return Ok(Self::All),
            Value::Object(o) if o.len() == 1 => {
                if let Some(Value::Array(items)) = o.get("allow") {
                    let hosts: Option<Vec<String>> = items
                        .iter()
                        .map(|i| i.as_str().map(str::to_owned))
                        .collect();
                    if let Some(hosts) = hosts {
                        return Ok(Self::Allow(hosts));
                    }
                }
            }
            _ => {}
        }
        Err(D::Error::custom(format!(
            "\"network\" is \"off\", \"all\" or {{\"allow\": [\"api.github.com\", \"host:port\"]}}, not {value}"
        )))
    }
}
