//! Signing in to remote servers, for the app's *Sign in* button and `offload auth`.

use std::time::Duration;

use serde::Serialize;

use super::edit::ControlError;
use crate::config::{Transport, interpolate};
use crate::oauth::{self, SignInStatus};
use crate::upstream::ServerState;
use crate::{Engine, ErrorCode};

/// How long a sign-in waits for the user to finish in the browser.
pub const PATIENCE: Duration = Duration::from_secs(300);

/// One remote server's sign-in.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ServerSignIn {
    pub name: String,
    pub url: String,
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub state: ServerState,
    #[cfg_attr(feature = "ts", ts(type = "any"))]
    pub sign_in: SignInStatus,
}

/// The URL and `oauth` settings of a remote server that signs in.
fn remote(
    engine: &Engine,
    name: &str,
) -> Result<(String, Option<crate::config::OAuthConfig>), ControlError> {
    let config = engine.config();
    let entry = config.server(name).ok_or_else(|| {
        ControlError::new(
            ErrorCode::UnknownServer,
            format!("no server is called '{name}'"),
        )
    })?;
    let transport = entry
        .transport(name)
        .map_err(|e| ControlError::new(e.code(), e.to_string()))?;
    match &transport {
        Transport::Http { url, oauth, .. } if transport.signs_in() => {
            let url = interpolate(url, engine.secrets.as_ref())
                .map_err(|e| ControlError::new(e.code(), e.to_string()))?;
            Ok((url, oauth.clone()))
        }
        Transport::Http { .. } => Err(ControlError::new(
            ErrorCode::InvalidArguments,
            format!(
                "'{name}' sends a fixed \"Authorization\" header; remove it from its \"headers\" to sign in instead"
            ),
        )),
        Transport::Stdio { .. } => Err(ControlError::new(
            ErrorCode::InvalidArguments,
            format!("'{name}' is a local (stdio) server; only remote servers sign in"),
        )),
    }
}

/// Signs in to `name`: `open` shows the authorization URL (the system browser, or a printed
/// link); the server is then started again with its new token.
pub async fn sign_in(
    engine: &Engine,
    name: &str,
    open: impl FnOnce(&str) -> Result<(), String>,
) -> Result<String, ControlError> {
    let (url, oauth) = remote(engine, name)?;
    let done = oauth::sign_in(
        oauth::SignIn {
            server: name,
            url: &url,
            oauth: oauth.as_ref(),
            secrets: engine.secrets.clone(),
            patience: PATIENCE,
        },
        open,
    )
    .await
    .map_err(|m| ControlError::new(ErrorCode::AuthRequired, m))?;
    tracing::info!(server = name, "signed in");
    if let Ok(server) = engine.pool.get(name)
        && !server.entry().disabled
        && server.status().status != ServerState::Idle
    {
        // It was in use: start it again with the new token now, so it shows ready. (One not
        // started yet gets the token on its first use.)
        let _ = engine.pool.restart(name).await;
    }
    engine.notify();
    Ok(done)
}

/// Forgets the sign-in of `name` and stops it (its next use asks for a sign-in).
pub async fn sign_out(engine: &Engine, name: &str) -> Result<(), ControlError> {
    remote(engine, name)?;
    oauth::sign_out(name, &engine.secrets)
        .await
        .map_err(|m| ControlError::new(ErrorCode::Internal, m))?;
    if let Ok(server) = engine.pool.get(name) {
        server.stop().await;
    }
    engine.notify();
    Ok(())
}

/// The sign-in of every remote server that signs in (what the keychain holds; no network).
pub async fn sign_ins(engine: &Engine) -> Vec<ServerSignIn> {
    let mut out = Vec::new();
    for server in engine.pool.servers().iter() {
        let Ok((url, _)) = remote(engine, server.name()) else {
            continue;
        };
        out.push(ServerSignIn {
            name: server.name().to_owned(),
            sign_in: oauth::status(server.name(), &url, &engine.secrets).await,
            state: server.status().status,
            url,
        });
    }
    out
}
