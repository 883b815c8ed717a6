//! `call_tool_and_store`: an upstream tool's answer written to a file instead of the context.

use super::prelude::*;
use crate::server::store;

pub struct CallToolAndStore;

impl OwnTool for CallToolAndStore {
    type Params = params::CallToolAndStore;
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
        store::call_tool_and_store(engine, p, ctx).await
    }
}
