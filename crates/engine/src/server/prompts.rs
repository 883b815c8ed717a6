//! Upstream prompts: `prompts/list` merges every server's prompts under exposed names (the
//! tools' naming rule: `<server>__<prompt>`, the server's `prefix`, or the prompt's own name
//! with `"prefix": false`); `prompts/get` and completion of prompt arguments are routed to the
//! server. Arguments, messages and embedded resources pass through as they are.

use std::collections::HashMap;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResponse,
    ListPromptsResult, PaginatedRequestParams, Reference, ResultType,
};

use super::upstreams::{Freshness, all_pages, offering, relayed};
use crate::gateway::{Route, Routes, names};
use crate::upstream::Pool;

/// Every page of a server's prompts, and how fresh the pages said they are.
async fn all_prompts(
    peer: rmcp::Peer<rmcp::RoleClient>,
) -> Result<(Vec<rmcp::model::Prompt>, Freshness), rmcp::ServiceError> {
    all_pages(|cursor| {
        let peer = peer.clone();
        async move {
            let page = peer
                .list_prompts(Some(PaginatedRequestParams::default().with_cursor(cursor)))
                .await?;
            let fresh = Freshness::of(page.ttl_ms, page.cache_scope);
            Ok((page.prompts, page.next_cursor, fresh))
        }
    })
    .await
}

pub async fn list(pool: &Pool, routes: &Routes) -> ListPromptsResult {
    let servers = offering(pool, |c| c.prompts.is_some()).await;
    let asks = servers
        .iter()
        .map(|s| async move { (s, s.ask(all_prompts).await) });
    let mut table = HashMap::new();
    let mut listed = Vec::new();
    let mut fresh: Option<Freshness> = None;
    for (server, prompts) in futures::future::join_all(asks).await {
        let prompts = match prompts {
            Ok((p, f)) => {
                Freshness::merge(&mut fresh, f);
                p
            }
            Err(e) => {
                tracing::warn!(server = %server.name(), "prompts not listed: {e}");
                continue;
            }
        };
        for mut prompt in prompts {
            let mut name =
                names::exposed(server.name(), &prompt.name, &server.entry().tool_prefix());
            if table.contains_key(&name) {
                name = names::hashed(&name, server.name(), &prompt.name);
            }
            if table.contains_key(&name) {
                tracing::warn!(server = %server.name(), prompt = %prompt.name, "prompt not listed: another has the name {name}");
                continue;
            }
            table.insert(
                name.clone(),
                Route {
                    server: server.name().to_owned(),
                    inner: std::mem::replace(&mut prompt.name, name),
                },
            );
            listed.push(prompt);
        }
    }
    routes.set_prompts(table);
    let mut result = ListPromptsResult::with_all_items(listed);
    // As fresh as the least fresh upstream list (a server that starts or stops is announced
    // with `prompts/list_changed`).
    if let Some(fresh) = fresh {
        result.ttl_ms = Some(fresh.ttl_ms);
        result.cache_scope = Some(fresh.scope());
    }
    result
}

/// Where the exposed prompt `name` leads (listing the prompts again when it is not known yet).
async fn route(pool: &Pool, routes: &Routes, name: &str) -> Result<Route, McpError> {
    if let Some(route) = routes.prompt(name) {
        return Ok(route);
    }
    list(pool, routes).await;
    routes.prompt(name).ok_or_else(|| {
        McpError::invalid_params(
            format!("unknown prompt '{name}': no upstream server offers it (see prompts/list)"),
            Some(serde_json::json!({ "name": name })),
        )
    })
}

/// The prompt's answer, and the route it took (the server, the prompt's own name).
pub async fn get(
    pool: &Pool,
    routes: &Routes,
    mut request: GetPromptRequestParams,
) -> Result<(GetPromptResponse, Route), McpError> {
    let route = route(pool, routes, &request.name).await?;
    let server = pool
        .get(&route.server)
        .map_err(|e| McpError::invalid_params(e.to_string(), None))?;
    request.name = route.inner.clone();
    let mut answer = server
        .ask(|peer| async move { peer.get_prompt_once(request).await })
        .await
        .map_err(relayed)?;
    // Servers on older revisions omit `resultType`; clients on 2026-07-28 require it.
    if let GetPromptResponse::Complete(result) = &mut answer {
        result.result_type.get_or_insert(ResultType::COMPLETE);
    }
    Ok((answer, route))
}

/// `completion/complete` for a prompt's argument or a resource template's variable, routed to
/// the server that offers it; an empty completion when that server offers none.
pub async fn complete(
    pool: &Pool,
    routes: &Routes,
    mut request: CompleteRequestParams,
) -> Result<CompleteResult, McpError> {
    let route = match &mut request.r#ref {
        Reference::Prompt(prompt) => {
            let route = route(pool, routes, &prompt.name).await?;
            prompt.name = route.inner.clone();
            route
        }
        Reference::Resource(template) => {
            let route = super::upstream_resources::template_route(pool, routes, &template.uri)
                .await
                .ok_or_else(|| {
                    McpError::invalid_params(
                        format!(
                            "unknown resource template '{}' (see resources/templates/list)",
                            template.uri
                        ),
                        None,
                    )
                })?;
            template.uri = route.inner.clone();
            route
        }
        _ => {
            return Err(McpError::invalid_params(
                "completion/complete: unknown kind of reference",
                None,
            ));
        }
    };
    let server = pool
        .get(&route.server)
        .map_err(|e| McpError::invalid_params(e.to_string(), None))?;
    if server
        .capabilities()
        .is_some_and(|c| c.completions.is_none())
    {
        return Ok(CompleteResult::default());
    }
    let mut answer = server
        .ask(|peer| async move { peer.complete(request).await })
        .await
        .map_err(relayed)?;
    answer.result_type.get_or_insert(ResultType::COMPLETE);
    Ok(answer)
}
