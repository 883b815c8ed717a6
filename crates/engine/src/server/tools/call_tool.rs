//! `call_tool`: an upstream tool called by server and name; a big answer stored.

use super::prelude::*;
use crate::server::{call, scopes};

pub struct CallTool;

impl OwnTool for CallTool {
    type Params = params::CallTool;
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
        call::call_tool(engine, p, ctx).await
    }
}
