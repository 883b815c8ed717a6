//! What the prompt, resource and completion handlers share: the servers that offer something,
//! asked together, and an upstream's failure as the error a client gets.

use std::sync::Arc;

use rmcp::ErrorData as McpError;
use rmcp::model::{CacheScope, ErrorCode, ServerCapabilities};

use crate::upstream::{LIST_WAIT, Pool, Upstream, UpstreamError};

/// The enabled servers whose declared capabilities satisfy `offers`, in configuration order.
/// Servers are started if need be, all at once; one that has not started within what is left
/// of [`LIST_WAIT`] since its first listing is left out for now and goes on starting (when it offers what the list
/// holds, the client is told the list changed: `announce`), one that does not start is left
/// out (its state and tools listing say why). So a client's first `prompts/list` or
/// `resources/list` never waits for a slow server's start.
pub async fn offering(
    pool: &Pool,
    offers: impl Fn(&ServerCapabilities) -> bool,
) -> Vec<Arc<Upstream>> {
    let servers = pool.servers();
    let asks = servers
        .iter()
        .filter(|s| !s.entry().disabled)
        .map(|s| async move { (s.clone(), s.capabilities_within(LIST_WAIT).await) });
    futures::future::join_all(asks)
        .await
        .into_iter()
        .filter_map(|(server, caps)| match caps {
            Ok(caps) if offers(&caps) => Some(server),
            Ok(_) => None,
            Err(e) => {
                tracing::debug!(server = %server.name(), "left out of a merged list: {e}");
                None
            }
        })
        .collect()
}

/// An upstream's failure as a client's error: the upstream's own JSON-RPC error passes through
/// (its code and message), anything else is an internal error that names the server.
pub fn relayed(e: UpstreamError) -> McpError {
    match e {
        UpstreamError::Rpc {
            rpc_code,
            message,
            data,
            ..
        } if rpc_code != -32603 => McpError::new(ErrorCode(rpc_code), message, data),
        other => McpError::internal_error(other.to_string(), None),
    }
}

/// Every page of a list, and how fresh its pages said they are: `page(cursor)` gives a page's
/// items, the next cursor and the page's freshness.
pub async fn all_pages<T, F, Fut>(mut page: F) -> Result<(Vec<T>, Freshness), rmcp::ServiceError>
where
    F: FnMut(Option<String>) -> Fut,
    Fut: Future<Output = Result<(Vec<T>, Option<String>, Freshness), rmcp::ServiceError>>,
{
    let (mut items, mut cursor, mut fresh) = page(None).await?;
    while cursor.is_some() {
        let (more, next, this) = page(cursor).await?;
        items.extend(more);
        cursor = next;
        fresh = fresh.and(this);
    }
    Ok((items, fresh))
}

/// How long a list may be cached and by whom (2026-07-28 `ttlMs`, `cacheScope`). An upstream
/// that says nothing allows nothing: 0 ms, private.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Freshness {
    pub ttl_ms: u64,
    pub private: bool,
}

impl Freshness {
    pub fn of(ttl_ms: Option<u64>, scope: Option<CacheScope>) -> Self {
        Self {
            ttl_ms: ttl_ms.unwrap_or(0),
            private: scope != Some(CacheScope::Public),
        }
    }

    /// What both allow: the shorter time, private if either is.
    pub fn and(self, other: Self) -> Self {
        Self {
            ttl_ms: self.ttl_ms.min(other.ttl_ms),
            private: self.private || other.private,
        }
    }

    /// Takes `next` into what a merged list allows so far.
    pub fn merge(so_far: &mut Option<Self>, next: Self) {
        *so_far = Some(so_far.map_or(next, |all| all.and(next)));
    }

    pub fn scope(self) -> CacheScope {
        if self.private {
            CacheScope::Private
        } else {
            CacheScope::Public
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_merged_list_is_as_fresh_as_its_least_fresh_part() {
        let a = Freshness::of(Some(60_000), Some(CacheScope::Public));
        let b = Freshness::of(Some(5_000), Some(CacheScope::Public));
        assert_eq!(
            a.and(b),
            Freshness {
                ttl_ms: 5_000,
                private: false
            }
        );
        let silent = Freshness::of(None, None);
        assert_eq!(
            a.and(silent),
            Freshness {
                ttl_ms: 0,
                private: true
            }
        );
        assert_eq!(
            a.and(Freshness::of(Some(9_000), Some(CacheScope::Private)))
                .scope(),
            CacheScope::Private
        );
    }
}
