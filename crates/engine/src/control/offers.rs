//! What a server offers besides tools, as its page in the app shows it: prompts (with the name
//! clients see), resources and resource templates, and its recent log messages.

use serde::Serialize;

use super::edit::ControlError;
use super::servers::tool_error;
use crate::Engine;
use crate::gateway::names;
use crate::upstream::LogLine;

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PromptView {
    pub name: String,
    /// The name clients see it under (`<server>__<prompt>`, the prefix, or its own).
    pub exposed: String,
    pub description: Option<String>,
    /// Its arguments, required ones marked with `*`.
    pub arguments: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ResourceView {
    /// The URI, or the URI template of a template.
    pub uri: String,
    pub name: String,
    pub description: Option<String>,
    pub mime_type: Option<String>,
    pub template: bool,
}

/// A server's prompts and resources, or why they could not be listed.
#[derive(Debug, Clone, Default, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct OffersView {
    pub prompts: Vec<PromptView>,
    pub resources: Vec<ResourceView>,
    /// What failed, per kind (a server may offer one and fail the other).
    pub errors: Vec<String>,
}

/// The prompts, resources and templates of `name` (starting it if it is not running); each
/// list asked within the server's timeout, a kind the server does not offer is empty.
pub async fn server_offers(engine: &Engine, name: &str) -> Result<OffersView, ControlError> {
    let server = engine.pool.get(name).map_err(tool_error)?;
    let caps = server.started_capabilities().await.map_err(tool_error)?;
    let mut view = OffersView::default();
    let prefix = server.entry().tool_prefix();
    if caps.prompts.is_some() {
        match server
            .ask(|peer| async move { peer.list_all_prompts().await })
            .await
        {
            Ok(prompts) => {
                view.prompts = prompts
                    .into_iter()
                    .map(|p| PromptView {
                        exposed: names::exposed(name, &p.name, &prefix),
                        arguments: p
                            .arguments
                            .unwrap_or_default()
                            .into_iter()
                            .map(|a| {
                                if a.required == Some(true) {
                                    format!("{}*", a.name)
                                } else {
                                    a.name
                                }
                            })
                            .collect(),
                        description: p.description,
                        name: p.name,
                    })
                    .collect();
            }
            Err(e) => view.errors.push(format!("prompts: {e}")),
        }
    }
    if caps.resources.is_some() {
        match server
            .ask(|peer| async move { peer.list_all_resources().await })
            .await
        {
            Ok(resources) => view
                .resources
                .extend(resources.into_iter().map(|r| ResourceView {
                    uri: r.uri.clone(),
                    name: r.name.clone(),
                    description: r.description.clone(),
                    mime_type: r.mime_type.clone(),
                    template: false,
                })),
            Err(e) => view.errors.push(format!("resources: {e}")),
        }
        match server
            .ask(|peer| async move { peer.list_all_resource_templates().await })
            .await
        {
            Ok(templates) => view
                .resources
                .extend(templates.into_iter().map(|t| ResourceView {
                    uri: t.uri_template.clone(),
                    name: t.name.clone(),
                    description: t.description.clone(),
                    mime_type: t.mime_type.clone(),
                    template: true,
                })),
            Err(e) => view.errors.push(format!("resource templates: {e}")),
        }
    }
    Ok(view)
}

/// The recent log messages of `name`, oldest first (never starts it).
pub fn server_log(engine: &Engine, name: &str) -> Result<Vec<LogLine>, ControlError> {
    let server = engine.pool.get(name).map_err(tool_error)?;
    Ok(server.log_lines())
}
