//! `list_tool_details`: one upstream tool's whole definition.

use super::prelude::*;
use crate::server::discovery;

pub struct ListToolDetails;

impl OwnTool for ListToolDetails {
    type Params = params::ListToolDetails;
    const NAME: &'static str = "list_tool_details";
    const TITLE: &'static str = "Show one upstream tool";
    const DESCRIPTION: &'static str = "An upstream tool's whole definition, to check its arguments, with its TypeScript \
         declaration for run_script.";
    const HINTS: Hints = Hints::AsksUpstreams;
    const OUTPUT: Option<Output> = Some(Output::of::<discovery::ToolDetails>(
        "inputSchema outputSchema typescript",
    ));

    async fn call(engine: &Arc<Engine>, p: Self::Params, _: &Ctx) -> CallToolResult {
        discovery::list_tool_details(engine, p).await
    }
}
