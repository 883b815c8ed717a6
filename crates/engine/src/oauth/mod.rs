//! Signing in to remote MCP servers that need OAuth 2.1, as the MCP authorization spec defines
//! it, with rmcp's `auth` support doing the protocol: discovery from the server's 401 challenge
//! (protected-resource metadata, then the authorization server's metadata, with its `issuer`
//! checked), client registration in the spec's order (a pre-registered client, a client ID
//! metadata document, dynamic registration), authorization code with PKCE S256, the `resource`
//! parameter, the `iss` response parameter, refresh ahead of expiry.
//!
//! What Offload adds: the browser step (the system browser on the authorization URL and a
//! loopback redirect, [`loopback`]), the keychain as the credential store ([`credentials`]), and
//! the words users see. Connections ([`authorized_client`]) send the stored token and refresh it;
//! with no usable token the server's 401 makes it `sign_in_required`.

pub mod credentials;
mod loopback;
pub mod watch;

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationManager, AuthorizationRequest, OAuthClientConfig,
    OAuthState,
};
use serde::Serialize;

use crate::config::{OAuthConfig, SecretSource, interpolate};
use credentials::KeychainCredentials;

/// The name Offload registers under with authorization servers.
const CLIENT_NAME: &str = "Offload";

/// The HTTP client of remote connections: no idle pooling (rmcp's default, which avoids
/// delayed-ACK stalls), redirects followed only within the same origin (a token is never sent
/// elsewhere).
pub fn http_client() -> reqwest::Client {
    let policy = reqwest::redirect::Policy::custom(|attempt| {
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if attempt.previous().len() >= 10 || !same_origin {
            attempt.stop()
        } else {
            attempt.follow()
        }
    });
    crate::crypto::http_client()
        .pool_max_idle_per_host(0)
        .redirect(policy)
        .build()
        .unwrap_or_default()
}

/// A client for the streamable-HTTP transport that sends the server's stored token (refreshing
/// it before it expires) and goes out without one when there is none, so the server's 401
/// challenge says that a sign-in is needed.
pub async fn authorized_client(
    server: &str,
    url: &str,
    oauth: Option<&OAuthConfig>,
    secrets: &Arc<dyn SecretSource>,
) -> Result<AuthClient<reqwest::Client>, String> {
    let mut manager = AuthorizationManager::new(url)
        .await
        .map_err(|e| format!("{url} is not a usable URL: {e}"))?;
    manager.set_credential_store(KeychainCredentials::new(secrets.clone(), server, url));
    match manager.initialize_from_store().await {
        Ok(true) => {
            if let Some(secret) = client_secret(oauth, secrets.as_ref())?
                && let Some(id) = oauth.and_then(|o| o.client_id.as_deref())
            {
                manager
                    .configure_client(OAuthClientConfig::new(id, url).with_client_secret(secret))
                    .map_err(|e| describe(&e))?;
            }
        }
        Ok(false) => {}
        // The stored token may still be good; a refresh will say otherwise.
        Err(e) => tracing::warn!(
            server,
            "cannot reach the authorization server: {}",
            describe(&e)
        ),
    }
    Ok(AuthClient::new(http_client(), manager))
}

fn client_secret(
    oauth: Option<&OAuthConfig>,
    secrets: &dyn SecretSource,
) -> Result<Option<String>, String> {
    oauth
        .and_then(|o| o.client_secret.as_deref())
        .map(|s| interpolate(s, secrets).map_err(|e| e.to_string()))
        .transpose()
}

/// What `sign_in` needs besides the browser.
pub struct SignIn<'a> {
    pub server: &'a str,
    /// The server's URL, `${…}` already expanded.
    pub url: &'a str,
    pub oauth: Option<&'a OAuthConfig>,
    pub secrets: Arc<dyn SecretSource>,
    /// How long the user has to finish in the browser.
    pub patience: Duration,
}

/// Signs in to a server: discovers its authorization server from its 401 challenge, registers
/// Offload if needed, has `open` show the authorization URL to the user (the system browser, or
/// a printed link), waits for the loopback redirect, exchanges the code and saves the tokens in
/// the keychain. Says who signed in on success.
pub async fn sign_in(
    request: SignIn<'_>,
    open: impl FnOnce(&str) -> Result<(), String>,
) -> Result<String, String> {
    let SignIn {
        server,
        url,
        oauth,
        secrets,
        patience,
    } = request;
    let previous = credentials::read(&secrets, server, url).await;
    // The server's challenge to a request without a token; one that lets `initialize` through
    // asked for a token later, and that refusal's challenge was kept.
    let challenge = match challenge(url).await? {
        Some(c) => c,
        None => previous
            .as_ref()
            .and_then(|p| p.challenge.clone())
            .unwrap_or_default(),
    };
    let mut loopback = loopback::Loopback::bind()
        .await
        .map_err(|e| format!("cannot listen for the sign-in's redirect on 127.0.0.1: {e}"))?;

    let mut manager = AuthorizationManager::new(url)
        .await
        .map_err(|e| format!("{url} is not a usable URL: {e}"))?;
    manager.set_credential_store(KeychainCredentials::new(secrets.clone(), server, url));

    let mut ask = AuthorizationRequest::new(loopback.redirect_uri.clone())
        .with_client_name(CLIENT_NAME)
        .with_challenge(challenge);
    if let Some(o) = oauth {
        if let Some(id) = &o.client_id {
            ask = ask.with_preregistered_client(id);
        }
        if let Some(secret) = client_secret(oauth, secrets.as_ref())? {
            ask = ask.with_client_secret(secret);
        }
        if let Some(doc) = &o.client_metadata_url {
            ask = ask.with_client_metadata_url(doc);
        }
    }
    // Scopes: those configured, plus those a server asked for more of (step-up) with those
    // already granted; otherwise rmcp picks them from the challenge or the metadata.
    let mut scopes: Vec<String> = oauth.map(|o| o.scopes.clone()).unwrap_or_default();
    if let Some(p) = previous.as_ref().filter(|p| !p.wanted_scopes.is_empty()) {
        if let Some(c) = &p.credentials {
            scopes.extend(c.granted_scopes.iter().cloned());
        }
        scopes.extend(p.wanted_scopes.iter().cloned());
    }
    scopes.sort();
    scopes.dedup();
    if !scopes.is_empty() {
        ask = ask.with_scopes(scopes);
    }

    let mut state = OAuthState::Unauthorized(manager);
    state
        .start_authorization(ask)
        .await
        .map_err(|e| format!("cannot start signing in to {server}: {}", describe(&e)))?;
    let auth_url = state
        .get_authorization_url()
        .await
        .map_err(|e| describe(&e))?;
    open(&auth_url)?;

    let landing = tokio::time::timeout(patience, loopback.next())
        .await
        .map_err(|_| {
            format!(
                "the sign-in to {server} was not finished in the browser within {} minutes; start it again",
                patience.as_secs().div_ceil(60)
            )
        })?
        .ok_or_else(|| "the sign-in's redirect listener stopped".to_owned())?;
    let outcome = finish(&mut state, &landing.url, server).await;
    landing.answer(
        outcome
            .as_ref()
            .map(|_| format!("Offload is signed in to {server}."))
            .map_err(Clone::clone),
    );
    loopback.delivered().await;
    outcome?;
    Ok(format!("signed in to {server}"))
}

async fn finish(state: &mut OAuthState, callback: &str, server: &str) -> Result<(), String> {
    let parsed = url::Url::parse(callback).map_err(|e| e.to_string())?;
    if let Some((_, error)) = parsed.query_pairs().find(|(k, _)| k == "error") {
        let detail = parsed
            .query_pairs()
            .find(|(k, _)| k == "error_description")
            .map(|(_, d)| format!(": {d}"))
            .unwrap_or_default();
        return Err(format!(
            "the authorization server refused the sign-in to {server} ({error}{detail})"
        ));
    }
    state
        .handle_callback_url(callback)
        .await
        .map_err(|e| format!("signing in to {server} failed: {}", describe(&e)))
}

/// The server's `WWW-Authenticate` challenge to an unauthenticated `initialize`, which names its
/// protected-resource metadata and the scopes it wants; `None` when it answers without one (it
/// asks for a token only for some requests). Only an unreachable server is an error.
async fn challenge(url: &str) -> Result<Option<String>, String> {
    let probe = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "offload", "version": env!("CARGO_PKG_VERSION")}}
    });
    let response = http_client()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .json(&probe)
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .map_err(|e| {
            format!(
                "cannot reach {url}: {}",
                crate::error::without_type_names(&e.to_string())
            )
        })?;
    let status = response.status();
    let header = response
        .headers()
        .get_all(reqwest::header::WWW_AUTHENTICATE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.trim_start().to_ascii_lowercase().starts_with("bearer"))
        .map(str::to_owned);
    // Anything else (a 2xx, or a 400 from a server that speaks only a newer revision) leaves
    // discovery to the challenge kept from a refusal, or to the well-known locations.
    Ok(if status == reqwest::StatusCode::UNAUTHORIZED {
        header
    } else {
        None
    })
}

/// A fingerprint of what the keychain holds for `server` at `url` (0 when nothing): a server
/// waiting for a sign-in is tried again only when it changes.
pub async fn fingerprint(server: &str, url: &str, secrets: &Arc<dyn SecretSource>) -> u64 {
    use std::hash::{Hash, Hasher};
    let Some(entry) = credentials::read(secrets, server, url).await else {
        return 0;
    };
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    serde_json::to_string(&entry)
        .unwrap_or_default()
        .hash(&mut hasher);
    hasher.finish()
}

/// Forgets the sign-in of `server` (its tokens and client registration).
pub async fn sign_out(server: &str, secrets: &Arc<dyn SecretSource>) -> Result<(), String> {
    credentials::save(secrets, server, None).await
}

/// A server's sign-in as `offload auth status` and the app show it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct SignInStatus {
    pub signed_in: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
    pub scopes: Vec<String>,
    /// Seconds the access token has left (negative: expired; refreshed on next use).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_in_secs: Option<i64>,
    /// Whether Offload holds a refresh token.
    pub refreshable: bool,
    /// Scopes the server asked for that the sign-in lacks.
    pub wanted_scopes: Vec<String>,
}

/// What the keychain holds for `server` at `url` (no network).
pub async fn status(server: &str, url: &str, secrets: &Arc<dyn SecretSource>) -> SignInStatus {
    let entry = credentials::read(secrets, server, url).await;
    let creds = entry.as_ref().and_then(|e| e.credentials.as_ref());
    let token = creds
        .and_then(|c| c.token_response.as_ref())
        .and_then(|t| serde_json::to_value(t).ok());
    let expires_in_secs = token.as_ref().and_then(|t| {
        let lifetime = t.get("expires_in")?.as_i64()?;
        let received = creds?.token_received_at? as i64;
        let now = SystemTime::now().duration_since(UNIX_EPOCH).ok()?.as_secs() as i64;
        Some(received + lifetime - now)
    });
    SignInStatus {
        signed_in: token.is_some(),
        issuer: creds.and_then(|c| c.issuer.clone()),
        scopes: creds.map(|c| c.granted_scopes.clone()).unwrap_or_default(),
        expires_in_secs,
        refreshable: token
            .as_ref()
            .is_some_and(|t| t.get("refresh_token").is_some_and(|r| !r.is_null())),
        wanted_scopes: entry.map(|e| e.wanted_scopes).unwrap_or_default(),
    }
}

/// Keeps what a refusal said for the next sign-in: its challenge, and the scope a server short
/// of one asked for (step-up).
pub async fn note_refusal(
    server: &str,
    url: &str,
    refusal: &watch::Refusal,
    secrets: &Arc<dyn SecretSource>,
) {
    let mut entry = credentials::read(secrets, server, url)
        .await
        .unwrap_or_else(|| credentials::SignedIn {
            url: url.to_owned(),
            ..Default::default()
        });
    entry.challenge = Some(refusal.challenge().to_owned());
    if let watch::Refusal::InsufficientScope {
        scope: Some(scope), ..
    } = refusal
    {
        for s in scope.split_whitespace() {
            if !entry.wanted_scopes.iter().any(|w| w == s) {
                entry.wanted_scopes.push(s.to_owned());
            }
        }
    }
    if let Err(e) = credentials::save(secrets, server, Some(&entry)).await {
        tracing::debug!(
            server,
            "cannot keep the server's refusal for the next sign-in: {e}"
        );
    }
}

/// Opens `url` with the command named by `OFFLOAD_BROWSER` (given the URL as its argument), when
/// set: a browser other than the system's, or a test's stand-in. `None` when it is not set.
pub fn open_in_chosen_browser(url: &str) -> Option<Result<(), String>> {
    let browser = std::env::var_os("OFFLOAD_BROWSER").filter(|b| !b.is_empty())?;
    Some(
        std::process::Command::new(&browser)
            .arg(url)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .spawn()
            .map(drop)
            .map_err(|e| {
                format!(
                    "cannot run OFFLOAD_BROWSER ({}): {e}",
                    browser.to_string_lossy()
                )
            }),
    )
}

/// rmcp's auth errors in words, without Rust type names.
pub fn describe(e: &AuthError) -> String {
    crate::error::without_type_names(&e.to_string())
}
