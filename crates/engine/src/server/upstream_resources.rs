//! Upstream resources beside Offload's stored responses: `resources/list` and
//! `resources/templates/list` merge every server's, and `resources/read`, `subscribe` and
//! `unsubscribe` go to the server that offers the URI. A URI that several sources offer is
//! shown rewritten (see `gateway::routes`); reading it gives the contents under that URI.
//!
//! A URI no listing named (a template's expansion, a `resource_link` a tool returned) goes to
//! the server that handed it out, else to servers whose templates it starts like, else to the
//! first server that can read it.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, Resource,
    ResourceContents, ResourceTemplate, ResultType, SubscribeRequestParams,
    UnsubscribeRequestParams,
};

use super::upstreams::{Freshness, all_pages, offering, relayed};
use crate::gateway::{Route, Routes, routes};
use crate::upstream::{Pool, Upstream, UpstreamError};

/// Every server's resources, colliding URIs rewritten, in configuration order. `stored`: the
/// URIs of Offload's stored responses (an upstream URI equal to one is rewritten too).
pub async fn list(pool: &Pool, routes: &Routes, stored: &HashSet<String>) -> Vec<Resource> {
    let servers = offering(pool, |c| c.resources.is_some()).await;
    let asks = servers.iter().map(|s| async move {
        let listed = s
            .ask(|peer| async move { peer.list_all_resources().await })
            .await;
        (s, listed)
    });
    let mut listed: Vec<(String, Resource)> = Vec::new();
    for (server, resources) in futures::future::join_all(asks).await {
        match resources {
            Ok(resources) => {
                listed.extend(resources.into_iter().map(|r| (server.name().to_owned(), r)))
            }
            Err(e) => tracing::warn!(server = %server.name(), "resources not listed: {e}"),
        }
    }
    let mut offered: HashMap<&str, usize> = HashMap::new();
    for (_, r) in &listed {
        *offered.entry(r.uri.as_str()).or_default() += 1;
    }
    let collides: HashSet<String> = offered
        .into_iter()
        .filter(|(uri, n)| *n > 1 || stored.contains(*uri))
        .map(|(uri, _)| uri.to_owned())
        .collect();
    let mut table = HashMap::new();
    let resources = listed
        .into_iter()
        .map(|(server, mut resource)| {
            let inner = resource.uri.clone();
            if collides.contains(&inner) {
                resource.uri = routes::upstream_uri(&server, &inner);
            }
            table.insert(resource.uri.clone(), Route { server, inner });
            resource
        })
        .collect();
    routes.set_resources(table);
    resources
}

/// Every page of a server's resource templates, and how fresh the pages said they are.
async fn all_templates(
    peer: rmcp::Peer<rmcp::RoleClient>,
) -> Result<(Vec<ResourceTemplate>, Freshness), rmcp::ServiceError> {
    all_pages(|cursor| {
        let peer = peer.clone();
        async move {
            let page = peer
                .list_resource_templates(Some(
                    PaginatedRequestParams::default().with_cursor(cursor),
                ))
                .await?;
            let fresh = Freshness::of(page.ttl_ms, page.cache_scope);
            Ok((page.resource_templates, page.next_cursor, fresh))
        }
    })
    .await
}

/// Every server's resource templates, and how fresh the least fresh list is; of two with the
/// same URI template, the first server's (in configuration order) is listed and used.
pub async fn list_templates(
    pool: &Pool,
    routes: &Routes,
) -> (Vec<ResourceTemplate>, Option<Freshness>) {
    let servers = offering(pool, |c| c.resources.is_some()).await;
    let asks = servers
        .iter()
        .map(|s| async move { (s, s.ask(all_templates).await) });
    let mut table = HashMap::new();
    let mut templates = Vec::new();
    let mut fresh: Option<Freshness> = None;
    for (server, listed) in futures::future::join_all(asks).await {
        let listed = match listed {
            Ok((t, f)) => {
                Freshness::merge(&mut fresh, f);
                t
            }
            Err(e) => {
                tracing::warn!(server = %server.name(), "resource templates not listed: {e}");
                continue;
            }
        };
        for template in listed {
            if table.contains_key(&template.uri_template) {
                tracing::warn!(server = %server.name(), template = %template.uri_template, "resource template not listed: another server offers the same");
                continue;
            }
            table.insert(
                template.uri_template.clone(),
                Route {
                    server: server.name().to_owned(),
                    inner: template.uri_template.clone(),
                },
            );
            templates.push(template);
        }
    }
    routes.set_templates(table);
    (templates, fresh)
}

/// Where the URI template `uri_template` leads (listing templates when it is not known yet).
pub async fn template_route(pool: &Pool, routes: &Routes, uri_template: &str) -> Option<Route> {
    if let Some(route) = routes.template(uri_template) {
        return Some(route);
    }
    list_templates(pool, routes).await;
    routes.template(uri_template)
}

/// The literal start of a URI template (up to its first expression).
fn literal_start(uri_template: &str) -> &str {
    uri_template
        .split_once('{')
        .map_or(uri_template, |(head, _)| head)
}

/// Servers to ask for `uri`, most likely first, in groups: the server the listing names; those
/// whose tools returned a link to it; those with a template it starts like (longest start
/// first); every other server that offers resources.
async fn candidates(pool: &Pool, routes: &Routes, uri: &str) -> Vec<Vec<Arc<Upstream>>> {
    let mut groups: Vec<Vec<Arc<Upstream>>> = Vec::new();
    let mut taken: HashSet<String> = HashSet::new();
    let mut push = |group: Vec<Arc<Upstream>>, taken: &mut HashSet<String>| {
        let group: Vec<_> = group
            .into_iter()
            .filter(|s| taken.insert(s.name().to_owned()))
            .collect();
        if !group.is_empty() {
            groups.push(group);
        }
    };
    if let Some(route) = routes.resource(uri)
        && let Ok(server) = pool.get(&route.server)
    {
        push(vec![server], &mut taken);
    }
    let servers = offering(pool, |c| c.resources.is_some()).await;
    push(
        servers
            .iter()
            .filter(|s| s.handed_out(uri))
            .cloned()
            .collect(),
        &mut taken,
    );
    if routes.templates().is_empty() {
        list_templates(pool, routes).await;
    }
    let mut by_template: Vec<(usize, Arc<Upstream>)> = routes
        .templates()
        .into_iter()
        .filter_map(|t| {
            let start = literal_start(&t.inner);
            let server = servers.iter().find(|s| s.name() == t.server)?;
            (!start.is_empty() && uri.starts_with(start)).then(|| (start.len(), server.clone()))
        })
        .collect();
    by_template.sort_by_key(|(start, _)| std::cmp::Reverse(*start));
    push(
        by_template.into_iter().map(|(_, s)| s).collect(),
        &mut taken,
    );
    push(servers, &mut taken);
    groups
}

fn not_found(uri: &str, why: Option<String>) -> McpError {
    McpError::invalid_params(
        match why {
            Some(why) => format!("Resource not found: {uri} ({why})"),
            None => format!(
                "Resource not found: no stored response and no upstream server has {uri} (see resources/list)"
            ),
        },
        Some(serde_json::json!({ "uri": uri })),
    )
}

/// Reads `uri` from the server that offers it.
pub async fn read(
    pool: &Pool,
    routes: &Routes,
    request: ReadResourceRequestParams,
) -> Result<(ReadResourceResponse, String), McpError> {
    let uri = request.uri.clone();
    let listed = routes.resource(&uri);
    let mut last_error: Option<UpstreamError> = None;
    for group in candidates(pool, routes, &uri).await {
        // The servers of a group are asked together; the first that can read it answers.
        let asks = group.iter().map(|server| {
            let mut request = request.clone();
            if let Some(route) = listed.as_ref().filter(|r| r.server == server.name()) {
                request.uri = route.inner.clone();
            }
            Box::pin(async move {
                server
                    .ask(|peer| async move { peer.read_resource_once(request).await })
                    .await
                    .map(|answer| (answer, server.name().to_owned()))
            })
        });
        match futures::future::select_ok(asks).await {
            Ok(((answer, server), _)) => {
                return Ok((under_listed_uri(answer, listed.as_ref(), &uri), server));
            }
            Err(e) => last_error = Some(e),
        }
    }
    Err(match (listed, last_error) {
        // The server the listing names answered with its own error: pass it on.
        (Some(_), Some(e @ UpstreamError::Rpc { .. })) => relayed(e),
        // Servers that could not be asked (down, too slow): say so.
        (_, Some(e)) if !matches!(e, UpstreamError::Rpc { .. }) => {
            not_found(&uri, Some(e.to_string()))
        }
        _ => not_found(&uri, None),
    })
}

/// Contents read under the upstream's URI, shown under the URI the client asked for.
fn under_listed_uri(
    answer: ReadResourceResponse,
    route: Option<&Route>,
    asked: &str,
) -> ReadResourceResponse {
    let ReadResourceResponse::Complete(mut result) = answer else {
        return answer;
    };
    // Servers on older revisions omit `resultType`; clients on 2026-07-28 require it (rmcp
    // drops it again for clients on older revisions).
    result.result_type.get_or_insert(ResultType::COMPLETE);
    let Some(route) = route.filter(|r| r.inner != asked) else {
        return ReadResourceResponse::Complete(result);
    };
    for contents in &mut result.contents {
        let uri = match contents {
            ResourceContents::TextResourceContents { uri, .. }
            | ResourceContents::BlobResourceContents { uri, .. } => uri,
            _ => continue,
        };
        if *uri == route.inner {
            *uri = asked.to_owned();
        }
    }
    ReadResourceResponse::Complete(result)
}

/// The upstream resource `uri` stands for, listing resources when it is not known yet.
async fn subscription_route(pool: &Pool, routes: &Routes, uri: &str) -> Result<Route, McpError> {
    if let Some(route) = routes.resource(uri) {
        return Ok(route);
    }
    let stored = HashSet::new();
    list(pool, routes, &stored).await;
    if let Some(route) = routes.resource(uri) {
        return Ok(route);
    }
    // A template's expansion or a returned link: the first candidate server.
    let server = candidates(pool, routes, uri)
        .await
        .into_iter()
        .flatten()
        .next()
        .ok_or_else(|| not_found(uri, None))?;
    Ok(Route {
        server: server.name().to_owned(),
        inner: uri.to_owned(),
    })
}

/// Subscribes to an upstream resource (the upstream is told once, however many sessions
/// subscribe); answers the route, whose updates the session then relays.
#[allow(deprecated)] // resources/subscribe: what clients before 2026-07-28 use
pub async fn subscribe(pool: &Pool, routes: &Routes, uri: &str) -> Result<Route, McpError> {
    let route = subscription_route(pool, routes, uri).await?;
    let server = pool
        .get(&route.server)
        .map_err(|e| McpError::invalid_params(e.to_string(), None))?;
    let can = server
        .started_capabilities()
        .await
        .map_err(relayed)?
        .resources
        .is_some_and(|r| r.subscribe == Some(true));
    if !can {
        return Err(McpError::invalid_params(
            format!(
                "server '{}' does not offer subscriptions to its resources",
                route.server
            ),
            Some(serde_json::json!({ "uri": uri })),
        ));
    }
    if routes.subscribed(&route) {
        let params = SubscribeRequestParams::new(route.inner.clone());
        if let Err(e) = server
            .ask(|peer| async move { peer.subscribe(params).await })
            .await
        {
            routes.unsubscribed(&route);
            return Err(relayed(e));
        }
    }
    Ok(route)
}

/// Ends a session's subscription to `route` (the upstream is told when no session is left).
#[allow(deprecated)] // resources/unsubscribe: what clients before 2026-07-28 use
pub async fn unsubscribe(pool: &Pool, routes: &Routes, route: &Route) -> Result<(), McpError> {
    if !routes.unsubscribed(route) {
        return Ok(());
    }
    let Ok(server) = pool.get(&route.server) else {
        return Ok(()); // removed from the configuration since
    };
    let params = UnsubscribeRequestParams::new(route.inner.clone());
    server
        .ask(|peer| async move { peer.unsubscribe(params).await })
        .await
        .map_err(relayed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_templates_literal_start_is_what_comes_before_its_first_expression() {
        assert_eq!(
            literal_start("test://template/{id}/data"),
            "test://template/"
        );
        assert_eq!(literal_start("demo://resource/{+path}"), "demo://resource/");
        assert_eq!(literal_start("file:///fixed"), "file:///fixed");
        assert_eq!(literal_start("{scheme}://x"), "");
    }
}
