//! Where a server's sign-in lives: one OS keychain entry per server (`oauth.<server>`), holding
//! the server's URL, the client registration (`client_id`), the token response (access and
//! refresh tokens, expiry) and the issuer that minted them. rmcp's authorization manager reads
//! and writes it through [`CredentialStore`]; nothing of it goes to config, logs or messages.
//!
//! The entry is read from the keychain once per connection and then served from memory (rmcp
//! asks for the token before every request); every change is written through. A keychain that
//! is missing or slow to answer counts as "not signed in" after a bounded wait, so a server
//! that does not need sign-in never waits on it.

use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use serde::{Deserialize, Serialize};
use tokio::sync::Mutex;

use crate::config::SecretSource;

/// How long a keychain read or write may take before it counts as failed.
const KEYCHAIN_WAIT: Duration = Duration::from_secs(5);

/// What the keychain entry holds.
#[derive(Clone, Default, Serialize, Deserialize)]
pub struct SignedIn {
    /// The server URL the sign-in was for: an entry pointed elsewhere since is not used.
    pub url: String,
    /// The client registration and tokens; `None` before the first sign-in completes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<StoredCredentials>,
    /// Scopes the server asked for beyond the granted ones (`insufficient_scope`): the next
    /// sign-in asks for them too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wanted_scopes: Vec<String>,
    /// The `WWW-Authenticate` challenge of the server's last refusal: where a sign-in starts
    /// when the server lets an unauthenticated `initialize` through (it asks for a token only
    /// for some requests).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub challenge: Option<String>,
}

/// The keychain entry name of a server's sign-in: `oauth.` and the server's name, with anything
/// a keychain name cannot hold written as `_` and two hex digits.
pub fn entry_name(server: &str) -> String {
    let mut name = String::from("oauth.");
    for b in server.bytes() {
        if b.is_ascii_alphanumeric() || b == b'-' || b == b'.' {
            name.push(b as char);
        } else {
            name.push_str(&format!("_{b:02x}"));
        }
    }
    name
}

/// Reads the sign-in of `server` (at `url`) from the keychain; `None` when there is none, it
/// was for another URL, or the keychain cannot be read.
pub async fn read(secrets: &Arc<dyn SecretSource>, server: &str, url: &str) -> Option<SignedIn> {
    let secrets = secrets.clone();
    let name = entry_name(server);
    let read = tokio::task::spawn_blocking(move || secrets.secret(&name));
    let text = match tokio::time::timeout(KEYCHAIN_WAIT, read).await {
        Ok(Ok(Ok(Some(text)))) => text,
        Ok(Ok(Ok(None))) => return None,
        Ok(Ok(Err(e))) => {
            // Usual on machines without a keychain; a server that needs a sign-in says so.
            tracing::debug!(server, "cannot read the sign-in from the keychain: {e}");
            return None;
        }
        _ => {
            tracing::warn!(
                server,
                "the keychain did not answer; treating {server} as signed out"
            );
            return None;
        }
    };
    let signed_in: SignedIn = serde_json::from_str(&text)
        .inspect_err(|_| tracing::warn!(server, "the keychain's sign-in entry is unreadable"))
        .ok()?;
    (signed_in.url == url).then_some(signed_in)
}

async fn write(
    secrets: &Arc<dyn SecretSource>,
    server: &str,
    value: Option<String>,
) -> Result<(), String> {
    let secrets = secrets.clone();
    let name = entry_name(server);
    let job = tokio::task::spawn_blocking(move || match value {
        Some(v) => secrets.set_secret(&name, &v),
        None => secrets.delete_secret(&name),
    });
    match tokio::time::timeout(KEYCHAIN_WAIT, job).await {
        Ok(Ok(result)) => result,
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!(
            "the keychain did not answer within {} s",
            KEYCHAIN_WAIT.as_secs()
        )),
    }
}

/// Saves (or with `None`, removes) the sign-in of `server`.
pub async fn save(
    secrets: &Arc<dyn SecretSource>,
    server: &str,
    signed_in: Option<&SignedIn>,
) -> Result<(), String> {
    let value = signed_in
        .map(serde_json::to_string)
        .transpose()
        .map_err(|e| e.to_string())?;
    write(secrets, server, value).await
}

/// rmcp's credential store for one server, over the keychain.
pub struct KeychainCredentials {
    secrets: Arc<dyn SecretSource>,
    server: String,
    url: String,
    /// The entry as last read or written; `None` inside until first read.
    cached: Mutex<Option<Option<SignedIn>>>,
}

impl KeychainCredentials {
    pub fn new(secrets: Arc<dyn SecretSource>, server: &str, url: &str) -> Self {
        Self {
            secrets,
            server: server.to_owned(),
            url: url.to_owned(),
            cached: Mutex::new(None),
        }
    }

    async fn current(&self) -> Option<SignedIn> {
        let mut cached = self.cached.lock().await;
        if cached.is_none() {
            *cached = Some(read(&self.secrets, &self.server, &self.url).await);
        }
        cached.clone().flatten()
    }

    async fn store(&self, signed_in: Option<SignedIn>) -> Result<(), AuthError> {
        save(&self.secrets, &self.server, signed_in.as_ref())
            .await
            .map_err(AuthError::CredentialStoreError)?;
        *self.cached.lock().await = Some(signed_in);
        Ok(())
    }
}

#[async_trait::async_trait]
impl CredentialStore for KeychainCredentials {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        Ok(self.current().await.and_then(|s| s.credentials))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        // A new token answers the scopes that were wanted and the last refusal.
        let wanted_scopes = self
            .current()
            .await
            .map(|s| s.wanted_scopes)
            .unwrap_or_default()
            .into_iter()
            .filter(|s| !credentials.granted_scopes.contains(s))
            .collect();
        self.store(Some(SignedIn {
            url: self.url.clone(),
            credentials: Some(credentials),
            wanted_scopes,
            challenge: None,
        }))
        .await
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.store(None).await
    }

    /// The provider refused the refresh token (the grant was revoked or expired): the tokens are
    /// dropped, the client registration kept, and the server needs a new sign-in.
    async fn on_refresh_token_rejected(
        &self,
        credentials: &StoredCredentials,
    ) -> Result<(), AuthError> {
        let mut signed_out = credentials.clone();
        signed_out.token_response = None;
        let mut entry = self.current().await.unwrap_or_default();
        entry.url = self.url.clone();
        entry.credentials = Some(signed_out);
        self.store(Some(entry)).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keychain::Keychain;

    fn keychain() -> Arc<dyn SecretSource> {
        Arc::new(Keychain::with_store(
            keyring_core::mock::Store::new().unwrap(),
        ))
    }

    #[test]
    fn entry_names_are_valid_keychain_names_and_distinct() {
        let names: Vec<String> = ["linear", "my server", "a_20", "ü", "x/y"]
            .iter()
            .map(|s| entry_name(s))
            .collect();
        for n in &names {
            crate::keychain::check_name(n).unwrap();
        }
        assert_eq!(names[0], "oauth.linear");
        assert_ne!(names[1], names[2]);
        let unique: std::collections::HashSet<_> = names.iter().collect();
        assert_eq!(unique.len(), names.len());
    }

    #[tokio::test]
    async fn credentials_round_trip_through_the_keychain_and_are_bound_to_the_url() {
        let secrets = keychain();
        let store =
            KeychainCredentials::new(secrets.clone(), "linear", "https://mcp.linear.app/mcp");
        assert!(store.load().await.unwrap().is_none());
        let creds = StoredCredentials::new("client-1".into(), None, vec!["read".into()], Some(5))
            .with_issuer(Some("https://linear.app".into()));
        store.save(creds).await.unwrap();

        // Another connection (a new store) reads it back from the keychain.
        let again =
            KeychainCredentials::new(secrets.clone(), "linear", "https://mcp.linear.app/mcp");
        let loaded = again.load().await.unwrap().unwrap();
        assert_eq!(loaded.client_id, "client-1");
        assert_eq!(loaded.issuer.as_deref(), Some("https://linear.app"));
        // The same name pointed at another URL is not signed in.
        let moved = KeychainCredentials::new(secrets.clone(), "linear", "https://evil.example/mcp");
        assert!(moved.load().await.unwrap().is_none());

        again.clear().await.unwrap();
        assert!(secrets.secret(&entry_name("linear")).unwrap().is_none());
    }
}
