//! Who may do what when Offload is served over HTTP: the scopes a caller holds and the grant the
//! HTTP front door attaches to each request. Sessions on stdio and the local socket carry no
//! grant and may do everything: the person who launched them owns the machine.

pub mod issuer;
pub mod tokens;

use std::collections::BTreeSet;
use std::fmt;

use serde::{Deserialize, Serialize};

pub use tokens::{TokenInfo, Tokens, Verdict};

/// What an access token allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// The file tools, listing tools and directories, reading resources.
    Read,
    /// Calling upstream tools (through `call_tool` or listed directly), prompts.
    Call,
    /// Writing into roots (`call_tool_and_store`).
    Store,
}

impl Scope {
    pub const ALL: [Scope; 3] = [Scope::Read, Scope::Call, Scope::Store];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Call => "call",
            Self::Store => "store",
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Parses `read,call,store` (spaces allowed, at least one scope).
pub fn parse_scopes(list: &str) -> Result<BTreeSet<Scope>, String> {
    let mut scopes = BTreeSet::new();
    for word in list.split([',', ' ']).filter(|w| !w.is_empty()) {
        let scope = Scope::ALL
            .into_iter()
            .find(|s| s.as_str() == word.to_ascii_lowercase())
            .ok_or_else(|| format!("unknown scope '{word}' (scopes are read, call, store)"))?;
        scopes.insert(scope);
    }
    if scopes.is_empty() {
        return Err("name at least one scope: read, call, store".into());
    }
    Ok(scopes)
}

/// Writes scopes as `read,call`.
pub fn scope_list(scopes: &BTreeSet<Scope>) -> String {
    scopes
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

/// What the caller of one HTTP request may do, and who it is (a token's name; logged, never the
/// token itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub who: String,
    pub scopes: BTreeSet<Scope>,
}

impl Grant {
    /// Everything (a loopback bind the user opened without authentication).
    pub fn everything(who: &str) -> Self {
        Self {
            who: who.to_owned(),
            scopes: Scope::ALL.into_iter().collect(),
        }
    }

    /// The scopes of `needed` this grant lacks (empty when it allows the call).
    pub fn missing(&self, needed: &[Scope]) -> Vec<Scope> {
        needed
            .iter()
            .copied()
            .filter(|s| !self.scopes.contains(s))
            .collect()
    }
}

/// The grant the HTTP front door attached to the request an MCP handler is serving; `None` for
/// stdio and local-socket sessions (no HTTP request behind them).
pub fn grant_of(extensions: &rmcp::model::Extensions) -> Option<&Grant> {
    extensions
        .get::<http::request::Parts>()?
        .extensions
        .get::<Grant>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_parse_and_print() {
        let s = parse_scopes("read, CALL").unwrap();
        assert_eq!(scope_list(&s), "read,call");
        assert!(parse_scopes("read,admin").unwrap_err().contains("admin"));
        assert!(parse_scopes(" , ").is_err());
    }

    #[test]
    fn a_grant_names_what_it_lacks() {
        let g = Grant {
            who: "ci".into(),
            scopes: parse_scopes("read").unwrap(),
        };
        assert_eq!(g.missing(&[Scope::Read, Scope::Store]), vec![Scope::Store]);
        assert!(Grant::everything("x").missing(&Scope::ALL).is_empty());
    }

    #[test]
    fn requests_without_http_parts_carry_no_grant() {
        let mut ext = rmcp::model::Extensions::new();
        assert!(grant_of(&ext).is_none());
        let (mut parts, ()) = http::Request::new(()).into_parts();
        parts.extensions.insert(Grant::everything("t"));
        ext.insert(parts);
        assert_eq!(grant_of(&ext).unwrap().who, "t");
    }
}
