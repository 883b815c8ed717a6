//! `call_tool_and_store`: an upstream tool's answer written to a file instead of the context.

use std::time::Instant;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::prelude::*;
use crate::server::{answer, relay, store};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    pub server: String,
    pub tool_name: String,
    #[serde(default, deserialize_with = "params::object_or_json_text")]
    #[schemars(with = "Option<Map<String, Value>>")]
    pub tool_args: Option<Map<String, Value>>,
    /// A few words for the user.
    #[serde(default)]
    pub description: Option<String>,
    /// A directory or s3:// prefix in a writable root.
    #[serde(default)]
    pub storage_path: Option<String>,
    /// A name, never overwritten.
    #[serde(default)]
    pub filename: Option<String>,
    /// json (default; a text: txt, md), jsonl, csv, tsv, parquet, yaml, xml, md, html, txt.
    #[serde(default)]
    pub file_format: Option<String>,
}

pub struct CallToolAndStore;

impl OwnTool for CallToolAndStore {
    type Params = Params;
    const NAME: &'static str = "call_tool_and_store";
    const TITLE: &'static str = "Call an upstream tool and store its answer in a file";
    const DESCRIPTION: &'static str = "Call an upstream tool and write its answer to a file instead of your context: you \
         get the path and a summary (typed columns for tables); ask the file questions with \
         query_file.";
    const HINTS: Hints = Hints::CallsUpstream;
    const OUTPUT: Option<Output> =
        Some(Output::of::<store::StoredAnswer>("uri path bytes summary"));
    const SCOPES: &'static [Scope] = &[Scope::Call, Scope::Store];

    fn event(_args: Option<&JsonObject>) -> EventKind {
        EventKind::Store
    }

    async fn call(engine: &Arc<Engine>, p: Self::Params, ctx: &Ctx) -> CallToolResult {
        let args = Value::Object(p.tool_args.clone().unwrap_or_default());
        let started = Instant::now();
        let result = match relay::forward(engine, &p.server, &p.tool_name, p.tool_args, ctx).await {
            Ok(r) => r,
            Err(e) => return answer::error(&e),
        };
        if result.is_error == Some(true) {
            return answer::error(&store::upstream_tool_error(
                &p.server,
                &p.tool_name,
                &result,
            ));
        }
        let options = store::StoreOptions {
            description: p.description,
            storage_path: p.storage_path,
            filename: p.filename,
            format: p.file_format,
        };
        match store::store(
            engine,
            &p.server,
            &p.tool_name,
            args,
            result,
            started,
            options,
        )
        .await
        {
            Ok(stored) => store::stored_answer(&stored, None),
            Err(e) => answer::error(&e),
        }
    }
}
