//! `list_available_tools`: upstream tools found by what a model needs, and each server's status.

use super::prelude::*;
use crate::server::discovery;

pub struct ListAvailableTools;

impl OwnTool for ListAvailableTools {
    type Params = params::ListAvailableTools;
    const NAME: &'static str = "list_available_tools";
    const TITLE: &'static str = "Find upstream tools";
    const DESCRIPTION: &'static str = "Find upstream tools by what you need (query: \"git history\") and see each \
         server's status; then call one with call_tool.";
    const HINTS: Hints = Hints::AsksUpstreams;
    const OUTPUT: Option<Output> = Some(Output::of::<discovery::AvailableTools>(
        "tools servers note",
    ));

    async fn call(engine: &Arc<Engine>, p: Self::Params, _: &Ctx) -> CallToolResult {
        discovery::list_available_tools(engine, p).await
    }
}
