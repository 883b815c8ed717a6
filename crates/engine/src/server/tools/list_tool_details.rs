//! `list_tool_details`: one upstream tool's whole definition.

use rmcp::model::ToolAnnotations;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::prelude::*;
use crate::server::{answer, typescript};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    pub server: String,
    pub tool_name: String,
}

pub struct ListToolDetails;

impl OwnTool for ListToolDetails {
    type Params = Params;
    const NAME: &'static str = "list_tool_details";
    const TITLE: &'static str = "Show one upstream tool";
    const DESCRIPTION: &'static str = "An upstream tool's whole definition, to check its arguments, with its TypeScript \
         declaration for run_script.";
    const HINTS: Hints = Hints::AsksUpstreams;
    const OUTPUT: Option<Output> = Some(Output::of::<ToolDetails>(
        "inputSchema outputSchema typescript",
    ));

    async fn call(engine: &Arc<Engine>, p: Self::Params, _: &Ctx) -> CallToolResult {
        list_tool_details(engine, p).await
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ToolDetails {
    pub server: String,
    pub tool: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub description: String,
    #[serde(rename = "inputSchema")]
    pub input_schema: JsonObject,
    #[serde(rename = "outputSchema", skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<JsonObject>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// How a script calls it (`run_script`): a TypeScript declaration.
    pub typescript: String,
}

async fn list_tool_details(engine: &Engine, p: Params) -> CallToolResult {
    match engine.pool.find_tool(&p.server, &p.tool_name).await {
        Ok(t) => {
            let details = ToolDetails {
                server: p.server.clone(),
                tool: t.name.to_string(),
                title: t.title.clone(),
                description: t.description.as_deref().unwrap_or("").to_owned(),
                input_schema: (*t.input_schema).clone(),
                output_schema: t.output_schema.as_deref().cloned(),
                annotations: t.annotations.clone(),
                typescript: typescript::declaration(&p.server, &t),
            };
            let text = serde_json::to_string(&details).unwrap_or_default();
            answer::structured(&details, text)
        }
        Err(e) => answer::error(&e.into()),
    }
}
