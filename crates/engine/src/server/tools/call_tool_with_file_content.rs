//! `call_tool_with_file_content`: a file's data as an upstream tool's arguments, in batches when asked.

use super::prelude::*;
use crate::server::file_content;

pub struct CallToolWithFileContent;

impl OwnTool for CallToolWithFileContent {
    type Params = params::CallToolWithFileContent;
    const NAME: &'static str = "call_tool_with_file_content";
    const TITLE: &'static str = "Call an upstream tool with a file's data as arguments";
    const DESCRIPTION: &'static str = "Pass a file's data (CSV, TSV, JSON, JSONL, YAML, XML, Excel, text) to an upstream \
         tool without it passing through you (description, storage_path, filename, \
         response_format: store the answer). Example: \
         {\"server\": \"db\", \"tool_name\": \"insert\", \"file_path\": \"a.csv\", \
         \"data_key\": \"rows\", \"batch_size\": 5000}";
    const HINTS: Hints = Hints::CallsUpstream;
    const SCOPES: &'static [Scope] = &[Scope::Read, Scope::Call];

    fn event(args: Option<&JsonObject>) -> EventKind {
        if args.is_some_and(|a| a.contains_key("batch_size")) {
            EventKind::Batch
        } else {
            EventKind::FileContent
        }
    }

    async fn call(engine: &Arc<Engine>, p: Self::Params, ctx: &Ctx) -> CallToolResult {
        file_content::call_tool_with_file_content(engine, p, ctx).await
    }
}
