//! Where a prompt name or a resource URI that a client sees leads: which upstream, and what the
//! upstream calls it. Filled when the merged lists are made and consulted when a client gets a
//! prompt, reads or subscribes to a resource, or asks for completions.
//!
//! A resource URI that one source offers keeps its URI. One that several sources offer (two
//! upstreams, or an upstream and a stored response) is shown as
//! `offload-upstream://<server>/<uri>` (both parts percent-encoded), which is stable and says
//! where it leads by itself, so it can be read without listing first.

use std::collections::HashMap;
use std::sync::Mutex;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};

/// The scheme of a rewritten (colliding) upstream resource URI.
pub const SCHEME: &str = "offload-upstream://";

/// Everything but unreserved characters is encoded, so `/` in the URI cannot be confused with
/// the separator after the server's name.
const PART: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// The URI a client sees for `uri` of `server` when another source offers the same URI.
pub fn upstream_uri(server: &str, uri: &str) -> String {
    format!(
        "{SCHEME}{}/{}",
        utf8_percent_encode(server, PART),
        utf8_percent_encode(uri, PART)
    )
}

/// The server and upstream URI a rewritten URI stands for.
pub fn parse_upstream_uri(uri: &str) -> Option<(String, String)> {
    let rest = uri.strip_prefix(SCHEME)?;
    let (server, inner) = rest.split_once('/')?;
    let server = percent_decode_str(server).decode_utf8().ok()?.into_owned();
    let inner = percent_decode_str(inner).decode_utf8().ok()?.into_owned();
    (!server.is_empty() && !inner.is_empty()).then_some((server, inner))
}

/// A name or URI a client sees, and where it leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    pub server: String,
    /// The upstream's own name (prompt) or URI (resource, template).
    pub inner: String,
}

#[derive(Default)]
pub struct Routes {
    /// Exposed prompt name → upstream prompt.
    prompts: Mutex<HashMap<String, Route>>,
    /// Resource URI as listed → upstream resource.
    resources: Mutex<HashMap<String, Route>>,
    /// URI template as listed → upstream template.
    templates: Mutex<HashMap<String, Route>>,
    /// Upstream resource → how many client sessions subscribed to it through Offload.
    subscriptions: Mutex<HashMap<(String, String), usize>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Routes {
    pub fn set_prompts(&self, prompts: HashMap<String, Route>) {
        *lock(&self.prompts) = prompts;
    }

    pub fn prompt(&self, name: &str) -> Option<Route> {
        lock(&self.prompts).get(name).cloned()
    }

    pub fn set_resources(&self, resources: HashMap<String, Route>) {
        *lock(&self.resources) = resources;
    }

    /// Where the listed URI `uri` leads: a rewritten URI by itself, else the last listing.
    pub fn resource(&self, uri: &str) -> Option<Route> {
        if let Some((server, inner)) = parse_upstream_uri(uri) {
            return Some(Route { server, inner });
        }
        lock(&self.resources).get(uri).cloned()
    }

    pub fn set_templates(&self, templates: HashMap<String, Route>) {
        *lock(&self.templates) = templates;
    }

    pub fn template(&self, uri_template: &str) -> Option<Route> {
        lock(&self.templates).get(uri_template).cloned()
    }

    /// The upstream templates, as (server, template).
    pub fn templates(&self) -> Vec<Route> {
        lock(&self.templates).values().cloned().collect()
    }

    /// Counts a session's subscription; true when it is the first (the upstream must be told).
    pub fn subscribed(&self, route: &Route) -> bool {
        let mut subs = lock(&self.subscriptions);
        let n = subs
            .entry((route.server.clone(), route.inner.clone()))
            .or_default();
        *n += 1;
        *n == 1
    }

    /// Counts a session's unsubscription; true when none is left (the upstream must be told).
    pub fn unsubscribed(&self, route: &Route) -> bool {
        let mut subs = lock(&self.subscriptions);
        let key = (route.server.clone(), route.inner.clone());
        match subs.get_mut(&key) {
            Some(n) if *n > 1 => {
                *n -= 1;
                false
            }
            Some(_) => {
                subs.remove(&key);
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewritten_uris_round_trip_and_keep_slashes_apart() {
        for (server, uri) in [
            (
                "everything",
                "demo://resource/static/document/architecture.md",
            ),
            ("a/b", "file:///tmp/x y/ü.txt"),
            ("s", "test://template/123/data?x=1#f"),
        ] {
            let outer = upstream_uri(server, uri);
            assert!(outer.starts_with(SCHEME));
            assert_eq!(outer[SCHEME.len()..].matches('/').count(), 1, "{outer}");
            assert_eq!(
                parse_upstream_uri(&outer),
                Some((server.to_owned(), uri.to_owned()))
            );
        }
        assert_eq!(parse_upstream_uri("offload-upstream://only"), None);
        assert_eq!(parse_upstream_uri("offload-upstream:///x"), None);
        assert_eq!(parse_upstream_uri("test://static-text"), None);
    }

    #[test]
    fn subscriptions_are_counted_per_upstream_resource() {
        let routes = Routes::default();
        let r = Route {
            server: "s".into(),
            inner: "test://watched".into(),
        };
        assert!(routes.subscribed(&r));
        assert!(!routes.subscribed(&r));
        assert!(!routes.unsubscribed(&r));
        assert!(routes.unsubscribed(&r));
        assert!(!routes.unsubscribed(&r), "an unknown one tells nobody");
    }
}
