//! Access tokens for Offload served over HTTP (`offload token create|list|revoke`, the app's
//! Tokens screen). A token is shown once when it is made; `tokens.json` in the data directory
//! keeps only its SHA-256, its name and scopes. The file is read again whenever it changes
//! (`shared_file`), so a token revoked by another process stops working on its next request.

use std::collections::BTreeSet;
use std::path::Path;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{Grant, Scope};
use crate::shared_file::SharedJson;

/// What every token starts with (so secret scanners and people recognise one).
const PREFIX: &str = "offload_";

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Record {
    name: String,
    scopes: BTreeSet<Scope>,
    created: DateTime<Utc>,
    /// Hex SHA-256 of the whole token.
    sha256: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct TokenFile {
    #[serde(default)]
    tokens: Vec<Record>,
}

/// A token as it is listed: never the token, never its hash.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct TokenInfo {
    pub name: String,
    pub scopes: Vec<Scope>,
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub created: DateTime<Utc>,
}

/// The access tokens in `tokens.json`.
pub struct Tokens {
    file: SharedJson<TokenFile>,
}

fn digest(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

impl Tokens {
    pub fn open(data_dir: &Path) -> Self {
        Self {
            file: SharedJson::new(data_dir.join("tokens.json")),
        }
    }

    fn save(&self, file: TokenFile) -> Result<(), String> {
        self.file
            .save(file)
            .map_err(|e| format!("cannot write {}: {e}", self.file.path().display()))
    }

    /// The tokens, oldest first.
    pub fn list(&self) -> Vec<TokenInfo> {
        self.file
            .load()
            .tokens
            .iter()
            .map(|r| TokenInfo {
                name: r.name.clone(),
                scopes: r.scopes.iter().copied().collect(),
                created: r.created,
            })
            .collect()
    }

    /// Makes a token named `name` and returns it: the only time it is ever shown.
    pub fn create(&self, name: &str, scopes: BTreeSet<Scope>) -> Result<String, String> {
        if !valid_name(name) {
            return Err(format!(
                "'{name}' is not a usable token name: use 1 to 64 letters, digits, '-', '_' or '.'"
            ));
        }
        if scopes.is_empty() {
            return Err("a token needs at least one scope: read, call, store".into());
        }
        let mut file = (*self.file.load()).clone();
        if file.tokens.iter().any(|r| r.name == name) {
            return Err(format!(
                "a token named '{name}' exists; revoke it first or choose another name"
            ));
        }
        let mut random = [0u8; 32];
        getrandom::fill(&mut random).map_err(|e| format!("no randomness for a token: {e}"))?;
        let token = format!("{PREFIX}{}", hex::encode(random));
        file.tokens.push(Record {
            name: name.to_owned(),
            scopes,
            created: Utc::now(),
            sha256: digest(&token),
        });
        self.save(file)?;
        Ok(token)
    }

    /// Removes the token named `name`; `false` when there is none.
    pub fn revoke(&self, name: &str) -> Result<bool, String> {
        let mut file = (*self.file.load()).clone();
        let before = file.tokens.len();
        file.tokens.retain(|r| r.name != name);
        if file.tokens.len() == before {
            return Ok(false);
        }
        self.save(file)?;
        Ok(true)
    }

    /// The grant of a presented token, `None` when it is not (or no longer) one of ours.
    pub fn verify(&self, token: &str) -> Option<Grant> {
        if !token.starts_with(PREFIX) {
            return None;
        }
        let hash = digest(token);
        self.file
            .load()
            .tokens
            .iter()
            .find(|r| r.sha256 == hash)
            .map(|r| Grant {
                who: format!("token:{}", r.name),
                scopes: r.scopes.clone(),
            })
    }

    /// Whether any token exists (serving without one would lock everybody out).
    pub fn is_empty(&self) -> bool {
        self.file.load().tokens.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::parse_scopes;

    #[test]
    fn a_token_is_shown_once_and_kept_as_a_hash() {
        let dir = tempfile::tempdir().unwrap();
        let tokens = Tokens::open(dir.path());
        let token = tokens
            .create("ci", parse_scopes("read,call").unwrap())
            .unwrap();
        assert!(token.starts_with(PREFIX) && token.len() == PREFIX.len() + 64);
        let on_disk = std::fs::read_to_string(dir.path().join("tokens.json")).unwrap();
        assert!(!on_disk.contains(&token[PREFIX.len()..]), "{on_disk}");
        assert!(on_disk.contains(&digest(&token)));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join("tokens.json"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o077, 0, "tokens.json must be private: {mode:o}");
        }
        let grant = tokens.verify(&token).unwrap();
        assert_eq!(grant.who, "token:ci");
        assert_eq!(grant.scopes, parse_scopes("read,call").unwrap());
        assert!(tokens.verify("offload_00").is_none());
        assert!(tokens.verify(&token.to_uppercase()).is_none());
        assert_eq!(tokens.list()[0].name, "ci");
    }

    #[test]
    fn a_revoked_token_fails_in_another_process_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let server = Tokens::open(dir.path());
        let admin = Tokens::open(dir.path());
        let token = admin.create("a", parse_scopes("read").unwrap()).unwrap();
        assert!(server.verify(&token).is_some());
        assert!(admin.revoke("a").unwrap());
        assert!(server.verify(&token).is_none());
        assert!(!admin.revoke("a").unwrap());
    }

    #[test]
    fn names_are_unique_and_plain() {
        let dir = tempfile::tempdir().unwrap();
        let tokens = Tokens::open(dir.path());
        tokens.create("x", parse_scopes("read").unwrap()).unwrap();
        assert!(
            tokens
                .create("x", parse_scopes("read").unwrap())
                .unwrap_err()
                .contains("exists")
        );
        assert!(tokens.create("a b", parse_scopes("read").unwrap()).is_err());
        assert!(tokens.create("", parse_scopes("read").unwrap()).is_err());
        assert!(tokens.create("y", BTreeSet::new()).is_err());
    }

    #[test]
    fn a_damaged_file_accepts_no_token() {
        let dir = tempfile::tempdir().unwrap();
        let tokens = Tokens::open(dir.path());
        let token = tokens.create("a", parse_scopes("read").unwrap()).unwrap();
        std::fs::write(dir.path().join("tokens.json"), b"{not json").unwrap();
        assert!(tokens.verify(&token).is_none());
    }
}
