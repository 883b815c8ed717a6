//! `run_script`: a model's program run next to the data; only its answer comes back.

use super::prelude::*;
use crate::server::script;

pub struct RunScript;

impl OwnTool for RunScript {
    type Params = params::RunScript;
    const NAME: &'static str = "run_script";
    const TITLE: &'static str = "Run a script that calls tools";
    const DESCRIPTION: &'static str = "Run JavaScript (an async function's body) next to the data; only what it returns \
         reaches you. For loops, branches and joins over many tool calls. Globals: \
         tools.<server>.<tool>(args) -> the tool's value (a failure throws ToolError); \
         offload.query(path, sql) -> rows; offload.read, offload.schema, offload.store(value, \
         {name?, format?}) -> {path}; console.log. list_tool_details gives TypeScript \
         declarations. Example: let t = 0; for (const r of await offload.query(\"o.csv\", \
         \"SELECT id FROM data\")) t += (await tools.shop.get_order({id: r.id})).total; return t;";
    const HINTS: Hints = Hints::RunsScripts;
    const OUTPUT: Option<Output> = Some(Output::of::<script::ScriptAnswer>("result logs calls"));
    const SCOPES: &'static [Scope] = &[Scope::Call];

    fn event(_args: Option<&JsonObject>) -> EventKind {
        EventKind::Script
    }

    async fn call(engine: &Arc<Engine>, p: Self::Params, ctx: &Ctx) -> CallToolResult {
        script::run_script(engine, p, ctx).await
    }
}
