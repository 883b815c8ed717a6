//! `read_file`: part of a file, exactly, within a budget.

use super::prelude::*;
use crate::server::file_tools;

pub struct ReadFile;

impl OwnTool for ReadFile {
    type Params = params::ReadFile;
    const NAME: &'static str = "read_file";
    const TITLE: &'static str = "Read part of a file";
    const DESCRIPTION: &'static str = "Read part of a file exactly: lines from offset, sheet rows or a range, PDF pages as \
         Markdown, images. An answer fits a budget and says how to go on.";
    const HINTS: Hints = Hints::ReadsFiles;
    // No output schema: a page reaches a model once, as text (see `file_tools::read_file`).
    const OUTPUT: Option<Output> = None;

    async fn call(engine: &Arc<Engine>, p: Self::Params, ctx: &Ctx) -> CallToolResult {
        file_tools::read_file(engine, p, ctx).await
    }
}
