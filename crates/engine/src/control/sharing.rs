//! The Sharing screen: serving over HTTP for agents on other machines (the address, where it is
//! served), and the access tokens they use — created with a ready-to-paste entry for each
//! client, listed (never the token), revoked.

use serde::Serialize;

use super::edit::{ControlError, edit_config};
use crate::access::{TokenInfo, Tokens};
use crate::http::ServingState;
use crate::{Engine, ErrorCode};

/// The address offered when serving is first turned on: this machine only.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8765";

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SharingView {
    pub serving: ServingState,
    pub tokens: Vec<TokenView>,
    /// The OAuth issuer whose tokens are accepted too (`http.issuer`), if any.
    pub issuer: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct TokenView {
    pub name: String,
    pub scopes: Vec<String>,
    /// RFC 3339.
    pub created: String,
}

/// A token just made: the only time it is shown, with the entry each client needs.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct CreatedToken {
    pub name: String,
    pub token: String,
    pub url: String,
    pub snippets: Vec<ClientEntry>,
}

/// How one client reaches Offload over HTTP.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ClientEntry {
    pub client: String,
    /// Where it goes (a file, or a terminal).
    pub place: String,
    pub text: String,
}

fn tokens(engine: &Engine) -> Tokens {
    Tokens::of_config(
        &engine.dirs.data_dir,
        engine.config().http.as_ref(),
        engine.secrets.as_ref(),
    )
}

/// Runs a token change to its end from the app's synchronous commands: on a thread and a
/// runtime of its own (shared tokens are in a bucket), at most `limit`.
fn settle<T: Send>(
    limit: std::time::Duration,
    work: impl std::future::Future<Output = Result<T, String>> + Send,
) -> Result<T, String> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| e.to_string())?;
                runtime.block_on(async {
                    tokio::time::timeout(limit, work)
                        .await
                        .unwrap_or_else(|_| Err(format!("no answer within {limit:?}")))
                })
            })
            .join()
            .unwrap_or_else(|_| Err("the token change failed".into()))
    })
}

fn view_of(t: TokenInfo) -> TokenView {
    TokenView {
        name: t.name,
        scopes: t.scopes.iter().map(|s| s.as_str().to_owned()).collect(),
        created: t.created.to_rfc3339(),
    }
}

pub fn sharing(engine: &Engine, serving: ServingState) -> SharingView {
    SharingView {
        serving,
        tokens: settle(std::time::Duration::from_secs(3), async {
            tokens(engine).list().await
        })
        .unwrap_or_else(|e| {
            tracing::warn!("cannot list the access tokens: {e}");
            Vec::new()
        })
        .into_iter()
        .map(view_of)
        .collect(),
        issuer: engine.config().http.as_ref().and_then(|h| h.issuer.clone()),
    }
}

/// Serves over HTTP at `listen` from now on (`None`: stops); written to `http.listen`.
pub async fn set_http_listen(engine: &Engine, listen: Option<String>) -> Result<(), ControlError> {
    let listen = listen
        .map(|l| l.trim().to_owned())
        .filter(|l| !l.is_empty());
    if let Some(l) = &listen
        && l.parse::<std::net::SocketAddr>().is_err()
    {
        return Err(ControlError::new(
            ErrorCode::InvalidArguments,
            format!("'{l}' is not an address to listen on: write IP:PORT, e.g. {DEFAULT_LISTEN}"),
        ));
    }
    edit_config(engine, |doc| {
        let http = doc.entry("http").or_insert_with(|| serde_json::json!({}));
        if !http.is_object() {
            *http = serde_json::json!({});
        }
        let object = http.as_object_mut().expect("an object");
        match listen {
            Some(l) => {
                object.insert("listen".into(), l.into());
            }
            None => {
                object.remove("listen");
            }
        }
        if object.is_empty() {
            doc.remove("http");
        }
        Ok(())
    })
    .await
}

/// Makes an access token; `url` is where clients reach this Offload.
pub fn create_token(
    engine: &Engine,
    name: &str,
    scopes: &[String],
    url: &str,
) -> Result<CreatedToken, ControlError> {
    let scopes = crate::access::parse_scopes(&scopes.join(","))
        .map_err(|m| ControlError::new(ErrorCode::InvalidArguments, m))?;
    let token = settle(std::time::Duration::from_secs(10), async {
        tokens(engine).create(name.trim(), scopes.clone()).await
    })
    .map_err(|m| ControlError::new(ErrorCode::InvalidArguments, m))?;
    tracing::info!(
        name,
        scopes = crate::access::scope_list(&scopes),
        "access token created"
    );
    Ok(CreatedToken {
        name: name.trim().to_owned(),
        snippets: client_entries(url, &token),
        url: url.to_owned(),
        token,
    })
}

pub fn revoke_token(engine: &Engine, name: &str) -> Result<(), ControlError> {
    match settle(std::time::Duration::from_secs(10), async {
        tokens(engine).revoke(name).await
    }) {
        Ok(true) => {
            tracing::info!(name, "access token revoked");
            Ok(())
        }
        Ok(false) => Err(ControlError::new(
            ErrorCode::InvalidArguments,
            format!("no token is called '{name}'"),
        )),
        Err(m) => Err(ControlError::new(ErrorCode::Internal, m)),
    }
}

/// The entry each client needs to reach `url` with `token`.
pub fn client_entries(url: &str, token: &str) -> Vec<ClientEntry> {
    let bearer = format!("Bearer {token}");
    let pretty = |v: serde_json::Value| serde_json::to_string_pretty(&v).unwrap_or_default();
    vec![
        ClientEntry {
            client: "Claude Code".into(),
            place: "a terminal".into(),
            text: format!(
                "claude mcp add --transport http offload {url} --header \"Authorization: {bearer}\""
            ),
        },
        ClientEntry {
            client: "Cursor".into(),
            place: "~/.cursor/mcp.json".into(),
            text: pretty(serde_json::json!({"mcpServers": {"offload": {
                "url": url, "headers": {"Authorization": bearer}}}})),
        },
        ClientEntry {
            client: "VS Code".into(),
            place: ".vscode/mcp.json".into(),
            text: pretty(serde_json::json!({"servers": {"offload": {
                "type": "http", "url": url, "headers": {"Authorization": bearer}}}})),
        },
        ClientEntry {
            client: "Claude Desktop, Windsurf and other clients".into(),
            place: "their MCP settings".into(),
            text: pretty(serde_json::json!({"mcpServers": {"offload": {
                "type": "http", "url": url, "headers": {"Authorization": bearer}}}})),
        },
    ]
}
