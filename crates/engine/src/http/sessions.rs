//! 2025-11-25 sessions that any replica can continue. The `initialize` parameters of each
//! session are kept in the shared state (`sessions/<id>.json` under `http.state`), so a request
//! that reaches another replica — a round-robin balancer, a replica restarted or killed — is
//! answered there: rmcp restores the session and replays the handshake from them
//! (`SessionStore`). Each request still brings its own access token. Streams a client holds
//! open stay with the replica that opened them.

use std::sync::Arc;
use std::time::Duration;

use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use rmcp::transport::streamable_http_server::session::{
    SessionState, SessionStore, SessionStoreError,
};

use crate::objects::{Bucket, ObjectUrl};

/// One look or write in the store; past this the request fails rather than waits.
const STORE_TIMEOUT: Duration = Duration::from_secs(5);

pub(super) struct SharedSessions {
    store: Arc<dyn ObjectStore>,
    /// `<state>/sessions`.
    dir: ObjectUrl,
}

impl SharedSessions {
    pub(super) fn new(state: &Bucket) -> Self {
        Self {
            store: state.store.clone(),
            dir: state.url.join("sessions"),
        }
    }

    /// The key of a session's state; `None` for an id that is not one of rmcp's (letters,
    /// digits, '-' and '_'), which no stored session can have.
    fn key(&self, id: &str) -> Option<object_store::path::Path> {
        let plain = !id.is_empty()
            && id.len() <= 128
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        plain.then(|| self.dir.join(&format!("{id}.json")).key())
    }
}

fn late() -> SessionStoreError {
    format!("the shared state did not answer within {STORE_TIMEOUT:?}").into()
}

#[async_trait::async_trait]
impl SessionStore for SharedSessions {
    async fn load(&self, id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        let Some(key) = self.key(id) else {
            return Ok(None);
        };
        let read = async {
            match self.store.get(&key).await {
                Ok(got) => Ok(Some(serde_json::from_slice(&got.bytes().await?)?)),
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(e.into()),
            }
        };
        tokio::time::timeout(STORE_TIMEOUT, read)
            .await
            .unwrap_or_else(|_| Err(late()))
    }

    async fn store(&self, id: &str, state: &SessionState) -> Result<(), SessionStoreError> {
        let key = self.key(id).ok_or("not a session id")?;
        let body = serde_json::to_vec(state)?;
        tokio::time::timeout(STORE_TIMEOUT, self.store.put(&key, PutPayload::from(body)))
            .await
            .map_err(|_| late())??;
        Ok(())
    }

    async fn delete(&self, id: &str) -> Result<(), SessionStoreError> {
        let Some(key) = self.key(id) else {
            return Ok(());
        };
        match tokio::time::timeout(STORE_TIMEOUT, self.store.delete(&key)).await {
            Err(_) => Err(late()),
            Ok(Ok(()) | Err(object_store::Error::NotFound { .. })) => Ok(()),
            Ok(Err(e)) => Err(e.into()),
        }
    }
}
