//! Access tokens for Offload served over HTTP (`offload token create|list|revoke`, the app's
//! Tokens screen). A token is shown once when it is made; `tokens.json` in the data directory
//! keeps only its SHA-256, its name and scopes. The file is read again whenever it changes
//! (`shared_file`), so a token revoked by another process stops working on its next request.
//! Replicas on several machines keep them in the shared state instead (`http.state`: a bucket
//! prefix; `objects::SharedObject`), where a revocation made through one is seen by every
//! other within a quarter of a second and one request.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{Grant, Scope};
use crate::config::{HttpConfig, SecretSource};
use crate::objects::{Bucket, state_bucket};
use crate::shared_doc::{MAX_STALE, SharedDoc};

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

/// The access tokens: in `tokens.json` in the data directory, or, for replicas on several
/// machines, in the shared state (`http.state`, a bucket prefix).
pub struct Tokens {
    doc: SharedDoc<TokenFile>,
}

/// An unknown token makes a replica read the shared list again unless a read began after the
/// token arrived; such reads are at least this far apart (coalesced: many unknown tokens cost
/// one read).
const MISS_CHECK: Duration = Duration::from_millis(50);

/// What a presented token is worth.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    Granted(Grant),
    /// Not one of ours, or revoked.
    Unknown,
    /// The shared list cannot be checked now; why.
    Unchecked(String),
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
    /// The tokens in `data_dir/tokens.json`.
    pub fn open(data_dir: &Path) -> Self {
        Self::at(data_dir, None)
    }

    /// The tokens the configuration says where to keep: shared when `http.state` names a
    /// bucket, else in `data_dir`. A state entry that cannot be used accepts no token, and
    /// each use says why.
    pub fn of_config(
        data_dir: &Path,
        http: Option<&HttpConfig>,
        secrets: &dyn SecretSource,
    ) -> Self {
        Self::at(data_dir, state_bucket(http, secrets))
    }

    /// The tokens kept where `state` (what [`state_bucket`] made of `http.state`) says.
    pub fn at(data_dir: &Path, state: Option<Result<Bucket, String>>) -> Self {
        let doc = SharedDoc::at(data_dir, "tokens.json", state);
        if let Some(why) = doc.unusable() {
            tracing::error!("{why}; no access token is accepted");
        }
        Self { doc }
    }

    /// For a server that checks tokens as requests come: shared tokens are kept fresh by a
    /// task of their own (a revocation elsewhere is seen within a quarter of a second), for as
    /// long as these tokens are in use. Must run inside a runtime.
    pub fn keep_fresh(&self) {
        self.doc.keep_fresh();
    }

    /// Whether they are the replicas' shared tokens (or meant to be).
    pub fn is_shared(&self) -> bool {
        self.doc.is_shared()
    }

    /// Where they are kept, for messages.
    pub fn place(&self) -> String {
        self.doc.place()
    }

    /// The list as it is now (for shared tokens: read again).
    async fn current(&self) -> Result<Arc<TokenFile>, String> {
        self.doc.current().await
    }

    /// Applies `change` to the list and saves it (for shared tokens: only if no other replica
    /// changed it meanwhile, else on its version).
    async fn change<R>(
        &self,
        change: impl FnMut(&mut TokenFile) -> Result<R, String>,
    ) -> Result<R, String> {
        self.doc.change(change).await
    }

    /// The tokens, oldest first.
    pub async fn list(&self) -> Result<Vec<TokenInfo>, String> {
        Ok(self
            .current()
            .await?
            .tokens
            .iter()
            .map(|r| TokenInfo {
                name: r.name.clone(),
                scopes: r.scopes.iter().copied().collect(),
                created: r.created,
            })
            .collect())
    }

    /// Makes a token named `name` and returns it: the only time it is ever shown.
    pub async fn create(&self, name: &str, scopes: BTreeSet<Scope>) -> Result<String, String> {
        if !valid_name(name) {
            return Err(format!(
                "'{name}' is not a usable token name: use 1 to 64 letters, digits, '-', '_' or '.'"
            ));
        }
        if scopes.is_empty() {
            return Err("a token needs at least one scope: read, call, store".into());
        }
        let mut random = [0u8; 32];
        getrandom::fill(&mut random).map_err(|e| format!("no randomness for a token: {e}"))?;
        let token = format!("{PREFIX}{}", hex::encode(random));
        let record = Record {
            name: name.to_owned(),
            scopes,
            created: Utc::now(),
            sha256: digest(&token),
        };
        self.change(|file| {
            if file.tokens.iter().any(|r| r.name == name) {
                return Err(format!(
                    "a token named '{name}' exists; revoke it first or choose another name"
                ));
            }
            file.tokens.push(record.clone());
            Ok(())
        })
        .await?;
        Ok(token)
    }

    /// Removes the token named `name`; `false` when there is none.
    pub async fn revoke(&self, name: &str) -> Result<bool, String> {
        // Nothing is written when there is no such token.
        let listed = self.current().await?.tokens.iter().any(|r| r.name == name);
        if !listed {
            return Ok(false);
        }
        self.change(|file| {
            let before = file.tokens.len();
            file.tokens.retain(|r| r.name != name);
            Ok(file.tokens.len() != before)
        })
        .await
    }

    /// What a presented token is worth. Shared tokens are checked against the last list the
    /// bucket vouched for; when that is older than [`MAX_STALE`], the list is read first, and
    /// when it cannot be, no token is accepted.
    pub async fn verify(&self, token: &str) -> Verdict {
        let arrived = Instant::now();
        if !token.starts_with(PREFIX) {
            return Verdict::Unknown;
        }
        let list = match self.doc.fresher_than(MAX_STALE).await {
            Ok(list) => list,
            Err(why) => return Verdict::Unchecked(why),
        };
        let hash = digest(token);
        let found = |list: &TokenFile| {
            list.tokens
                .iter()
                .find(|r| r.sha256 == hash)
                .map(|r| Grant {
                    who: format!("token:{}", r.name),
                    scopes: r.scopes.clone(),
                })
        };
        if let Some(grant) = found(&list) {
            return Verdict::Granted(grant);
        }
        // A token made through another replica a moment ago: look once more, in a list read
        // after this token arrived (a list read a moment before may predate it).
        if self.doc.is_shared()
            && let Ok(list) = self.doc.vouched_since(arrived, MISS_CHECK).await
            && let Some(grant) = found(&list)
        {
            return Verdict::Granted(grant);
        }
        Verdict::Unknown
    }

    /// Whether no token exists as far as is known now (serving without one would lock
    /// everybody out).
    pub fn is_empty(&self) -> bool {
        self.doc.unusable().is_some() || self.doc.last().tokens.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::parse_scopes;

    fn granted(v: Verdict) -> Grant {
        match v {
            Verdict::Granted(g) => g,
            other => panic!("not granted: {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_token_is_shown_once_and_kept_as_a_hash() {
        let dir = tempfile::tempdir().unwrap();
        let tokens = Tokens::open(dir.path());
        let token = tokens
            .create("ci", parse_scopes("read,call").unwrap())
            .await
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
        let grant = granted(tokens.verify(&token).await);
        assert_eq!(grant.who, "token:ci");
        assert_eq!(grant.scopes, parse_scopes("read,call").unwrap());
        assert_eq!(tokens.verify("offload_00").await, Verdict::Unknown);
        assert_eq!(tokens.verify(&token.to_uppercase()).await, Verdict::Unknown);
        assert_eq!(tokens.list().await.unwrap()[0].name, "ci");
    }

    #[tokio::test]
    async fn a_revoked_token_fails_in_another_process_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let server = Tokens::open(dir.path());
        let admin = Tokens::open(dir.path());
        let token = admin
            .create("a", parse_scopes("read").unwrap())
            .await
            .unwrap();
        granted(server.verify(&token).await);
        assert!(admin.revoke("a").await.unwrap());
        assert_eq!(server.verify(&token).await, Verdict::Unknown);
        assert!(!admin.revoke("a").await.unwrap());
    }

    #[tokio::test]
    async fn names_are_unique_and_plain() {
        let dir = tempfile::tempdir().unwrap();
        let tokens = Tokens::open(dir.path());
        let read = || parse_scopes("read").unwrap();
        tokens.create("x", read()).await.unwrap();
        assert!(
            tokens
                .create("x", read())
                .await
                .unwrap_err()
                .contains("exists")
        );
        assert!(tokens.create("a b", read()).await.is_err());
        assert!(tokens.create("", read()).await.is_err());
        assert!(tokens.create("y", BTreeSet::new()).await.is_err());
    }

    /// A state entry that cannot be used keeps no tokens anywhere else: none is accepted, and
    /// making one says why.
    #[tokio::test]
    async fn an_unusable_state_entry_accepts_no_token() {
        let dir = tempfile::tempdir().unwrap();
        let local = Tokens::open(dir.path());
        let token = local
            .create("a", parse_scopes("read").unwrap())
            .await
            .unwrap();
        let http: HttpConfig = serde_json::from_value(serde_json::json!({
            "state": {"path": "ftp://nowhere/state"}
        }))
        .unwrap();
        let tokens = Tokens::of_config(dir.path(), Some(&http), &crate::config::NoKeychain);
        assert!(tokens.is_shared());
        match tokens.verify(&token).await {
            Verdict::Unchecked(why) => assert!(why.contains("http.state"), "{why}"),
            other => panic!("a local token was accepted: {other:?}"),
        }
        let refused = tokens
            .create("b", parse_scopes("read").unwrap())
            .await
            .unwrap_err();
        assert!(refused.contains("http.state"), "{refused}");
        assert!(tokens.list().await.is_err());
    }

    #[tokio::test]
    async fn a_damaged_file_accepts_no_token() {
        let dir = tempfile::tempdir().unwrap();
        let tokens = Tokens::open(dir.path());
        let token = tokens
            .create("a", parse_scopes("read").unwrap())
            .await
            .unwrap();
        std::fs::write(dir.path().join("tokens.json"), b"{not json").unwrap();
        assert_eq!(tokens.verify(&token).await, Verdict::Unknown);
    }

    /// Two replicas sharing one state bucket: object_store's in-memory store, which keeps
    /// versions and honours conditional reads and writes as S3 does (the same with SeaweedFS,
    /// through `offload serve --http`, is in the CLI's `team` tests).
    fn replicas() -> (Tokens, Tokens) {
        let store: Arc<dyn object_store::ObjectStore> =
            Arc::new(object_store::memory::InMemory::new());
        let bucket = || Bucket {
            url: crate::objects::ObjectUrl::parse("s3://team/state").unwrap(),
            writable: true,
            endpoint: None,
            store: store.clone(),
            fetched: Arc::default(),
        };
        let dir = std::path::Path::new("/nonexistent");
        (
            Tokens::at(dir, Some(Ok(bucket()))),
            Tokens::at(dir, Some(Ok(bucket()))),
        )
    }

    /// A token made through one replica works on the other at once, however recently that one
    /// read the list (it was just read when the token was made: the list it holds predates it);
    /// a revocation through either is seen by the other's next check.
    #[tokio::test]
    async fn a_token_made_through_one_replica_works_on_another_at_once() {
        let (a, b) = replicas();
        a.keep_fresh();
        b.keep_fresh();
        for round in 0..5 {
            assert_eq!(b.verify("offload_00").await, Verdict::Unknown);
            let name = format!("agent{round}");
            let token = a
                .create(&name, parse_scopes("read").unwrap())
                .await
                .unwrap();
            assert_eq!(granted(b.verify(&token).await).who, format!("token:{name}"));
            assert!(b.revoke(&name).await.unwrap());
            let revoked = Instant::now();
            while a.verify(&token).await != Verdict::Unknown {
                assert!(revoked.elapsed() < Duration::from_secs(2), "still accepted");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }
}
