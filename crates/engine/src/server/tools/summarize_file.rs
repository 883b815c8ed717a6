//! `summarize_file`: a file's first and last lines, line count, size and encoding.

use super::prelude::*;
use crate::server::file_tools;
use offload_formats::files;

pub struct SummarizeFile;

impl OwnTool for SummarizeFile {
    type Params = params::SummarizeFile;
    const NAME: &'static str = "summarize_file";
    const TITLE: &'static str = "Summarize a file";
    const DESCRIPTION: &'static str = "A file's first and last lines, exact line count, size and encoding; cheap at any \
         size.";
    const HINTS: Hints = Hints::ReadsFiles;
    const OUTPUT: Option<Output> = Some(Output::of::<files::Summary>(
        "path size line_count head tail",
    ));

    async fn call(engine: &Arc<Engine>, p: Self::Params, ctx: &Ctx) -> CallToolResult {
        file_tools::summarize_file(engine, p, ctx).await
    }
}
