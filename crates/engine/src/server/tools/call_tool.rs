//! `call_tool`: an upstream tool called by server and name; a big answer stored.

use std::time::Instant;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::prelude::*;
use crate::server::{answer, relay, scopes, store};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    pub server: String,
    pub tool_name: String,
    /// {"$file": path} anywhere is replaced by the file's text ("as": "data" or "base64").
    #[serde(default, deserialize_with = "params::object_or_json_text")]
    #[schemars(with = "Option<Map<String, Value>>")]
    pub tool_args: Option<Map<String, Value>>,
}

pub struct CallTool;

impl OwnTool for CallTool {
    type Params = Params;
    const NAME: &'static str = "call_tool";
    const TITLE: &'static str = "Call an upstream tool";
    const DESCRIPTION: &'static str = "Call an upstream tool. An answer over the inline budget is stored as a file: you get \
         its path and a summary.";
    const HINTS: Hints = Hints::CallsUpstream;

    fn scopes(args: Option<&JsonObject>) -> Vec<Scope> {
        scopes::upstream_call(args)
    }

    fn event(_args: Option<&JsonObject>) -> EventKind {
        EventKind::Call
    }

    async fn call(engine: &Arc<Engine>, p: Self::Params, ctx: &Ctx) -> CallToolResult {
        let started = Instant::now();
        let args = Value::Object(p.tool_args.clone().unwrap_or_default());
        match relay::forward(engine, &p.server, &p.tool_name, p.tool_args, ctx).await {
            Ok(result) => {
                store::offload_if_large(engine, &p.server, &p.tool_name, args, result, started)
                    .await
            }
            Err(e) => answer::error(&e),
        }
    }
}
